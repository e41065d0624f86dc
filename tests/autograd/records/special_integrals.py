"""Samples for the special functions PyTorch does not have (reference/ops/functions/special_integrals.py):
the derivative primitive of Ei at the orders the checks use (its own VJP, reached by gradgradcheck
of a first-order sample), on both sides of Ei's pole at 0 (``a``), and E_n of each order the
record draws on x > 0 (``p``); Dawson's integral's derivative primitive likewise."""

import reference as T
from reference.ops.rules.special_dawsn import dawsn_derivative
from reference.ops.rules.special_expint import expi_derivative

S = T.special

RECORDS = {
    "expi_derivative": [
        ("order1", lambda a: expi_derivative(a * 3, 1), [(4,)], "a"),
        ("order2", lambda a: expi_derivative(a * 3, 2), [(4,)], "a"),
    ],
    "dawsn_derivative": [
        ("order1", lambda a: dawsn_derivative(a * 2, 1), [(4,)], "a"),
        ("order2", lambda a: dawsn_derivative(a * 2, 2), [(4,)], "a"),
    ],
    "expn": [(f"n{n}", lambda a, n=n: S.expn(n, a), [(2, 3)], "p") for n in (0, 1, 3)],
}
