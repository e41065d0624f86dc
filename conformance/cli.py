"""The ``refgrad`` command (``conformance`` is the same command): ``run`` (the main job), ``replay``,
``report``, ``frameworks``, ``ops``, ``matrix`` and ``bisect``.

Exit status follows :mod:`conformance.exitcodes` (one table for every subcommand): 0 all judged
and agreeing, 1 departures, 2 usage or input error (also: filters that select nothing), 3 an
internal error (one line and a crash log), 4 nothing judged, 5 results could not be kept,
130 interrupted. No traceback reaches the user for an input or environment fault.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
import traceback
import uuid
from pathlib import Path

from conformance import adapters, exitcodes, interrupt, ops, shipped
from conformance import ops as op_records
from conformance.bisect import BisectError, run_bisect
from conformance.budget import parse_size
from conformance.case import AMP_POLICIES, COMPLEX_DTYPES, DTYPES, PROGRAM_CHECKS, VALID_CHECKS, CaseError
from conformance.executors import EXECUTORS, ExecutorError, ShardsLost, ray_address
from conformance.executors import local as local_executor
from conformance.executors.plan import MAX_SHRINKS, fuzz_units
from conformance.executors.ray import RayExecutor
from conformance.executors.ray import require as require_ray
from conformance.identity import check_ids, load_case_files
from conformance.interrupt import Interrupted, on_sigint, on_sigterm
from conformance.junit import write_junit
from conformance.known import framework_settings, load_known
from conformance.matrix import MatrixError, run_matrix
from conformance.ops import RECORDS
from conformance.outdir import (
    MANIFEST,
    OutputDir,
    OutputError,
    OutputLost,
    check_output_dir,
    check_output_file,
    read_manifest,
    same_path,
)
from conformance.report import build_report, retry_line
from conformance.resultsio import InputFileError, read_baseline, read_report_file, read_results_file
from conformance.resultsio import read_results_file as _read
from conformance.runner import Campaign, Worker, check_timeout
from conformance.tolerance import FAILING

ALL_CHECKS = VALID_CHECKS + ("error",) + PROGRAM_CHECKS
OPS = ("conv", "programs")
#: the default campaign: convolution and every op record (conformance ops lists them)
DEFAULT_OPS = ("conv", "all")
OP_OF_CASE = {"conv": "conv", "programs": "program"}  # --ops name -> Case.op
#: the curated cases and found-case corpus refgrad ships (package data: checkout, editable or wheel)
DEFAULT_CASES = shipped.cases_dir()
#: the names the command answers to (pyproject.toml's [project.scripts]); refgrad is the first
PROGS = ("refgrad", "conformance")
DEFAULT_MAX_EXAMPLES = 40
#: fuzz examples per op record, framework and check when --max-examples is not given: ~300 records
#: x 6-7 checks, one example each on every framework, about ten minutes on 2 cores (docs/conformance.md,
#: "The default campaign"). Steering (conformance/coverage.py) makes each check's example of a record
#: one that adds feature pairs its earlier checks did not draw, so a record gets 6-7 different cases.
DEFAULT_RECORD_EXAMPLES = 1
# the default fuzz budget of a compiling execution mode (every example is a new shape signature, so
# a first compile): a default campaign with it finishes in minutes on 2 cores. Without
# --max-examples, a run takes the smallest default among its frameworks (docs/conformance.md).
MODE_MAX_EXAMPLES = {
    "torch:compile": 3,
    "torch:aot_eager": 10,
    "tensorflow:xla": 10,
    "tensorflow:function": 20,
}


class UsageError(Exception):
    """A bad flag or value; main() prints it and exits 2."""


class NothingSelected(Exception):
    """Filters that select no case and no fuzzing: says which, exits 2 (nothing was run)."""


def _list(flag: str, value: str | None, allowed, default):
    if value is None:
        return list(default)
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise UsageError(f"{flag}: expected a comma-separated list, got {value!r}")
    for item in items:
        if allowed is not None and item not in allowed:
            raise UsageError(f"{flag}: {item!r} is not one of {', '.join(allowed)}")
    return items


def _op_choices() -> list:
    """What --ops takes: conv, programs, all, the op records' families and names."""

    fams = [f for f in sorted(ops.families()) if f not in OPS]
    return list(OPS) + ["all"] + fams + sorted(n for n in ops.fuzzed() if n not in OPS and n not in fams)


def _selected_ops(args) -> tuple[list, list]:
    """(--ops items as given, the op-record names they select); conv stays the conv path."""

    items = _list("--ops", args.ops, _op_choices(), DEFAULT_OPS)
    records = [n for n in ops.select([i for i in items if i != "programs"]) if n != "conv"]
    return items, records


