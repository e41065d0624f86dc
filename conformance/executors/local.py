"""The local executor (the default): the campaign's worker processes on this machine."""

from __future__ import annotations


def start(campaign) -> None:
    """Start every framework's worker (a framework that cannot start is dropped with its reason)."""
    campaign.start()


def run(campaign, curated, units) -> None:
    """Curated cases first, then each fuzz unit on every framework at once (conformance.executors.plan)."""
    campaign.run_cases(curated, phase="curated")
    for unit in units:
        campaign.fuzz(
            list(campaign.workers),
            unit.check,
            unit.strategy(),
            unit.max_examples,
            unit.seed,
            unit.max_shrinks,
        )
