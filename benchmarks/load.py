"""Load: a long campaign through the real driver, and the driver's peak memory against the result count.

Runs tiny convolution cases (distinct seeds, forward check) on one framework worker through
:class:`conformance.runner.Campaign` -- the same worker protocol, reference computation, judging,
``results.jsonl`` writer and bookkeeping as ``conformance run`` -- and prints the driver's peak
resident memory (``ru_maxrss``) at checkpoints. Records are streamed to ``results.jsonl``; the
driver keeps only a 16-byte digest per passing result (:class:`conformance.runner.ResultIndex`,
the index that makes ``--resume`` and de-duplication exact), so the peak must stay flat apart
from that index: the run fails (exit 1)
if the peak grows by more than ``--max-bytes-per-result`` per result between the first
checkpoint and the last, or if any result is missing from ``results.jsonl``.

    python benchmarks/load.py                 # 50,000 results (minutes)
    python benchmarks/load.py --quick         # 150 results, a smoke test (memory not judged)

Its figure is the driver's memory per result (peak growth between checkpoints / results), judged
against ``--max-bytes-per-result``; with ``--quick`` the run is too short for page-granular RSS
to say anything, so only the lost-results check applies.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.case import Case  # noqa: E402
from conformance.runner import Campaign  # noqa: E402


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def cases(n: int):
    for seed in range(n):
        yield Case.from_dict(
            {
                "op": "conv",
                "params": {"rank": 1, "stride": 1 + seed % 2, "padding": seed % 2},
                "shapes": {"input": [1, 2, 5], "weight": [2, 2, 2]},
                "dtype": "float64",
                "seed": seed,
                "checks": ["forward"],
            }
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=int, default=50_000)
    ap.add_argument("--quick", action="store_true", help="150 results, memory growth not judged")
    ap.add_argument("--framework", default="torch=conformance.adapters.torch_adapter:TorchAdapter")
    ap.add_argument(
        "--max-bytes-per-result", type=float, default=512.0, help="peak growth allowed per result"
    )
    ap.add_argument("--json", help="write the checkpoints here")
    args = ap.parse_args(argv)
    total = 150 if args.quick else args.results
    name, spec = args.framework.split("=", 1)
    marks = sorted({max(total // 10, 1), total // 2, total})
    rows = []
    with tempfile.TemporaryDirectory() as out:
        with Campaign(out, {name: spec}, timeout=60) as camp:
            camp.start()
            start = time.monotonic()
            for i, case in enumerate(cases(total), 1):
                camp.run_check(case, "forward")
                if i in marks:
                    rows.append(
                        {
                            "results": i,
                            "peak_mib": round(peak_mib(), 1),
                            "seconds": round(time.monotonic() - start, 1),
                        }
                    )
                    print(
                        f"{i:7d} results  driver peak RSS {rows[-1]['peak_mib']:8.1f} MiB  "
                        f"{rows[-1]['seconds']:7.1f} s",
                        flush=True,
                    )
        verdicts, lines = {}, 0
        with open(Path(out) / "results.jsonl") as f:  # the record on disk is the truth
            for line in f:
                lines += 1
                verdict = json.loads(line)["verdict"]
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
    growth = rows[-1]["peak_mib"] - rows[0]["peak_mib"]
    per_result = growth * 2**20 / max(rows[-1]["results"] - rows[0]["results"], 1)
    print(
        f"results.jsonl lines: {lines}; verdicts: {verdicts}; peak growth {growth:.1f} MiB "
        f"from {rows[0]['results']} to {rows[-1]['results']} results ({per_result:.0f} bytes per result)"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"checkpoints": rows, "verdicts": verdicts, "lines": lines, "bytes_per_result": per_result}
            )
        )
    if lines != total:
        print(f"LOST RESULTS: {total} run, {lines} recorded")
        return 1
    if args.quick:
        print("quick: memory growth not judged (too few results)")
        return 0
    if per_result > args.max_bytes_per_result:
        print(f"MEMORY GROWS with results: {per_result:.0f} bytes per result > {args.max_bytes_per_result:g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
