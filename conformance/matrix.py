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
import re
from collections import Counter, defaultdict
from pathlib import Path

from conformance.known import framework_settings
from conformance.resultsio import InputFileError, read_report_file, read_results_file

# column order: the agreeing verdicts first, then the departures, then what judged nothing
ORDER = (
    "pass",
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
    try:
        from conformance.ops import RECORDS

        rec = RECORDS.get(op)
    except Exception:  # noqa: BLE001 - the table never depends on the op records loading
        rec = None
    return rec.family if rec is not None else (op or "?")


def _results_path(item: str) -> Path:
    p = Path(item)
    if p.is_dir():
        p = p / "results.jsonl"
    if not p.is_file():
        raise MatrixError(
            f"matrix: {item!r} holds no results.jsonl (give a run's --out DIR or its results.jsonl)"
        )
    return p


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


def collect(items, known=None) -> tuple[dict, list[str]]:
    """{(framework, version, family): Counter(verdict)} over the results of ``items``; warnings."""
    table: dict = defaultdict(Counter)
    warnings = []
    for item in items:
        results = _results_path(item)
        try:
            read = read_results_file(results)
        except InputFileError as exc:
            raise MatrixError(f"matrix: {exc}") from None
        warnings += read.warnings(results)
        records = read.records
        run_report = _run_report(results)
        if known is not None:
            records, _ = known.classify(records, framework_settings(run_report.get("frameworks")))
        env = _env_versions(run_report)
        for r in records:
            fw = r.get("framework") or "?"
            version = short_version(r.get("version") or env.get(fw))
            case = r.get("case") if isinstance(r.get("case"), dict) else {}
            table[(fw, version, _family(case.get("op")))][r.get("verdict") or "?"] += 1
    return dict(table), warnings


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


def run_matrix(args, out=print) -> int:
    known = None
    if getattr(args, "known", None):
        from conformance.known import load_known

        known = load_known(args.known)
    table, warnings = collect(args.dirs, known)
    header, body = rows(table)
    for w in warnings:
        out(f"warning: {w}")
    if not body:
        out("no results in " + ", ".join(args.dirs))
        return 4
    out(format_table(header, body))
    if getattr(args, "json", None):
        data = [dict(zip(header, row)) for row in body]
        Path(args.json).write_text(json.dumps(data, indent=1))
        out(f"wrote {args.json}")
    return 0
