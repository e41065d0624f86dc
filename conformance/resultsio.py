"""One validated reader for ``results.jsonl`` and ``report.json`` (report, replay, --baseline, --resume).

Every result line carries ``"schema": RESULTS_SCHEMA``. A line that is not a JSON object with the
required fields (a torn write, garbage, a record of another program) is skipped with a warning
naming its line number, and counted (``ReadResult.skipped``). A file that is binary, not UTF-8, or
whose every non-empty line is foreign is an :class:`InputFileError` naming the file. Verdicts
this version does not know (written by a newer refgrad) are kept and shown, never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from conformance.case import OPS, Case, CaseError
from conformance.ops import fuzzed

RESULTS_SCHEMA = 1
# a result line: field -> type
REQUIRED = {"case_id": str, "framework": str, "check": str, "verdict": str}
SNIFF_BYTES = 8192


class InputFileError(Exception):
    """A file given to refgrad is not what it must be (names the file and the rule)."""


@dataclass
class ReadResult:
    records: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # (line number, why)
    newer_schema: int | None = None

    def warnings(self, path) -> list[str]:
        out = [f"{path}:{n}: skipped: {why}" for n, why in self.skipped[:20]]
        if len(self.skipped) > 20:
            out.append(f"{path}: {len(self.skipped) - 20} more lines skipped")
        if self.newer_schema:
            out.append(
                f"{path}: written by a newer refgrad (results schema {self.newer_schema} > {RESULTS_SCHEMA}); "
                "fields this version does not know are ignored"
            )
        return out


def _case_problem(case, checked: set) -> str | None:
    """Why a result's embedded ``case`` cannot be used (the report rebuilds cells and reproducers
    from it), or None. An op this refgrad does not know (a newer one's) is not judged here."""
    if not isinstance(case, dict):
        return f"its 'case' is a JSON {type(case).__name__}, not a case object"
    key = json.dumps(case, sort_keys=True, default=str)
    if key in checked:
        return None

    # a full case (shapes, params or a program's source) must parse; a bare summary ({op, dtype}) is kept
    full = any(k in case for k in ("shapes", "params", "source"))
    if full and (case.get("op") in OPS or case.get("op") in fuzzed()):
        try:
            Case.from_dict(case, source="its 'case'")
        except CaseError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - a field of a kind the parser did not foresee
            return f"its 'case' cannot be read as a case: {type(exc).__name__}: {exc}"
    checked.add(key)
    return None


def _problem(rec, checked_cases: set) -> str | None:
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not a result object"
    for key, kind in REQUIRED.items():
        if key not in rec:
            return f"no {key!r} field"
        if not isinstance(rec[key], kind):
            return f"{key!r} is {type(rec[key]).__name__}, not {kind.__name__}"
    schema = rec.get("schema", RESULTS_SCHEMA)
    if not isinstance(schema, int) or isinstance(schema, bool):
        return f"'schema' is {schema!r}, not an integer"
    if rec.get("case") is not None:  # null: no case recorded, as when absent
        return _case_problem(rec["case"], checked_cases)
    return None


def _sniff(path: Path, what: str, flag: str = "") -> None:
    prefix = f"{flag}: " if flag else ""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except IsADirectoryError:
        raise InputFileError(f"{prefix}{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise InputFileError(f"{prefix}{path}: cannot be read: {exc.strerror or exc}") from None
    if b"\x00" in head:
        raise InputFileError(f"{prefix}{path}: is a binary file, not a {what}")


def read_results_file(path, *, missing_ok: bool = False) -> ReadResult:
    """Read and validate a results.jsonl; see the module docstring."""
    path = Path(path)
    out = ReadResult()
    if not path.exists():
        if missing_ok:
            return out
        raise InputFileError(f"{path}: does not exist")
    _sniff(path, "results.jsonl")
    foreign_lines = 0
    checked_cases: set = set()
    try:
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                if not raw.strip():
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    out.skipped.append((n, "not UTF-8 text"))
                    foreign_lines += 1
                    continue
                if not raw.endswith(b"\n"):
                    try:
                        rec = json.loads(text)
                    except ValueError:
                        out.skipped.append((n, "a torn last line (an interrupted write)"))
                        continue
                else:
                    try:
                        rec = json.loads(text)
                    except ValueError as exc:
                        out.skipped.append((n, f"not JSON ({exc.msg})"))
                        foreign_lines += 1
                        continue
                problem = _problem(rec, checked_cases)
                if problem:
                    out.skipped.append((n, problem))
                    foreign_lines += 1
                    continue
                schema = rec.get("schema", RESULTS_SCHEMA)
                if schema > RESULTS_SCHEMA:
                    out.newer_schema = max(out.newer_schema or 0, schema)
                out.records.append(rec)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if not out.records and foreign_lines:
        first = out.skipped[0]
        raise InputFileError(
            f"{path}: not a refgrad results file (no valid result line; line {first[0]}: {first[1]})"
        )
    return out


def read_report_file(path, flag: str = "report") -> dict:
    """A report.json, validated enough to be used as a baseline or as the run's environment."""
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"{flag}: {path}: does not exist")
    _sniff(path, "report.json", flag)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputFileError(f"{flag}: {path}: is not UTF-8 text, not a report.json") from None
    except ValueError as exc:
        raise InputFileError(
            f"{flag}: {path}: is not valid JSON ({exc}); a torn or foreign report.json"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise InputFileError(f"{flag}: {path}: is not a refgrad report.json (no 'cells' list)")
    for i, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or not isinstance(cell.get("id"), str):
            raise InputFileError(f"{flag}: {path}: cells[{i}] is not a report cell (no string 'id')")
    return data


# what the regression view reads of each cell of a baseline report
_BASELINE_CELL = {"id": str, "verdict": str, "failing_cases": list, "passing_cases": list}


def read_baseline(path, flag: str = "--baseline") -> dict:
    """A report.json to compare with: every cell must carry what the regression view reads
    (InputFileError names the file, the cell and the field)."""
    data = read_report_file(path, flag)
    for i, cell in enumerate(data["cells"]):
        for key, kind in _BASELINE_CELL.items():
            if not isinstance(cell.get(key), kind):
                got = "no" if key not in cell else f"a {type(cell[key]).__name__} as its"
                raise InputFileError(
                    f"{flag}: {path}: cells[{i}] ({cell['id']!r}) has {got} {key!r} "
                    f"(a {kind.__name__} is required): not a complete refgrad report.json"
                )
        worst = cell.get("worst")
        if worst is not None and not (
            isinstance(worst, dict)
            and "excess" in worst
            and isinstance(worst["excess"], (int, float, type(None)))
        ):
            raise InputFileError(
                f"{flag}: {path}: cells[{i}] ({cell['id']!r}) has a 'worst' without a numeric 'excess' "
                "(null or an object with one is required): not a complete refgrad report.json"
            )
    return data
