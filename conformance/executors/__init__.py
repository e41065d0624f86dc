"""Executors: *where* a campaign's cases run. Results are the same whichever runs them.

* ``local`` (the default, :mod:`conformance.executors.local`): worker processes on this machine,
  one per framework, every case sent to every framework at once.
* ``ray`` (:mod:`conformance.executors.ray`): the campaign cut into shards
  (:mod:`conformance.executors.plan`), each a Ray task that runs the same worker-process isolation
  on its node (:mod:`conformance.executors.shard`) and streams its results back; the driver alone
  writes ``results.jsonl``. docs/scale-out.md.
"""

from __future__ import annotations

EXECUTORS = ("local", "ray")


class ExecutorError(Exception):
    """The executor cannot be used (ray not installed, a cluster that cannot be reached): exit 2."""


class ShardsLost(Exception):
    """Shards that could not run after their retries; the others' results are kept (exit 5)."""

    def __init__(self, lost: dict, total: int):
        self.lost, self.total = lost, total
        first = "; ".join(f"{sid}: {why}" for sid, why in list(lost.items())[:3])
        more = f" (and {len(lost) - 3} more)" if len(lost) > 3 else ""
        super().__init__(
            f"{len(lost)} of {total} shards could not run after their retries ({first}{more}); the results of "
            "the others are in results.jsonl; run again with --resume to run what is missing"
        )
