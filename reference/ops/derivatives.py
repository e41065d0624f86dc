"""THE derivative table: every primitive of the reference, declared once.

Read an entry as a line of PyTorch's ``derivatives.yaml``: the op, its ``grad_fn`` name, the
forward kernel, one VJP formula per input (``c`` is the node's context: saved tensors by name,
the op's parameters, input ``shapes``/``dtypes``; ``g`` is the incoming gradient), and which
tensors the formulas read. Formulas use differentiable Tensor ops from :mod:`reference.ops.api`
(imported as ``A``), so the backward of a backward is recorded like any other computation and
higher-order gradients need no extra rules. Broadcasting is undone by the engine, which sums a
gradient down to its input's shape (as PyTorch's ``validate_outputs`` does).

``jvp`` is the forward-mode rule (read by :mod:`reference.autograd.forward_ad`): one linear
formula per input ``formula(c, t)`` (``t``: that input's tangent; ``c``: primal inputs by name,
``result``, parameters), or a function of all tangents for variadic and multi-output ops, or one
of derivatives.yaml's shorthands: ``AUTO_ELEMENT_WISE`` (the Jacobian is diagonal, so the VJP
formula applied to the tangent is the JVP), ``AUTO_LINEAR`` (the op is linear: the op itself on
the tangents), ``BILINEAR`` (``f(t_a, b) + f(a, t_b)``), ``SAME_VIEW`` (the same view of the
tangent). No JVP is derived from VJPs, so forward mode checks the reverse mode.

``batch`` is the vmap rule (read by :mod:`reference.autograd.batching`): ``batch(b, params)``
computes the op on the physical values ``b`` holds (batch dims, batch size) and returns
``(value, batch_dim)``; or a shorthand (``BATCH_ELEMENTWISE``, ``BATCH_REDUCE``, ``BATCH_DIM``,
``BATCH_MATMUL``), or ``view_rule(shift)`` for a view op (how its parameters shift). An entry
without one runs vmap's slice-loop-stack fallback (counted; an error with allow_fallback=False).
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd.batching import flat_index, view_rule
from reference.autograd.dispatch import apply
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.batch_rules import (
    as_strided_batch,
    batch_norm_backward_batch,
    batch_norm_batch,
    convolution_backward_batch,
    convolution_batch,
)
from reference.ops.rule import (
    AUTO_ELEMENT_WISE,
    AUTO_LINEAR,
    BATCH_DIM,
    BATCH_ELEMENTWISE,
    BATCH_MATMUL,
    BATCH_REDUCE,
    BILINEAR,
    SAME_VIEW,
    Rule,
)

RULES: dict[str, Rule] = {}


def rule(name, node, inputs, **fields):
    if name in RULES:
        raise ValueError(f"primitive {name!r} is declared twice in the derivative table")
    RULES[name] = Rule(name, node, tuple(inputs), **fields)


def _unreduce(g, shape, dim, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims of ``shape``."""
    if not keepdim and dim is not None:
        kept = list(g.shape)
        for d in sorted(dim):
            kept.insert(d, 1)
        g = A.reshape(g, tuple(kept))
    elif dim is None and not keepdim:
        g = A.reshape(g, (1,) * len(shape))
    return A.expand(g, shape)


def _count(shape, dim):
    dims = range(len(shape)) if dim is None else dim
    return int(np.prod([shape[d] for d in dims])) if len(shape) else 1


def _view_index(c, geometry):
    """Where each element of a view sits in its (contiguous) input: the view's gradient map."""
    shape = c.shapes[0]
    size, stride, offset = geometry(shape, K.contiguous_strides(shape), 0, **c.params)
    from reference.autograd.graph import storage_indices

    return storage_indices(size, stride, offset)


# ---- elementwise ---------------------------------------------------------------------------------

