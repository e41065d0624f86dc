"""The ``conformance`` command: ``run`` (the main job), ``replay``, ``report`` and ``frameworks``.

Exit status: 0 when nothing failed, 1 when some result is ``fail``, ``error_mismatch``,
``crash`` or ``timeout``, 2 on bad usage (the message names the flag and the value).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from conformance import adapters
from conformance.case import DTYPES, PROGRAM_CHECKS, VALID_CHECKS, CaseError, load_cases
from conformance.runner import Campaign
from conformance.tolerance import FAILING

ALL_CHECKS = VALID_CHECKS + ("error",) + PROGRAM_CHECKS
OPS = ("conv", "programs")
DEFAULT_OPS = ("conv",)
OP_OF_CASE = {"conv": "conv", "programs": "program"}  # --ops name -> Case.op
# the repository's cases/ (a checkout or an editable install), else ./cases
_CASE_DIRS = (Path(__file__).resolve().parents[1] / "cases", Path("cases"))
DEFAULT_CASES = next((d for d in _CASE_DIRS if d.is_dir()), _CASE_DIRS[0])
DEFAULT_MAX_EXAMPLES = 40


class UsageError(Exception):
    """A bad flag or value; main() prints it and exits 2."""


def _list(flag: str, value: str | None, allowed, default):
    if value is None:
        return list(default)
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise UsageError(f"{flag}: expected a comma-separated list, got {value!r}")
    for item in items:
        if item not in allowed:
            raise UsageError(f"{flag}: {item!r} is not one of {', '.join(allowed)}")
    return items


def _op_choices() -> list:
    """What --ops takes: conv, programs, all, the op records' families and names."""
    from conformance import ops

    fams = [f for f in sorted(ops.families()) if f not in OPS]
    return list(OPS) + ["all"] + fams + sorted(n for n in ops.fuzzed() if n not in OPS and n not in fams)


def _selected_ops(args) -> tuple[list, list]:
    """(--ops items as given, the op-record names they select); conv stays the conv path."""
    from conformance import ops

    items = _list("--ops", args.ops, _op_choices(), DEFAULT_OPS)
    records = [n for n in ops.select([i for i in items if i != "programs"]) if n != "conv"]
    return items, records


def _check_record_checks(args, items, records, checks) -> None:
    """A usage error for an explicitly asked check that no selected op supports."""
    from conformance.ops import RECORDS

    if args.checks is None or "conv" in items or "all" in items:
        return
    supported = set(PROGRAM_CHECKS) if "programs" in items else set()
    for name in records:
        supported |= set(RECORDS[name].checks)
    for check in checks:
        if check not in supported:
            raise UsageError(
                f"--checks: {check!r} is not supported by --ops {args.ops} "
                f"(their checks: {', '.join(c for c in ALL_CHECKS if c in supported)})"
            )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Check convolution forward, gradients, second-order gradients, jvp and vmap of PyTorch, "
        "TensorFlow and JAX against refgrad's reference, element by element against derived error bounds.",
        epilog="Exit status: 0 nothing failed, 1 something failed, 2 bad usage. Docs: docs/conformance.md",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument(
            "--frameworks", help="comma-separated: torch,tensorflow,jax (default: every installed one)"
        )
        p.add_argument(
            "--adapter",
            action="append",
            default=[],
            metavar="MOD:CLS",
            help="an extra backend adapter class (repeatable); alone, it runs only the adapters",
        )
        p.add_argument("--checks", help=f"comma-separated subset of {','.join(ALL_CHECKS)}")
        p.add_argument("--dtypes", help=f"comma-separated subset of {','.join(DTYPES)}")
        p.add_argument("--out", default="reports/latest", help="output directory (default reports/latest)")
        p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
        p.add_argument(
            "--precision",
            default="highest",
            choices=["highest", "default"],
            help="highest: TF32 off; default: the framework's default (no effect on CPU)",
        )
        p.add_argument("--timeout", type=float, default=120.0, help="seconds per check before 'timeout'")
        p.add_argument(
            "--resume", action="store_true", help="continue DIR/results.jsonl, skipping recorded results"
        )
        p.add_argument("--quiet", action="store_true", help="no progress bar")

    run = sub.add_parser("run", help="curated cases plus a Hypothesis fuzz campaign")
    common(run)
    run.add_argument(
        "--ops",
        help="comma-separated: conv (convolution cases), programs (random autograd programs over views "
        "and in-place ops; the program check), op record names and families (conformance ops lists them), "
        "all (every op record) (default: conv)",
    )
    run.add_argument(
        "--max-examples",
        type=int,
        default=DEFAULT_MAX_EXAMPLES,
        help=f"fuzz examples per framework and check (default {DEFAULT_MAX_EXAMPLES}; 0: no fuzzing)",
    )
    run.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    run.add_argument(
        "--cases", default=None, help=f"curated cases file or directory (default {DEFAULT_CASES})"
    )
    run.add_argument("--found-dir", default="cases/found", help="where shrunk failing cases are saved")

    replay = sub.add_parser("replay", help="run saved cases (a JSON file or a directory of them)")
    replay.add_argument("path", help="CASE.json or a directory")
    common(replay)

    report = sub.add_parser(
        "report",
        help="render report.json, index.html and reproducers/ from a results.jsonl (or a directory holding one)",
    )
    report.add_argument(
        "results", nargs="?", default="reports/latest", help="RESULTS.jsonl or DIR (default reports/latest)"
    )
    report.add_argument(
        "--baseline", metavar="OLD/report.json", help="an earlier report.json: adds the regression view"
    )
    report.add_argument("--out", help="output directory (default: the directory of the results)")

    sub.add_parser("frameworks", help="installed frameworks, versions, devices and precision settings")
    sub.add_parser("ops", help="the op records: family, table primitives, checks, frameworks (or why not)")
    return parser


