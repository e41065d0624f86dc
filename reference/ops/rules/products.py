"""Products with their own backward nodes in PyTorch: vdot, the BLAS-style ``add*`` family
(``beta * self + alpha * product``: addmm, addmv, addr, baddbmm, addbmm), linalg_cross and
trace. Composites (einsum, tensordot, kron, inner, outer, multi_dot, ...) are in
:mod:`reference.ops.functions.products`, as in PyTorch.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry.
"""

from __future__ import annotations

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rule import AUTO_LINEAR, BATCH_MATMUL, BILINEAR
from reference.ops.rules.registry import rule

# ---- rounding-error declarations (reference.errors) ----------------------------------------------


def _add_product_steps(product):
    """beta*self + alpha*(product): the product's sums of products (any order), the scalings (none
    when beta or alpha is 1; self ignored when beta is 0, as aten does) and the final add."""

    def steps(s, a, b, beta, alpha):
        p = product(a, b)
        if alpha != 1:
            p = p * alpha
        if beta == 0:
            return p + A.zeros_like(p)
        return (s if beta == 1 else s * beta) + p

    return steps


def _addbmm_product(a, b):
    """sum_b a[b] @ b[b] as ONE contraction of length batch*k (an implementation may sum the
    batch*k products in any order, so the bound is that of the whole contraction)."""
    n, k, m = a.shape[1], a.shape[2], b.shape[2]
    return A.matmul(a.transpose(0, 1).reshape(n, a.shape[0] * k), b.reshape(b.shape[0] * k, m))


_ADD_PRODUCT_ERROR = {
    "addmm": A.matmul,
    "addmv": A.matmul,
    "addr": lambda a, b: A.unsqueeze(a, 1) * A.unsqueeze(b, 0),
    "baddbmm": A.matmul,
    "addbmm": _addbmm_product,
}
_ADD_PRODUCT_ERROR = {
    name: errors.composite(_add_product_steps(f), "a scaled sum of products plus a scaled self")
    for name, f in _ADD_PRODUCT_ERROR.items()
}


def _cross_steps(a, b, dim):
    """a[i+1]*b[i+2] - a[i+2]*b[i+1]: two correctly rounded products and their difference (the
    rotations move values)."""

    def rot(t, s):
        return t.roll(-s, dim)

    return rot(a, 1) * rot(b, 2) - rot(a, 2) * rot(b, 1)


_CROSS_ERROR = errors.composite(_cross_steps, "two products and a difference per element (IEEE)")

# ---- vdot (real tensors: dot) -------------------------------------------------------------------------

rule(
    "vdot",
    "VdotBackward0",
    ("self", "other"),
    forward=K.matmul,
    grads=(lambda c, g: g * c.other, lambda c, g: g * c.self),
    saves={"self": (1,), "other": (0,)},
    jvp=BILINEAR,
    batch=BATCH_MATMUL,
    error=errors.products(),
)

# ---- beta * self + alpha * product ---------------------------------------------------------------------


def _scaled(t, s):
    return t if s == 1 else t * s


def _forward(product):
    def forward(s, a, b, beta, alpha):
        p = product(a, b)
        xp = namespace_of(p)
        p = p if alpha == 1 else p * xp.asarray(alpha, dtype=p.dtype)
        if beta == 0:  # self is ignored (nan and inf in it do not propagate), as in PyTorch
            out = namespace_of(p).broadcast_to(p, np.broadcast_shapes(s.shape, p.shape))
        else:
            out = p + (s if beta == 1 else s * xp.asarray(beta, dtype=s.dtype))
        return out.astype(s.dtype, copy=True)

    return forward


def _outer(a, b):
    return a[:, None] * b[None, :]


def _bmm_sum(a, b):
    return K.matmul(a, b).sum(0)


# The products on Tensors (physical values under vmap may carry one leading batch dim more, so
# they broadcast: matmul, unsqueeze from the right, sum over dim -3).
_PRODUCTS = {
    "addmm": lambda a, b: A.matmul(a, b),
    "addmv": lambda a, b: A.squeeze(A.matmul(a, A.unsqueeze(b, -1)), -1),
    "addr": lambda a, b: A.unsqueeze(a, -1) * A.unsqueeze(b, -2),
    "baddbmm": lambda a, b: A.matmul(a, b),
    "addbmm": lambda a, b: A.sum(A.matmul(a, b), -3),
}


def _add_batch(b, params):
    """beta * self + alpha * product on the physical values (broadcasting ops, so any of the three
    inputs may be the batched one)."""
    logical = tuple(np.broadcast_shapes(tuple(b.inputs[0].shape), _product_shape(b.rule.name, b.inputs)))
    x = b.front(1) if b.bdims[1] is not None else b.values[1]
    y = b.front(2) if b.bdims[2] is not None else b.values[2]
    out = _scaled(_PRODUCTS[b.rule.name](x, y), params["alpha"])
    if b.bdims[1] is None and b.bdims[2] is None:  # only self is batched
        out = A.unsqueeze(out, 0)
    if params["beta"] != 0:
        out = out + _scaled(b.aligned(0, len(logical)), params["beta"])
    return A.contiguous(A.expand(out, (b.size,) + logical)), 0