rule(
    "add",
    "AddBackward0",
    ("self", "other"),
    forward=lambda a, b, alpha=1: a + b if alpha == 1 else a + alpha * b,
    grads=(lambda c, g: g, lambda c, g: g * c.params["alpha"] if "alpha" in c.params else g),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "sub",
    "SubBackward0",
    ("self", "other"),
    forward=lambda a, b, alpha=1: a - b if alpha == 1 else a - alpha * b,
    grads=(lambda c, g: g, lambda c, g: g * -c.params["alpha"] if "alpha" in c.params else -g),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "rsub",
    "RsubBackward1",
    ("self",),  # other - self, other: a Python number
    forward=lambda a, other: np.asarray(other, dtype=a.dtype) - a,
    grads=(lambda c, g: -g,),
    jvp=(lambda c, t: -t,),
    batch=BATCH_ELEMENTWISE,
)
rule(
    "mul",
    "MulBackward0",
    ("self", "other"),
    forward=np.multiply,
    grads=(lambda c, g: g * c.other, lambda c, g: g * c.self),
    saves={"self": (1,), "other": (0,)},
    jvp=BILINEAR,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "div",
    "DivBackward0",
    ("self", "other"),
    forward=np.divide,
    grads=(lambda c, g: g / c.other, lambda c, g: -g * ((c.self / c.other) / c.other)),
    saves={"self": (1,), "other": (0, 1)},
    jvp=(lambda c, t: t / c.other, lambda c, t: -t * (c.result / c.other)),
    batch=BATCH_ELEMENTWISE,
)
rule(
    "neg",
    "NegBackward0",
    ("self",),
    forward=np.negative,
    grads=(lambda c, g: -g,),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "pow",
    "PowBackward0",
    ("self",),  # exponent: a Python number
    forward=lambda a, exponent: np.power(a, np.asarray(exponent, dtype=a.dtype)).astype(a.dtype, copy=False),
    grads=(
        lambda c, g: A.zeros_like(g) if c.exponent == 0 else g * (c.exponent * A.pow(c.self, c.exponent - 1)),
    ),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "pow_tensor",
    "PowBackward1",
    ("self", "exponent"),
    forward=lambda a, b: np.power(a, b).astype(a.dtype, copy=False),
    grads=(
        lambda c, g: A.where(c.exponent == 0, 0.0, g * (c.exponent * A.pow(c.self, c.exponent - 1))),
        lambda c, g: g * A.where((c.self == 0) & (c.exponent >= 0), 0.0, c.result * A.log(c.self)),
    ),
    saves={"self": (0, 1), "exponent": (0, 1), "result": (1,)},
    jvp=(
        lambda c, t: A.where(c.exponent == 0, 0.0, t * (c.exponent * A.pow(c.self, c.exponent - 1))),
        lambda c, t: t * A.where((c.self == 0) & (c.exponent >= 0), 0.0, c.result * A.log(c.self)),
    ),
    batch=BATCH_ELEMENTWISE,
)


def _pow_scalar_base_grad(c, g):
    """d(base ** exponent)/d exponent = result * log(base); 0 where base == 0 and exponent >= 0."""
    log_base = math.log(c.self) if c.self > 0 else (-math.inf if c.self == 0 else math.nan)
    if c.self == 0:
        return g * A.where(c.exponent >= 0, 0.0, c.result * log_base)
    return g * (c.result * log_base)


