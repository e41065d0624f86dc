"""Several requests in flight, each larger than a pipe's buffer, must not deadlock the campaign.

The campaign keeps up to ``window`` checks in flight: it writes the next request to a worker's
stdin while that worker may be writing the previous reply to its stdout. A pipe holds 64 KiB on
Linux. A worker that read its next request only after writing its reply would block writing a
large reply (the campaign not reading yet) while the campaign blocks writing a large request (the
worker not reading yet): both wait forever. The worker reads its requests on a thread of their own
(conformance.worker.requests), so the campaign's writes always drain.
"""

from __future__ import annotations

import threading

import pytest

from conformance.case import Case
from conformance.runner import Campaign

SIDE = 64  # a 2x8x64x64 float64 input: 512 KiB in the request, as much again in the reply


def _big_case(seed: int) -> Case:
    return Case.from_dict(
        {
            "id": f"big-1x1-{seed}",
            "op": "conv",
            "params": {"rank": 2, "stride": 1, "padding": 0},
            "shapes": {"input": [2, 8, SIDE, SIDE], "weight": [8, 8, 1, 1]},
            "dtype": "float64",
            "seed": seed,
        }
    )


@pytest.mark.torch
def test_large_requests_and_replies_in_flight_do_not_deadlock(tmp_path):
    pytest.importorskip("torch")
    frameworks = {"torch": "conformance.adapters.torch_adapter:TorchAdapter"}
    with Campaign(tmp_path / "run", frameworks) as camp:
        camp.start()
        cases = [_big_case(seed) for seed in range(4)]
        tickets, failure = [], []

        def run():
            try:
                for case in cases:  # every request written before any reply is read
                    tickets.append(camp.submit(case, "forward"))
                camp.drain()
            except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
                failure.append(exc)

        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        runner.join(timeout=180)
        if runner.is_alive():  # deadlocked: kill the worker so the thread (and the campaign) can end
            camp.workers["torch"].kill()
            runner.join(timeout=30)
            pytest.fail("the campaign and the worker deadlocked on full pipes")
        assert not failure, failure
        assert len(tickets) == 4
        records = [r for r in _results(camp) if r["framework"] == "torch"]
        assert [r["case_id"] for r in records] == [c.id for c in cases]
        assert {r["verdict"] for r in records} == {"pass"}, records


def _results(camp):
    from conformance.runner import read_results

    camp.writer.sync()
    return read_results(camp.results_path)