def _frameworks(args) -> dict[str, str]:
    known = adapters.known()
    installed = adapters.installed()
    chosen = {}
    if args.frameworks is not None or not args.adapter:
        for name in _list("--frameworks", args.frameworks, list(known), installed):
            if name not in installed:
                raise UsageError(
                    f"--frameworks: {name!r} is not installed here (pip install refgrad[{name}])"
                )
            chosen[name] = installed[name]
    for spec in args.adapter:
        try:
            cls = adapters.load_class(spec)
        except adapters.AdapterError as exc:
            raise UsageError(f"--adapter: {exc}") from None
        chosen[cls.name] = spec
    if not chosen:
        raise UsageError("--frameworks: no framework is installed; install torch, tensorflow or jax")
    return chosen


class Progress:
    """A one-line progress bar on stderr (a line every 25 results when stderr is not a terminal)."""

    def __init__(self, quiet: bool):
        self.quiet, self.tty = quiet, sys.stderr.isatty()
        self.n, self.bad, self.start = 0, 0, time.monotonic()

    def __call__(self, rec):
        self.n += 1
        self.bad += rec["verdict"] in FAILING
        if self.quiet or (not self.tty and self.n % 25):
            return
        line = (
            f"[{self.n:5d} results, {self.bad} failing, {time.monotonic() - self.start:6.1f}s] "
            f"{rec['framework']} {rec['check']}: {rec['verdict']}"
        )
        sys.stderr.write(("\r" + line.ljust(90)) if self.tty else line + "\n")
        sys.stderr.flush()

    def done(self):
        if self.tty and not self.quiet and self.n:
            sys.stderr.write("\n")


def _cases(path, checks, dtypes):
    cases = load_cases(path)
    out = []
    for case in cases:
        if case.dtype in dtypes:
            kept = [c for c in case.checks if c in checks]
            if kept:
                out.append(case.with_checks(kept))
    return out


def _campaign(args, frameworks, progress, found_dir=None):
    return Campaign(
        args.out,
        frameworks,
        device=args.device,
        precision=args.precision,
        timeout=args.timeout,
        resume=args.resume,
        found_dir=found_dir,
        progress=progress,
    )


def _start(campaign, args) -> None:
    campaign.start()
    for name, reason in campaign.startup_errors.items():
        print(f"conformance: {name} could not start on --device {args.device}: {reason}", file=sys.stderr)
    if not campaign.workers:
        raise UsageError(f"--device {args.device}: no framework could start (reasons above)")