rule(
    "pow_scalar_base",
    "PowBackward2",
    ("exponent",),  # self (the base): a Python number
    forward=lambda b, self: np.power(np.asarray(self, dtype=b.dtype), b),
    grads=(_pow_scalar_base_grad,),
    saves={"exponent": (0,), "result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "exp",
    "ExpBackward0",
    ("self",),
    forward=np.exp,
    grads=(lambda c, g: g * c.result,),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "log",
    "LogBackward0",
    ("self",),
    forward=np.log,
    grads=(lambda c, g: g / c.self,),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "sqrt",
    "SqrtBackward0",
    ("self",),
    forward=np.sqrt,
    grads=(lambda c, g: g / (2 * c.result),),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "tanh",
    "TanhBackward0",
    ("self",),
    forward=np.tanh,
    grads=(lambda c, g: g * (1 - c.result * c.result),),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "sigmoid",
    "SigmoidBackward0",
    ("self",),
    forward=lambda a: (1 / (1 + np.exp(-a))).astype(a.dtype, copy=False),
    grads=(lambda c, g: g * (1 - c.result) * c.result,),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "relu",
    "ReluBackward0",
    ("self",),
    forward=lambda a: np.maximum(a, 0).astype(a.dtype, copy=False),
    grads=(lambda c, g: A.threshold_backward(g, c.result, 0.0),),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "threshold_backward",
    "ThresholdBackwardBackward0",
    ("grad_output", "self"),
    forward=lambda g, a, threshold: np.where(a <= threshold, np.zeros((), g.dtype), g),
    grads=(lambda c, g: A.threshold_backward(g, c.self, c.threshold), lambda c, g: A.zeros_like(g)),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "abs",
    "AbsBackward0",
    ("self",),
    forward=np.abs,
    grads=(lambda c, g: g * A.sign(c.self),),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "sign",
    "SignBackward0",
    ("self",),
    forward=np.sign,
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "reciprocal",
    "ReciprocalBackward0",
    ("self",),
    forward=lambda a: (1 / a).astype(a.dtype, copy=False),
    grads=(lambda c, g: -g * (c.result * c.result),),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "masked_fill",
    "MaskedFillBackward0",
    ("self", "mask"),  # value: a Python number
    forward=lambda a, mask, value: np.where(mask, np.asarray(value, dtype=a.dtype), a),
    grads=(lambda c, g: A.where(c.mask, 0.0, g), None),
    saves={"mask": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "clamp",
    "ClampBackward1",
    ("self",),  # min, max: Python numbers or None
    forward=K.clamp,
    grads=(lambda c, g: A.where(A.clamp_mask(c.self, c.min, c.max), g, 0.0),),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "where",
    "WhereBackward0",
    ("condition", "self", "other"),
    forward=np.where,
    grads=(None, lambda c, g: A.where(c.condition, g, 0.0), lambda c, g: A.where(c.condition, 0.0, g)),
    saves={"condition": (1, 2)},
    jvp=(None, lambda c, t: A.where(c.condition, t, 0.0), lambda c, t: A.where(c.condition, 0.0, t)),
    batch=BATCH_ELEMENTWISE,
)
rule(
    "maximum",
    "MaximumBackward0",
    ("self", "other"),
    forward=np.maximum,
    grads=(
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self < c.other, 0.0),
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self > c.other, 0.0),
    ),
    saves={"self": (0, 1), "other": (0, 1)},
    jvp=(
        lambda c, t: A.where(c.self > c.other, t, A.where(c.self == c.other, t / 2, 0.0)),
        lambda c, t: A.where(c.self < c.other, t, A.where(c.self == c.other, t / 2, 0.0)),
    ),
    batch=BATCH_ELEMENTWISE,
)
rule(
    "minimum",
    "MinimumBackward0",
    ("self", "other"),
    forward=np.minimum,
    grads=(
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self > c.other, 0.0),
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self < c.other, 0.0),
    ),
    saves={"self": (0, 1), "other": (0, 1)},
    jvp=(
        lambda c, t: A.where(c.self < c.other, t, A.where(c.self == c.other, t / 2, 0.0)),
        lambda c, t: A.where(c.self > c.other, t, A.where(c.self == c.other, t / 2, 0.0)),
    ),
    batch=BATCH_ELEMENTWISE,
)
rule(
    "to",
    "ToCopyBackward0",
    ("self",),
    forward=lambda a, dtype: a.astype(dtype),
    grads=(lambda c, g: A.to(g, c.dtypes[0]),),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "clone",
    "CloneBackward0",
    ("self",),
    forward=lambda a: np.array(a, copy=True),
    grads=(lambda c, g: g,),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)

# ---- in-place-only primitives (copy_, fill_, zero_): the old value of self gets no gradient -----


def _fill_tensor_batch(b, params):
    """x.fill_(value) with a batched value: copy the value, aligned, into the batched x."""
    return apply(RULES["copy"], (b.expanded(0), b.aligned(1, len(b.inputs[0].shape))), {}), 0


rule(
    "copy",
    "torch::autograd::CopyBackwards",
    ("self", "src"),
    forward=lambda a, src: np.broadcast_to(src, a.shape).astype(a.dtype),
    grads=(lambda c, g: A.zeros_like(g), lambda c, g: A.to(g, c.dtypes[1])),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "fill",
    "FillBackward2",
    ("self",),
    forward=lambda a, value: np.full_like(a, value),  # value: a number
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=(lambda c, t: A.zeros_like(t),),
    batch=BATCH_ELEMENTWISE,
)
rule(
    "fill_tensor",
    "FillBackward3",
    ("self", "value"),  # value: a 0-d tensor (also x[i] = number)
    forward=lambda a, value: np.full_like(a, value),
    grads=(lambda c, g: A.zeros_like(g), lambda c, g: A.sum(g)),
    jvp=AUTO_LINEAR,
    batch=_fill_tensor_batch,
)
rule(
    "zero",
    "ZeroBackward0",
    ("self",),
    forward=np.zeros_like,
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)

