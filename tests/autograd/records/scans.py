"""Samples for the scan family (reference/ops/rules/scans.py)."""

import reference as T


def _c(values):
    return T.tensor(values, dtype=T.float64)


RECORDS = {
    "cumsum": [
        ("dim1", lambda a: a.cumsum(1) * a, [(2, 3)], "a"),
        ("neg_dim", lambda a: T.cumsum(a, -1, dtype=T.float64) ** 2, [(3,)], "a"),
    ],
    "cumprod": [
        ("no_zeros", lambda a: a.cumprod(1) * 2, [(2, 3)], "a"),
        ("one_zero", lambda a: (a * _c([1.0, 0.0, 1.0, 1.0])).cumprod(0), [(4,)], "a"),
        ("zeros", lambda a: (a * _c([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])).cumprod(1) + a, [(2, 3)], "a"),
    ],
    "cummax": [("dim", lambda a: a.cummax(1).values * 2, [(2, 4)], "f")],
    "cummin": [("dim", lambda a: T.cummin(a, 0)[0] * a, [(3, 2)], "f")],
    "logcumsumexp": [("dim", lambda a: a.logcumsumexp(1) * 2, [(2, 3)], "a")],
}
