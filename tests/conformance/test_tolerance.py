"""The tolerance model: K is a true upper bound on each reduction, the bound judges correctly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from conformance.case import ARRAY_NAMES, CaseData
from conformance.expected import expected
from conformance.strategies import conv_cases
from conformance.tolerance import UNIT_ROUNDOFF, Expected, compute_dtype, judge


def _ones_like_case(case):
    """The case with every array set to ones: each result then counts its summed products."""
    data = CaseData(case)
    for name in (n for n in ARRAY_NAMES if not n.startswith("batched")):
        if data[name] is not None:
            data[name] = np.ones_like(data[name])
    return data


@given(conv_cases(dtypes=("float64",), checks=("vjp",)))
def test_reduction_lengths_bound_the_number_of_summed_terms(case):
    ones = _ones_like_case(case)
    for check in ("forward", "vjp", "vjp_vjp", "jvp"):
        for name, exp in expected(case, check, ones).items():
            terms = exp.value.max(initial=0.0)
            assert terms <= exp.K, f"{check} {name}: {terms} terms but K={exp.K} for {case.to_json()}"


def test_unit_roundoffs_and_tf32():
    assert UNIT_ROUNDOFF["float64"] == np.finfo(np.float64).eps / 2
    assert UNIT_ROUNDOFF["float32"] == np.finfo(np.float32).eps / 2
    assert UNIT_ROUNDOFF["float16"] == np.finfo(np.float16).eps / 2
    assert compute_dtype("float32", tf32=True) == "tf32" and compute_dtype("float16", tf32=True) == "float16"


def _exp(value, magnitude, K=4):
    return {"y": Expected(np.asarray(value, float), np.asarray(magnitude, float), K)}


def test_judge_passes_inside_the_bound_and_fails_just_outside():
    u = 2.0**-24
    value, mag = np.array([1.0, -2.0, 0.5]), np.array([3.0, 4.0, 1.0])
    limit = 4 * u * mag + u * np.abs(value)
    assert judge({"y": value + 0.99 * limit}, _exp(value, mag), u)["verdict"] == "pass"
    bad = value.copy()
    bad[1] -= 1.01 * limit[1]
    record = judge({"y": bad}, _exp(value, mag), u)
    assert record["verdict"] == "fail" and record["worst"]["index"] == [1]
    assert record["worst"]["ratio"] == pytest.approx(1.01 * limit[1] / (u * mag[1]))
    assert record["bound"]["K"] == {"y": 4} and record["bound"]["u"] == u


def test_judge_guards_zero_magnitude_nan_and_shape():
    u = 2.0**-53
    assert judge({"y": [0.0, 0.0]}, _exp([0.0, 0.0], [0.0, 0.0]), u)["verdict"] == "pass"
    zero = judge({"y": [0.0, 1e-300]}, _exp([0.0, 0.0], [0.0, 0.0]), u)
    assert zero["verdict"] == "fail" and zero["max_ratio"] == np.inf
    assert judge({"y": [np.nan, 0.0]}, _exp([1.0, 0.0], [1.0, 0.0]), u)["verdict"] == "fail"
    shape = judge({"y": [1.0]}, _exp([1.0, 0.0], [1.0, 0.0]), u)
    assert shape["verdict"] == "fail" and "shape" in shape["reason"]
    assert judge({}, _exp([1.0], [1.0]), u)["verdict"] == "fail"


@pytest.mark.torch
def test_a_real_float32_convolution_passes_its_bound_but_not_a_float64_one():
    """The bound is derived, and tight enough to matter: float32 results break the float64 bound."""
    torch = pytest.importorskip("torch")
    from conformance.case import Case

    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 2, "padding": 1},
            "shapes": {"input": [2, 8, 6, 6], "weight": [4, 8, 3, 3]},
            "dtype": "float32",
        }
    )
    data = CaseData(case)
    y = torch.nn.functional.conv2d(
        torch.tensor(data["input"], dtype=torch.float32),
        torch.tensor(data["weight"], dtype=torch.float32),
        torch.tensor(data["bias"], dtype=torch.float32),
        padding=1,
    )
    exp = expected(case, "forward", data)
    assert judge({"output": y.double().numpy()}, exp, UNIT_ROUNDOFF["float32"])["verdict"] == "pass"
    assert judge({"output": y.double().numpy()}, exp, UNIT_ROUNDOFF["float64"])["verdict"] == "fail"


def test_the_worst_element_is_the_wrong_one_where_exact_elements_have_a_zero_limit():
    """An empty reduction (K = 0, magnitude 0) makes an exact element's ratio/limit 0/0: it must not
    hide the element that departs (TensorFlow's depthwise filter gradient over an empty batch)."""
    from conformance.tolerance import explain

    record = judge({"y": [0.0, 5.35e-80, 0.0]}, _exp([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], K=0), 2.0**-53)
    assert record["verdict"] == "fail"
    assert record["worst"]["index"] == [1] and record["worst"]["observed"] == 5.35e-80
    assert "no elements to compare" not in explain(record, "label")
