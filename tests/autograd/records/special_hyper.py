"""Samples for jax.scipy.special's hypergeometric functions (reference/ops/functions/special_hyper.py):
hyp1f1 with a of both signs (``a``), b positive (``p``, off the poles) and x of both signs; hyp2f1
with c positive and x inside (-0.9, 0.9) (``f``); their derivative primitives at the orders the
checks use (a parameter's, x's, mixed, second order)."""

import reference as T
from reference.ops.rules.special_hyper import hyp1f1_derivative, hyp2f1_derivative

S = T.special

RECORDS = {
    "hyp1f1": [
        ("all", lambda a, b, x: S.hyp1f1(a, b, x * 2), [(3,), (3,), (3,)], "apa"),
        ("broadcast", lambda a, b, x: S.hyp1f1(a, b + 1, x), [(2, 1), (3,), (2, 3)], "apa"),
    ],
    "hyp1f1_derivative": [
        ("a_order1", lambda a, b, x: hyp1f1_derivative(a, b, x, (1, 0, 0)), [(2,), (2,), (2,)], "apa"),
        ("b_x", lambda a, b, x: hyp1f1_derivative(a, b, x, (0, 1, 1)), [(2,), (2,), (2,)], "apa"),
        ("a_b", lambda a, b, x: hyp1f1_derivative(a, b, x, (1, 1, 0)), [(2,), (2,), (2,)], "apa"),
    ],
    "hyp2f1": [
        ("all", lambda a, b, c, x: S.hyp2f1(a, b, c, x), [(3,), (3,), (3,), (3,)], "appf"),
    ],
    "hyp2f1_derivative": [
        ("c_order1", lambda a, b, c, x: hyp2f1_derivative(a, b, c, x, (0, 0, 1, 0)), [(2,)] * 4, "appf"),
        ("a_x", lambda a, b, c, x: hyp2f1_derivative(a, b, c, x, (1, 0, 0, 1)), [(2,)] * 4, "appf"),
        ("b_c", lambda a, b, c, x: hyp2f1_derivative(a, b, c, x, (0, 1, 1, 0)), [(2,)] * 4, "appf"),
    ],
}
