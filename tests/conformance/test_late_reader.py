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
def test_an_answer_given_after_the_limit_and_read_late_is_a_timeout_and_the_worker_lives(tmp_path):
    pytest.importorskip("torch")
    with Campaign(tmp_path / "run", SLOW, timeout=60.0) as camp:
        camp.start()
        camp.run_check(_case(0), "forward")  # the warm-up, under a generous limit
        camp.timeout = 2.0
        pid = camp.workers["SlowOnCue"].proc.pid
        camp.submit(_case(1, "slow"), "forward")  # the framework takes 2.5 s: over the 2 s limit
        time.sleep(4.0)  # read late: the answer is there, but it came after the limit
        camp.drain()
        camp.timeout = 60.0
        camp.run_check(_case(2), "forward")  # the worker that answered was not killed
        assert camp.workers["SlowOnCue"].proc.pid == pid
    records = {r["case_id"]: r for r in read_results(tmp_path / "run" / "results.jsonl")}
    assert records["slow-1"]["verdict"] == "timeout"
    assert "over the time limit (2 s)" in records["slow-1"]["reason"]
    assert records["small-2"]["verdict"] == "pass"