def _finish(campaign, args, progress) -> int:
    from conformance.report import build_report

    progress.done()
    report = build_report(args.out, campaign.frameworks_info(), " ".join(sys.argv), run=_run_settings(args))
    totals = report["totals"]
    counts = ", ".join(
        f"{v} {totals[v]}"
        for v in ("pass", "fail", "error_mismatch", "crash", "timeout", "unsupported")
        if totals.get(v)
    )
    print(f"{totals.get('results', 0)} results: {counts or 'none'}")
    print(f"wrote {Path(args.out) / 'results.jsonl'}, report.json, index.html")
    if report["discrepancies"]:
        print(
            f"{len(report['discrepancies'])} discrepancies, each with a standalone reproducer in "
            f"{Path(args.out) / 'reproducers'}/"
        )
    print(f"open {Path(args.out) / 'index.html'} to read the report (docs/reports.md explains it)")
    for r in report["failures"][:20]:
        print(f"  {r['verdict']}: {r['framework']} {r['check']} {r['case_id']}: {r.get('reason', '')[:300]}")
    return 1 if report["failed"] else 0


def _run_settings(args) -> dict:
    """The run's flags that report.json records in its environment."""
    return {
        "device": args.device,
        "precision": args.precision,
        "seed": getattr(args, "seed", None),
        "max_examples": getattr(args, "max_examples", None),
    }


def cmd_run(args) -> int:
    frameworks = _frameworks(args)
    ops, records = _selected_ops(args)
    checks = _list("--checks", args.checks, ALL_CHECKS, ALL_CHECKS)
    _check_record_checks(args, ops, records, checks)
    dtypes = _list("--dtypes", args.dtypes, DTYPES, DTYPES)
    if args.max_examples < 0:
        raise UsageError(f"--max-examples: must be >= 0, got {args.max_examples}")
    cases_path = Path(args.cases) if args.cases else DEFAULT_CASES
    if args.cases and not cases_path.exists():
        raise UsageError(f"--cases: {args.cases!r} does not exist")
    curated = _cases(cases_path, checks, dtypes) if cases_path.exists() else []
    curated = [c for c in curated if c.op in {OP_OF_CASE[o] for o in ops if o in OP_OF_CASE} | set(records)]
    if not cases_path.exists():
        print(
            f"conformance: no curated cases at {cases_path} (pass --cases DIR); fuzzing only", file=sys.stderr
        )
    progress = Progress(args.quiet)
    with _campaign(args, frameworks, progress, args.found_dir) as campaign:
        _start(campaign, args)
        campaign.run_cases(curated, phase="curated")
        if args.max_examples:
            _fuzz(campaign, ops, checks, dtypes, args.max_examples, args.seed)
            _fuzz_records(campaign, records, checks, dtypes, args.max_examples, args.seed)
        return _finish(campaign, args, progress)


def _fuzz(campaign, ops, checks, dtypes, max_examples, seed):
    from conformance.strategies import conv_cases, invalid_conv_cases, program_cases

    if "programs" in ops and "program" in checks and "float64" in dtypes:
        campaign.fuzz(list(campaign.workers), "program", program_cases(), max_examples, seed)
    if "conv" not in ops:
        return
    for check in [c for c in checks if c not in PROGRAM_CHECKS]:
        strategy = invalid_conv_cases(dtypes) if check == "error" else conv_cases(dtypes, checks=(check,))
        campaign.fuzz(list(campaign.workers), check, strategy, max_examples, seed)


def _fuzz_records(campaign, records, checks, dtypes, max_examples, seed):
    """Each selected op record, each of its checks asked for: its own sample strategy."""
    from conformance.ops import RECORDS
    from conformance.strategies import record_cases

    for name in records:
        for check in [c for c in RECORDS[name].checks if c in checks]:
            strategy = record_cases(name, dtypes, (check,))
            campaign.fuzz(list(campaign.workers), check, strategy, max_examples, seed)


