"""PyTorch's names of the reference's dtypes, as its messages print them: the one place for them.

* :func:`scalar_type_name`: the ScalarType name ("... not implemented for 'Long'", "Expected ...
  Got Double");
* :func:`cpp_type_name`: the C++ type c10 prints for a dtype mismatch (``typeid``'s demangled
  name: "expected m1 and m2 to have the same dtype, but got: float != long int");
* :func:`convert_type_name`: the C++ type c10's scalar conversion check names, as its source
  spells it ("value cannot be converted to type int64_t without overflow");
* :func:`tensor_type_name`: the legacy tensor type of autograd's and argument checks' messages
  ("torch.DoubleTensor", "CPUBFloat16Type" where there is no legacy type).

Keyed by the NumPy dtype's name (``float64``, ``bfloat16``, ...); a leaf: it imports nothing.
"""

from __future__ import annotations

SCALAR_TYPE_NAMES = {
    "float64": "Double",
    "float32": "Float",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "complex128": "ComplexDouble",
    "complex64": "ComplexFloat",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}

CPP_TYPE_NAMES = {
    "float64": "double",
    "float32": "float",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "complex128": "c10::complex<double>",
    "complex64": "c10::complex<float>",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
}

# The dtypes with no legacy tensor type (torch.XTensor, TH's types): PyTorch names them
# CPU<ScalarType>Type ("[CPUBoolType [2]] is at version 1", "but got CPUBFloat16Type instead").
_NO_LEGACY_TYPE = ("complex128", "complex64", "bfloat16", "bool")


def _name(dtype) -> str:
    return getattr(dtype, "name", None) or str(dtype)


def scalar_type_name(dtype) -> str:
    """``'Long'`` for int64, ``'Double'`` for float64, ...; an unknown dtype by its own name."""
    name = _name(dtype)
    return SCALAR_TYPE_NAMES.get(name, name)


def cpp_type_name(dtype) -> str:
    """``'long int'`` for int64, ``'c10::Half'`` for float16, ...; an unknown dtype by its own name."""
    name = _name(dtype)
    return CPP_TYPE_NAMES.get(name, name)


def convert_type_name(dtype) -> str:
    """``'int64_t'`` for int64, ``'double'`` for float64: a real dtype's C++ type as c10's scalar
    conversion check names it (the fixed-width integer types, except ``int`` for int32)."""
    name = _name(dtype)
    if name in ("float64", "float32", "float16", "bfloat16", "int32"):
        return CPP_TYPE_NAMES[name]
    return name + "_t"


def tensor_type_name(dtype) -> str:
    """``torch.DoubleTensor`` (``CPUBFloat16Type`` for the dtypes with no legacy tensor type): how
    PyTorch names a CPU tensor of that dtype in autograd errors and argument checks; an unknown
    dtype by its own name."""
    name = _name(dtype)
    if name not in SCALAR_TYPE_NAMES:
        return name
    scalar = SCALAR_TYPE_NAMES[name]
    return f"CPU{scalar}Type" if name in _NO_LEGACY_TYPE else f"torch.{scalar}Tensor"
