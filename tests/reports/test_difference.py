"""The digits that tell the two sides apart and the error in ulps: shortest round-trip reprs per dtype,
ulps at the expected value (0 and subnormals included, inf and nan), the one-line reason, the worst
element of the results and of report.json, and a results.jsonl from before ulps were recorded."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from ml_dtypes import bfloat16

from conformance import exitcodes
from conformance.cli import main
from conformance.report import validate
from conformance.tolerance import Expected, explain, judge, judge_bounds, shortest_repr, ulp_of, ulps

from .synthetic import synthetic_results, write_results

# float32 numbers next to each other in [0.25, 0.5), where one float32 ulp is 2^-25: both print as
# 0.311295 at 6 significant digits
F32_A = float(np.float32(0.3112953))  # 0.31129530072212219...
F32_B = F32_A + 2.0**-25  # 0.31129533052444458...


def test_float32_neighbours_that_agree_to_six_digits_are_told_apart():
    assert f"{F32_A:.6g}" == f"{F32_B:.6g}" == "0.311295"  # what the reason printed before
    assert shortest_repr(F32_A, "float32") == "0.3112953"
    assert shortest_repr(F32_B, "float32") == "0.31129533"
    assert ulps(F32_B, F32_A, "float32") == 1.0
    # in float64 the same two values need all their digits
    assert shortest_repr(F32_B, "float64") == "0.3112953305244446"


@pytest.mark.parametrize(
    "value, dtype, text",
    [
        (0.30078125, "bfloat16", "0.3"),  # bfloat16(0.3): 8 significant bits
        (1.0078125, "bfloat16", "1.01"),  # 1 + 2^-7; its neighbours 1 and 1.015625 are 1 and 1.02
        (0.0078125, "bfloat16", "0.0078"),  # 2^-7: the interval below is half as wide, 0.008 is outside
        (2.0**-133, "bfloat16", "9e-41"),  # the smallest subnormal, 9.18355e-41; the next is 1.83671e-40
        (3.3895313892515355e38, "bfloat16", "3.39e+38"),  # the largest bfloat16
        (0.0999755859375, "float16", "0.1"),  # float16(0.1)
        (2.0**-24, "float16", "6e-08"),  # the smallest float16 subnormal, 5.96e-08
        (65504.0, "float16", "65500.0"),  # the largest float16: 65500 reads back as 65504
        (float(np.float32(0.1)), "float32", "0.1"),
        (2.0**-149, "float32", "1e-45"),  # the smallest float32 subnormal, 1.4013e-45
        (0.1, "float64", "0.1"),
        (-0.0, "float32", "-0.0"),
        (math.inf, "float16", "inf"),
        (-math.inf, "bfloat16", "-inf"),
        (math.nan, "float32", "nan"),
        (0.1, "float32", "0.1"),  # not a float32: printed as the float64 it is
        (0.1 + 2.0**-40, "float32", "0.1000000000009095"),
        (1.5, None, "1.5"),  # no dtype recorded: float64's digits
    ],
)
def test_shortest_repr_by_hand(value, dtype, text):
    assert shortest_repr(value, dtype) == text


def test_every_finite_bfloat16_reads_back_from_its_shortest_repr():
    """Every one of the 65,280 finite bfloat16 values: its text reads back as itself, with no more
    significant digits than the 4 that 8 bits can need."""
    every = np.arange(2**16, dtype=np.uint16).view(bfloat16)
    every = every[np.isfinite(every.astype(np.float32))]
    for v in every.astype(np.float64):
        text = shortest_repr(float(v), "bfloat16")
        assert float(bfloat16(float(text))) == v or (v == 0 and float(text) == 0), (v, text)
        digits = text.split("e")[0].replace("-", "").replace(".", "").strip("0")
        assert len(digits) <= 4, (v, text)


@pytest.mark.parametrize(
    "observed, expected, dtype, n",
    [
        (2.0**-148, 0.0, "float32", 2.0),  # ulp at 0: the smallest subnormal, 2^-149
        (5e-324, 0.0, "float64", 1.0),
        (-(2.0**-24), 0.0, "float16", 1.0),
        (5 * 2.0**-149, 3 * 2.0**-149, "float32", 2.0),  # a subnormal expected value
        (2.0**-126, 2.0**-126 + 2.0**-149, "float32", 1.0),  # the smallest normal binade: the same gap
        (2.0, 2.0 - 2.0**-30, "float32", 2.0**-7),  # below 2 a float32 ulp is 2^-23, not 2^-22
        (1.0 + 2.0**-7, 1.0, "bfloat16", 1.0),
        (1.0 + 2.0**-10, 1.0, "float16", 1.0),
        (math.nan, math.nan, "float32", 0.0),
        (math.inf, math.inf, "float16", 0.0),
        (-math.inf, math.inf, "float64", math.inf),
        (1.0, math.nan, "float32", math.inf),
        (math.nan, 1.0, "bfloat16", math.inf),
        (1.0, 2.0, None, None),  # no dtype: no ulps
    ],
)
def test_ulps_by_hand(observed, expected, dtype, n):
    assert ulps(observed, expected, dtype) == n


def test_ulp_of_just_below_a_power_of_two_is_the_lower_binades():
    """log2 rounds 2 - 2^-52 up to 1.0; the ulp there is 2^-52, not 2^-51."""
    assert ulp_of(np.nextafter(2.0, 0.0), "float64") == 2.0**-52
    assert ulp_of(0.0, "float32") == 2.0**-149 and ulp_of(0.0, "bfloat16") == 2.0**-133


def test_the_reason_shows_both_values_and_the_ulps_next_to_the_ratio():
    exp = {"output": Expected(np.array([F32_A]), np.array([F32_A]), 1)}
    record = judge({"output": np.array([F32_B])}, exp, 2.0**-30, "float32")
    w = record["worst"]
    assert w["dtype"] == "float32" and w["ulps"] == 1.0 and w["observed"] == F32_B
    line = explain(record, "torch vjp")
    assert line.startswith(
        "output[0]=0.31129533 but reference says 0.3112953007221222 (1 ulp of float32; ratio "
    )
    assert line.endswith("> bound 2) [torch vjp]")
    # the case: float64, 4.11e6 ratio, equal at 6 digits
    expected = 0.3112953495979309
    observed = expected + 9000 * 2.0**-54
    bounds = judge_bounds({"y": np.array([observed])}, {"y": (np.array([expected]), 1e-17)}, "float64")
    assert bounds["worst"]["ulps"] == 9000.0
    line = explain(bounds)
    assert f"y[0]={observed!r} but reference says {expected!r} (9e+03 ulps of float64; ratio " in line
    assert repr(observed) != repr(expected) and f"{observed:.6g}" == f"{expected:.6g}"


def test_a_nan_element_reads_nan_and_infinitely_many_ulps():
    record = judge_bounds({"y": np.array([np.nan])}, {"y": (np.array([0.5]), 1e-3)}, "float16")
    assert record["worst"]["ulps"] == math.inf
    assert explain(record).startswith(
        "y[0]=nan but reference says 0.5 (inf ulps of float16; ratio inf > bound 1)"
    )


def test_results_from_before_ulps_still_make_a_report_with_them(tmp_path):
    """A results.jsonl whose worst elements have no dtype and ulps (written before) loads in
    `conformance report`; report.json's worst elements get them from the values and the result's dtype."""
    records = synthetic_results(400, ops=20, fail_every=100, old_format=True)
    assert all("ulps" not in r["worst"] for r in records if r["worst"])
    write_results(tmp_path / "results.jsonl", records)
    assert main(["report", str(tmp_path)]) == exitcodes.DEPARTURES
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report)
    by_case = {r["case_id"]: r for r in records}
    worst = [c["worst"] for c in report["cells"] if c["worst"]] + [
        d["worst"] for d in report["discrepancies"]
    ]
    assert len(worst) > 100
    for w in worst:
        r = by_case[w["case_id"]]
        assert w["dtype"] == r["dtype"]
        assert w["ulps"] == pytest.approx(ulps(r["worst"]["observed"], r["worst"]["expected"], r["dtype"]))
        assert w["observed_text"] == shortest_repr(r["worst"]["observed"], r["dtype"])
        assert w["expected_text"] == repr(r["worst"]["expected"])
    failing = [row for row in report["results"]["rows"] if row[5] == "fail"]
    assert len(failing) == 4 and all(row[8] > 100 for row in failing)  # ulps of the fails, from old lines
