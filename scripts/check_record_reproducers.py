"""Check that the stock reproducer of every result of a campaign agrees with its verdict.

A reproducer is what a maintainer runs first: a script made for a case the campaign passed must exit
0 (no departure), one made for a ``fail``, ``known`` or ``error_mismatch`` result must exit 1. This
writes the script of one result per (op, check) of a framework, made for the stock adapter, and runs
it in one process per framework (``exec``, the framework imported once: a subprocess per script
would take seconds each). Crashes and timeouts are left out (a script that aborts would take the
checker with it), and so are ``convention`` results, whose scripts the report never writes (the
element-wise comparison does not know the declared convention).

    python -m conformance run --frameworks torch,jax,tensorflow --max-examples 1 --out /tmp/c
    python scripts/check_record_reproducers.py /tmp/c            # every framework of the run
    python scripts/check_record_reproducers.py /tmp/c --frameworks jax

Prints per framework how many scripts agree and each that does not (exit 1 if any does not).
Session 30 found with it: 151 of 944 record spellings with no script, every JAX vjp script of a
0-d output and every torch linear-algebra script reporting a departure that was not there."""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = ("unsupported", "crash", "timeout", "convention")
DEPARTS = ("fail", "known", "error_mismatch")


def _results(out: Path, framework: str) -> list[dict]:
    """One result per (op, check) of ``framework`` in the campaign at ``out`` (records, conv, programs)."""
    chosen = {}
    with open(out / "results.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r.get("framework") == framework and r["verdict"] not in SKIPPED:
                chosen.setdefault((r["case"].get("op"), r["check"]), r)
    return list(chosen.values())


def check_framework(out: Path, framework: str) -> dict:
    """{"agree": n, "disagree": [...]} for ``framework``'s results (run in this process)."""
    from conformance import adapters
    from conformance.reproducer import reproducer

    counts, disagree = collections.Counter(), []
    for r in _results(out, framework):
        want = 1 if r["verdict"] in DEPARTS else 0
        try:
            text = reproducer(r, adapters.known()[framework])
        except Exception as exc:  # CannotReproduce and any bug of the writer: each is a finding
            disagree.append(
                f"{r['case']['op']} {r['check']} {r['verdict']}: no script ({type(exc).__name__}: {exc})"
            )
            continue
        printed, code = io.StringIO(), 0
        try:
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                exec(compile(text, f"<{r['case_id']} {r['check']}>", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:
            code = exc.code or 0
        except BaseException as exc:  # noqa: BLE001 (a script that raises disagrees: say what it raised)
            code = f"raised {type(exc).__name__}: {str(exc)[:200]}"
        if code == want:
            counts["agree"] += 1
        else:
            tail = printed.getvalue().strip().splitlines()[-1:] or [""]
            disagree.append(
                f"{r['case']['op']} {r['check']} {r['verdict']}: exit {code}, want {want}: {tail[0][:300]}"
            )
    return {"agree": counts["agree"], "disagree": disagree}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="a campaign's output directory (its results.jsonl)")
    parser.add_argument("--frameworks", help="comma-separated (default: every framework of the run)")
    parser.add_argument("--in-process", dest="one", help=argparse.SUPPRESS)  # a child's framework
    args = parser.parse_args(argv)
    if not (args.out / "results.jsonl").is_file():
        parser.error(f"out: {str(args.out)!r} has no results.jsonl (a campaign's --out directory)")
    if args.one:
        print(json.dumps(check_framework(args.out, args.one)))
        return 0
    with open(args.out / "results.jsonl") as f:
        found = sorted({json.loads(line).get("framework") for line in f} - {None})
    frameworks = args.frameworks.split(",") if args.frameworks else found
    if not (chosen := [fw for fw in frameworks if fw in found]):
        print(f"--frameworks {args.frameworks!r}: none is in this run (its frameworks: {', '.join(found)})")
        return 2
    failed = False
    for fw in chosen:  # a process each: the frameworks' global settings stay apart
        proc = subprocess.run(
            [sys.executable, __file__, str(args.out), "--in-process", fw],
            capture_output=True, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        if proc.returncode != 0:
            print(f"{fw}: the checker itself failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
            failed = True
            continue
        said = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{fw}: {said['agree']} scripts agree with their verdicts, {len(said['disagree'])} do not")
        for line in said["disagree"]:
            print(f"  {line}")
        failed |= bool(said["disagree"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
