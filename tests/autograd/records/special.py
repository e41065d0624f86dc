"""Samples for the Bessel functions (:mod:`reference.ops.rules.special`): J0, J1 over both signs
(``a``), Y0, Y1, K0, K1, e^x K0, e^x K1 on x >= 0.5 (``p``), and their shared derivative primitive
(the second derivative's own VJP, reached by gradgradcheck of a first-derivative sample); and for the
incomplete gamma functions (:mod:`reference.ops.rules.special_gamma`): both arguments positive
(``pp``), a and x on either side of each other, and the derivative primitives at the orders the
checks use (∂_a, ∂_x², ∂_a∂_x); and for the Hurwitz zeta function (:mod:`reference.ops.rules.special_zeta`):
s above 1, q positive, on either side of 1, and its derivative primitive (∂_s, ∂_q², ∂_s∂_q); and
for the incomplete beta function (:mod:`reference.ops.rules.special_beta`): x = p/(1 + p) in (0,
1) at fixed a, b (not differentiated) on either side of 1, and its derivative primitive (∂_x², ∂_x³);
and for the log-beta function: both arguments positive, and its derivative primitive (∂_a, ∂_a∂_b, ∂_b²)."""

import reference as T
from reference.ops.rules.special import derivative_of
from reference.ops.rules.special_beta import betaln_derivative
from reference.ops.rules.special_beta import derivative as betainc_derivative
from reference.ops.rules.special_gamma import derivative
from reference.ops.rules.special_zeta import derivative as zeta_derivative

S = T.special
#: betainc's parameters (not differentiated: constants of the samples)
_A = T.tensor([2.5, 0.7, 4.0], dtype=T.float64)
_B = T.tensor([1.5, 3.0, 0.6], dtype=T.float64)

RECORDS = {
    "bessel_j0": [("unary", lambda a: S.bessel_j0(a * 4), [(2, 3)], "a")],
    "bessel_j1": [("unary", lambda a: S.bessel_j1(a * 4), [(2, 3)], "a")],
    "bessel_y0": [("unary", lambda a: S.bessel_y0(a * 3), [(2, 3)], "p")],
    "bessel_y1": [("unary", lambda a: S.bessel_y1(a * 3), [(2, 3)], "p")],
    "modified_bessel_k0": [("unary", lambda a: S.modified_bessel_k0(a), [(2, 3)], "p")],
    "modified_bessel_k1": [("unary", lambda a: S.modified_bessel_k1(a), [(2, 3)], "p")],
    # e^x K: both sides of the kernel's switch to the asymptotic series at x = 30
    "scaled_modified_bessel_k0": [
        ("unary", lambda a: S.scaled_modified_bessel_k0(a), [(2, 3)], "p"),
        ("asymptotic", lambda a: S.scaled_modified_bessel_k0(a + 31), [(3,)], "p"),
    ],
    "scaled_modified_bessel_k1": [
        ("unary", lambda a: S.scaled_modified_bessel_k1(a), [(2, 3)], "p"),
        ("asymptotic", lambda a: S.scaled_modified_bessel_k1(a * 40), [(3,)], "p"),
    ],
    "bessel_derivative": [
        ("j1_order2", lambda a: derivative_of("bessel_j1", 2, a * 4), [(4,)], "a"),
        ("y0_order1", lambda a: derivative_of("bessel_y0", 1, a * 3), [(4,)], "p"),
        ("k1_order3", lambda a: derivative_of("modified_bessel_k1", 3, a), [(4,)], "p"),
        ("k1e_order2", lambda a: derivative_of("scaled_modified_bessel_k1", 2, a), [(4,)], "p"),
        ("k0e_order2_far", lambda a: derivative_of("scaled_modified_bessel_k0", 2, a + 35), [(3,)], "p"),
    ],
    "igamma": [("both", lambda a, x: S.gammainc(a * 2, x * 2), [(3,), (3,)], "pp")],
    "igammac": [("both", lambda a, x: S.gammaincc(a, x * 3), [(3,), (3,)], "pp")],
    "igamma_grad_a": [("first", lambda a, x: derivative(a, x * 2, 1, 0), [(2,), (2,)], "pp")],
    "igamma_derivative": [
        ("x_order2", lambda a, x: derivative(a * 2, x, 0, 2), [(2,), (2,)], "pp"),
        ("mixed", lambda a, x: derivative(a, x, 1, 1), [(2,), (2,)], "pp"),
    ],
    "zeta": [("both", lambda s, q: S.zeta(s + 1.5, q * 2), [(3,), (3,)], "pp")],
    "zeta_derivative": [
        ("s_order1", lambda s, q: zeta_derivative(s + 1.5, q, 1, 0), [(2,), (2,)], "pp"),
        ("q_order2", lambda s, q: zeta_derivative(s + 2, q, 0, 2), [(2,), (2,)], "pp"),
        ("mixed", lambda s, q: zeta_derivative(s + 1.5, q * 3, 1, 1), [(2,), (2,)], "pp"),
    ],
    "betainc": [("x", lambda x: S.betainc(_A, _B, x / (1 + x)), [(3,)], "p")],
    "betainc_derivative": [
        ("x_order2", lambda x: betainc_derivative(_A, _B, x / (1 + x), 2), [(3,)], "p"),
        ("x_order3", lambda x: betainc_derivative(_A, _B, x / (2 + x), 3), [(3,)], "p"),
    ],
    "betaln": [("both", lambda a, b: S.betaln(a * 2, b), [(3,), (3,)], "pp")],
    "betaln_derivative": [
        ("a_order1", lambda a, b: betaln_derivative(a, b * 3, 1, 0), [(2,), (2,)], "pp"),
        ("mixed", lambda a, b: betaln_derivative(a * 2, b, 1, 1), [(2,), (2,)], "pp"),
        ("b_order2", lambda a, b: betaln_derivative(a, b, 0, 2), [(2,), (2,)], "pp"),
    ],
}