# ---- reductions ----------------------------------------------------------------------------------

# aten's overloads: the full reduction (sum(x)) and the reduction over dims (sum(x, dim)).
for _suffix, _number in (("", "0"), ("_dim", "1")):
    rule(
        "sum" + _suffix,
        "SumBackward" + _number,
        ("self",),
        forward=K.sum_,
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim),),
        jvp=AUTO_LINEAR,
        batch=BATCH_REDUCE,
    )
    rule(
        "mean" + _suffix,
        "MeanBackward" + _number,
        ("self",),
        forward=K.mean,
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim) / _count(c.shapes[0], c.dim),),
        jvp=AUTO_LINEAR,
        batch=BATCH_REDUCE,
    )


def _extreme_jvp(c, ts):
    """amax/amin: the mean of the tangent over the elements that attain the extreme."""
    mask = A.to(_unreduce(c.result, c.shapes[0], c.dim, c.keepdim) == c.self, ts[0].dtype)
    return A.sum(ts[0] * mask, c.dim, keepdim=c.keepdim) / A.sum(mask, c.dim, keepdim=c.keepdim)


for _name, _kernel, _node in (("amax", K.amax, "AmaxBackward0"), ("amin", K.amin, "AminBackward0")):
    rule(
        _name,
        _node,
        ("self",),
        forward=_kernel,
        grads=(
            lambda c, g: A.scale_grad_by_count(
                _unreduce(g, c.shapes[0], c.dim, c.keepdim),
                _unreduce(c.result, c.shapes[0], c.dim, c.keepdim) == c.self,
                c.dim,
            ),
        ),
        saves={"self": (0,), "result": (0,)},
        jvp=_extreme_jvp,
        batch=BATCH_REDUCE,
    )

# ---- linear algebra ------------------------------------------------------------------------------


def _matmul_grads(c, g):
    a, b = c.self if c.needs[1] else None, c.other if c.needs[0] else None
    sa, sb = c.shapes
    if len(sa) == 1 and len(sb) == 1:
        g2 = A.reshape(g, (1, 1))
    elif len(sa) == 1:
        g2 = A.unsqueeze(g, -2)
    elif len(sb) == 1:
        g2 = A.unsqueeze(g, -1)
    else:
        g2 = g
    ga = gb = None
    if c.needs[0]:
        b2 = b if len(sb) > 1 else A.unsqueeze(b, -1)
        ga = A.matmul(g2, A.transpose(b2, -1, -2))
        ga = A.reshape(A.sum_to(ga, (1,) + sa if len(sa) == 1 else sa), sa)
    if c.needs[1]:
        a2 = a if len(sa) > 1 else A.unsqueeze(a, 0)
        gb = A.matmul(A.transpose(a2, -1, -2), g2)
        gb = A.reshape(A.sum_to(gb, sb + (1,) if len(sb) == 1 else sb), sb)
    return ga, gb


# aten's products; ``matmul`` is PyTorch's composite over them (reference.ops.api.matmul).
for _name, _node in (
    ("dot", "DotBackward0"),
    ("mv", "MvBackward0"),
    ("mm", "MmBackward0"),
    ("bmm", "BmmBackward0"),
):
    rule(
        _name,
        _node,
        ("self", "other"),
        forward=K.matmul,
        vjp=_matmul_grads,
        saves={"self": (1,), "other": (0,)},
        jvp=BILINEAR,
        batch=BATCH_MATMUL,
    )

# ---- softmax -------------------------------------------------------------------------------------

rule(
    "softmax",
    "SoftmaxBackward0",
    ("self",),
    forward=K.softmax,
    grads=(lambda c, g: c.result * (g - A.sum(g * c.result, c.dim, keepdim=True)),),
    saves={"result": (0,)},
    jvp=(lambda c, t: c.result * (t - A.sum(t * c.result, c.dim, keepdim=True)),),
    batch=BATCH_DIM,
)
rule(
    "log_softmax",
    "LogSoftmaxBackward0",
    ("self",),
    forward=K.log_softmax,
    grads=(lambda c, g: g - A.exp(c.result) * A.sum(g, c.dim, keepdim=True),),
    saves={"result": (0,)},
    jvp=(lambda c, t: t - A.sum(A.exp(c.result) * t, c.dim, keepdim=True),),
    batch=BATCH_DIM,
)

# ---- views (outputs alias the input's storage; see dispatch.apply_view) ---------------------------


