"""The local executor (the default): the campaign's worker processes on this machine."""

from __future__ import annotations


def start(campaign) -> None:
    """Start every framework's worker (a framework that cannot start is dropped with its reason)."""
    campaign.start()


def run(campaign, curated, units) -> None:
    """Curated cases first, then each fuzz unit on every framework at once (conformance.executors.plan).

    Nothing waits between them: the fuzz units' examples are drawn while the frameworks still run
    the curated checks (their first calls include each framework's one-off warm-ups), and the
    shrinking of every unit's failures follows the generation of all of them. The results are
    those of running each unit to its end in turn; only their order in results.jsonl differs
    (every unit's shrunk cases come after the generation of all units).
    """
    campaign.run_cases(curated, phase="curated", wait=False)
    runs = [
        (
            campaign.generate(
                list(campaign.workers), u.check, u.strategy(), u.max_examples, u.seed, u.simplest
            ),
            u,
        )
        for u in units
    ]
    for fuzz_run, unit in runs:
        campaign.shrink(fuzz_run, unit.max_shrinks)
    campaign.drain()
