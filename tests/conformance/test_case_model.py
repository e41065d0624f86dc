"""The Case model: JSON round trips, CaseError naming file/field/problem, data rounding."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

from conformance.case import Case, CaseData, CaseError, load_cases, round_to_dtype, save_case
from conformance.expected import reference_rejects
from conformance.strategies import conv_cases, invalid_conv_cases

CASES = Path(__file__).resolve().parents[2] / "refgrad" / "cases"

GOOD = {
    "op": "conv",
    "params": {"rank": 2, "stride": 2, "padding": [[1, 0], [0, 2]], "groups": 2},
    "shapes": {"input": [2, 4, 5, 6], "weight": [6, 2, 3, 3]},
    "dtype": "float32",
    "seed": 3,
}


@given(conv_cases())
def test_json_round_trip_keeps_the_case_and_its_id(case):
    again = Case.from_json(case.to_json())
    assert again == case and again.id == case.id
    assert json.loads(again.to_json()) == json.loads(case.to_json())


@given(conv_cases())
def test_strategies_build_only_configurations_the_reference_accepts(case):
    assert reference_rejects(case) is None, case.to_json()


@given(invalid_conv_cases())
def test_invalid_strategies_break_a_rule_the_reference_enforces(case):
    assert reference_rejects(case) is not None, case.to_json()


@pytest.mark.parametrize(
    "mutate, field, words",
    [
        (lambda d: d.pop("op"), "op", "missing"),
        (lambda d: d.update(op="matmul"), "op", "unknown operation"),
        (lambda d: d["params"].update(stride=[1, 2, 3]), "params.stride", "list of 2 ints"),
        (lambda d: d["params"].update(padding="full"), "params.padding", "padding string"),
        (lambda d: d["params"].update(padding=[[1, 0], [2]]), "params.padding[1]", "[lo, hi] pair"),
        (lambda d: d["params"].update(groups="2"), "params.groups", "must be an int"),
        (lambda d: d["params"].update(transposed="yes"), "params.transposed", "true or false"),
        (lambda d: d["params"].update(kernel=3), "params.kernel", "unknown parameter"),
        (lambda d: d["shapes"].update(input=[2, 4, 5]), "shapes.input", "list of 4 ints"),
        (lambda d: d.update(dtype="float8"), "dtype", "must be one of"),
        (lambda d: d.update(checks=["forward", "hessian"]), "checks", "unknown check 'hessian'"),
        (lambda d: d.update(vmap={"size": 0}), "vmap.size", ">= 1"),
        (lambda d: d.update(data={"input": "abc"}), "data.input", "nested list of numbers"),
    ],
)
def test_a_malformed_case_file_names_the_file_the_field_and_the_problem(tmp_path, mutate, field, words):
    raw = json.loads(json.dumps(GOOD))
    mutate(raw)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(CaseError) as info:
        load_cases(path)
    assert info.value.field == field
    message = str(info.value)
    assert str(path) in message and f"'{field}'" in message and words in message


def test_invalid_json_and_list_entries_are_located(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(CaseError, match=r"broken\.json: field '<json>': not valid JSON"):
        load_cases(tmp_path / "broken.json")
    (tmp_path / "broken.json").write_text(json.dumps([GOOD, {**GOOD, "dtype": 64}]))
    with pytest.raises(CaseError, match=r"broken\.json\[1\]: field 'dtype'"):
        load_cases(tmp_path / "broken.json")


def test_curated_cases_load_are_valid_have_unique_ids_and_descriptions():
    cases = load_cases(CASES)
    assert len(cases) >= 40
    assert len({c.id for c in cases}) == len(cases)
    for c in cases:
        assert c.description and "\n" not in c.description, c.id
        if c.checks == ("error",):  # error-conformance cases break a rule on purpose
            assert reference_rejects(c) is not None, c.id
        else:
            assert reference_rejects(c) is None, c.id


def test_save_and_load_is_the_same_case(tmp_path):
    case = Case.from_dict(GOOD)
    [again] = load_cases(save_case(case, tmp_path))
    assert again == case


def test_explicit_data_overrides_the_seed_and_must_have_the_right_shape():
    x = np.arange(2 * 4 * 5 * 6, dtype=float).reshape(2, 4, 5, 6) / 7
    case = Case.from_dict({**GOOD, "data": {"input": x.tolist()}})
    data = CaseData(case)
    np.testing.assert_array_equal(data["input"], x.astype(np.float32))
    assert not np.array_equal(CaseData(Case.from_dict(GOOD))["input"], data["input"])
    bad = Case.from_dict({**GOOD, "data": {"input": [[1.0]]}})
    with pytest.raises(CaseError, match="data.input"):
        CaseData(bad)["input"]


def test_data_is_deterministic_and_exact_in_the_case_dtype():
    for dtype, np_dtype in (("float64", np.float64), ("float32", np.float32), ("float16", np.float16)):
        case = Case.from_dict({**GOOD, "dtype": dtype})
        a, b = CaseData(case)["weight"], CaseData(case)["weight"]
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a.astype(np_dtype).astype(np.float64), a)


@pytest.mark.parametrize("dtype, bits", [("bfloat16", 7), ("tf32", 10)])
def test_mantissa_rounding_is_round_to_nearest_even(dtype, bits):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(10000) * 10.0 ** rng.integers(-3, 3, 10000)
    r = round_to_dtype(x, dtype)
    mant, _ = np.frexp(r)  # mant in [0.5, 1): bits+1 significant bits survive
    assert np.all(mant * 2 ** (bits + 1) == np.round(mant * 2 ** (bits + 1)))
    assert np.all(np.abs(r - x) <= 2.0 ** -(bits + 1) * np.abs(x) * (1 + 1e-6))
    ml_dtypes = pytest.importorskip("ml_dtypes") if dtype == "bfloat16" else None
    if ml_dtypes is not None:
        expected = x.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
        np.testing.assert_array_equal(r, expected)
