"""Out-of-place ``fill`` (PyTorch's ``fill.Scalar``/``fill.Tensor``, nodes FillBackward0/1; the
in-place ``fill_`` rules are in :mod:`.elementwise`), ``ldexp`` and ``frexp``.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry.
"""

from __future__ import annotations

import reference as T
from reference import errors
from reference.autograd.dispatch import apply
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.rule import AUTO_LINEAR, BATCH_ELEMENTWISE
from reference.ops.rules.pointwise import without_r_to_c
from reference.ops.rules.registry import RULES, rule


def _full_like(a, value):
    xp = namespace_of(a)
    return xp.full(a.shape, value, dtype=a.dtype)


def _fill_tensor_batch(b, params):
    """fill.Tensor: the value (0-d per sample) broadcast over the input's shape, batch dim first."""
    x, v = b.expanded(0), b.expanded(1)
    v = A.reshape(v, (b.size,) + (1,) * (x.ndim - 1))
    return apply(b.rule, (x, v), params), 0


rule(
    "fill_out",
    "FillBackward0",
    ("self",),
    forward=_full_like,  # value: a number (already converted to the input's dtype by the caller)
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=(lambda c, t: A.zeros_like(t),),
    batch=BATCH_ELEMENTWISE,
    error=errors.EXACT,
    complex_inputs=True,
)
rule(
    "fill_tensor_out",
    "FillBackward1",
    ("self", "value"),  # value: a 0-d tensor (under vmap: broadcastable to self)
    forward=lambda a, value: namespace_of(a).broadcast_to(value.astype(a.dtype), a.shape).copy(),
    grads=(lambda c, g: A.zeros_like(g), without_r_to_c(lambda c, g: A.sum_to(g, c.shapes[1]), 1)),
    jvp=AUTO_LINEAR,
    batch=_fill_tensor_batch,
    error=errors.EXACT,
    complex_inputs=True,
)


def _ldexp_forward(a, other, int_exponent=False):
    xp = namespace_of(a)
    return (a * xp.power(xp.asarray(2.0, dtype=a.dtype), other.astype(a.dtype))).astype(a.dtype, copy=False)


_LN2 = 0.6931471805599453  # log(2), rounded to float64


def _scale(c):
    """d ldexp / d self = 2**other. PyTorch's formula evaluates ``pow(2, other)`` in other's dtype:
    for an integral exponent that is integer power, 0 for a negative exponent (so PyTorch's
    gradient and JVP are 0 there, although the forward value is right); reproduced as such."""
    scale = A.pow(2.0, c.other)
    if c.int_exponent:
        scale = A.where(c.other >= 0, scale, A.zeros_like(scale))
    return scale


rule(
    "ldexp",
    "LdexpBackward0",
    ("self", "other"),  # computed in the result dtype (the caller casts both)
    forward=_ldexp_forward,
    # d/dself: 2**other; d/dother: self * 2**other * log(2) = result * log(2)
    grads=(
        without_r_to_c(lambda c, g: g * _scale(c), 0),
        without_r_to_c(lambda c, g: g * c.result * _LN2, 1),
    ),
    saves={"other": (0,), "result": (1,)},
    jvp=(lambda c, t: t * _scale(c), lambda c, t: t * c.result * _LN2),
    batch=BATCH_ELEMENTWISE,
    # ATen: mul(self, pow(2, other)): pow of 2 to an integral exponent is exact; to a fractional
    # one (a floating other) it is the libm/SLEEF pow (1 ulp); the product rounds once (0.5 ulp)
    error=errors.elementwise(
        1.5, "analysis: pow(2, other) (1 ulp, SLEEF u10 / glibc) times x, rounded (0.5 ulp)"
    ),
    complex_inputs=True,  # mul(self, pow(2, other)): holomorphic in both, PyTorch's VJP by conjugation
)


def _frexp_forward(a):
    xp = namespace_of(a)
    m, e = xp.frexp(a)
    return m.astype(a.dtype, copy=False), e.astype(xp.int32, copy=False)


def _frexp_batch(b, params):
    m, e = apply(b.rule, (b.front(0),), params)
    return (m, 0), (e, 0)


rule(
    "frexp",
    "FrexpBackward0",
    ("self",),
    forward=_frexp_forward,
    outputs=2,
    # derivatives.yaml: mantissa: grad / exponent.exp2(); the exponent is not differentiable
    grads=(lambda c, g: g[0] / A.pow(2.0, c.result1),),
    saves={"result1": (0,)},
    jvp=lambda c, ts: (ts[0] / A.pow(2.0, c.result[1]), None),
    batch=_frexp_batch,
    error=errors.EXACT,  # a power-of-two scaling: exact (IEEE 754 frexp), no rounding
)


# ---- max_pool2d_with_indices_backward (aten) --------------------------------------------------------


def _max_pool_scatter_forward(grad_output, self, indices):
    """grad_input: each plane's grad_output added at its flat (H*W) argmax ``indices``."""
    xp = namespace_of(grad_output)
    hw = self.shape[-1] * self.shape[-2]
    planes = 1
    for n in self.shape[:-2]:
        planes *= n
    if planes * hw == 0:
        return xp.zeros(self.shape, dtype=self.dtype)
    flat_idx = xp.reshape(indices, (planes, -1)) + xp.reshape(
        xp.arange(planes, dtype=indices.dtype) * hw, (planes, 1)
    )
    out = xp.bincount(
        xp.reshape(flat_idx, (-1,)), weights=xp.reshape(grad_output, (-1,)), minlength=planes * hw
    )
    return xp.reshape(out.astype(self.dtype, copy=False), self.shape)


def _max_pool_gather(c, g):
    """derivatives.yaml max_pool_double_backward: the gradient at each window's argmax."""

    idx = c.indices
    flat = A.reshape(g, tuple(g.shape[:-2]) + (-1,))
    return A.reshape(T.gather(flat, -1, A.reshape(idx, tuple(idx.shape[:-2]) + (-1,))), tuple(idx.shape))


def _max_pool_scatter_batch(b, params):
    g, x, idx = b.expanded(0), b.expanded(1), b.expanded(2)
    return apply(b.rule, (g, x, idx), params), 0


rule(
    "max_pool2d_with_indices_backward",
    "MaxPool2DWithIndicesBackwardBackward0",
    ("grad_output", "self", "indices"),
    forward=_max_pool_scatter_forward,
    # derivatives.yaml: grad_output: max_pool_double_backward(grad, indices, 2); self: zeros_like
    grads=(_max_pool_gather, lambda c, g: A.zeros_like(g), None),
    saves={"indices": (0,)},
    # linear in grad_output (the op itself on its tangent); self only gives the shape
    jvp=(
        lambda c, t: apply(RULES["max_pool2d_with_indices_backward"], (t, c.self, c.indices), {}),
        lambda c, t: A.zeros_like(t),
        None,
    ),
    batch=_max_pool_scatter_batch,
    error=errors.products(),  # a sum of the grad_output values each input position receives
)
