"""The exponential integrals: Ei(x) = -PV ∫_{-x}^∞ e^-t/t dt (``expi``: jax.scipy.special.expi,
tf.math.special.expint) and E_n(x) = ∫_1^∞ e^-xt/t^n dt (``expn``: jax.scipy.special.expn, n an
integer, not differentiated; ``exp1`` = E_1: jax.scipy.special.exp1). PyTorch has neither.

Part of the one derivative table (:mod:`reference.ops.rules`). The frameworks differentiate them
with Ei' = e^x/x (TensorFlow's registered gradient, JAX's custom jvp) and E_n' = -E_{n-1} (JAX's
custom jvp); the reference answers with the mathematics, every order exact:

* ``expi`` and ``expi_derivative`` (param ``order``): Ei^(k)(x) = d^(k-1)(e^x/x)
  = e^x Σ_j C(k-1, j) (-1)^j j!/x^(j+1), summed in mpmath at 40 + 20k digits (for x > 0 the terms
  alternate: Ei'' = e^x (x - 1)/x² has a zero at 1, where float64 would lose every digit);
* ``expn`` (param ``n``, an integer): E_n by mpmath's ``expint``; its derivative is the same
  primitive, -E_{n-1}, so d^k E_n = (-1)^k E_{n-k} at every order, through E_0 = e^-x/x and the
  E_p of negative p (x^(p-1) Γ(1 - p, x), finite for x > 0).

Special values (the limits; the functions are real on their domains): Ei(±0) = -inf, its
derivatives at ±0 the dominant term (-1)^j j!/x^(j+1) with 0's sign (Ei'(+0) = inf, Ei'(-0) = -inf);
Ei(inf) = inf with every derivative, Ei(-inf) = 0 with every derivative; E_n(x < 0) nan (complex:
the frameworks' nan), E_p(0) = 1/(p - 1) for p > 1, inf for p <= 1; E_p(inf) = 0; nan at nan.
"""

from __future__ import annotations

import math

from reference.autograd.dispatch import apply
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._mp_unary import host_kernel, unary_rules
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded, unrounded
from reference.ops.rules.registry import RULES, rule


def expi_exact(x, order):
    """Ei^(order)(x), correctly rounded to float64."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return math.inf if x > 0 else 0.0
    if x == 0:
        if order == 0:
            return -math.inf
        j = order - 1  # the dominant term of d^j(e^x/x): (-1)^j j!/x^(j+1), x = ±0
        return (-1.0) ** j * math.copysign(1.0, x) ** (j + 1) * math.inf
    from mpmath import mp

    with mp.workdps(40 + 20 * order):
        v = mp.mpf(x)
        if order == 0:
            return rounded(mp.ei(v))
        m = order - 1
        total = mp.fsum(math.comb(m, j) * (-1) ** j * math.factorial(j) / v ** (j + 1) for j in range(m + 1))
        return unrounded(mp.exp(v) * total)


@sign_aware_cache
def expn_exact(x, order, n):
    """E_n(x) (order 0; the function's derivatives are E_{n-k} themselves), correctly rounded."""
    if math.isnan(x) or x < 0:
        return math.nan
    if math.isinf(x):
        return 0.0
    if x == 0:
        return 1.0 / (n - 1) if n > 1 else math.inf
    from mpmath import mp

    with mp.workdps(40):
        return rounded(mp.expint(n, mp.mpf(x)))


expi_derivative = unary_rules("expi", "ExpiBackward0", expi_exact)


def expn(x, n):
    """E_n at Tensor ``x`` (n an integer)."""
    return apply(RULES["expn"], (x,), {"n": n})


rule(
    "expn",
    "ExpnBackward0",
    ("self",),  # n: the order, an int (not differentiated)
    forward=lambda a, n: host_kernel(expn_exact, 0, n=n)(a),
    grads=(lambda c, g: -g * expn(c.self, c.n - 1),),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# Judged against the exact value in the mixed sense (reference.errors.exact_elementwise): c ulps of
# the result plus the propagation of a 2·c·u relative perturbation of x (Ei and E_n have a
# logarithmic pole at 0 and Ei a zero at 0.3725, where c ulps of the result alone vanish or
# explode). JAX's Ei and E_n are Cephes' (series, continued fraction, rational fits), TensorFlow's
# Ei Eigen's Cephes port; Ei' = e^x/x and E_n' = -E_{n-1} their formulas. No framework documents a
# figure: these are measurements against the exact kernels above (scripts/measure_special_integrals.py:
# 400 points x = ±10^U(-4, 2.5), float32 and float64, seed 0), c = |error| / (2u (|y| + |y'·x|)).
from reference import errors as _E  # noqa: E402

_SOURCE = "measured against mpmath (scripts/measure_special_integrals.py): {} worst, declared c = {}"
#: Ei: 1.57 (JAX float32 at x = -0.94); declared 2
RULES["expi"].error = _E.exact_elementwise(2.0, _SOURCE.format("1.57 (JAX float32 Ei)", 2))
#: Ei's derivatives: 0.89 (TensorFlow float32 e^x/x at 0.73), its second 0.76; declared 1
RULES["expi_derivative"].error = _E.exact_elementwise(1.0, _SOURCE.format("0.89 (TensorFlow float32 Ei')", 1))
#: E_n and its derivatives (E_{n-1}): 10.4 (JAX float32 E_2 at x = 0.82, its power series' terms
#: cancel there); declared 12
RULES["expn"].error = _E.exact_elementwise(12.0, _SOURCE.format("10.4 (JAX float32 E_2)", 12))
