"""Shared machinery of the unary special functions whose every derivative order is an exact kernel
(the exponential, Dawson, Spence, Fresnel and sine/cosine integrals: special_expint.py and its
neighbours): a function ``f`` and its derivative primitive ``f_derivative`` (param ``order`` >= 1,
whose VJP is the next order), each evaluated element by element on the host by a float64 scalar
function ``exact(x, order)`` (mpmath, correctly rounded to float64), rounded once to the input's
dtype (float16/32 inputs compute in float64).

Computing each order from the input, never by differentiating a formula that cancels, is what
keeps the derivatives exact (issue 38): Ei'' = e^x (x - 1)/x² near its zero at 1, Dawson's
D'' = (4x² - 2) D - 2x for large x, both lose every digit in float64 through the formula."""

from __future__ import annotations

import numpy as np

from reference.autograd.dispatch import apply
from reference.backend import namespace_of, to_numpy
from reference.ops import api as A
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import times
from reference.ops.rules.registry import RULES, rule


def host_kernel(exact, order, **params):
    """The kernel of ``exact(x, order, **params)`` on a Tensor's array, element by element in float64,
    returned in the input's namespace and dtype (rounded once)."""

    def kernel(a):
        x = np.asarray(to_numpy(a), dtype=np.float64)
        out = np.empty(x.shape, dtype=np.float64)
        for idx, v in np.ndenumerate(x):
            out[idx] = exact(float(v), order, **params)
        with np.errstate(all="ignore"):
            return namespace_of(a).asarray(out.astype(a.dtype))

    return kernel


def times_kernel(exact, order):
    """The kernel of ``outer·inner·exact(x, order)`` over the broadcast (x, outer, inner), each
    element's product rounded once (:func:`reference.ops.rules._times.times`), in the namespace and
    dtype of ``x``."""

    def kernel(a, outer, inner):
        x, mo, mi = np.broadcast_arrays(*(np.asarray(to_numpy(t), dtype=np.float64) for t in (a, outer, inner)))
        out = np.empty(x.shape, dtype=np.float64)
        for idx in np.ndindex(out.shape):
            out[idx] = times(exact(float(x[idx]), order), float(mo[idx]), float(mi[idx]))
        with np.errstate(all="ignore"):
            return namespace_of(a).asarray(out.astype(a.dtype))

    return kernel


def unary_rules(name, node, exact):
    """Declare ``name`` (``node`` its grad_fn name) and ``<name>_derivative`` over ``exact(x, order)``
    (a float, or an mpmath number where a derivative leaves float64's range; cached per element, the
    sign of a zero part of the key: :mod:`reference.ops.rules._sign_cache`); returns
    ``derivative(x, order, multiplier=None)``, the Tensor-level derivative.

    The derivative primitive takes its multiplier in two factors: ``<name>_derivative(x, outer,
    inner; order)`` is outer·inner·f^(order)(x), one rounding (:mod:`reference.ops.rules._times`),
    ``inner`` the newest pass's cotangent or tangent, ``outer`` the product of the earlier passes'
    (the error declaration needs them apart: :mod:`reference.ops.rules._framework_orders`, its
    params ``("order",)``). Its derivative in x is the next order with the factors (outer·inner, g),
    in outer the same order with (inner, g), in inner with (outer, g)."""
    cached = sign_aware_cache(exact)
    derivative_name = f"{name}_derivative"

    def derivative(x, order, multiplier=None):
        """w·f^(order) of ``name`` at Tensor ``x`` (order >= 1; ``multiplier`` w, None: 1)."""
        w = A.ones_like(x) if multiplier is None else multiplier
        return apply(RULES[derivative_name], (x, A.ones_like(w), w), {"order": order})

    rule(
        derivative_name,
        "".join(p.capitalize() for p in derivative_name.split("_")) + "Backward0",
        ("self", "outer", "inner"),  # order: the derivative's order, >= 1
        forward=lambda a, outer, inner, order: times_kernel(cached, order)(a, outer, inner),
        grads=(
            lambda c, g: apply(RULES[derivative_name], (c.self, c.outer * c.inner, g), {"order": c.order + 1}),
            lambda c, g: apply(RULES[derivative_name], (c.self, c.inner, g), {"order": c.order}),
            lambda c, g: apply(RULES[derivative_name], (c.self, c.outer, g), {"order": c.order}),
        ),
        saves={"self": (0, 1, 2), "outer": (0, 2), "inner": (0, 1)},
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )
    rule(
        name,
        node,
        ("self",),
        forward=host_kernel(cached, 0),
        grads=(lambda c, g: derivative(c.self, 1, multiplier=g),),
        saves={"self": (0,)},
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )
    return derivative
