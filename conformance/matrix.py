"""``conformance matrix DIR...``: one table of framework version x op family x verdict counts.

Each DIR is a run's output directory (or its results.jsonl): e.g. the nox version matrix's
``reports/jax-0.4.30``, ``reports/jax-0.10.2``, ... The version of a result is the one its record
carries (``version``, written by the worker that judged it), else the framework's version in the
run's ``report.json`` environment, else ``?``. Rows with the same framework, version and family
from several directories are added up. The op family is the op record's (``conformance ops``);
the convolution cases are ``conv``, program cases ``programs``.

With ``--known FILE`` the known departures are counted as ``known`` (as ``conformance report
--known`` would), so the table shows what is new at each version.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from conformance import exitcodes, shipped
from conformance.known import framework_settings, load_known
from conformance.ops import RECORDS
from conformance.outdir import MANIFEST, RESULTS, atomic_write, check_output_file, read_manifest
from conformance.resultsio import InputFileError, read_report_file, read_results_file

# column order: the agreeing verdicts first, then the departures, then what judged nothing
ORDER = (
    "pass",
    "convention",
    "known",
    "fail",
    "error_mismatch",
    "crash",
    "timeout",
    "unsupported",
    "reference_error",
    "refused",
)
SPECIAL_FAMILIES = {"conv": "conv", "program": "programs"}


class MatrixError(Exception):
    """A DIR that is not a run's output: names it and says why (exit 2)."""


def short_version(text) -> str:
    """The framework's own version number: 'jax 0.10.2, jaxlib 0.10.2' -> '0.10.2'."""
    if not text:
        return "?"
    m = re.search(r"\d+(?:\.\d+)+(?:[A-Za-z0-9.+-]*)", str(text))
    return m.group(0).rstrip(",") if m else str(text)


def _family(op: str | None) -> str:
    if op in SPECIAL_FAMILIES:
        return SPECIAL_FAMILIES[op]
    rec = RECORDS.get(op)
    return rec.family if rec is not None else (op or "?")


def _results_path(item: str) -> Path | None:
    """The results file of a DIR or RESULTS.jsonl; None for a run directory that recorded nothing
    (a manifest.json but no results.jsonl)."""
    p = Path(item)
    if p.is_dir():
        if (p / RESULTS).is_file():
            return p / RESULTS
        if (p / MANIFEST).is_file():
            return None
    elif p.is_file():
        return p
    raise MatrixError(
        f"matrix: {item!r} holds no results.jsonl (give a run's --out DIR or its results.jsonl)"
    )


def _run_report(results: Path) -> dict:
    """The run's report.json beside its results (empty when missing or unreadable)."""
    report = results.parent / "report.json"
    if not report.is_file():
        return {}
    try:
        return read_report_file(report)
    except InputFileError:
        return {}


def _env_versions(data: dict) -> dict:
    """framework -> version from a report's environment."""
    fws = ((data.get("environment") or {}).get("frameworks")) or {}
    return {name: info.get("version") for name, info in fws.items() if isinstance(info, dict)}


@dataclass
class Collected:
    """What ``matrix`` read: the table, and per input how many results it gave (or why none)."""

    table: dict = field(default_factory=lambda: defaultdict(Counter))
    warnings: list = field(default_factory=list)
    read: list = field(default_factory=list)  # (input as given, results counted)
    empty: list = field(default_factory=list)  # inputs that hold no result
    notes: list = field(default_factory=list)  # inputs read once, results counted once

    def verdicts(self) -> list[str]:
        return [v for counts in self.table.values() for v, n in counts.items() for _ in range(n)]


