"""Campaign throughput: results per second per framework, the harness's and the reference's share of the wall time.

For each framework alone (and, with several, all of them together: their workers run in parallel
and share the reference's results), run the default conv campaign — the curated conv cases plus
``--max-examples`` fuzz examples per check — and report:

* results per second (one result = one case × check × framework);
* the framework's own time (the adapters' ``run``, timed in the worker: the time inside the
  framework's calls) and the **harness share**: the part of the campaign's wall time not spent
  inside them, ``1 − framework s / wall s`` (Hypothesis drawing, the reference, judging, JSON,
  pickling and the worker round-trips, as far as they are not hidden behind the framework's work);
* the **reference share**: the part of the wall time the campaign process spends computing the
  reference's expected values and their bounds (conformance.expected.ReferenceClock: conv cases and
  op records), ``reference s / wall s`` ("-" on a revision without the clock); with ``--against`` the
  same figure before and after a change of the reference (issue 38: exactness must not slow
  campaigns noticeably);
* the campaign process's CPU time per result (a figure less sensitive to a busy machine).

Worker start-up (importing the framework) is timed apart and left out; so is writing the report.

    PYTHONPATH=. python benchmarks/campaign.py [--max-examples 40] [--frameworks torch,jax] [--seed 0]
    PYTHONPATH=. python benchmarks/campaign.py --quick            # seconds: torch, a tiny budget
    PYTHONPATH=. python benchmarks/campaign.py --ops tanh,sigmoid # op records instead of conv
    PYTHONPATH=. python benchmarks/campaign.py --against REV      # the same campaign on git revision
                                                                  # REV, alternated: the speed-up ratio
    PYTHONPATH=. python benchmarks/campaign.py --scaling [--write] # wall time vs --max-examples 10/40/160
                                                                   # (torch, jax, tensorflow); --write puts
                                                                   # the table into docs/throughput.md

Targets (docs/throughput.md): harness share of a torch-only campaign <= 20%; results per second at
least twice those of the harness before the throughput work (``--against aff875a``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALING_BUDGETS = (10, 40, 160)
SCALING_CHECKS = ("forward",)
DOC = ROOT / "docs" / "throughput.md"
BEGIN, END = "<!-- campaign-scaling:begin -->", "<!-- campaign-scaling:end -->"


def measure(frameworks: dict, max_examples: int, seed: int, checks=None, curated=True, ops=("conv",)) -> dict:
    """One campaign, as ``conformance run`` runs it (curated cases of ``ops``, then fuzzing); its figures.

    Written against the API the harness has had since before the throughput work, so that
    ``--against`` can run it on an older revision.
    """
    from conformance import cli, expected
    from conformance.case import DTYPES
    from conformance.runner import Campaign, read_results

    checks = list(checks or cli.ALL_CHECKS)
    dtypes = list(DTYPES)
    with (
        tempfile.TemporaryDirectory() as out,
        Campaign(out, frameworks, found_dir=Path(out) / "found") as camp,
    ):
        start = time.perf_counter()
        camp.start()
        startup = time.perf_counter() - start
        cases = [c for c in cli._cases(cli.DEFAULT_CASES, checks, dtypes) if c.op in ops] if curated else []
        units = _plan(ops, checks, dtypes, max_examples, seed)  # before the clock, as `conformance run` plans
        clock = getattr(expected, "ReferenceClock", None)  # (None on a revision without it)
        reference = None if clock is None else clock.seconds
        start, cpu = time.perf_counter(), time.process_time()
        if units is None:  # a revision without a fuzz plan (--against an older harness)
            camp.run_cases(cases, phase="curated")
            if max_examples:
                cli._fuzz(camp, tuple(ops), checks, dtypes, max_examples, seed)
        else:  # as `conformance run` runs its campaign
            from conformance.executors import local

            local.run(camp, cases, units)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        reference = None if clock is None else clock.seconds - reference
        records = read_results(Path(out) / "results.jsonl")
        inside = dict(camp.framework_seconds)
        # CPU accounting (harness versions that report it): the framework's CPU inside its calls,
        # and every worker's CPU after start-up
        inside_cpu = dict(getattr(camp, "framework_cpu", {}))
        workers_cpu = {n: w.cpu_seconds() for n, w in camp.workers.items() if hasattr(w, "cpu_seconds")}
    return {
        "frameworks": list(frameworks),
        "startup": startup,
        "wall": wall,
        "reference": reference,
        "cpu": cpu,
        "results": len(records),
        "inside": inside,
        "inside_cpu": inside_cpu,
        "workers_cpu": workers_cpu,
        "verdicts": sorted(
            {(r["case_id"], r["framework"], r["check"], r.get("dtype") or "", r["verdict"]) for r in records}
        ),
    }


def _plan(ops, checks, dtypes, max_examples, seed):
    """The fuzz units of ``ops``, planned as ``conformance run`` plans them before its campaign starts
    (None on a revision that has no plan: its ``cli._fuzz`` plans inside the timed region)."""
    import conformance

    # (an older tree has no conformance/executors; the editable install would import this tree's)
    if not (Path(conformance.__file__).parent / "executors" / "plan.py").exists():
        return None
    from conformance.executors.plan import fuzz_units

    records = [op for op in ops if op not in ("conv", "programs")]  # the op records among them
    return fuzz_units(tuple(ops), records, checks, dtypes, max_examples, seed) if max_examples else []


def _row(name: str, m: dict) -> str:
    inside = sum(m["inside"].values())
    share = f"{1 - inside / m['wall']:14.0%}" if len(m["inside"]) == 1 else f"{'-':>14s}"
    cpu_share = f"{'-':>10s}"
    ref = m.get("reference")
    ref_share = f"{'-':>15s}" if ref is None else f"{ref / m['wall']:15.0%}"
    if m.get("inside_cpu") and m.get("workers_cpu"):
        total = m["cpu"] + sum(m["workers_cpu"].values())
        cpu_share = f"{1 - sum(m['inside_cpu'].values()) / total:10.0%}"
    return (
        f"{name:16s} {m['results']:8d} {m['wall']:8.2f} {m['results'] / m['wall']:10.1f} {inside:12.2f} "
        f"{share} {ref_share} {cpu_share} {1e3 * m['cpu'] / max(m['results'], 1):13.2f} {m['startup']:10.1f}"
    )


HEADER = (
    f"{'framework':16s} {'results':>8s} {'wall s':>8s} {'results/s':>10s} {'framework s':>12s} "
    f"{'harness share':>14s} {'reference share':>15s} {'CPU share':>10s} {'driver ms/res':>13s} {'startup s':>10s}"
)
LEGEND = (
    "harness share: 1 - framework s / wall s (the time not spent inside the framework's calls); reference "
    "share: reference s / wall s (the campaign process computing expected values and bounds); CPU share: "
    "the harness's part of all CPU time spent (driver + workers after start-up), which a busy machine "
    "inflates less; driver ms/res: the campaign process's CPU time per result"
)


def _child(args) -> None:
    """``--child JSON``: one measurement in this process (possibly another revision's harness)."""
    spec = json.loads(args.child)
    m = measure(
        spec["frameworks"],
        spec["max_examples"],
        spec["seed"],
        spec.get("checks"),
        spec["curated"],
        spec["ops"],
    )
    print("RESULT " + json.dumps(m))


def _run_child(src: Path, spec: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"the measurement in {src} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def against(args, chosen) -> None:
    """Alternate this tree and revision ``args.against`` on the same campaign; print both and the ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        archive = subprocess.run(["git", "archive", args.against], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        rows = {"old": [], "new": []}
        for name, spec_fw in chosen.items():
            spec = {"frameworks": {name: spec_fw}, "max_examples": args.max_examples, "seed": args.seed}
            spec["ops"] = args.ops
            spec["curated"] = True
            for _ in range(args.repeat):
                for label, src in (("old", old), ("new", ROOT)):
                    m = _run_child(src, spec)
                    rows[label].append((name, m))
                    print(f"{label} ({args.against if label == 'old' else 'this tree'}): {_row(name, m)}")
        print()
        print(f"best of {args.repeat}, alternated; {args.against} = old")
        print(HEADER)
        for name in chosen:
            best = {k: min((m for n, m in v if n == name), key=lambda m: m["wall"]) for k, v in rows.items()}
            for label in ("old", "new"):
                print(_row(f"{name} {label}", best[label]))
            o, n = best["old"], best["new"]
            same = "identical" if o["verdicts"] == n["verdicts"] else "DIFFERENT"
            print(
                f"  {name}: results/s x{(n['results'] / n['wall']) / (o['results'] / o['wall']):.2f}; "
                f"(case id, framework, check, dtype, verdict) sets {same} ({len(o['verdicts'])} vs "
                f"{len(n['verdicts'])})"
            )
        print(LEGEND)


def scaling(args, chosen) -> str:
    """Wall time of a fuzz campaign (no curated cases) against --max-examples, per framework."""
    lines = [
        f"`PYTHONPATH=. python benchmarks/campaign.py --scaling --write` — checks {', '.join(SCALING_CHECKS)}, "
        f"every dtype, seed {args.seed}, no curated cases, one worker thread; wall time of the fuzzing "
        "(worker start-up apart).",
        "",
        "| framework | start-up s | "
        + " | ".join(f"{n} ex.: wall s (results, results/s)" for n in SCALING_BUDGETS)
        + " | s per extra result (10→40, 40→160) |",
        "|---|---:|" + "---:|" * len(SCALING_BUDGETS) + "---:|",
    ]
    for name, spec_fw in chosen.items():
        cells, points = [], []
        startup = None
        for n in SCALING_BUDGETS:
            m = measure({name: spec_fw}, n, args.seed, SCALING_CHECKS, curated=False)
            startup = m["startup"] if startup is None else startup
            points.append((m["results"], m["wall"]))
            cells.append(f"{m['wall']:.1f} ({m['results']}, {m['results'] / m['wall']:.0f}/s)")
            print(f"{name} --max-examples {n}: {m['results']} results in {m['wall']:.2f} s", file=sys.stderr)
        slopes = [
            f"{(w2 - w1) / max(r2 - r1, 1) * 1e3:.1f} ms" for (r1, w1), (r2, w2) in zip(points, points[1:])
        ]
        lines.append(f"| {name} | {startup:.1f} | " + " | ".join(cells) + f" | {', '.join(slopes)} |")
    return "\n".join(lines) + "\n"


def write_doc(table: str) -> None:
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOC}: no {BEGIN} ... {END} markers to write the table between")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{table}{END}{tail}")
    print(f"wrote the table into {DOC}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=None, help="fuzz examples per check (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--frameworks", default=None, help="comma-separated (default: every installed one)")
    parser.add_argument("--quick", action="store_true", help="seconds: torch only, 3 examples per check")
    parser.add_argument("--against", metavar="REV", help="also run git revision REV's harness, alternated")
    parser.add_argument("--repeat", type=int, default=2, help="runs per side with --against (best is shown)")
    parser.add_argument("--scaling", action="store_true", help="wall time vs --max-examples 10, 40, 160")
    parser.add_argument("--write", action="store_true", help="with --scaling: write the table into the docs")
    parser.add_argument("--ops", default="conv", help="comma-separated records to campaign (default conv)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)
    args.ops = args.ops.split(",")
    from conformance import adapters

    installed = adapters.installed()
    default = "torch" if args.quick else ",".join(installed)
    chosen = {name: installed[name] for name in (args.frameworks or default).split(",")}
    if args.max_examples is None:
        args.max_examples = 3 if args.quick else 40
    if args.scaling:
        table = scaling(args, chosen)
        print(table)
        if args.write:
            write_doc(table)
        return None
    if args.against:
        return against(args, chosen)
    rows = [
        (name, measure({name: spec}, args.max_examples, args.seed, curated=not args.quick, ops=args.ops))
        for name, spec in chosen.items()
    ]
    if len(chosen) > 1:
        rows.append(("all (parallel)", measure(chosen, args.max_examples, args.seed, ops=args.ops)))
    print(
        f"{','.join(args.ops)} campaign: {'no' if args.quick else 'the'} curated cases + {args.max_examples} fuzz examples "
        "per check (every check, every dtype), seed "
        f"{args.seed}, 1 thread per worker"
    )
    print(HEADER)
    for name, m in rows:
        print(_row(name, m))
    print(LEGEND)
    return None


if __name__ == "__main__":
    main()