def _index_grad(geometry):
    return lambda c, g: A.scatter_add(g, _view_index(c, geometry), c.shapes[0])


def _expand_params(p, shape, n):
    size = tuple(p["size"])
    return {"_reshape": (n,) + (1,) * (len(size) - len(shape)) + shape, "size": (n,) + size}


_PERMUTE_BATCH = view_rule(
    lambda p, shape, n: {"dims": (0,) + tuple(d + 1 for d in (p["dims"] or range(len(shape))))}
)


rule(
    "view",
    "ViewBackward0",
    ("self",),
    view=K.view_geometry,
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {"size": (n,) + tuple(p["size"])}),
)
rule(
    "alias",
    "AliasBackward0",
    ("self",),
    view=K.alias_geometry,
    grads=(lambda c, g: g,),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: p),
)
rule(
    "permute",
    "PermuteBackward0",
    ("self",),
    view=K.permute_geometry,
    grads=(lambda c, g: A.permute(g, tuple(np.argsort(c.params["dims"]))),),
    jvp=SAME_VIEW,
    batch=_PERMUTE_BATCH,
)
for _name, _node in (("transpose", "TransposeBackward0"), ("t", "TBackward0")):
    rule(
        _name,
        _node,
        ("self",),
        view=K.permute_geometry,
        grads=(lambda c, g: A.permute(g, tuple(np.argsort(c.params["dims"]))),),
        jvp=SAME_VIEW,
        batch=_PERMUTE_BATCH,
    )
rule(
    "expand",
    "ExpandBackward0",
    ("self",),
    view=K.expand_geometry,
    grads=(lambda c, g: A.sum_to(g, c.shapes[0]),),
    jvp=SAME_VIEW,
    batch=view_rule(_expand_params),
)
rule(
    "unsqueeze",
    "UnsqueezeBackward0",
    ("self",),
    view=K.unsqueeze_geometry,
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {"dim": p["dim"] + 1}),
)
for _suffix, _number in (
    ("", "0"),
    ("_dim", "1"),
    ("_dims", "2"),
):  # squeeze(), squeeze(d), squeeze((d, ...))
    rule(
        "squeeze" + _suffix,
        "SqueezeBackward" + _number,
        ("self",),
        view=K.squeeze_geometry,
        grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
        jvp=SAME_VIEW,
        batch=view_rule(lambda p, shape, n: {"dims": tuple(d + 1 for d in p["dims"])}),
    )
