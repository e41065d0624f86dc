"""The cost of two examples in a constructed conv case: a conv campaign unit's wall time with
``coverage.CONSTRUCTED_BATCH`` = 2 (the default since conv28) against 1, per framework.

A conv fuzz unit (one check, ``--max-examples`` examples, seed ``--seed``) constructs one example in
three (coverage.CONSTRUCTED_SHARE) with a non-empty batch of CONSTRUCTED_BATCH examples. The unit's
cases are drawn twice from the same seed, once per batch size (the same construction cells in the
same order: the script checks that each constructed case takes the same cell in both draws), and
each set is then run as ``conformance run`` runs a case (the reference's expected values and bounds,
the framework's worker, the judge), the two sets alternated round by round, each in a fresh
Campaign whose worker start-up is left out. The result is the ratio of the two walls, batch 2 /
batch 1, median over rounds (and of the best samples): both sides run in the same minutes on the
same machine, one thread per worker. Wall time, not CPU time: the framework's work is in its worker
process. Drawing is left out (the same cost for both: the batch is one more draw's value).

    PYTHONPATH=. python benchmarks/constructed_batch.py [--frameworks torch,jax,tensorflow]
        [--check vjp] [--max-examples 40] [--seed 0] [--rounds 3]
    PYTHONPATH=. python benchmarks/constructed_batch.py --quick   # torch, 4 examples, one round
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's conformance

from _timing import pin_threads  # noqa: E402

pin_threads(1)

from conformance import adapters, coverage  # noqa: E402
from conformance.case import DTYPES  # noqa: E402
from conformance.executors.plan import fuzz_units  # noqa: E402
from conformance.runner import Campaign, _hypothesis  # noqa: E402

BATCHES = (1, 2)


def unit_cases(check: str, max_examples: int, seed: int, batch: int) -> list:
    """The cases the conv fuzz unit of ``check`` draws at ``seed`` with constructed batches of ``batch``."""
    saved = coverage.CONSTRUCTED_BATCH
    coverage.CONSTRUCTED_BATCH = batch  # axes_cases reads it when a cell's strategy is built
    try:
        [unit] = [u for u in fuzz_units(("conv",), [], [check], DTYPES, max_examples, seed) if u.check == check]
        got = []
        _hypothesis(got.append, unit.strategy(), unit.max_examples, unit.seed, False, unit.simplest)()
    finally:
        coverage.CONSTRUCTED_BATCH = saved
    return [c.with_checks((check,)) for c in got]


def examples(cases) -> int:
    """The examples (batch entries) of ``cases``, summed: what a bigger constructed batch adds."""
    return sum(c.shapes["input"][0] for c in cases)


def run_wall(framework: str, cases) -> tuple[float, int]:
    """(wall seconds, results) of running ``cases`` on ``framework`` in a fresh campaign, start-up excluded."""
    spec = {**adapters.installed(), **adapters.installed_modes()}[framework]
    with tempfile.TemporaryDirectory() as out, Campaign(out, {framework: spec}) as camp:
        dropped = camp.start()
        if framework not in camp.workers:
            raise SystemExit(f"{framework} did not start: {dropped}")
        start = time.perf_counter()
        records = camp.run_cases(cases, phase="fuzz")
        return time.perf_counter() - start, len(records)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frameworks", default="torch,jax,tensorflow")
    parser.add_argument("--check", default="vjp")
    parser.add_argument("--max-examples", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="torch, 4 examples, one round (a smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.frameworks, args.max_examples, args.rounds = "torch", 4, 1
    drawn = {b: unit_cases(args.check, args.max_examples, args.seed, b) for b in BATCHES}
    # the batch is one axis value either way (">0"): the same seed takes the same cells, so the two
    # draws have the same eleven axis values at every position
    same = [coverage.conv_axes(a) == coverage.conv_axes(b) for a, b in zip(drawn[1], drawn[2])]
    print(
        f"conv unit {args.check}, seed {args.seed}, {args.max_examples} examples: cases {len(drawn[1])} / "
        f"{len(drawn[2])}, batch entries summed {examples(drawn[1])} / {examples(drawn[2])} (CONSTRUCTED_BATCH "
        f"1 / 2); the same axes at {sum(same)} of {len(same)} positions"
    )
    print(f"{'framework':12s} {'results':>8s} {'batch 1 s':>10s} {'batch 2 s':>10s} {'ratio 2/1':>10s} {'best':>8s}")
    for framework in args.frameworks.split(","):
        walls = {b: [] for b in BATCHES}
        results = 0
        for _ in range(args.rounds):
            for b in BATCHES:  # alternated: a slow spell hits both
                wall, results = run_wall(framework, drawn[b])
                walls[b].append(wall)
        ratio = statistics.median(w2 / w1 for w1, w2 in zip(walls[1], walls[2]))
        best = min(walls[2]) / min(walls[1])
        print(
            f"{framework:12s} {results:8d} {statistics.median(walls[1]):10.2f} {statistics.median(walls[2]):10.2f} "
            f"{ratio:10.3f} {best:8.3f}"
        )
    print("ratio 2/1: median over rounds of the unit's wall with two examples per constructed batch / one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