def _check_record_checks(args, items, records, checks) -> None:
    """A usage error for an explicitly asked check that no selected op supports."""

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
    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog=invoked if invoked in PROGS else PROGS[0],
        description="Check convolution forward, gradients, second-order gradients, jvp and vmap of PyTorch, "
        "TensorFlow and JAX against refgrad's reference, element by element against derived error bounds.",
        epilog="Exit status: 0 all judged and agreeing, 1 departures found, 2 usage or input error (or filters "
        "selecting nothing), 3 internal error, 4 nothing judged, 5 results could not be kept, 130 interrupted. "
        "Docs: docs/reliability.md, docs/conformance.md",
    )
    parser.add_argument("--version", action="version", version=f"refgrad {shipped.version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument(
            "--frameworks",
            help="comma-separated: torch,tensorflow,jax, or a framework's execution mode framework:mode "
            "(torch:eager|compile|aot_eager, jax:jit|eager, tensorflow:eager|function|xla; the plain name is "
            "the first mode) (default: every installed framework in its default mode)",
        )
        p.add_argument(
            "--adapter",
            action="append",
            default=[],
            metavar="MOD:CLS",
            help="an extra backend adapter class (repeatable); alone, it runs only the adapters",
        )
        p.add_argument("--checks", help=f"comma-separated subset of {','.join(ALL_CHECKS)}")
        p.add_argument(
            "--dtypes",
            help=f"comma-separated subset of {','.join(DTYPES + COMPLEX_DTYPES + AMP_POLICIES)} (default: the "
            "real ones; complex dtypes run the complex-capable op records; mixed_bfloat16 and mixed_float16 run "
            "program cases under each framework's bfloat16 / float16 mixed-precision recipe, float32 "
            "variables: docs/conformance.md)",
        )
        p.add_argument("--out", default="reports/latest", help="output directory (default reports/latest)")
        p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
        p.add_argument(
            "--precision",
            default="highest",
            choices=["highest", "default"],
            help="highest: TF32 off; default: the framework's default (no effect on CPU)",
        )
        p.add_argument(
            "--timeout",
            default="120",
            help="seconds of a framework's own work per check before 'timeout' (positive; default 120)",
        )
        p.add_argument(
            "--resume", action="store_true", help="continue DIR/results.jsonl, skipping recorded results"
        )
        p.add_argument(
            "--overwrite",
            action="store_true",
            help="start afresh in a DIR holding results: they are moved to DIR/previous/<time>/, never deleted",
        )
        p.add_argument(
            "--memory-budget",
            metavar="SIZE",
            help="refuse cases estimated to need more memory (e.g. 4G; default a quarter of this machine's)",
        )
        p.add_argument("--quiet", action="store_true", help="no progress bar")

    def gate(p, results_only=False):
        _known_flag(
            p,
            "matching results are 'known', not failures; an entry that matched nothing in the region the "
            "run covered is 'stale'",
        )
        p.add_argument(
            "--allow-stale", action="store_true", help="report stale known-departure entries without failing"
        )
        if not results_only:
            p.add_argument(
                "--baseline",
                metavar="OLD/report.json",
                help="an earlier report.json: adds the regression view",
            )
        p.add_argument(
            "--fail-on",
            choices=["any", "new"],
            default="any",
            help="any (default): every departure fails the run; new: only failures --baseline did not have",
        )
        if not results_only:
            p.add_argument(
                "--junit-xml",
                metavar="PATH",
                help="also write JUnit XML: one test case per case, framework, check and dtype",
            )

    run = sub.add_parser("run", help="curated cases plus a Hypothesis fuzz campaign")
    common(run)
    gate(run)
    run.add_argument(
        "--ops",
        help="comma-separated: conv (convolution cases), programs (random autograd programs over views "
        "and in-place ops; the program check), op record names and families (conformance ops lists them), "
        f"all (every op record) (default: {','.join(DEFAULT_OPS)}; without --max-examples an op record gets "
        f"{DEFAULT_RECORD_EXAMPLES} examples per framework and check)",
    )
    run.add_argument(
        "--max-examples",
        type=int,
        default=None,
        help=f"fuzz examples per framework and check (default {DEFAULT_MAX_EXAMPLES}, less with a compiling "
        f"execution mode: {', '.join(f'{k} {v}' for k, v in MODE_MAX_EXAMPLES.items())}; 0: no fuzzing)",
    )
    run.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    run.add_argument(
        "--draws",
        choices=("simplest-first", "seeded"),
        default="simplest-first",
        help="simplest-first: each fuzz unit's first example is Hypothesis's simplest draw, the same at "
        "every seed (at the default budget of one example per record and check, all of them); seeded: "
        "every example is a draw of --seed (default simplest-first)",
    )
    run.add_argument(
        "--domains",
        choices=("gate", "whole", "mixed"),
        default="gate",
        help="gate (default): op records draw their inputs as the known-departures file is written for; "
        "whole: over each record's whole mathematical domain, and at and around its declared zeros, "
        "poles and branch points (the 'near' values kind; docs/records.md lists them); mixed: one "
        "example in four of a record with declared points drawn as whole, the others as gate",
    )
    run.add_argument(
        "--reach",
        choices=("sweep", "off"),
        default="sweep",
        help="sweep (default): besides each op record's own draws, two examples per declared zero, pole and "
        "branch point of its domains, one with every element of that input near the point (none on it), "
        "one with its first element exactly on it (the same at every seed; docs/records.md, 'domains'), "
        "so that the campaign reaches both cells, at and near, of every declared point; "
        "off: the records' own draws only",
    )
    run.add_argument(
        "--cases",
        default=None,
        help="curated cases file or directory (default: the cases refgrad ships, curated and found ones, "
        f"in {DEFAULT_CASES})",
    )
    run.add_argument(
        "--found-dir",
        default=None,
        metavar="DIR",
        help="where shrunk failing cases are saved (default OUT/found, beside the report; a later run reads "
        "them only when given them with --cases)",
    )
    run.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="where the cases run: local (worker processes on this machine, the default) or ray (shards as "
        "Ray tasks; a local Ray instance, or the cluster at --ray-address; docs/scale-out.md). The results "
        "are the same",
    )
    run.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        type=ray_address,
        help="with --executor ray: join this running cluster (HOST:PORT of the head node, ray://HOST:PORT "
        "or auto) instead of starting a local Ray instance",
    )
    run.add_argument(
        "--ray-workers",
        type=int,
        metavar="N",
        help="with --executor ray and no --ray-address: the local instance's CPUs, i.e. shards run at once "
        "(default: this machine's cores)",
    )

    replay = sub.add_parser("replay", help="run saved cases (a JSON file or a directory of them)")
    replay.add_argument("path", help="CASE.json or a directory")
    common(replay)
    gate(replay)

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
    gate(report, results_only=True)
    report.add_argument(
        "--junit-xml",
        metavar="PATH",
        help="also write JUnit XML: one test case per case, framework, check and dtype",
    )

    sub.add_parser("frameworks", help="installed frameworks, versions, devices and precision settings")
    sub.add_parser("ops", help="the op records: family, table primitives, checks, frameworks (or why not)")
    _version_parsers(sub)
    return parser


