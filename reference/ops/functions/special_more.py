"""More special functions PyTorch does not have, in ``reference.special`` under scipy.special's names
(the names JAX uses), over exact rules: ``spence`` (reference/ops/rules/special_spence.py),
``fresnel`` and ``sici`` (reference/ops/rules/special_fresnel.py), ``gamma``, ``gammasgn``,
``loggamma`` and ``factorial`` (reference/ops/rules/special_gammafn.py). They follow the conventions of
:mod:`reference.ops.functions.special_integrals` (integer inputs promote to the default dtype, every
floating dtype computes through the float64 kernel, rounded once, every derivative order exact).

``fresnel`` and ``sici`` return scipy's pair, each member its own primitive (``fresnel_sin``,
``fresnel_cos``; ``sici_si``, ``sici_ci``), so each is differentiated on its own."""

from __future__ import annotations

from reference.ops.functions.special_integrals import _unary

spence = _unary("spence", "Spence's function ∫_1^x ln t/(1 - t) dt (scipy.special.spence); exact derivatives.")

_fresnel_sin = _unary("fresnel_sin", "")
_fresnel_cos = _unary("fresnel_cos", "")
_si = _unary("sici_si", "")
_ci = _unary("sici_ci", "")


def fresnel(x):
    """(S(x), C(x)), the Fresnel integrals ∫_0^x sin(πt²/2) dt and ∫_0^x cos(πt²/2) dt
    (scipy.special.fresnel); exact derivatives."""
    return _fresnel_sin(x), _fresnel_cos(x)


def sici(x):
    """(Si(x), Ci(x)), the sine and cosine integrals (scipy.special.sici; Ci of x < 0 its real part
    Ci(|x|), as scipy's and JAX's); exact derivatives."""
    return _si(x), _ci(x)


gamma = _unary("gamma", "Γ(x) (scipy.special.gamma; C99 tgamma's special values); exact derivatives.")
gammasgn = _unary("gammasgn", "The sign of Γ(x) (scipy.special.gammasgn); derivative 0.")
loggamma = _unary("loggamma", "ln Γ(x) for x > 0, nan elsewhere (JAX's real jax.scipy.special.loggamma); exact derivatives.")
factorial = _unary("factorial", "n! = Γ(n + 1) for n >= 0, 0 below (scipy.special.factorial, exact=False); exact derivatives.")

NAMESPACES = {
    "special": {
        "spence": spence,
        "fresnel": fresnel,
        "sici": sici,
        "gamma": gamma,
        "gammasgn": gammasgn,
        "loggamma": loggamma,
        "factorial": factorial,
    }
}
