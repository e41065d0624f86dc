"""The local executor overlaps a campaign's phases; the results are those of running them in turn.

``conformance.executors.local.run`` submits the curated checks without waiting, draws every fuzz
unit's examples while the frameworks still answer (their first calls include one-off warm-ups),
and shrinks every unit's failures after all the generation. These tests hold it to the campaign of
old, one check at a time with every phase finished before the next, and check the two limits that
keep the deep window safe: what the checks in flight need together stays within the memory
budget, and a fuzz loop that stops on an error loses none of the checks in flight.
"""

from __future__ import annotations

import pytest

from conformance import cli
from conformance.case import DTYPES
from conformance.executors import local
from conformance.executors.plan import fuzz_units
from conformance.runner import Campaign, read_results
from conformance.strategies import conv_cases

PLANTED = {"DroppedGroup": "planted_adapters:DroppedGroup"}  # failures, so shrinking runs too
CHECKS = ["forward", "vjp", "error"]


def _curated():
    return [c for c in cli._cases(cli.DEFAULT_CASES, CHECKS, list(DTYPES)) if c.op == "conv"][:12]


def _units():
    return fuzz_units(("conv",), [], CHECKS, list(DTYPES), 10, 0)  # 10: DroppedGroup fails (and shrinks)


def _keys(path):
    return {
        (r["case_id"], r["framework"], r["check"], r["dtype"], r["verdict"], r["phase"])
        for r in read_results(path)
    }


@pytest.mark.torch
def test_overlapped_campaign_records_what_the_one_at_a_time_campaign_records(tmp_path):
    pytest.importorskip("torch")
    with Campaign(tmp_path / "overlapped", PLANTED, found_dir=tmp_path / "f1") as camp:
        camp.start()
        local.run(camp, _curated(), _units())
        assert not camp._inflight
    with Campaign(tmp_path / "in-turn", PLANTED, found_dir=tmp_path / "f2") as camp:
        camp.window = 1  # one check at a time, every phase (and its shrinking) finished before the next
        camp.start()
        camp.run_cases(_curated(), phase="curated")
        for unit in _units():
            camp.fuzz(list(camp.workers), unit.check, unit.strategy(), unit.max_examples, unit.seed)
    overlapped = _keys(tmp_path / "overlapped" / "results.jsonl")
    in_turn = _keys(tmp_path / "in-turn" / "results.jsonl")
    assert overlapped == in_turn, (overlapped - in_turn, in_turn - overlapped)
    assert {k[5] for k in overlapped} == {"curated", "fuzz", "shrunk"}  # every phase took part


@pytest.mark.torch
def test_checks_in_flight_stay_within_the_memory_budget(tmp_path):
    pytest.importorskip("torch")
    from conformance.budget import estimate_bytes

    cases = _curated()
    largest = max(estimate_bytes(c) for c in cases)
    budget = 2 * largest  # room for two of the largest cases at a time, never more
    seen = []
    with Campaign(tmp_path / "run", PLANTED, memory_budget=budget) as camp:
        camp.start()
        for case in cases:
            for check in case.checks:
                camp.submit(case, check)
                camp.pump()
                seen.append((len(camp._inflight), camp._inflight_bytes))
                assert len(camp._inflight) == 1 or camp._inflight_bytes <= budget
        camp.drain()
    assert max(n for n, _ in seen) >= 2  # the limit bounds a window that does fill


@pytest.mark.torch
def test_a_fuzz_loop_that_stops_loses_no_check_in_flight(tmp_path):
    """The curated checks, still in flight when the fuzz loop raises, are all recorded."""
    pytest.importorskip("torch")
    drawn = [0]

    def third_draw_raises(case):
        drawn[0] += 1
        if drawn[0] == 3:
            raise RuntimeError("the strategy broke")
        return case

    strategy = conv_cases(list(DTYPES), checks=("forward",)).map(third_draw_raises)
    curated = _curated()
    with Campaign(tmp_path / "run", PLANTED) as camp:
        camp.start()
        camp.run_cases(curated, phase="curated", wait=False)
        assert camp._inflight  # (the curated checks are still in flight as the fuzz loop starts)
        run = camp.generate(list(camp.workers), "forward", strategy, 10, 0)
        camp.shrink(run)
    records = read_results(tmp_path / "run" / "results.jsonl")
    curated_keys = {(c.id, check) for c in curated for check in c.checks}
    assert {(r["case_id"], r["check"]) for r in records if r["phase"] == "curated"} == curated_keys
    stopped = [r for r in records if r["case_id"] == "fuzz-DroppedGroup-forward"]
    # (Hypothesis replays the failing draw once and reports the raise as flaky: a stop either way)
    assert len(stopped) == 1 and stopped[0]["reason"].startswith("the fuzz loop stopped: ")
    assert stopped[0]["verdict"] == "crash"
    examples = [r for r in records if r["phase"] == "fuzz" and r["case_id"] != "fuzz-DroppedGroup-forward"]
    assert examples  # the examples drawn before the raise, recorded