def _known_flag(p, what: str) -> None:
    """--known [FILE], repeatable: the files' entries are merged; bare, or 'builtin', is refgrad's own."""
    p.add_argument(
        "--known",
        action="append",
        nargs="?",
        const=shipped.BUILTIN,
        metavar="FILE",
        help=f"a known-departures file, TOML or JSON (repeatable; the entries are merged): {what}. "
        f"'{shipped.BUILTIN}', or --known with no file, is the list refgrad ships "
        f"(known_departures.toml in {DEFAULT_CASES})",
    )


def _version_parsers(sub) -> None:
    """``matrix`` and ``bisect`` (conformance/matrix.py, conformance/bisect.py)."""
    matrix = sub.add_parser(
        "matrix",
        help="one table over several runs' results: framework version x op family x verdict counts",
    )
    matrix.add_argument("dirs", nargs="+", metavar="DIR", help="a run's --out DIR (or its results.jsonl)")
    _known_flag(matrix, "count the departures they list as 'known'")
    matrix.add_argument("--json", metavar="PATH", help="also write the table as JSON rows")
    bisect = sub.add_parser(
        "bisect",
        help="the last good and first bad released version of a framework for one case (cached uv envs)",
    )
    bisect.add_argument(
        "case",
        metavar="CASE",
        help="a case file (FILE#ID for one of several), a curated case id, a report's reproducers/*.py, "
        "or RESULTS.jsonl#CASE_ID / DIR#CASE_ID",
    )
    bisect.add_argument("--framework", required=True, help="jax, tensorflow (tensorflow-cpu) or torch")
    bisect.add_argument(
        "--versions", required=True, metavar="A..B", help="released versions, e.g. 0.9.0..0.10.2"
    )
    bisect.add_argument(
        "--out", help="where each version's replay and bisect.json go (default reports/bisect-CASE-FW)"
    )
    bisect.add_argument(
        "--cache", help="environment cache (default $REFGRAD_ENV_CACHE, else $XDG_CACHE_HOME/refgrad/envs)"
    )
    bisect.add_argument("--python", help="the interpreter the environments are built on (default this one)")
    bisect.add_argument(
        "--index-url",
        help="the package index the framework comes from (torch CPU wheels: https://download.pytorch.org/whl/cpu)",
    )
    bisect.add_argument(
        "--with",
        dest="with_",
        action="append",
        default=[],
        metavar="REQ",
        help="another requirement for every environment (repeatable), e.g. 'numpy<2' for an old jaxlib",
    )
    bisect.add_argument("--checks", help="only these checks of the case (comma-separated)")
    bisect.add_argument("--dtypes", help="only these dtypes (comma-separated)")
    bisect.add_argument("--timeout", help="replay's per-check --timeout in seconds")


def _frameworks(args) -> dict[str, str]:
    known = adapters.known()
    installed = adapters.installed()
    chosen = {}
    if args.frameworks is not None or not args.adapter:
        installed = {**installed, **adapters.installed_modes()}
        items = list(installed) if args.frameworks is None else None
        if items is None:
            items = []
            for item in _list("--frameworks", args.frameworks, None, ()):
                try:
                    items.append(adapters.resolve(item))
                except adapters.AdapterError as exc:
                    raise UsageError(f"--frameworks: {exc}") from None
            for item in items:
                if item not in known:
                    raise UsageError(
                        f"--frameworks: {item!r} is not one of {', '.join(known)} "
                        f"(a framework's execution modes: framework:mode, e.g. torch:compile)"
                    )
        else:  # the default: every installed framework in its default mode
            items = [n for n in items if ":" not in n]
        for name in items:
            if name not in installed:
                fw = name.partition(":")[0]
                raise UsageError(f"--frameworks: {name!r} is not installed here (pip install refgrad[{fw}])")
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


def _load(path):
    """Every case under ``path``, checked for safe and unique ids (a CaseError names the file)."""
    return _load_with_files(path)[0]


def _load_with_files(path) -> tuple[list, list[str]]:
    """(every case under ``path``, the file each came from), ids checked as in :func:`_load`."""

    cases, sources = load_case_files(path)
    check_ids(cases, sources)
    return cases, sources


def _inputs(given: str, path: Path, sources, found_dir=None) -> dict:
    """What report.json records of a run's inputs: the case files it read (the rest is drawn from
    the seed), and where shrunk failures went."""
    root = path.resolve() if path.is_dir() else path.resolve().parent
    files = sorted({str(Path(re.sub(r"\[\d+\]$", "", s)).resolve().relative_to(root)) for s in sources})
    return {
        "cases": given,
        "path": str(path.resolve()),
        "case_files": files,
        "found_dir": str(found_dir) if found_dir is not None else None,
    }


def _cases(path, checks, dtypes, cases=None):
    cases = _load(path) if cases is None else cases
    out = []
    for case in cases:
        if case.selector in dtypes:  # its dtype, or its mixed-precision policy
            kept = [c for c in case.checks if c in checks]
            if kept:
                out.append(case.with_checks(kept))
    return out


def _filters(args, **extra) -> str:
    flags = {"--frameworks": args.frameworks, "--checks": args.checks, "--dtypes": args.dtypes, **extra}
    return " ".join(f"{k} {v}" for k, v in flags.items() if v) or "the default filters"