def cmd_ops(args) -> int:
    from conformance import ops

    for family, names in sorted(ops.families().items()):
        print(f"{family}:")
        for name in names:
            rec = ops.RECORDS[name]
            spelled = (
                [f for f in ops.FRAMEWORKS if not isinstance(rec.spelling(f), str)]
                if rec.fn
                else list(ops.FRAMEWORKS)
            )
            print(
                f"  {name:18s} checks: {','.join(rec.checks):38s} frameworks: {','.join(spelled)}"
                f"   primitives: {','.join(rec.rules)}"
            )
            for f in ops.FRAMEWORKS:
                why = rec.spelling(f) if rec.fn else None
                if isinstance(why, str):
                    print(f"      {f}: {why}")
    print("not fuzzed on their own:")
    for name, rec in sorted(ops.RECORDS.items()):
        if rec.not_fuzzed:
            print(f"  {name:18s} {rec.not_fuzzed}")
    return 0


def cmd_replay(args) -> int:
    frameworks = _frameworks(args)
    checks = _list("--checks", args.checks, ALL_CHECKS, ALL_CHECKS)
    dtypes = _list("--dtypes", args.dtypes, DTYPES, DTYPES)
    if not Path(args.path).exists():
        raise UsageError(f"replay: {args.path!r} does not exist")
    cases = _cases(args.path, checks, dtypes)
    progress = Progress(args.quiet)
    with _campaign(args, frameworks, progress) as campaign:
        _start(campaign, args)
        campaign.run_cases(cases, phase="replay")
        return _finish(campaign, args, progress)


def cmd_frameworks(args) -> int:
    import tempfile

    from conformance.runner import Worker

    known, installed = adapters.known(), adapters.installed()
    with tempfile.TemporaryDirectory() as logs:
        for name, spec in known.items():
            if name not in installed:
                print(f"{name}: not installed (pip install refgrad[{name}])")
                continue
            worker = Worker(name, spec, log_dir=logs)
            try:
                info = worker.start()
            except Exception as exc:
                print(f"{name}: installed but the adapter failed to start: {exc}")
                continue
            finally:
                worker.close()
            settings = ", ".join(f"{k}={v}" for k, v in info["settings"].items() if k not in ("device",))
            print(f"{name}: {info['version']}; devices: {', '.join(info['devices'])}; adapter {spec}")
            print(f"    precision settings (cpu): {settings}")
    return 0


def cmd_report(args) -> int:
    import json

    from conformance.report import build_report

    results = Path(args.results)
    if results.is_dir():
        results = results / "results.jsonl"
    if not results.is_file():
        raise UsageError(
            f"report: {str(results)!r} does not exist (give RESULTS.jsonl or a directory holding one)"
        )
    if args.baseline and not Path(args.baseline).is_file():
        raise UsageError(f"--baseline: {args.baseline!r} does not exist (give an earlier report.json)")
    if args.baseline:
        try:
            json.loads(Path(args.baseline).read_text())["cells"]
        except (ValueError, KeyError, TypeError):
            raise UsageError(f"--baseline: {args.baseline!r} is not a report.json with 'cells'") from None
    out = Path(args.out) if args.out else results.parent
    previous = results.parent / "report.json"
    old = json.loads(previous.read_text()) if previous.exists() else {}
    env = old.get("environment") or {}
    run = {k: env.get(k) for k in ("device", "precision", "seed")}
    run["max_examples"] = (env.get("hypothesis") or {}).get("max_examples")
    report = build_report(
        out, old.get("frameworks", {}), " ".join(sys.argv), run=run, results=results, baseline=args.baseline
    )
    print(
        f"{report['totals'].get('results', 0)} results, {len(report['discrepancies'])} discrepancies; "
        f"wrote {out / 'report.json'}, {out / 'index.html'}"
    )
    if report["regression"]:
        reg = report["regression"]
        print(f"against {args.baseline}: {reg['new_failures']} new failing case(s), {reg['fixed']} fixed")
    return 1 if report["failed"] else 0


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        commands = {
            "run": cmd_run,
            "replay": cmd_replay,
            "report": cmd_report,
            "frameworks": cmd_frameworks,
            "ops": cmd_ops,
        }
        return commands[args.command](args)
    except UsageError as exc:
        parser.error(str(exc))
    except CaseError as exc:
        print(f"conformance: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: results so far are in results.jsonl; continue with --resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
