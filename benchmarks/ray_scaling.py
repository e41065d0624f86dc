"""Throughput of one campaign with the local executor and with 1, 2, 4 local Ray workers, same session.

    python benchmarks/ray_scaling.py [--workers 1,2,4] [--max-examples N] [--frameworks jax,torch] [--quick]

Runs ``conformance run`` as a user would (a fresh process each time, framework start-up and, for
Ray, the local instance's start included), checks that every run recorded the same set of
(case, framework, check, dtype, verdict) as the local run, and prints results per second and the
ratio to the local executor. docs/scale-out.md quotes its output. Timings on a shared machine are
noisy: read the ratios, and run it on the machine you plan for.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def campaign_args(args, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "conformance", "run", "--frameworks", args.frameworks, "--ops", args.ops,
        "--checks", args.checks, "--dtypes", args.dtypes, "--max-examples", str(args.max_examples),
        "--seed", "1", "--out", str(out), "--found-dir", str(out.parent / f"{out.name}-found"), "--quiet",
    ]  # fmt: skip


def outcome_set(out: Path) -> set:
    from conformance.runner import read_results

    return {
        (
            r["case_id"],
            r.get("case_hash"),
            r["framework"],
            r["check"],
            r.get("dtype"),
            r["verdict"],
            r["phase"],
        )
        for r in read_results(out / "results.jsonl")
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--frameworks", default="jax,torch")
    p.add_argument("--ops", default="mul,add,sub,div")
    p.add_argument("--checks", default="forward,vjp")
    p.add_argument("--dtypes", default="float64,float32")
    p.add_argument("--max-examples", type=int, default=8)
    p.add_argument(
        "--quick", action="store_true", help="smoke run: jax, mul forward, 2 examples, local vs 1 Ray worker"
    )
    args = p.parse_args(argv)
    if args.quick:
        args.workers, args.frameworks, args.ops = "1", "jax", "mul"
        args.checks, args.dtypes, args.max_examples = "forward", "float64", 2
    tmp = Path(tempfile.mkdtemp(prefix="rgscale", dir="/tmp"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.setdefault("RAY_TMPDIR", str(tmp))
    rows = []
    try:
        runs = [("local", [])] + [
            (f"ray, {n} worker{'s' if n > 1 else ''}", ["--executor", "ray", "--ray-workers", str(n)])
            for n in map(int, args.workers.split(","))
        ]
        reference = None
        for i, (name, extra) in enumerate(runs):
            out = tmp / f"run{i}"
            start = time.perf_counter()
            proc = subprocess.run(
                campaign_args(args, out) + extra, cwd=ROOT, env=env, capture_output=True, text=True
            )
            seconds = time.perf_counter() - start
            if proc.returncode not in (0, 1):
                print(proc.stdout, proc.stderr, file=sys.stderr)
                return 1
            got = outcome_set(out)
            reference = got if reference is None else reference
            rows.append((name, seconds, len(got), got == reference))
            print(
                f"{name}: {seconds:.1f} s, {len(got)} results, same set as local: {got == reference}",
                flush=True,
            )
        base = rows[0][2] / rows[0][1]
        print()
        print("| executor | wall time (s) | results | results/s | ratio to local | same result set |")
        print("|---|---:|---:|---:|---:|---|")
        for name, seconds, n, same in rows:
            rate = n / seconds
            print(
                f"| {name} | {seconds:.1f} | {n} | {rate:.2f} | {rate / base:.2f} | {'yes' if same else 'NO'} |"
            )
        return 0 if all(r[3] for r in rows) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