def _timeout(args) -> float:
    try:
        return check_timeout(args.timeout)
    except ValueError as exc:
        raise UsageError(f"--timeout: {exc}") from None


def _memory_budget(args) -> int | None:
    if not args.memory_budget:
        return None
    try:
        return parse_size(args.memory_budget)
    except ValueError:
        raise UsageError(
            f"--memory-budget: {args.memory_budget!r} is not a positive size (e.g. 4G, 512M, 1000000)"
        ) from None


def _manifest(args, kind, frameworks, **fields) -> dict:
    return {
        "kind": kind,
        "frameworks": dict(sorted(frameworks.items())),
        "checks": args.checks,
        "dtypes": args.dtypes,
        "device": args.device,
        "precision": args.precision,
        "seed": None,
        "ops": None,
        "cases": None,
        # a fresh campaign's identity (kept by --resume): a report of the same run is no baseline for it
        "run_id": uuid.uuid4().hex,
        **fields,
    }


def _campaign(args, frameworks, progress, found_dir=None, manifest=None):
    return Campaign(
        args.out,
        frameworks,
        device=args.device,
        precision=args.precision,
        timeout=_timeout(args),
        resume=args.resume,
        overwrite=args.overwrite,
        manifest=manifest,
        found_dir=found_dir,
        progress=progress,
        memory_budget=_memory_budget(args),
    )


def _start(campaign, args, executor=None) -> None:
    if executor is None:
        campaign.start()
    else:  # the Ray executor starts each framework on the cluster
        executor.start(campaign)
    for name, reason in campaign.startup_errors.items():
        print(f"conformance: {name} could not start on --device {args.device}: {reason}", file=sys.stderr)
    if not campaign.workers:
        raise UsageError(f"--device {args.device}: no framework could start (reasons above)")
    if campaign.outdir.moved_to:
        print(f"conformance: earlier results moved to {campaign.outdir.moved_to}", file=sys.stderr)
    campaign.outdir.check_versions({n: w.info["version"] for n, w in campaign.workers.items() if w.info})
    campaign.record_workers()


def _gate(args, frameworks=()) -> dict:
    """The CI-gating flags, checked before any work: --known, --allow-stale, --baseline, --fail-on.
    ``frameworks``: the names the results may carry beyond the built-in adapters (--adapter's)."""

    gate = {
        "known": None,
        "allow_stale": args.allow_stale,
        "baseline": args.baseline,
        "baseline_report": None,
        "fail_on": args.fail_on,
    }
    if args.known:
        gate["known"] = load_known(
            args.known, frameworks
        )  # KnownFileError (an input error): names entry and field
    if args.fail_on == "new" and not args.baseline:
        raise UsageError("--fail-on new: needs --baseline OLD/report.json (the failures it tolerates)")
    if args.baseline:
        # read now, before any work: `run --overwrite` may move it to previous/ before the report needs it
        gate["baseline_report"] = read_baseline(args.baseline)
    return gate


def _run_id(directory) -> str | None:
    """The run id its manifest.json records (None for an older run or no manifest)."""
    run_id = (read_manifest(directory) or {}).get("run_id")
    return run_id if isinstance(run_id, str) else None


def _refuse_self_baseline(args, results_dir, reports) -> None:
    """--baseline may not be the report of the very results it is compared with (``reports``: the
    report.json files of those results): a report compared with itself finds nothing new, so
    ``--fail-on new`` would pass whatever the results hold."""
    if not args.baseline:
        return
    for report in reports:
        if same_path(args.baseline, report):
            raise UsageError(
                f"--baseline: {args.baseline!r} is the report of the results being reported ({report}): "
                "a report compared with itself finds nothing new; give an earlier run's report.json"
            )
    run_id = _run_id(results_dir)
    base_env = args._gate["baseline_report"].get("environment")
    if run_id and isinstance(base_env, dict) and base_env.get("run_id") == run_id:
        raise UsageError(
            f"--baseline: {args.baseline!r} is a report of the same run (run id {run_id}, as "
            f"{Path(results_dir) / MANIFEST} records): a report compared with itself finds nothing new; "
            "give an earlier run's report.json"
        )


def _check_outputs(args, inputs) -> None:
    """run/replay: --out, --found-dir and --junit-xml, checked before any work (OutputError names the
    flag, the value and the rule): never an input of the command (``inputs``: (path, what) pairs),
    never a file a run owns, writable."""
    inputs = [*inputs, *shipped.known_inputs(args.known), (args.baseline, "the --baseline report")]
    check_output_dir(args.out, "--out", inputs=inputs)
    if getattr(args, "found_dir", None):
        check_output_dir(args.found_dir, "--found-dir", out_dirs=[args.out])
    if args.junit_xml:
        check_output_file(args.junit_xml, "--junit-xml", inputs=inputs, out_dirs=[args.out])
    if args.resume:  # the same run continued: its report is no baseline for it
        _refuse_self_baseline(args, args.out, [Path(args.out) / "report.json"])


#: the groups of overlapping known entries the CI lines name (report.json lists them all)
OVERLAP_LINES = 5


