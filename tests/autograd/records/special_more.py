"""Samples for Spence's, the Fresnel and the sine/cosine integrals (reference/ops/functions/special_more.py):
each derivative primitive at the orders the checks use (its own VJP, reached by gradgradcheck of a
first-order sample): Spence's on x > 0 across 1, where ln x/(1 - x) is 0/0 (``p``), Fresnel's and
Si's and Ci's on both sides of 0 (``a``), Γ's, the factorial's and loggamma's on x > 0 and Γ's on
(-3.5, -1.5) too; gammasgn (derivative 0) times its input."""

import reference as T
from reference.ops.rules.special_fresnel import (
    fresnel_cos_derivative,
    fresnel_sin_derivative,
    sici_ci_derivative,
    sici_si_derivative,
)
from reference.ops.rules.special_gammafn import factorial_derivative, gamma_derivative, loggamma_derivative
from reference.ops.rules.special_spence import spence_derivative

S = T.special


def _orders(derivative, scale, domain):
    return [(f"order{k}", lambda a, k=k: derivative(a * scale, k), [(4,)], domain) for k in (1, 2)]


RECORDS = {
    "spence_derivative": _orders(spence_derivative, 2, "p"),
    "fresnel_sin_derivative": _orders(fresnel_sin_derivative, 2, "a"),
    "fresnel_cos_derivative": _orders(fresnel_cos_derivative, 2, "a"),
    "sici_si_derivative": _orders(sici_si_derivative, 3, "a"),
    "sici_ci_derivative": _orders(sici_ci_derivative, 3, "a"),
    "fresnel_sin": [("pair", lambda a: S.fresnel(a)[0] * S.fresnel(a)[1], [(2, 3)], "a")],
    "sici_si": [("pair", lambda a: S.sici(a)[0] * S.sici(a)[1], [(2, 3)], "p")],
    # Γ on both sides of 0 away from its poles (a + 0.5 over the draws of ``p``: x in (0.5, ...)), and
    # a negative non-integer through the reflection
    "gamma_derivative": _orders(gamma_derivative, 1, "p") + [("negative", lambda a: gamma_derivative(-a - 2.5, 1), [(3,)], "f")],
    "factorial_derivative": _orders(factorial_derivative, 2, "p"),
    "loggamma_derivative": _orders(loggamma_derivative, 2, "p"),
    "gamma": [("negative", lambda a: S.gamma(a - 2.5), [(2, 3)], "f")],
    "factorial": [("unary", lambda a: S.factorial(a), [(2, 3)], "p")],
    "loggamma": [("unary", lambda a: S.loggamma(a), [(2, 3)], "p")],
    "gammasgn": [("times", lambda a: S.gammasgn(a - 2.5) * a, [(3,)], "f")],
}