rule(
    "select",
    "SelectBackward0",
    ("self",),
    view=K.select_geometry,
    grads=(_index_grad(K.select_geometry),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "slice",
    "SliceBackward0",
    ("self",),
    view=K.slice_geometry,
    grads=(_index_grad(K.slice_geometry),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "diagonal",
    "DiagonalBackward0",
    ("self",),
    view=K.diagonal_geometry,
    grads=(_index_grad(K.diagonal_geometry),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim1": p["dim1"] + 1, "dim2": p["dim2"] + 1}),
)
rule(
    "as_strided",
    "AsStridedBackward0",
    ("self",),
    view=K.as_strided_geometry,
    grads=(lambda c, g: A.as_strided_backward(g, c.params),),
    jvp=SAME_VIEW,
    batch=as_strided_batch,
)
rule(
    "unbind",
    "UnbindBackward0",
    ("self",),
    view=K.unbind_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.stack(gs, c.params["dim"]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "split",
    "SplitBackward0",
    ("self",),
    view=K.split_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)
rule(
    "split_with_sizes",
    "SplitWithSizesBackward0",
    ("self",),
    view=K.split_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1}),
)


def _reshape_copy_batch(b, params):
    return apply(b.rule, (b.front(0),), {"shape": (b.size,) + tuple(params["shape"])}), 0


rule(
    "reshape_copy",
    "UnsafeViewBackward0",
    ("self",),
    forward=lambda a, shape: np.array(a, copy=True).reshape(shape),
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
    jvp=AUTO_LINEAR,
    batch=_reshape_copy_batch,
)

# ---- joining -------------------------------------------------------------------------------------


def _cat_grads(c, g):
    out, start = [], 0
    for shape, need in zip(c.shapes, c.needs):
        n = shape[c.dim]
        out.append(A.narrow(g, c.dim, start, n) if need else None)
        start += n
    return out


rule(
    "cat",
    "CatBackward0",
    ("tensors",),
    forward=lambda *xs, dim: np.concatenate(xs, axis=dim),
    vjp=_cat_grads,
    jvp=AUTO_LINEAR,
    batch=BATCH_DIM,
)
rule(
    "stack",
    "StackBackward0",
    ("tensors",),
    forward=lambda *xs, dim: np.stack(xs, axis=dim),
    vjp=lambda c, g: [A.select(g, c.dim, i) if need else None for i, need in enumerate(c.needs)],
    jvp=AUTO_LINEAR,
    batch=BATCH_DIM,
)

# ---- the linear pair behind view gradients, CopySlices and pooling -------------------------------


def _take_batch(b, params):
    x = b.expanded(0)
    index = flat_index(params["index"], b.size, b.inputs[0].numel())
    return apply(b.rule, (x,), {**params, "index": index}), 0


def _scatter_add_batch(b, params):
    shape = tuple(params["shape"])
    index = flat_index(params["index"], b.size, math.prod(shape))
    return apply(b.rule, (b.expanded(0),), {**params, "index": index, "shape": (b.size,) + shape}), 0


def _put_batch(b, params):
    index = flat_index(params["index"], b.size, b.inputs[0].numel())
    src = b.aligned(1, np.ndim(params["index"]))
    if b.bdims[1] is None:
        src = A.unsqueeze(src, 0)
    return apply(b.rule, (b.expanded(0), src), {**params, "index": index}), 0


def _leading_batch(b, params):
    """Kernels that map leading dims independently (pooling): the batch dim is one more."""
    out = apply(b.rule, (b.expanded(0),), params)
    return tuple((o, 0) for o in out) if isinstance(out, tuple) else (out, 0)


def _pool_scatter_batch(b, params):
    return apply(b.rule, (b.expanded(0),), {**params, "shape": (b.size,) + tuple(params["shape"])}), 0


rule(
    "take",
    "TakeBackward0",
    ("self",),
    forward=K.take,
    grads=(lambda c, g: A.scatter_add(g, c.index, c.shapes[0]),),
    jvp=AUTO_LINEAR,
    batch=_take_batch,
)
rule(
    "scatter_add",
    "ScatterAddBackward0",
    ("self",),
    forward=K.scatter_add,
    grads=(lambda c, g: A.take(g, c.index),),
    jvp=AUTO_LINEAR,
    batch=_scatter_add_batch,
)
rule(
    "put",
    "IndexPutBackward0",
    ("self", "src"),
    forward=K.put,
    grads=(lambda c, g: A.put(g, c.index, 0.0), lambda c, g: A.take(g, c.index)),
    jvp=AUTO_LINEAR,
    batch=_put_batch,
)
rule(
    "pool_gather",
    "AvgPool2DBackwardBackward0",
    ("self",),
    forward=K.pool_gather,
    grads=(lambda c, g: A.pool_scatter(g, c.index, c.weight, c.shapes[0]),),
    jvp=AUTO_LINEAR,
    batch=_leading_batch,
)
rule(
    "pool_scatter",
    "AvgPool2DBackward0",
    ("self",),
    forward=K.pool_scatter,
    grads=(lambda c, g: A.pool_gather(g, c.index, c.weight),),
    jvp=AUTO_LINEAR,
    batch=_pool_scatter_batch,
)

# ---- neural-network primitives -------------------------------------------------------------------


def _avg_pool2d(x, **p):
    index, weight = K.avg_pool_weights(x.shape[-2:], **p)
    return K.pool_gather(x, index, weight), (index, weight)


def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode):
    index, valid, (oh, ow), _ = K.pool_windows(
        x.shape[-2:], kernel_size, stride, padding, dilation, ceil_mode, "max"
    )
    values, flat = K.max_pool_argmax(x.reshape(-1, x.shape[-2] * x.shape[-1]), index, valid)
    lead = x.shape[:-2]
    plane = np.arange(values.shape[0]).reshape(-1, 1, 1) * (x.shape[-2] * x.shape[-1])
    out = (values.reshape(lead + (oh, ow)).astype(x.dtype), flat.reshape(lead + (oh, ow)).astype(np.int64))
    return out, (flat + plane).reshape(lead + (oh, ow))  # aux: indices into the whole flattened input


def _max_pool2d_jvp(c, ts):
    """The tangent at each window's argmax (the saved indices are per plane)."""
    flat = c.result[1]._data
    lead = flat.shape[:-2]
    plane = np.arange(math.prod(lead), dtype=np.int64).reshape(lead + (1, 1)) * math.prod(c.shapes[0][-2:])
    return A.take(ts[0], flat + plane), None


rule(
    "avg_pool2d",
    "AvgPool2DBackward0",
    ("self",),
    forward=_avg_pool2d,
    has_aux=True,
    grads=(lambda c, g: A.pool_scatter(g, c.aux[0], c.aux[1], c.shapes[0]),),
    saves={"self": (0,)},
    jvp=AUTO_LINEAR,
    batch=_leading_batch,
)  # PyTorch saves self (only its shape is read)
rule(
    "max_pool2d",
    "MaxPool2DWithIndicesBackward0",
    ("self",),
    forward=_max_pool2d,
    has_aux=True,
    outputs=2,
    grads=(lambda c, g: A.scatter_add(g[0], c.aux, c.shapes[0]),),
    saves={"self": (0,)},
    jvp=_max_pool2d_jvp,
    batch=_leading_batch,
)


def batch_norm_backward_formulas(g, x, w, running_mean, running_var, training, eps, mask):
    """Batch norm's first-order gradients (grad_input, grad_weight, grad_bias) in Tensor ops;
    ``mask`` says which to compute (None for the others)."""
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        xc = x - A.mean(x, dims, keepdim=True)
        invstd = A.pow(A.mean(xc * xc, dims, keepdim=True) + eps, -0.5)
    else:
        xc = x - A.reshape(running_mean, bshape)
        invstd = A.pow(A.reshape(running_var, bshape) + eps, -0.5)
    xhat = xc * invstd
    gw = g * A.reshape(w, bshape) if w is not None else g
    gx = gweight = gbias = None
    if mask[0]:
        if training:
            gx = invstd * (gw - A.mean(gw, dims, keepdim=True) - xhat * A.mean(gw * xhat, dims, keepdim=True))
        else:
            gx = gw * invstd
    if mask[1]:
        gweight = A.sum(g * xhat, dims)
    if mask[2]:
        gbias = A.sum(g, dims)
    return gx, gweight, gbias


def _batch_norm_grads(c, g):
    mask = c.needs[:3]
    grads = A.batch_norm_backward(
        g, c.input, c.weight, c.running_mean, c.running_var, c.training, c.eps, mask
    )
    return (*grads, None, None)


def _batch_norm_double_grads(c, ggs):
    """VJP of batch_norm_backward: differentiate the first-order formulas, re-traced from the saved
    tensors (so every order is exact); an input they do not reach gets no gradient ("unused")."""
    return A.batch_norm_double_backward(c, ggs)


def _batch_norm_jvp(c, ts):
    """d y = d xhat * w + xhat * t_w + t_b; in training d xhat = invstd (t_xc - xhat mean(xhat t_xc)),
    with t_xc the centred tangent (the batch statistics move with x). Running stats: not differentiable."""
    x, tx, tw, tb = c.input, ts[0], ts[1], ts[2]
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if c.training:
        xc = x - A.mean(x, dims, keepdim=True)
        invstd = A.pow(A.mean(xc * xc, dims, keepdim=True) + c.eps, -0.5)
    else:
        xc = x - A.reshape(c.running_mean, bshape)
        invstd = A.pow(A.reshape(c.running_var, bshape) + c.eps, -0.5)
    xhat = xc * invstd
    out = None
    if tx is not None:
        if c.training:
            txc = tx - A.mean(tx, dims, keepdim=True)
            dxhat = invstd * (txc - xhat * A.mean(xhat * txc, dims, keepdim=True))
        else:
            dxhat = tx * invstd
        out = dxhat * A.reshape(c.weight, bshape) if c.weight is not None else dxhat
    for term in (
        None if tw is None else xhat * A.reshape(tw, bshape),
        None if tb is None else A.reshape(tb, bshape),
    ):
        if term is not None:
            out = term if out is None else out + term
    return out


def _batch_norm_backward_jvp(c, ts):
    """Forward mode through batch_norm_backward's own Tensor formulas (each primitive's JVP rule)."""
    from reference.autograd.forward_ad import forward_through

    inputs = (c.grad_out, c.input, c.weight, c.running_mean, c.running_var)
    tans = (ts[0], ts[1], ts[2], None, None)  # running stats: not differentiable
    return forward_through(
        lambda g, x, w, rm, rv: batch_norm_backward_formulas(g, x, w, rm, rv, c.training, c.eps, c.mask),
        inputs,
        tans,
    )


_ALL3 = (0, 1, 2)
_ALL5 = (0, 1, 2, 3, 4)
rule(
    "batch_norm",
    "NativeBatchNormBackward0",
    ("input", "weight", "bias", "running_mean", "running_var"),
    forward=K.batch_norm,
    vjp=_batch_norm_grads,
    saves={"input": _ALL3, "weight": _ALL3, "running_mean": _ALL3, "running_var": _ALL3},
    jvp=_batch_norm_jvp,
    batch=batch_norm_batch,
)
rule(
    "batch_norm_backward",
    "NativeBatchNormBackwardBackward0",
    ("grad_out", "input", "weight", "running_mean", "running_var"),
    forward=lambda g, x, w, rm, rv, training, eps, mask: A.batch_norm_backward_arrays(
        g, x, w, rm, rv, training, eps, mask
    ),
    outputs=3,
    vjp=_batch_norm_double_grads,
    saves={"grad_out": _ALL5, "input": _ALL5, "weight": _ALL5, "running_mean": _ALL5, "running_var": _ALL5},
    jvp=_batch_norm_backward_jvp,
    batch=batch_norm_backward_batch,
)
rule(
    "dropout",
    "NativeDropoutBackward0",
    ("self", "mask"),
    forward=lambda a, mask, scale: (a * mask * scale).astype(a.dtype, copy=False),
    grads=(lambda c, g: g * c.mask * c.scale, None),
    saves={"mask": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)


def _conv_grads(c, g):
    return A.convolution_backward(g, c.input, c.weight, c.shapes[2], c.conv, c.needs)


def _conv_double_grads(c, gg):
    return A.convolution_double_backward(gg, c.grad_output, c.input, c.weight, c.conv, c.needs)


def _conv_jvp(c, ts):
    """Bilinear in (input, weight), affine in bias."""
    tx, tw, tb = ts
    out = None if tx is None else A.convolution(tx, c.weight, None, **c.conv)
    if tw is not None:
        term = A.convolution(c.input, tw, None, **c.conv)
        out = term if out is None else out + term
    if tb is not None:
        term = A.reshape(tb, (1, -1) + (1,) * (c.input.ndim - 2))
        out = term if out is None else out + term
    return out


def _conv_backward_jvp(c, ts):
    """grad_input is bilinear in (grad_output, weight), grad_weight in (grad_output, input),
    grad_bias linear in grad_output: each output's tangent is two convolution_backward calls."""
    tg, tx, tw = ts
    mask = c.output_mask
    bias = tuple(c.bias_sizes) if c.bias_sizes is not None else None
    zero = (None, None, None)
    a = A.convolution_backward(tg, c.input, c.weight, bias, c.conv, mask) if tg is not None else zero
    b = (
        A.convolution_backward(c.grad_output, c.input, tw, None, c.conv, (mask[0], False, False))
        if tw is not None
        else zero
    )
    d = (
        A.convolution_backward(c.grad_output, tx, c.weight, None, c.conv, (False, mask[1], False))
        if tx is not None
        else zero
    )
    out = []
    for terms in ((a[0], b[0]), (a[1], d[1]), (a[2],)):
        terms = [t for t in terms if t is not None]
        out.append(None if not terms else terms[0] if len(terms) == 1 else terms[0] + terms[1])
    return tuple(out)


rule(
    "convolution",
    "ConvolutionBackward0",
    ("input", "weight", "bias"),
    forward=lambda x, w, b, conv: A.conv_forward(x, w, b, conv),
    vjp=_conv_grads,
    saves={"input": _ALL3, "weight": _ALL3},
    jvp=_conv_jvp,
    batch=convolution_batch,
)
rule(
    "convolution_backward",
    "ConvolutionBackwardBackward0",
    ("grad_output", "input", "weight"),
    forward=lambda g, x, w, bias_sizes, conv, output_mask: A.conv_backward_arrays(
        g, x, w, bias_sizes, conv, output_mask
    ),
    outputs=3,
    undefined_grads=True,  # aten's double backward leaves g_input undefined without ggW, etc.
    vjp=_conv_double_grads,
    saves={"grad_output": _ALL3, "input": _ALL3, "weight": _ALL3},
    jvp=_conv_backward_jvp,
    batch=convolution_backward_batch,
)