def _gate_lines(report) -> list[str]:
    """The first lines a CI log shows: new/fixed against the baseline, known, stale."""
    lines = []
    reg, kn = report.get("regression"), report.get("known")
    if reg is not None or kn is not None:
        parts = []
        if reg is not None:
            parts += [f"{reg['new_failures']} new", f"{reg['fixed']} fixed"]
        parts.append(f"{report['totals'].get('known', 0)} known")
        if kn is not None and kn["stale"]:
            parts.append(f"{len(kn['stale'])} stale")
        lines.append(", ".join(parts))
    if kn is not None:
        files = {e["id"]: e.get("file") or kn["file"] for e in kn["entries"]}
        checked = kn.get("reproducers") or {}
        unreported = kn.get("unreported_settings") or {}
        for entry_id in kn["stale"]:
            verb = "fails the run" if kn["strict"] else "reported only (--allow-stale)"
            if entry_id in unreported:
                lines.append(
                    f"  stale: known departure {entry_id!r} in {files[entry_id]}: {unreported[entry_id]} ({verb})"
                )
                continue
            lines.append(
                f"  stale: known departure {entry_id!r} in {files[entry_id]} matched nothing in the region this run "
                f"covered: the departure is gone, remove the entry ({verb}); {_reproducer_said(checked.get(entry_id))}"
            )
        overlaps = kn.get("overlaps") or []
        for overlap in overlaps[:OVERLAP_LINES]:
            first, *others = overlap["entries"]
            lines.append(
                f"  overlap: {overlap['results']} result(s) match {first!r} (which claims them) and "
                f"{', '.join(map(repr, others))} ({', '.join(overlap['cases'])}): where their mechanisms "
                "differ, narrow the first entry's region"
            )
        if len(overlaps) > OVERLAP_LINES:
            more = len(overlaps) - OVERLAP_LINES
            lines.append(f"  overlap: {more} more group(s) in report.json (known.overlaps)")
        for entry_id, outcome in checked.items():
            if outcome["reproduces"]:
                lines.append(
                    f"  reproduced: known departure {entry_id!r} matched nothing this run covered, but its "
                    f"reproducer {outcome['reproducer']} still reproduces (not stale: the draws missed it); "
                    f"it printed: {_indent(outcome['printed'])}"
                )
    return lines


def _say_reproducers(discrepancies: list[dict], where: Path) -> None:
    """How many discrepancies got a standalone script, and why each of the others has none."""
    missing = [d for d in discrepancies if not d.get("reproducer_file")]
    written = len(discrepancies) - len(missing)
    print(f"{len(discrepancies)} discrepancies, {written} with a standalone reproducer in {where}/")
    for d in missing[:10]:
        print(f"  no reproducer for {d['id']}: {d.get('reproducer_error') or 'none was written'}")
    if len(missing) > 10:
        print(f"  ... and {len(missing) - 10} more without one (report.json's reproducer_error says why)")


def _reproducer_said(outcome: dict | None) -> str:
    if outcome is None:
        return "it has no reproducer to confirm it"
    if outcome["reproduces"] is None:
        return f"its reproducer {outcome['reproducer']} {outcome['printed']}"
    return (
        f"its reproducer {outcome['reproducer']} no longer reproduces (exit {outcome['rc']}); "
        f"it printed: {_indent(outcome['printed'])}"
    )


def _indent(text: str) -> str:
    return "\n      " + "\n      ".join(text.splitlines() or [""])


def _write_junit(args, report, read=None, report_dir=None) -> None:
    if not getattr(args, "junit_xml", None):
        return

    results = Path(args.out) / "results.jsonl" if read is None else None
    records = (read or _read(results, missing_ok=True)).records
    known = args._gate["known"]
    if known is not None:
        records, _ = known.classify(records, framework_settings(report.get("frameworks")))
    write_junit(args.junit_xml, records, report, args.out if read is None else report_dir)
    print(f"wrote {args.junit_xml} (JUnit XML)")


def _finish(campaign, args, progress) -> int:
    progress.done()
    campaign.writer.sync()  # a checkpoint: every result on disk before the report claims it
    gate = args._gate
    report = build_report(
        args.out,
        campaign.frameworks_info(),
        " ".join(sys.argv),
        run=_run_settings(args),
        baseline=_baseline_now(campaign, args),
        baseline_report=gate["baseline_report"],
        known=gate["known"],
        allow_stale=gate["allow_stale"],
        fail_on=gate["fail_on"],
    )
    for line in _gate_lines(report):
        print(line)
    totals = report["totals"]
    counts = ", ".join(f"{v} {n}" for v, n in totals.items() if v != "results" and n)
    print(f"{totals.get('results', 0)} results: {counts or 'none'}")
    if retried := retry_line(report):
        print(retried)
    if campaign.resumed:
        print(
            f"resumed: {campaign.resumed} results were recorded before, {totals.get('results', 0) - campaign.resumed} new"
        )
    print(f"wrote {Path(args.out) / 'results.jsonl'}, report.json, index.html")
    if report["discrepancies"]:
        _say_reproducers(report["discrepancies"], Path(args.out) / "reproducers")
    print(f"open {Path(args.out) / 'index.html'} to read the report (docs/reports.md explains it)")
    for r in report["failures"][:20]:
        print(
            f"  {r['verdict']}: {r['framework']} {r['check']} {r['case_id']}: {(r.get('reason') or '')[:300]}"
            + (f" [{r['rerun']}]" if r.get("rerun") else "")
        )
    _write_junit(args, report)
    code, why = report["outcome"]["code"], report["outcome"]["message"]
    if code == exitcodes.NOTHING_JUDGED:
        print(f"conformance: NOTHING JUDGED: {why} (exit {code})", file=sys.stderr)
    return code


def _run_settings(args) -> dict:
    """The run's flags and inputs that report.json records in its environment, and the run's id."""
    return {
        "device": args.device,
        "precision": args.precision,
        "seed": getattr(args, "seed", None),
        "max_examples": getattr(args, "max_examples", None),
        "run_id": _run_id(args.out),
        "inputs": getattr(args, "_inputs", None),
    }


