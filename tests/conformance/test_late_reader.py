"""An answer that came in time is not a timeout because the campaign read it late.

With checks in flight, the campaign may come back to a worker's answer long after the worker
gave it (it was drawing further cases, computing their references, judging others). A time
limit is about the framework: the answer is late only if the framework took longer than the limit,
by the worker's clock, from its ``started`` announcement to its answer.
"""

from __future__ import annotations

import time

import pytest

from conformance.case import Case
from conformance.runner import Campaign, read_results

SLOW = {"SlowOnCue": "planted_adapters:SlowOnCue"}


def _case(seed: int, prefix: str = "small") -> Case:
    return Case.from_dict(
        {
            "id": f"{prefix}-{seed}",
            "op": "conv",
            "params": {"rank": 1, "stride": 1, "padding": 0},
            "shapes": {"input": [1, 2, 5], "weight": [2, 2, 2]},
            "dtype": "float64",
            "seed": seed,
        }
    )


@pytest.mark.torch
def test_an_answer_read_after_the_limit_but_given_within_it_is_judged(tmp_path):
    pytest.importorskip("torch")
    with Campaign(
        tmp_path / "run", {"torch": "conformance.adapters.torch_adapter:TorchAdapter"}, timeout=60.0
    ) as camp:
        camp.start()
        camp.run_check(_case(0), "forward")  # the framework's first call (its warm-up) out of the way
        camp.timeout = 2.0
        camp.submit(_case(1), "forward")
        time.sleep(3.0)  # the campaign busy elsewhere, well past the limit, the answer long given
        camp.drain()
    records = {r["case_id"]: r for r in read_results(tmp_path / "run" / "results.jsonl")}
    assert records["small-1"]["verdict"] == "pass", records["small-1"].get("reason")


@pytest.mark.torch
def test_an_answer_given_after_the_limit_and_read_late_is_a_timeout_twice_over(tmp_path):
    """The late answer is the first attempt's timeout; the retry runs on a fresh worker (the one that
    answered late is ended, its end noted) and, as slow again, is the verdict ``timeout``."""
    pytest.importorskip("torch")
    with Campaign(tmp_path / "run", SLOW, timeout=60.0) as camp:
        camp.start()
        camp.run_check(_case(0), "forward")  # the warm-up, under a generous limit
        camp.timeout = 2.0
        camp.submit(_case(1, "slow"), "forward")  # the framework takes 2.5 s: over the 2 s limit
        time.sleep(4.0)  # read late: the answer is there, but it came after the limit
        camp.drain()
        camp.timeout = 60.0
        camp.run_check(_case(2), "forward")
        processes = camp.workers["SlowOnCue"].processes
    records = {r["case_id"]: r for r in read_results(tmp_path / "run" / "results.jsonl")}
    slow = records["slow-1"]
    assert slow["verdict"] == "timeout" and "timed out twice" in slow["reason"], slow["reason"]
    assert "over the time limit (2 s)" in slow["retried"]["reason"]
    assert 2.0 < slow["retried"]["after_s"] < 60.0
    assert records["small-2"]["verdict"] == "pass"
    assert processes[0]["ended"] == "killed: restarted to retry a check that timed out"


def test_an_answer_from_a_worker_on_another_clock_is_not_judged_by_it():
    """A ``started_at`` outside this machine's monotonic window means another clock: the limit then
    runs from the announcement's arrival, and the worker's ``finished_at`` (on its clock) is not
    compared with it (it would call any answer late or early at random)."""
    from conformance.runner import Worker

    frames = iter(
        [
            {"status": "started", "started_at": 1e12},  # far outside this clock's window
            {"status": "ok", "finished_at": 2e12, "worker_cpu": 1.0},
        ]
    )
    worker = Worker("other-clock", "x:Y")
    worker._receive = lambda deadline, what="": next(frames)
    assert worker._receive_one(timeout=2.0, prepare_timeout=None)["status"] == "ok"


def test_a_late_answer_of_the_reference_worker_keeps_the_cpu_accounting_whole():
    """A late answer without ``worker_cpu`` (the reference worker's replies carry none) is a
    timeout whose reply leaves the worker's CPU figure as it was."""
    from conformance.runner import Worker

    now = time.monotonic()
    frames = iter(
        [
            {"status": "started", "started_at": now - 5.0},
            {"status": "ok", "finished_at": now - 1.0},  # 4 s after the start: over the 2 s limit
        ]
    )
    worker = Worker("reference", "x:Y")
    worker.outstanding, worker._cpu_now = 1, 3.5
    worker._receive = lambda deadline, what="": next(frames)
    reply = worker.receive(timeout=2.0)
    assert reply["status"] == "timeout" and "answered after 4 s" in reply["reason"]
    assert worker._cpu_now == 3.5
