"""A failing answer is run twice (conformance/rerun.py, Campaign._rerun): an answer that changes from
run to run (a planted uninitialised read) is reported nondeterministic, a deterministic failure
identical, a passing one is never re-run; the answers queued behind a re-run keep their own cases,
and the report shows the note on the departure line and the discrepancy."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Case
from conformance.rerun import DIFFER, IDENTICAL, compare
from conformance.runner import Campaign

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")


def _case(case_id: str, size: int = 4) -> Case:
    return Case.from_dict(
        {
            "id": case_id,
            "op": "conv",
            "params": {"rank": 2, "padding": 1},
            "shapes": {"input": [1, 2, size, size], "weight": [3, 2, 3, 3]},
            "checks": ["forward"],
        }
    )


def test_compare_is_bitwise():
    a = {"status": "ok", "outputs": {"y": np.array([1.0, np.nan, 0.0]), "g": None}}
    assert compare(a, {"status": "ok", "outputs": {"y": np.array([1.0, np.nan, 0.0]), "g": None}}) == {
        "identical": True,
        "note": IDENTICAL,
    }
    signed = compare(a, {"status": "ok", "outputs": {"y": np.array([1.0, np.nan, -0.0]), "g": None}})
    assert signed["identical"] is False and "y: 1 of 3 elements, first at [2]" in signed["note"]
    raised = compare(a, {"status": "error", "type": "RuntimeError", "message": "boom"})
    assert raised["identical"] is False and raised["note"].startswith(DIFFER)
    late = compare(a, {"status": "timeout", "reason": "no answer within the time limit"})
    assert late["identical"] is None


def test_a_nondeterministic_failure_is_reported_and_a_deterministic_one_identical(tmp_path):
    from conformance.report import summarise, validate

    # several tickets in flight: the re-runs are answered after the requests queued behind them
    cases = [
        _case("first"),
        _case("garbage-here"),
        _case("between", 5),
        _case("wrong-here"),
        _case("last", 6),
    ]
    with Campaign(tmp_path, {"planted": "planted_adapters:UninitialisedOnCue"}) as camp:
        camp.start()
        records = camp.run_cases(cases)
    by_id = {r["case_id"]: r for r in records}
    assert [by_id[c.id]["verdict"] for c in cases] == ["pass", "fail", "pass", "fail", "pass"]
    garbage, wrong = by_id["garbage-here"]["rerun"], by_id["wrong-here"]["rerun"]
    assert garbage["identical"] is False and garbage["note"].startswith(DIFFER), garbage
    assert "output: 1 of " in garbage["note"] and "first at [0, 0, 0, 0]" in garbage["note"]
    assert wrong == {"identical": True, "note": IDENTICAL}
    assert not any("rerun" in by_id[c] for c in ("first", "between", "last"))  # passing: never re-run

    report = summarise(records, {}, out_dir=tmp_path)
    validate(report)
    [line] = report["departure_lines"]
    assert line["line"].endswith(f"[{garbage['note']} [1 of 2 re-run results]]"), line["line"]
    assert {d["rerun"] for d in report["discrepancies"]} == {line["rerun"]}
    # the run's text lines (cli: "  fail: FRAMEWORK CHECK CASE: reason [note]") read report["failures"]
    assert {f["case_id"]: f["rerun"] for f in report["failures"]} == {
        "garbage-here": garbage["note"],
        "wrong-here": IDENTICAL,
    }
