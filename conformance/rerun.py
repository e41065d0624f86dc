"""A failing framework answer asked for once more: were the two runs bitwise identical?

A result whose verdict is ``fail`` (judged, before known departures are matched) is re-run once on
the same worker with the same request, the same inputs (conformance.runner.Campaign._complete),
and the two answers are compared bit for bit. Two runs that differ are evidence of an
uninitialised read or a race in the framework (the wrong values are whatever memory held, or
whichever thread finished first), which a maintainer needs before bisecting a formula; identical
runs say the departure is deterministic. The result records ``rerun``: ``{"identical": true |
false | null, "note": ...}`` (null: not compared, the re-run timed out or its worker could not run
it), and the report's departure line and discrepancy show the note. Passing results are never
re-run.
"""

from __future__ import annotations

import numpy as np

IDENTICAL = "rerun: bitwise identical"
DIFFER = "nondeterministic: two runs differ"


def _bits(value):
    """An output as what its bits are: (dtype, shape, bytes), or None."""
    if value is None:
        return None
    a = np.ascontiguousarray(value)
    return a.dtype.str, a.shape, a.tobytes()


def _first_difference(name, a, b) -> str:
    """Where output ``name`` of two runs differs: its shape, or how many elements and the first."""
    if a is None or b is None:
        return f"{name}: {'None' if a is None else 'a value'} then {'None' if b is None else 'a value'}"
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{name}: shape {a.shape} {a.dtype} then {b.shape} {b.dtype}"
    # element by element on the bits: nan == nan when its bits are the same, -0.0 != 0.0
    flat_a, flat_b = (np.ascontiguousarray(x).reshape(-1) for x in (a, b))
    bytes_a, bytes_b = (f.view(np.uint8).reshape(f.size, -1) for f in (flat_a, flat_b))
    rows = (bytes_a != bytes_b).any(axis=1)
    where = np.flatnonzero(rows)
    at = [int(i) for i in np.unravel_index(where[0], a.shape)]
    first, second = flat_a[where[0]].item(), flat_b[where[0]].item()
    return f"{name}: {len(where)} of {a.size} elements, first at {at}: {first!r} then {second!r}"


def compare(first: dict, again: dict) -> dict:
    """``{"identical": bool | None, "note": str}`` for two worker replies to the same request."""
    status = again.get("status")
    if status in ("timeout", "refused") or status is None:
        why = again.get("reason") or "no answer"
        return {"identical": None, "note": f"rerun: not compared (the second run {status}: {why})"[:400]}
    if first.get("status") != status:
        said = again.get("reason") or f"{again.get('type', '')}: {again.get('message', '')}"
        return {"identical": False, "note": f"{DIFFER} (the second run: {status}, {said})"[:400]}
    if status != "ok":  # two errors (or crashes): the same one?
        one = (first.get("type"), first.get("message"), first.get("reason"))
        two = (again.get("type"), again.get("message"), again.get("reason"))
        if one == two:
            return {"identical": True, "note": IDENTICAL}
        return {"identical": False, "note": f"{DIFFER} (the second run raised {two[0]}: {two[1]})"[:400]}
    a, b = first.get("outputs") or {}, again.get("outputs") or {}
    if a.keys() != b.keys():
        return {"identical": False, "note": f"{DIFFER} (outputs {sorted(a)} then {sorted(b)})"}
    differ = [_first_difference(k, a[k], b[k]) for k in sorted(a) if _bits(a[k]) != _bits(b[k])]
    if not differ:
        return {"identical": True, "note": IDENTICAL}
    return {"identical": False, "note": f"{DIFFER} ({'; '.join(differ)})"[:400]}
