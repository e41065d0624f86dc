"""Executors: *where* a campaign's cases run. Results are the same whichever runs them.

* ``local`` (the default, :mod:`conformance.executors.local`): worker processes on this machine,
  one per framework, every case sent to every framework at once.
* ``ray`` (:mod:`conformance.executors.ray`): the campaign cut into shards
  (:mod:`conformance.executors.plan`), each a Ray task that runs the same worker-process isolation
  on its node (:mod:`conformance.executors.shard`) and streams its results back; the driver alone
  writes ``results.jsonl``. docs/scale-out.md.
"""

from __future__ import annotations

import argparse
import re

EXECUTORS = ("local", "ray")
_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]+)")
RAY_ADDRESS_RULE = (
    "expected auto, HOST:PORT (the head node's GCS address, e.g. 10.0.0.1:6379) or ray://HOST:PORT "
    "(Ray Client), with a port from 1 to 65535"
)


def ray_address(value: str) -> str:
    """``--ray-address``, checked when the command line is parsed (argparse: exit 2 naming the flag).

    ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``; a port outside 1..65535 is refused here (the
    system's resolver would otherwise wrap 99999 to another port)."""
    if value == "auto":
        return value
    hostport = value[len("ray://") :] if value.startswith("ray://") else value
    m = _HOST_PORT.fullmatch(hostport)
    if not m:
        raise argparse.ArgumentTypeError(f"{value!r} is not an address: {RAY_ADDRESS_RULE}")
    if not 1 <= int(m["port"]) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{value!r}: port {int(m['port'])} is out of range: {RAY_ADDRESS_RULE}"
        )
    return value


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
