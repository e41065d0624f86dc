"""Samples for the sorting family (reference/ops/rules/sorting.py)."""

import reference as T

RECORDS = {
    "sort": [
        ("ascending", lambda a: a.sort(1).values * T.arange(3, dtype=T.float64), [(2, 3)], "f"),
        ("descending", lambda a: T.sort(a, 0, descending=True)[0] * a, [(3, 2)], "f"),
        ("msort", lambda a: T.msort(a) ** 2, [(3, 2)], "f"),
    ],
    "sort_stable": [("stable", lambda a: a.sort(stable=True, dim=-1).values.cumsum(-1), [(2, 3)], "f")],
    "topk": [
        ("largest", lambda a: a.topk(2, 1).values * 2, [(2, 4)], "f"),
        ("smallest", lambda a: T.topk(a, 2, 0, largest=False).values * a[:2], [(3, 2)], "f"),
    ],
}
