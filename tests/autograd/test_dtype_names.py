"""PyTorch's names of the dtypes live in one module, ``reference.scalar_types``, and the messages
that print them say what PyTorch's say for every dtype (a table of its own in each module had
gaps: a bfloat16 or complex mask or index printed NumPy's name).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import reference as T

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
DTYPES = ["float64", "float32", "float16", "bfloat16", "complex128", "complex64", "int64", "int32"]
DTYPES += ["int16", "int8", "uint8", "bool"]


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


def _pair(name):
    return getattr(T, name), getattr(torch, name)


@pytest.mark.parametrize("name", [d for d in DTYPES if d != "bool"])
def test_masked_fill_names_a_mask_of_any_dtype_as_pytorch_does(name):
    r, t = _pair(name)
    expected = _message(lambda: torch.zeros(2).masked_fill(torch.zeros(2, dtype=t), 1.0))
    assert _message(lambda: T.zeros(2).masked_fill(T.zeros(2, dtype=r), 1.0)) == expected


@pytest.mark.parametrize("name", [d for d in DTYPES if d not in ("int64", "int32")])
def test_embedding_names_indices_of_any_dtype_as_pytorch_does(name):
    r, t = _pair(name)
    expected = _message(lambda: torch.nn.functional.embedding(torch.zeros(2, dtype=t), torch.zeros(3, 2)))
    assert _message(lambda: T.nn.functional.embedding(T.zeros(2, dtype=r), T.zeros(3, 2))) == expected


@pytest.mark.parametrize("name", [d for d in DTYPES if d not in ("float32", "bool")])
def test_mm_names_mismatched_dtypes_as_pytorch_does(name):
    r, t = _pair(name)
    expected = _message(lambda: torch.mm(torch.zeros(2, 2), torch.zeros(2, 2, dtype=t)))
    assert _message(lambda: T.mm(T.zeros(2, 2), T.zeros(2, 2, dtype=r))) == expected


@pytest.mark.parametrize("name", [d for d in DTYPES if not d.startswith("complex") and d != "bool"])
def test_fill_names_the_type_a_complex_value_cannot_convert_to_as_pytorch_does(name):
    r, t = _pair(name)
    expected = _message(lambda: torch.fill(torch.zeros(2, dtype=t), 1 + 2j))
    assert _message(lambda: T.fill(T.zeros(2, dtype=r), 1 + 2j)) == expected


# the names only scalar_types may spell (a table of them elsewhere is a second copy); "int",
# "float", "double", "bool" are left out, being also Python's words
_NAMES = {"Double", "Float", "Half", "BFloat16", "ComplexDouble", "ComplexFloat", "Long", "Int"}
_NAMES |= {"Short", "Char", "Byte", "Bool", "c10::Half", "c10::BFloat16", "c10::complex<float>"}
_NAMES |= {"c10::complex<double>", "long int", "short int", "signed char", "unsigned char"}
_NAMES |= {"DoubleTensor", "FloatTensor", "HalfTensor", "LongTensor", "ByteTensor", "BoolTensor"}


def test_no_module_but_scalar_types_spells_a_dtype_name():
    found = []
    for path in sorted((ROOT / "reference").rglob("*.py")):
        if path.name == "scalar_types.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in _NAMES:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert not found, found


@pytest.mark.parametrize("shape", [(), (3,), (2, 0, 3), (4, 1, 5), (0,)])
def test_one_contiguous_strides(shape):
    from reference.autograd import layout

    definitions = [
        f"{path.relative_to(ROOT)}"
        for path in sorted((ROOT / "reference").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and "contiguous_strides" in node.name
    ]
    assert definitions == ["reference/autograd/layout.py"]
    assert layout.contiguous_strides(shape) == torch.empty(shape).stride()