def _baseline_now(campaign, args) -> str | None:
    """Where --baseline is now: a baseline inside --out that --overwrite moved is in previous/."""
    if not args.baseline or not campaign.outdir.moved_to:
        return args.baseline
    out, base = Path(args.out).resolve(), Path(args.baseline).resolve()
    if out in base.parents and (campaign.outdir.moved_to / base.relative_to(out)).exists():
        return str(campaign.outdir.moved_to / base.relative_to(out))
    return args.baseline


def cmd_run(args) -> int:
    frameworks = _frameworks(args)
    args._gate = _gate(args, frameworks)
    ops, records = _selected_ops(args)
    checks = _list("--checks", args.checks, ALL_CHECKS, ALL_CHECKS)
    _check_record_checks(args, ops, records, checks)
    dtypes = _list("--dtypes", args.dtypes, DTYPES + COMPLEX_DTYPES + AMP_POLICIES, DTYPES)
    _timeout(args)
    _memory_budget(args)
    explicit_budget = args.max_examples is not None
    if args.max_examples is None:
        budgets = [MODE_MAX_EXAMPLES.get(name, DEFAULT_MAX_EXAMPLES) for name in frameworks]
        args.max_examples = min(budgets + [DEFAULT_MAX_EXAMPLES])
        if args.max_examples < DEFAULT_MAX_EXAMPLES:
            print(
                f"conformance: --max-examples {args.max_examples} (the default budget of a compiling "
                "execution mode: each example compiles; pass --max-examples to change it)",
                file=sys.stderr,
            )
    if args.max_examples < 0:
        raise UsageError(f"--max-examples: must be >= 0, got {args.max_examples}")
    cases_path = Path(args.cases) if args.cases else DEFAULT_CASES
    if args.cases and not cases_path.exists():
        raise UsageError(f"--cases: {args.cases!r} does not exist")
    loaded, sources = _load_with_files(cases_path) if cases_path.exists() else ([], [])
    curated = _cases(cases_path, checks, dtypes, loaded)
    curated = [c for c in curated if c.op in {OP_OF_CASE[o] for o in ops if o in OP_OF_CASE} | set(records)]
    # op records: the default budget is DEFAULT_RECORD_EXAMPLES per framework and check, with one
    # kind of failure shrunk (shrinking replays the draws and probes many cases: most of a default
    # campaign's time otherwise); an explicit --max-examples applies to records as to conv
    units = fuzz_units(
        ops,
        records,
        checks,
        dtypes,
        args.max_examples,
        args.seed,
        record_examples=args.max_examples
        if explicit_budget
        else min(args.max_examples, DEFAULT_RECORD_EXAMPLES),
        record_shrinks=MAX_SHRINKS if explicit_budget else 1,
        whole_domains=args.domains == "whole",
        mixed_domains=args.domains == "mixed",
        simplest=args.draws == "simplest-first",
        reach=args.reach == "sweep",
    )
    real_only = "; ".join(
        filter(
            None,
            [
                _real_only(ops, records, dtypes),
                _complex_only(records, dtypes),
                _programs_only(ops, records, dtypes),
            ],
        )
    )
    if not curated and not units:
        raise NothingSelected(
            f"nothing selected: {_filters(args, **{'--ops': args.ops, '--max-examples': args.max_examples})} "
            f"select none of the {len(loaded)} case(s) in {cases_path} and no fuzzing"
            + (f" ({real_only})" if real_only else "")
        )
    if real_only:
        print(f"conformance: {real_only}", file=sys.stderr)
    _check_outputs(args, [(cases_path if args.cases else None, "the --cases input")])
    found = args.found_dir if args.found_dir is not None else Path(args.out) / "found"
    args._inputs = _inputs(args.cases or shipped.BUILTIN, cases_path, sources, found)
    _check_executor(args)
    if not cases_path.exists():
        print(
            f"conformance: no curated cases at {cases_path} (pass --cases DIR); fuzzing only", file=sys.stderr
        )
    manifest = _manifest(
        args, "refgrad-run", frameworks, seed=args.seed, ops=",".join(ops), cases=str(cases_path.resolve())
    )
    if args.executor == "ray":
        return _run_on_ray(args, frameworks, manifest, curated, units)
    progress = Progress(args.quiet)
    with _campaign(args, frameworks, progress, args.found_dir, manifest) as campaign:
        _start(campaign, args)
        local_executor.run(campaign, curated, units)
        return _finish(campaign, args, progress)


def _some(names) -> str:
    """The first twelve of ``names``, and how many more."""
    return ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")


def _real_only(ops, records, dtypes) -> str:
    """What a complex --dtypes leaves out: the selected records (and conv) that are not complex-capable
    (conformance.ops.complex.COMPLEX_RECORDS); empty when no complex dtype is asked for."""

    asked = [d for d in dtypes if d in COMPLEX_DTYPES]
    if not asked:
        return ""
    left = [n for n in records if asked[0] not in op_records.RECORDS[n].dtypes]
    left = (["conv"] if "conv" in ops else []) + left
    if not left:
        return ""
    return (
        f"--dtypes {','.join(asked)}: {len(left)} selected op(s) are not complex-capable and run in "
        f"the real dtypes asked for only: {_some(left)} (complex-capable: `conformance ops` lists them; "
        "docs/complex.md)"
    )


def _complex_only(records, dtypes) -> str:
    """What real --dtypes leave out: the selected records that run in the complex dtypes only
    (conformance.ops.COMPLEX_ONLY: the transforms); empty when a complex dtype is asked for."""
    if any(d in COMPLEX_DTYPES for d in dtypes):
        return ""
    left = [n for n in records if n in op_records.COMPLEX_ONLY]
    if not left:
        return ""
    return (
        f"--dtypes {','.join(dtypes)}: {len(left)} selected op(s) run in the complex dtypes only and are left "
        f"out: {_some(left)} (add --dtypes complex64,complex128; docs/complex.md)"
    )


