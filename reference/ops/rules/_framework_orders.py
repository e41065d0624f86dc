"""The error declaration of a derivative primitive that takes its multiplier (the exact kernels of
reference/ops/rules/_mp_unary.py and special_gamma_ratio.py): ``<name>_derivative(*arguments,
outer, inner; orders)`` is outer·inner·∂^orders f, one rounding (reference/ops/rules/_times.py),
``inner`` the newest pass's cotangent or tangent, ``outer`` the product of the earlier passes'.

A framework forms that product in its own order, from a formula ``formula(*arguments, *orders)``
of the derivative (one order per argument, 0 for the function itself): :func:`times_multiplier` is
the declaration's own order, :func:`framework_orders` the others, the declaration's alternatives
(:func:`reference.errors.composite` takes the element-wise largest error). ``orders`` names the
primitive's params holding the orders, in the arguments' order: ``("order",)`` for a unary function
(:func:`reference.ops.rules._mp_unary.unary_rules`), ``("d0", "d1")`` for a binary one
(:func:`reference.ops.rules.special_gamma_ratio.binary_rules`)."""

from __future__ import annotations

import numpy as np

from reference.autograd.engine import grad
from reference.autograd.forward_ad import forward_through
from reference.autograd.grad_mode import enable_grad
from reference.ops import api as A


def times_multiplier(formula, orders):
    """An error declaration's ``formula(*arguments, *orders)`` of a derivative, as the derivative
    primitive's: ``(outer·inner)·formula`` (the framework multiplies its derivative by the product
    of the cotangents and tangents, one rounding); ``orders`` the params naming the orders."""

    def decomposition(*tensors, **params):
        *arguments, outer, inner = tensors
        return (outer * inner) * formula(*arguments, *(params.get(name, 0) for name in orders))

    return decomposition


def framework_orders(formula, orders):
    """The other orders in which a framework forms outer·inner·∂^orders f when its derivative is
    autodiff of its formula of the previous order (one less in one argument): for each argument,
    forward and reverse (all the forward ones first). An alternative that does not apply (no
    previous order in its argument) is None: no error.

    * forward: a forward pass differentiates the formula of the previous order with the tangent
      ``inner`` entering at its leaves, so every intermediate tangent is a product inner·v' that
      rounds (below the smallest normal, flushed to 0 where the framework flushes: an error up to
      the smallest normal, which the formula's later steps and ``outer`` then multiply); the
      earlier multiplier ``outer`` scales the result last;
    * reverse: a backward pass sends the cotangent product outer·inner into the formula's output
      and back through its graph, rounding each partial product on the way.

    Derivation: the error of these Tensor computations is what the tracker composes for them
    (:mod:`reference.errors`); the framework's own order is one of them. Missing before
    (dawsn-43d57b564c0c, bfloat16 jvp_jvp at x = 2.125, tangents 2.23 and -2.87e-38: JAX's
    t2·D' = 5.0e-39 flushes, times 2x and t1 an error of 4.1 smallest normals where
    (t1·t2)·D'' rounds once: bound 2.6 of them, 3.08e-38). At the first order there is no previous
    formula to differentiate: the forward order is outer·(inner·f'), the reverse one the
    declaration's own (None)."""

    def split(tensors, params):
        *arguments, outer, inner = tensors
        return arguments, outer, inner, tuple(params.get(name, 0) for name in orders)

    def previous(k, arguments, inner, degrees):
        """(the formula of the previous order as a function of argument k, that argument), the
        arguments broadcast to the multiplier's shape; None where argument k has no previous order."""
        if degrees[k] == 0 or sum(degrees) <= 1:
            return None
        shape = np.broadcast_shapes(*(tuple(a.shape) for a in arguments), tuple(inner.shape))
        args = [A.broadcast_to(a, shape) for a in arguments]
        lower = tuple(d - (j == k) for j, d in enumerate(degrees))
        return (lambda y: formula(*(y if j == k else a for j, a in enumerate(args)), *lower)), args[k]

    def forward(k):
        def decomposition(*tensors, **params):
            arguments, outer, inner, degrees = split(tensors, params)
            if sum(degrees) <= 1:  # no previous formula: the newest multiplier first (once)
                return outer * (inner * formula(*arguments, *degrees)) if k == 0 else None
            at = previous(k, arguments, inner, degrees)
            return None if at is None else forward_order(*at, outer, inner)

        return decomposition

    def reverse(k):
        def decomposition(*tensors, **params):
            arguments, outer, inner, degrees = split(tensors, params)
            at = previous(k, arguments, inner, degrees)
            return None if at is None else reverse_order(*at, outer * inner)

        return decomposition

    return tuple(forward(k) for k in range(len(orders))) + tuple(reverse(k) for k in range(len(orders)))


def forward_order(fn, x, outer, inner):
    """outer·(forward mode of ``fn`` at ``x`` with the tangent ``inner``): a framework's forward
    pass over its own formula ``fn`` (:func:`framework_orders`); ``x`` has the multipliers' shape."""
    return outer * forward_through(fn, (x,), (A.broadcast_to(inner, tuple(x.shape)),))


def reverse_order(fn, x, cotangent):
    """The backward pass of ``fn`` at ``x`` with ``cotangent`` (:func:`framework_orders`)."""
    with enable_grad():
        y = x.detach().requires_grad_()
        out = fn(y)
        (d,) = grad(out, y, grad_outputs=A.broadcast_to(cotangent, tuple(out.shape)), allow_unused=True)
    return d
