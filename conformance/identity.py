"""Case identity: ids unique across what a run loads, safe as file names; a content hash per case.

Results and the reference cache are keyed by ``(id, content hash)``, so an edited case with an
unchanged id never reuses a stale reference or a stale recorded result.
"""

from __future__ import annotations

import hashlib
import json
import re

from conformance.case import Case, CaseError

# an id becomes part of file names (reproducers, found cases): a conservative portable alphabet
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=-]{0,127}$")


def case_hash(case) -> str:
    """The case's content (everything that changes what runs: not its id, description or checks)."""
    body = case.to_dict()
    for key in ("description", "id", "checks"):
        body.pop(key, None)
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def safe_file_part(text: str, limit: int = 80) -> str:
    """``text`` made safe as part of a file name (no separators, no dot-dot, bounded length)."""
    out = re.sub(r"[^A-Za-z0-9._+=-]", "_", text)[:limit].lstrip(".")
    if out != text:
        out = f"{out}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    return out or "case"


def check_ids(cases, sources=None) -> None:
    """Raise CaseError for an unsafe id or for two cases sharing one id (naming both files)."""
    seen = {}
    for i, case in enumerate(cases):
        where = (sources[i] if sources else None) or getattr(case, "_source", None) or f"case #{i}"
        if case.name and not SAFE_ID.match(case.name):
            raise CaseError(
                where,
                "id",
                f"{case.name[:80]!r} is not a safe id: use letters, digits and . _ + = - "
                "(at most 128 characters, not starting with a dot or dash); ids name files",
            )
        cid = case.id
        if cid in seen:
            first, first_hash = seen[cid]
            if first_hash == case_hash(case):
                raise CaseError(where, "id", f"{cid!r} is the same case as {first} (loaded twice)")
            raise CaseError(
                where, "id", f"{cid!r} is also the id of a different case in {first}; ids must be unique"
            )
        seen[cid] = (where, case_hash(case))


def load_case_files(path) -> tuple[list, list[str]]:
    """Cases from a JSON file or, recursively, a directory, with the file (and index) each came from.

    Every file is read as UTF-8 (a byte-order mark is allowed); anything else is a CaseError
    naming the file, never a traceback.
    """
    from pathlib import Path

    path = Path(path)
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    cases, sources = [], []
    for file in files:
        source = str(file)
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise CaseError(source, "<file>", f"cannot be read: {exc.strerror or exc}") from None
        if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise CaseError(source, "<file>", "is a binary file, not a JSON case")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CaseError(
                source,
                "<file>",
                f"is not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); "
                "save the case file as UTF-8",
            ) from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseError(source, "<json>", f"not valid JSON: {exc}") from None
        except RecursionError:
            raise CaseError(source, "<json>", "nested too deeply to be a case") from None
        items = raw if isinstance(raw, list) else [raw]
        for i, item in enumerate(items):
            where = f"{source}[{i}]" if isinstance(raw, list) else source
            if not isinstance(item, dict):
                raise CaseError(where, "<json>", f"a case must be a JSON object, got {type(item).__name__}")
            try:
                cases.append(Case.from_dict(item, source=where))
            except CaseError:
                raise
            except Exception as exc:  # noqa: BLE001 - a field of the wrong kind the parser did not foresee
                raise CaseError(
                    where, "<case>", f"cannot be read as a case: {type(exc).__name__}: {exc}"
                ) from None
            sources.append(where)
    return cases, sources