def collect_inputs(items, known=None) -> Collected:
    """The table over ``items``, each run counted once: an input naming a results file read before
    (however spelled: another path, a symbolic link) or a run read before (the same run id in its
    manifest.json: a copy of the run) is not read again, and says so."""
    got = Collected()
    seen: dict = {}  # (device, inode) of a results file, or a run id -> the input read for it
    for item in items:
        results = _results_path(item)
        if results is None:
            got.empty.append(item)
            continue
        st = os.stat(results)
        run_id = (read_manifest(results.parent) or {}).get("run_id")
        keys = [("file", st.st_dev, st.st_ino)] + ([("run", run_id)] if isinstance(run_id, str) else [])
        first = next((seen[k] for k in keys if k in seen), None)
        if first is not None:
            what = "results file" if keys[0] in seen else f"run (run id {run_id})"
            got.notes.append(f"{item} is the same {what} as {first}: counted once")
            continue
        seen.update(dict.fromkeys(keys, item))
        try:
            read = read_results_file(results)
        except InputFileError as exc:
            raise MatrixError(f"matrix: {exc}") from None
        got.warnings += read.warnings(results)
        records = read.records
        run_report = _run_report(results)
        if known is not None:
            records, _ = known.classify(records, framework_settings(run_report.get("frameworks")))
        env = _env_versions(run_report)
        for r in records:
            fw = r.get("framework") or "?"
            version = short_version(r.get("version") or env.get(fw))
            case = r.get("case") if isinstance(r.get("case"), dict) else {}
            got.table[(fw, version, _family(case.get("op")))][r.get("verdict") or "?"] += 1
        if records:
            got.read.append((item, len(records)))
        else:
            got.empty.append(item)
    got.table = dict(got.table)
    return got


def collect(items, known=None) -> tuple[dict, list[str]]:
    """{(framework, version, family): Counter(verdict)} over the results of ``items``; warnings."""
    got = collect_inputs(items, known)
    return got.table, got.warnings


def _version_key(v: str):
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(v), v)
    except InvalidVersion:
        return (1, None, v)


def rows(table: dict) -> tuple[list[str], list[list]]:
    """(header, rows) of the printed table: one row per framework, version and family."""
    verdicts = {v for counts in table.values() for v in counts}
    columns = [v for v in ORDER if v in verdicts] + sorted(verdicts - set(ORDER))
    header = ["framework", "version", "family", "results", *columns]

    def key(k):
        fw, version, family = k
        vk = _version_key(version)
        return (fw, vk[0], vk[1] or 0, vk[2], family) if vk[1] is not None else (fw, 1, 0, vk[2], family)

    out = []
    for k in sorted(table, key=key):
        counts = table[k]
        out.append([*k, sum(counts.values()), *(counts.get(v, 0) for v in columns)])
    return header, out


def format_table(header, body) -> str:
    cells = [header] + [[str(c) for c in row] for row in body]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for n, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
            ).rstrip()
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _check_json(args) -> None:
    """--json before any work: a writable file, not an input of this command, not a file a run owns."""
    inputs = shipped.known_inputs(args.known)
    for item in args.dirs:
        p = Path(item)
        results = p / RESULTS if p.is_dir() else p
        inputs += [
            (results, "an input results file"),
            (results.parent / "report.json", "an input's report.json"),
        ]
    check_output_file(args.json, "--json", inputs=inputs)


def run_matrix(args, out=print) -> int:
    """Print the table; exit as ``report`` would on the results it shows (1 departures, 4 nothing
    judged, also when an input holds no result, 0 otherwise)."""
    if getattr(args, "json", None):
        _check_json(args)
    known = None
    if getattr(args, "known", None):
        recorded = set()  # the frameworks the runs recorded (an --adapter's name is no misspelling)
        for item in args.dirs:
            directory = Path(item) if Path(item).is_dir() else Path(item).parent
            recorded |= set((read_manifest(directory) or {}).get("frameworks") or ())
        known = load_known(args.known, recorded)
    got = collect_inputs(args.dirs, known)
    header, body = rows(got.table)
    for w in got.warnings:
        out(f"warning: {w}")
    if body:
        out(format_table(header, body))
    for item, n in got.read:
        out(f"read: {item} ({n} results)")
    for item in got.empty:
        out(f"empty: {item} holds no result: nothing was judged there")
    for note in got.notes:
        out(f"note: {note}")
    if getattr(args, "json", None) and body:
        atomic_write(args.json, json.dumps([dict(zip(header, row)) for row in body], indent=1))
        out(f"wrote {args.json}")
    code, why = exitcodes.outcome(got.verdicts(), tolerated=("known",))
    if code == exitcodes.OK and got.empty:
        code, why = exitcodes.NOTHING_JUDGED, f"{len(got.empty)} input(s) hold no result"
    if code != exitcodes.OK:
        out(f"matrix: {why} (exit {code})")
    return code