def _programs_only(ops, records, dtypes) -> str:
    """What a mixed-precision policy in --dtypes leaves out: it selects program cases only (conformance.amp)."""
    asked = [d for d in dtypes if d in AMP_POLICIES]
    others = (["conv"] if "conv" in ops else []) + list(records)
    if not asked or not others:
        return ""
    return (
        f"--dtypes {','.join(asked)}: a mixed-precision policy applies to program cases (--ops programs) "
        f"only; the {len(others)} other selected op(s) run in the plain dtypes asked for only"
    )


def _fuzz(campaign, ops, checks, dtypes, max_examples, seed):
    """The conv and program fuzz units on every framework (as a local run; kept for benchmarks/campaign.py)."""
    local_executor.run(campaign, [], fuzz_units(ops, [], checks, dtypes, max_examples, seed))


def _check_executor(args) -> None:
    """--executor and its flags, checked before any work (ray importable; flags that need ray)."""
    if args.executor != "ray":
        for flag, value in (("--ray-address", args.ray_address), ("--ray-workers", args.ray_workers)):
            if value is not None:
                raise UsageError(f"{flag}: needs --executor ray")
        return
    if args.ray_workers is not None and args.ray_workers < 1:
        raise UsageError(f"--ray-workers: must be >= 1, got {args.ray_workers}")
    if args.ray_workers is not None and args.ray_address:
        raise UsageError(
            "--ray-workers: sizes the local Ray instance; a cluster at --ray-address has its own"
        )
    require_ray()  # ExecutorError: says which package to install


def _run_on_ray(args, frameworks, manifest, curated, units) -> int:
    """The campaign's shards as Ray tasks (conformance.executors.ray); the same results as a local run."""
    with RayExecutor(args.ray_address, args.ray_workers, _memory_budget(args)) as executor:
        progress = executor.progress(args.quiet)
        with _campaign(args, frameworks, progress, args.found_dir, manifest) as campaign:
            _start(campaign, args, executor)
            try:
                executor.run(campaign, curated, units)
            finally:
                progress.done()
            return _finish(campaign, args, progress)


def cmd_ops(args) -> int:
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
                + ("   complex64,complex128" if COMPLEX_DTYPES[0] in rec.dtypes else "")
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
    # a replayed file's complex cases too (a run's default stays real)
    every = DTYPES + COMPLEX_DTYPES + AMP_POLICIES
    dtypes = _list("--dtypes", args.dtypes, every, every)
    _timeout(args)
    _memory_budget(args)
    if not Path(args.path).exists():
        raise UsageError(f"replay: {args.path!r} does not exist")
    args._gate = _gate(args, frameworks)
    loaded, sources = _load_with_files(args.path)
    args._inputs = _inputs(args.path, Path(args.path), sources)
    cases = _cases(args.path, checks, dtypes, loaded)
    if not cases:
        raise NothingSelected(
            f"nothing selected: {_filters(args)} select none of the {len(loaded)} case(s) in {args.path}"
        )
    _check_outputs(args, [(args.path, "the replayed cases")])
    manifest = _manifest(args, "refgrad-replay", frameworks, cases=str(Path(args.path).resolve()))
    progress = Progress(args.quiet)
    with _campaign(args, frameworks, progress, manifest=manifest) as campaign:
        _start(campaign, args)
        campaign.run_cases(cases, phase="replay")
        return _finish(campaign, args, progress)


def cmd_frameworks(args) -> int:
    import tempfile

    installed = adapters.installed()
    known = {n: s for n, s in adapters.known().items() if n not in adapters.mode_specs()}
    with tempfile.TemporaryDirectory() as logs:
        for name, spec in known.items():
            if name in adapters.MODES:  # its execution modes (not started here: a mode compiles lazily)
                modes = ", ".join(f"{name}:{m}" for m in adapters.MODES[name])
                print(f"{name} execution modes (--frameworks {name}:MODE; {name} = the first): {modes}")
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
    results = Path(args.results)
    if results.is_dir():
        results = results / "results.jsonl"
    if not results.is_file():
        raise UsageError(
            f"report: {str(results)!r} does not exist (give RESULTS.jsonl or a directory holding one)"
        )
    manifest = read_manifest(results.parent) or {}
    args._gate = gate = _gate(args, manifest.get("frameworks") or ())
    out = Path(args.out) if args.out else results.parent
    _check_report_outputs(args, results, out)
    read = read_results_file(results)  # InputFileError: binary / foreign file, named
    for line in read.warnings(results):
        print(f"conformance: warning: {line}", file=sys.stderr)
    previous = results.parent / "report.json"
    try:  # the run's environment, when its report.json is readable; the report never depends on it
        old = read_report_file(previous) if previous.exists() else {}
    except InputFileError as exc:
        print(f"conformance: warning: {exc}; regenerating from results.jsonl alone", file=sys.stderr)
        old = {}
    env = old.get("environment") if isinstance(old.get("environment"), dict) else {}
    # an interrupted run wrote no report.json: its manifest still names the device, precision, seed
    # and the workers' settings, which the verdicts and the known entries' settings depend on
    run = {k: env[k] if env.get(k) is not None else manifest.get(k) for k in ("device", "precision", "seed")}
    run["max_examples"] = (env.get("hypothesis") or {}).get("max_examples")
    run["run_id"] = _run_id(results.parent) or env.get("run_id")
    run["inputs"] = env.get("inputs")
    frameworks = old.get("frameworks") if isinstance(old.get("frameworks"), dict) else {}
    if not frameworks and isinstance(manifest.get("workers"), dict):
        frameworks = manifest["workers"]
    lock = OutputDir.lock_only(out)
    try:
        report = build_report(
            out,
            frameworks,
            " ".join(sys.argv),
            run=run,
            results=results,
            baseline=args.baseline,
            baseline_report=gate["baseline_report"],
            read=read,
            known=gate["known"],
            allow_stale=gate["allow_stale"],
            fail_on=gate["fail_on"],
        )
    finally:
        lock.release()
    for line in _gate_lines(report):
        print(line)
    print(
        f"{report['totals'].get('results', 0)} results, {len(report['discrepancies'])} discrepancies; "
        f"wrote {out / 'report.json'}, {out / 'index.html'}"
    )
    if retried := retry_line(report):
        print(retried)
    if read.skipped:
        print(
            f"{len(read.skipped)} unreadable line(s) of {results} skipped (listed above; counted in the report)"
        )
    if report["regression"]:
        reg = report["regression"]
        print(f"against {args.baseline}: {reg['new_failures']} new failing case(s), {reg['fixed']} fixed")
    _write_junit(args, report, read, out)
    code, why = report["outcome"]["code"], report["outcome"]["message"]
    if code == exitcodes.NOTHING_JUDGED:
        print(f"conformance: NOTHING JUDGED: {why} (exit {code})", file=sys.stderr)
    return code


