"""Campaign throughput: results per second per framework, and where the wall time goes.

For each installed framework alone, then for all of them together (the default campaign, where
the frameworks' workers run in parallel and share the reference's results), run the default conv
campaign — the curated cases plus ``--max-examples`` fuzz examples per check — and report:

* results per second (one result = one case × check × framework);
* the time spent inside the frameworks (the adapters' ``run``, timed in the workers; with
  several frameworks in parallel their sum can exceed the wall time) and the harness's share of
  the wall time: the campaign process's own CPU time (Hypothesis, the NumPy reference, judging,
  pickling, JSON) over the wall time. Worker start-up (importing the framework) is reported
  separately and excluded.

    PYTHONPATH=. python benchmarks/campaign.py [--max-examples 6] [--frameworks torch,jax]

Target: harness overhead under 25% of the campaign's wall time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from conformance import adapters
from conformance.case import DTYPES, VALID_CHECKS, load_cases
from conformance.cli import DEFAULT_CASES, DEFAULT_MAX_EXAMPLES, _fuzz
from conformance.runner import Campaign, read_results


def measure(frameworks: dict[str, str], max_examples: int, seed: int) -> dict:
    checks = VALID_CHECKS + ("error",)
    with (
        tempfile.TemporaryDirectory() as out,
        Campaign(out, frameworks, found_dir=Path(out) / "found") as camp,
    ):
        start = time.perf_counter()
        camp.start()
        startup = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        camp.run_cases(load_cases(DEFAULT_CASES), phase="curated")
        _fuzz(camp, checks, DTYPES, max_examples, seed)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        n = len(read_results(Path(out) / "results.jsonl"))
        inside = dict(camp.framework_seconds)
    return {"startup": startup, "wall": wall, "cpu": cpu, "results": n, "inside": inside}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=DEFAULT_MAX_EXAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frameworks", default=",".join(adapters.installed()))
    args = parser.parse_args(argv)
    chosen = {name: adapters.installed()[name] for name in args.frameworks.split(",")}
    rows = [(name, measure({name: spec}, args.max_examples, args.seed)) for name, spec in chosen.items()]
    if len(chosen) > 1:
        rows.append(("all (parallel)", measure(chosen, args.max_examples, args.seed)))
    print(
        f"default conv campaign: curated cases + {args.max_examples} fuzz examples per check "
        f"({', '.join(VALID_CHECKS)}, error), 1 thread per worker"
    )
    print(
        f"{'framework':16s} {'results':>8s} {'wall s':>8s} {'results/s':>10s} {'framework s':>12s} "
        f"{'harness CPU s':>14s} {'harness share':>14s} {'startup s':>10s}"
    )
    for name, m in rows:
        inside = sum(m["inside"].values())
        print(
            f"{name:16s} {m['results']:8d} {m['wall']:8.1f} {m['results'] / m['wall']:10.1f} {inside:12.1f} "
            f"{m['cpu']:14.1f} {m['cpu'] / m['wall']:14.0%} {m['startup']:10.1f}"
        )


if __name__ == "__main__":
    main()