def _product_shape(name, inputs):
    sa, sb = tuple(inputs[1].shape), tuple(inputs[2].shape)
    if name == "baddbmm":
        return (sa[0], sa[1], sb[2])
    if name == "addbmm":
        return (sa[1], sb[2])
    return (sa[0],) if name == "addmv" else (sa[0], sb[-1] if name == "addmm" else sb[0])


def _self_grad(c, g):
    return _scaled(g, c.beta)


def _addbmm_expanded(c, g):
    n = c.shapes[1][0]
    return A.expand(A.unsqueeze(g, 0), (n,) + tuple(g.shape))


_GRADS = {
    "addmm": (
        lambda c, g: _scaled(A.matmul(g, A.transpose(c.mat2, 0, 1)), c.alpha),
        lambda c, g: _scaled(A.matmul(A.transpose(c.mat1, 0, 1), g), c.alpha),
    ),
    "addmv": (
        lambda c, g: _scaled(A.unsqueeze(g, 1) * A.unsqueeze(c.mat2, 0), c.alpha),
        lambda c, g: _scaled(A.matmul(A.transpose(c.mat1, 0, 1), g), c.alpha),
    ),
    "addr": (
        lambda c, g: _scaled(A.matmul(g, c.mat2), c.alpha),
        lambda c, g: _scaled(A.matmul(A.transpose(g, 0, 1), c.mat1), c.alpha),
    ),
    "baddbmm": (
        lambda c, g: _scaled(A.matmul(g, A.transpose(c.mat2, 1, 2)), c.alpha),
        lambda c, g: _scaled(A.matmul(A.transpose(c.mat1, 1, 2), g), c.alpha),
    ),
    "addbmm": (
        lambda c, g: _scaled(A.matmul(_addbmm_expanded(c, g), A.transpose(c.mat2, 1, 2)), c.alpha),
        lambda c, g: _scaled(A.matmul(A.transpose(c.mat1, 1, 2), _addbmm_expanded(c, g)), c.alpha),
    ),
}

_JVP_PRODUCT = {
    "addmm": lambda a, b: A.matmul(a, b),
    "addmv": lambda a, b: A.matmul(a, b),
    "addr": lambda a, b: A.unsqueeze(a, 1) * A.unsqueeze(b, 0),
    "baddbmm": lambda a, b: A.matmul(a, b),
    "addbmm": lambda a, b: A.sum(A.matmul(a, b), 0),
}

for _name, _node, _kernel in (
    ("addmm", "AddmmBackward0", K.matmul),
    ("addmv", "AddmvBackward0", K.matmul),
    ("addr", "AddrBackward0", _outer),
    ("baddbmm", "BaddbmmBackward0", K.matmul),
    ("addbmm", "AddbmmBackward0", _bmm_sum),
):
    _prod = _JVP_PRODUCT[_name]
    rule(
        _name,
        _node,
        ("self", "mat1", "mat2"),  # (addmv: mat, vec; addr: vec1, vec2; b*bmm: batch1, batch2)
        forward=_forward(_kernel),
        grads=(_self_grad, *_GRADS[_name]),
        saves={"mat1": (2,), "mat2": (1,)},
        jvp=(
            lambda c, t: _scaled(t, c.beta),
            lambda c, t, _p=_prod: _scaled(_p(t, c.mat2), c.alpha),
            lambda c, t, _p=_prod: _scaled(_p(c.mat1, t), c.alpha),
        ),
        batch=_add_batch,
        error=_ADD_PRODUCT_ERROR[_name],
    )

# ---- linalg_cross ----------------------------------------------------------------------------------------


def _cross_batch(b, params):
    rank = max(len(t.shape) for t in b.inputs)
    x, y = b.aligned(0, rank), b.aligned(1, rank)
    return apply(b.rule, (x, y), params, cast=b.cast), 0


rule(
    "linalg_cross",
    "LinalgCrossBackward0",
    ("self", "other"),
    forward=lambda a, b, dim: namespace_of(a, b).cross(a, b, axis=dim),  # dim: negative
    grads=(
        lambda c, g: A.apply(A.R.linalg_cross, (c.other, g), {"dim": c.dim}),
        lambda c, g: A.apply(A.R.linalg_cross, (g, c.self), {"dim": c.dim}),
    ),
    saves={"self": (1,), "other": (0,)},
    jvp=BILINEAR,
    batch=_cross_batch,
    error=_CROSS_ERROR,
)

# ---- trace ---------------------------------------------------------------------------------------------


def _trace_grad(c, g):
    shape = c.shapes[0]
    eye = _make(namespace_of(g._data).eye(shape[0], shape[1], dtype=g.dtype))
    return A.expand(g, shape) * eye


def _trace_batch(b, params):
    return A.sum(A.diagonal(b.front(0), 0, 1, 2), -1), 0


rule(
    "trace",
    "TraceBackward0",
    ("self",),
    forward=lambda a: namespace_of(a).asarray(namespace_of(a).trace(a)),
    grads=(_trace_grad,),
    jvp=AUTO_LINEAR,
    batch=_trace_batch,
    error=errors.products(),
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    addbmm addmm addmv addr baddbmm linalg_cross trace
"""
