"""Typed cases (issue #31, docs/architecture.md "Case types"): conv, program and op-record cases are
three types behind one protocol, and no harness module branches on the op name to tell them apart.

* Outside ``conformance/case.py`` (which maps an op to its type, ``case_type``), no module of
  ``conformance`` or ``refgrad`` compares a case's op (``case.op``, ``case.get("op")``,
  ``case["op"]``) with ``"conv"`` or ``"program"``: they ask the case's type (``case.kind``, a
  method) instead, so a fourth format is one new type, not a hunt through the harness.
* The comparisons of ``x.kind`` with a format's kind left outside ``case.py`` are the listed ones
  (``KIND_BRANCHES``, each with why it stays): the rest ask the case a method or dispatch on its type.
* Each type round-trips through ``to_dict``/``from_dict`` (and ``Case(...)``, pickling and
  ``dataclasses.replace``) to its own type with the same id, and its arrays hold every name each of
  its checks reads.
"""

from __future__ import annotations

import ast
import dataclasses
import pickle
from pathlib import Path

import pytest

from conformance.case import (
    Case,
    ConvCase,
    ProgramCase,
    RecordCase,
    case_kind,
    case_type,
    load_cases,
)
from conformance.ops import RECORDS, fuzzed

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "refgrad" / "cases"
FORMAT_OPS = {"conv", "program"}
#: where the op names of the formats may be read: the module that maps an op to its type
OWNER = ROOT / "conformance" / "case.py"


def _is_op(node) -> bool:
    """``x.op``, ``x.get("op", ...)`` or ``x["op"]``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "op"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        first = node.args[0] if node.args else None
        return isinstance(first, ast.Constant) and first.value == "op"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "op"
    return False


def _names_a_format(node) -> bool:
    """A string constant ``"conv"``/``"program"``, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return node.value in FORMAT_OPS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_format(e) for e in node.elts)
    return False


def _op_branches(text: str) -> list[tuple[int, str]]:
    """(line, source) of each comparison of an op with a format's op name in ``text``."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_op(o) for o in operands) and any(_names_a_format(o) for o in operands):
                out.append((node.lineno, ast.unparse(node)))
    return sorted(out)


def test_no_module_but_case_py_branches_on_the_op_name_of_a_format():
    paths = [p for package in ("conformance", "refgrad") for p in sorted((ROOT / package).rglob("*.py"))]
    assert OWNER in paths
    found = [
        f"{p.relative_to(ROOT)}:{line}: {text}"
        for p in paths
        if p != OWNER
        for line, text in _op_branches(p.read_text())
    ]
    assert not found, "ask the case's type (case.kind, a method), not its op:\n" + "\n".join(found)


#: The comparisons of a format's kind left outside conformance/case.py (docs/architecture.md, "Case
#: types"), each module's count; everything else asks the case a method (``features``, ``rejects``,
#: ``estimate_bytes``) or dispatches on its type (functools.singledispatch). Why these stay:
KIND_BRANCHES = {
    # the adapter protocol: an adapter's ``unsupported``/``run`` take every format (plug-in adapters
    # included), and the adapters are copied by source into a standalone convolution reproducer, whose
    # case is a shim that carries its ``kind`` and nothing of conformance.case
    "conformance/adapters/base.py": 4,
    "conformance/adapters/torch_adapter.py": 2,
    "conformance/adapters/jax_adapter.py": 1,
    "conformance/adapters/tf_adapter.py": 1,
    # a fuzz unit is no case: its kind (a plain field, shipped to Ray workers) says which strategy draws
    "conformance/executors/plan.py": 2,
}
FORMAT_KINDS = {"conv", "program", "record"}


def _kind_branches(text: str) -> list[tuple[int, str]]:
    """(line, source) of each comparison of an ``x.kind`` with a format's kind in ``text``."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            kinds = any(isinstance(o, ast.Attribute) and o.attr == "kind" for o in operands)
            named = any(isinstance(o, ast.Constant) and o.value in FORMAT_KINDS for o in operands)
            if kinds and named:
                out.append((node.lineno, ast.unparse(node)))
    return sorted(out)


def test_the_kind_branches_left_are_the_listed_ones():
    """A new branch on ``case.kind`` is a method of the case types (or a type-dispatched function)
    instead; one removed is removed from KIND_BRANCHES."""
    paths = [p for package in ("conformance", "refgrad") for p in sorted((ROOT / package).rglob("*.py"))]
    found = {}
    for p in paths:
        if p != OWNER and (branches := _kind_branches(p.read_text())):
            found[str(p.relative_to(ROOT))] = len(branches)
    assert found == KIND_BRANCHES
    assert [t for _, t in _kind_branches('a = case.kind == "program"\nb = dtype.kind == "c"\n')] == [
        "case.kind == 'program'"
    ]


def test_the_walk_sees_each_spelling_of_an_op_branch():
    """The check above is not vacuous: it reports each form the harness used to write, and only those."""
    text = (
        'a = case.op == "program"\n'
        'b = case.get("op") != "conv"\n'
        'c = case["op"] in ("conv", "program")\n'
        'd = case.kind == "program"\n'  # the protocol: not a branch on the op
        'e = case.op == "tanh"\n'  # an op record by its name: not a format
        'f = check == "program"\n'  # a check's name
    )
    assert [t for _, t in _op_branches(text)] == [
        "case.op == 'program'",
        "case.get('op') != 'conv'",
        "case['op'] in ('conv', 'program')",
    ]


def _record_case() -> Case:
    rec = RECORDS[sorted(fuzzed())[0]]
    raw = {"op": rec.name, "shapes": {n: [3] for n in rec.inputs}, "dtype": rec.dtypes[0], "seed": 5}
    return Case.from_dict(raw, source="<test>")


def _cases():
    files = load_cases(CASES)
    conv = next(c for c in files if c.op == "conv")
    program = next(c for c in files if c.op == "program")
    return {ConvCase: conv, ProgramCase: program, RecordCase: _record_case()}


@pytest.mark.parametrize("kind", [ConvCase, ProgramCase, RecordCase], ids=lambda k: k.__name__)
def test_each_type_round_trips_to_its_own_type(kind):
    case = _cases()[kind]
    assert type(case) is kind and case_type(case.op) is kind and case_kind(case.op) == kind.kind
    for again in (
        Case.from_dict(case.to_dict()),
        Case.from_json(case.to_json()),
        pickle.loads(pickle.dumps(case)),
        dataclasses.replace(case, seed=case.seed),
        Case(**{f.name: getattr(case, f.name) for f in dataclasses.fields(Case)}),
    ):
        assert type(again) is kind
        assert again == case and again.id == case.id and again.to_dict() == case.to_dict()


def test_the_kinds_are_three_and_distinct():
    assert {ConvCase.kind, ProgramCase.kind, RecordCase.kind} == {"conv", "program", "record"}
    assert case_kind("conv") == "conv" and case_kind("program") == "program"
    assert case_kind(sorted(fuzzed())[0]) == "record"


@pytest.mark.parametrize("kind", [ConvCase, ProgramCase, RecordCase], ids=lambda k: k.__name__)
def test_the_arrays_hold_what_each_check_reads(kind):
    case = _cases()[kind]
    arrays = case.arrays()
    for check in case.checks:
        names = case.arrays_for(check)
        assert names, check
        for name in names:
            value = arrays[name]
            assert value is None or value.shape is not None, (check, name)
    if kind is ProgramCase:
        assert sorted(arrays) == sorted(case.shapes)
        assert all(arrays[n].shape == tuple(s) for n, s in case.shapes.items())
