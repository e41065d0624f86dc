"""Program cases: the Case model, the reference's outcome, the verdicts, and ``run --ops programs``."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given

from conformance.case import Case, CaseError
from conformance.programs import (
    Program,
    Step,
    program_case,
    program_inputs,
    program_verdict,
    reference_bounds,
    reference_outcome,
)
from conformance.strategies import program_cases


def _case(steps, shapes=((3,),), loss=(1,), ending="backward", n_vars=None):
    n = n_vars or len(shapes) + sum(1 for c in steps if re.match(r"v\d+ = ", c))
    return program_case(
        Program([tuple(s) for s in shapes], [Step(c) for c in steps], list(loss), n, [], ending)
    )


@given(program_cases())
def test_program_case_round_trips_through_json(case):
    again = Case.from_json(case.to_json())
    assert again == case and again.id == case.id and again.source == case.source
    assert again.id.startswith("program-")
    assert json.loads(case.to_json())["op"] == "program"


@pytest.mark.parametrize(
    "change, field, words",
    [
        ({"source": "def prog(T, x):\n    return x\n"}, "source", "must start with 'def prog(T, v0):'"),
        ({"source": "def prog(T, v0):\n    return (\n"}, "source", "is not valid Python"),
        ({"shapes": {"v1": [3]}}, "shapes", "inputs are named ['v0']"),
        ({"shapes": {"v0": [3, -1]}}, "shapes.v0[1]", "must be >= 0"),
        ({"dtype": "float8"}, "dtype", "must be one of"),
        ({"checks": ["vjp"]}, "checks", "unknown check 'vjp'"),
        ({"params": {}}, "params", "unknown field of a program case"),
    ],
)
def test_malformed_program_cases_name_the_field(change, field, words):
    raw = {**_case(["v1 = v0 * 2.0"]).to_dict(), **change}
    with pytest.raises(CaseError) as info:
        Case.from_dict(raw, source="bad.json")
    assert info.value.field == field and words in info.value.problem


def test_reference_outcome_values_gradients_and_the_error_line():
    status, out = reference_outcome(_case(["v1 = v0 * 1.0", "v1[0] = 2.0"], loss=(1,)))
    x = program_inputs(_case(["v1 = v0 * 1.0", "v1[0] = 2.0"]))["v0"]
    assert status == "ok"
    np.testing.assert_array_equal(out["result[1]"], np.r_[2.0, x[1:]])
    np.testing.assert_array_equal(out["grad[v0]"], [0.0, 1.0, 1.0])  # the overwritten element has no gradient
    status, err = reference_outcome(_case(["v1 = v0.exp()", "v1.add_(1)"]))
    assert status == "raises" and err.type_name == "AutogradError" and err.line == 5
    assert err.text.strip() == "loss.backward()" and "modified by an inplace operation" in err.message


def _outputs():
    return {"result[0]": np.array([1.0, -2.0]), "grad[v0]": np.array([0.5, 0.25])}


# an in-place error message naming the node that saved the tensor
_SAVED = (
    "one of the variables needed for gradient computation has been modified by an inplace operation: "
    "[torch.DoubleTensor [2]], which is output 0 of {}, is at version 2; expected version 1 instead."
)


def _raise(line, message="boom"):
    from conformance.programs import ProgramError

    return ProgramError("RuntimeError", message, line, "    loss.backward()")


@pytest.mark.parametrize(
    "reference, reply, verdict, words",
    [
        (("ok", _outputs()), {"status": "ok", "outputs": _outputs()}, "pass", None),
        (
            ("ok", _outputs()),
            {"status": "ok", "outputs": {**_outputs(), "grad[v0]": np.array([0.5, 0.25 + 1e-9])}},
            "fail",
            "grad[v0][1]",
        ),
        (
            ("ok", _outputs()),
            {"status": "ok", "outputs": {**_outputs(), "grad[v0]": None}},
            "fail",
            "is None in fw",
        ),
        (
            ("ok", _outputs()),
            {"status": "error", "type": "RuntimeError", "message": "no", "line": 3, "text": "v1.add_(1)"},
            "error_mismatch",
            "fw raised RuntimeError at line 3",
        ),
        (("raises", _raise(5)), {"status": "ok", "outputs": _outputs()}, "error_mismatch", "but fw ran"),
        (
            ("raises", _raise(5)),
            {"status": "error", "type": "RuntimeError", "message": "boom", "line": 4, "text": "x"},
            "error_mismatch",
            "raised at line 5",
        ),
        (
            ("raises", _raise(5, "Trying to backward through the graph a second time (a)")),
            {
                "status": "error",
                "type": "RuntimeError",
                "line": 5,
                "text": "x",
                "message": "Trying to backward through the graph a second time (b)",
            },
            "error_mismatch",
            "message differs",
        ),
        (
            ("raises", _raise(5)),
            {"status": "error", "type": "ValueError", "message": "other words", "line": 5, "text": "x"},
            "pass",
            "both raise at line 5",
        ),
        # PyTorch 2.11 names the node TanhBackward0 where 2.13 (and the reference) say Tanh: one node
        (
            ("raises", _raise(5, _SAVED.format("Tanh"))),
            {
                "status": "error",
                "type": "RuntimeError",
                "line": 5,
                "text": "x",
                "message": _SAVED.format("TanhBackward0"),
            },
            "pass",
            "both raise at line 5",
        ),
        # ... but another node is another message
        (
            ("raises", _raise(5, _SAVED.format("Tanh"))),
            {
                "status": "error",
                "type": "RuntimeError",
                "line": 5,
                "text": "x",
                "message": _SAVED.format("ExpBackward0"),
            },
            "error_mismatch",
            "message differs",
        ),
    ],
)
def test_program_verdicts(reference, reply, verdict, words):
    case = _case(["v1 = v0 * 2.0"])
    bounds = {name: np.zeros(np.shape(a)) for name, a in _outputs().items()}  # exact outputs
    out = program_verdict(case, reference, reply, "fw", bounds)
    assert out["verdict"] == verdict, out
    if words:
        assert words in out["reason"]


def test_the_derived_bound_follows_the_dtype_and_the_rounding_steps():
    """The bound is the tracker's: zero where nothing rounds (a leaf, the gradient of a sum), one
    rounding of a product (half an ulp of the dtype) for v0 * 2.5, larger in bfloat16 than in float32."""
    from reference.errors import Precision

    source = _case(["v1 = v0 * 2.5", "v2 = v1.exp()"], loss=(2,)).source
    bounds = {}
    for dtype in ("float32", "bfloat16"):
        case = Case.from_dict(
            {**_case(["v1 = v0 * 2.5", "v2 = v1.exp()"], loss=(2,)).to_dict(), "dtype": dtype}
        )
        assert case.source == source
        (bounds[dtype],) = reference_bounds(case, [Precision(dtype)])
        x = program_inputs(case)["v0"]
        assert not bounds[dtype]["result[0]"].any()  # the leaf itself: exact
        u = Precision(dtype).u + 2.0**-53
        assert np.allclose(bounds[dtype]["result[1]"], u * np.abs(2.5 * x) + Precision(dtype).eta)
        assert (bounds[dtype]["grad[v0]"] > 0).all()  # exp and its VJP round, and carry v1's error
    assert (bounds["bfloat16"]["grad[v0]"] > 1000 * bounds["float32"]["grad[v0]"]).all()