def _check_report_outputs(args, results: Path, out: Path) -> None:
    """report: --out and --junit-xml before any work; --baseline not the report of these results."""
    inputs = [
        (results, "the results file"),
        *shipped.known_inputs(args.known),
        (args.baseline, "the --baseline report"),
    ]
    check_output_dir(out, "--out", inputs=inputs)
    if not same_path(out, results.parent) and (out / "results.jsonl").exists():
        raise OutputError(
            f"--out: {str(out)!r} holds another run's results.jsonl; this report would replace that run's "
            "report: choose another directory"
        )
    if args.junit_xml:
        check_output_file(args.junit_xml, "--junit-xml", inputs=inputs, out_dirs=[out, results.parent])
    _refuse_self_baseline(args, results.parent, [out / "report.json", results.parent / "report.json"])


def cmd_matrix(args) -> int:
    try:
        return run_matrix(args)
    except MatrixError as exc:
        raise UsageError(str(exc)) from None


def cmd_bisect(args) -> int:
    _list("--checks", args.checks, ALL_CHECKS, ALL_CHECKS)  # a bad name is a usage error before any install
    _list("--dtypes", args.dtypes, DTYPES, DTYPES)
    try:
        return run_bisect(args)
    except BisectError as exc:
        print(f"conformance: error: {exc}", file=sys.stderr)
        return exitcodes.USAGE
    except (KeyboardInterrupt, Interrupted):  # bisect has no --resume: running it again continues
        print(
            "\ninterrupted: bisect stopped; the complete environments built so far stay in the cache "
            "(a half-built one is rebuilt); run the same command again to continue without rebuilding them",
            file=sys.stderr,
        )
        return exitcodes.INTERRUPTED


def _crash_log(args) -> Path:
    """Write the traceback of an internal error to a crash log; return its path."""
    import tempfile

    text = f"refgrad internal error\ncommand: {' '.join(sys.argv)}\n\n{traceback.format_exc()}"
    for directory in (getattr(args, "out", None), tempfile.gettempdir()):
        if not directory:
            continue
        try:
            path = (
                Path(directory) / f"crash-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}.log"
            )
            path.write_text(text)
            return path
        except OSError:
            continue
    return Path("<no writable place for a crash log>")


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    interrupt.requested = False  # a fresh command (main() may be called more than once in a process)
    old_term = signal.getsignal(signal.SIGTERM)
    old_int = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGTERM, on_sigterm)
        if old_int is signal.default_int_handler:  # not when the caller chose another handling
            signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # not the main thread
        old_term = old_int = None
    try:
        commands = {
            "run": cmd_run,
            "replay": cmd_replay,
            "report": cmd_report,
            "frameworks": cmd_frameworks,
            "ops": cmd_ops,
            "matrix": cmd_matrix,
            "bisect": cmd_bisect,
        }
        code = commands[args.command](args)
        interrupt.check()  # a Ctrl-C or SIGTERM whose exception something swallowed: still an interruption
        return code
    except UsageError as exc:
        parser.error(str(exc))
    except NothingSelected as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return exitcodes.USAGE
    except (CaseError, OutputError, InputFileError, ExecutorError) as exc:
        print(f"conformance: error: {exc}", file=sys.stderr)
        return exitcodes.USAGE
    except ShardsLost as exc:
        print(f"conformance: error: {exc}; no report was written", file=sys.stderr)
        return exitcodes.OUTPUT_LOST
    except OutputLost as exc:
        print(f"conformance: error: results could not be kept: {exc}; no report was written", file=sys.stderr)
        return exitcodes.OUTPUT_LOST
    except OSError as exc:  # an environment fault outside the results writer (disk full, permissions)
        print(f"conformance: error: {exc.filename or 'an output'}: {exc.strerror or exc}", file=sys.stderr)
        return exitcodes.OUTPUT_LOST
    except (KeyboardInterrupt, Interrupted):
        print("\ninterrupted: results so far are in results.jsonl; continue with --resume", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except Exception:  # noqa: BLE001 - a refgrad bug: one line and a crash log, never a bare traceback
        path = _crash_log(args)
        print(
            f"conformance: internal error ({sys.exc_info()[0].__name__}: {str(sys.exc_info()[1])[:200]}); "
            f"the traceback is in {path}; please report it",
            file=sys.stderr,
        )
        return exitcodes.INTERNAL
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        if old_int is not None:
            signal.signal(signal.SIGINT, old_int)


if __name__ == "__main__":
    sys.exit(main())
