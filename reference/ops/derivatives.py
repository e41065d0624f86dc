"""THE derivative table: every primitive of the reference, declared once.

Read an entry as a line of PyTorch's ``derivatives.yaml``: the op, its ``grad_fn`` name, the
forward kernel, one VJP formula per input (``c`` is the node's context: saved tensors by name,
the op's parameters, input ``shapes``/``dtypes``; ``g`` is the incoming gradient), and which
tensors the formulas read. Formulas use differentiable Tensor ops from :mod:`reference.ops.api`
(imported as ``A``), so the backward of a backward is recorded like any other computation and
higher-order gradients need no extra rules. Broadcasting is undone by the engine, which sums a
gradient down to its input's shape (as PyTorch's ``validate_outputs`` does).

A later layer adds ``jvp`` and ``batch`` to these same entries.
"""

from __future__ import annotations

import math

import numpy as np

from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rule import Rule

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
)
rule(
    "sub",
    "SubBackward0",
    ("self", "other"),
    forward=lambda a, b, alpha=1: a - b if alpha == 1 else a - alpha * b,
    grads=(lambda c, g: g, lambda c, g: g * -c.params["alpha"] if "alpha" in c.params else -g),
)
rule(
    "rsub",
    "RsubBackward1",
    ("self",),  # other - self, other: a Python number
    forward=lambda a, other: np.asarray(other, dtype=a.dtype) - a,
    grads=(lambda c, g: -g,),
)
rule(
    "mul",
    "MulBackward0",
    ("self", "other"),
    forward=np.multiply,
    grads=(lambda c, g: g * c.other, lambda c, g: g * c.self),
    saves={"self": (1,), "other": (0,)},
)
rule(
    "div",
    "DivBackward0",
    ("self", "other"),
    forward=np.divide,
    grads=(lambda c, g: g / c.other, lambda c, g: -g * ((c.self / c.other) / c.other)),
    saves={"self": (1,), "other": (0, 1)},
)
rule("neg", "NegBackward0", ("self",), forward=np.negative, grads=(lambda c, g: -g,))
rule(
    "pow",
    "PowBackward0",
    ("self",),  # exponent: a Python number
    forward=lambda a, exponent: np.power(a, np.asarray(exponent, dtype=a.dtype)).astype(a.dtype, copy=False),
    grads=(
        lambda c, g: A.zeros_like(g) if c.exponent == 0 else g * (c.exponent * A.pow(c.self, c.exponent - 1)),
    ),
    saves={"self": (0,)},
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
)
rule(
    "exp",
    "ExpBackward0",
    ("self",),
    forward=np.exp,
    grads=(lambda c, g: g * c.result,),
    saves={"result": (0,)},
)
rule("log", "LogBackward0", ("self",), forward=np.log, grads=(lambda c, g: g / c.self,), saves={"self": (0,)})
rule(
    "sqrt",
    "SqrtBackward0",
    ("self",),
    forward=np.sqrt,
    grads=(lambda c, g: g / (2 * c.result),),
    saves={"result": (0,)},
)
rule(
    "tanh",
    "TanhBackward0",
    ("self",),
    forward=np.tanh,
    grads=(lambda c, g: g * (1 - c.result * c.result),),
    saves={"result": (0,)},
)
rule(
    "sigmoid",
    "SigmoidBackward0",
    ("self",),
    forward=lambda a: (1 / (1 + np.exp(-a))).astype(a.dtype, copy=False),
    grads=(lambda c, g: g * (1 - c.result) * c.result,),
    saves={"result": (0,)},
)
rule(
    "relu",
    "ReluBackward0",
    ("self",),
    forward=lambda a: np.maximum(a, 0).astype(a.dtype, copy=False),
    grads=(lambda c, g: A.threshold_backward(g, c.result, 0.0),),
    saves={"result": (0,)},
)
rule(
    "threshold_backward",
    "ThresholdBackwardBackward0",
    ("grad_output", "self"),
    forward=lambda g, a, threshold: np.where(a <= threshold, np.zeros((), g.dtype), g),
    grads=(lambda c, g: A.threshold_backward(g, c.self, c.threshold), lambda c, g: A.zeros_like(g)),
    saves={"self": (0,)},
)
rule(
    "abs",
    "AbsBackward0",
    ("self",),
    forward=np.abs,
    grads=(lambda c, g: g * A.sign(c.self),),
    saves={"self": (0,)},
)
rule("sign", "SignBackward0", ("self",), forward=np.sign, grads=(lambda c, g: A.zeros_like(g),))
rule(
    "reciprocal",
    "ReciprocalBackward0",
    ("self",),
    forward=lambda a: (1 / a).astype(a.dtype, copy=False),
    grads=(lambda c, g: -g * (c.result * c.result),),
    saves={"result": (0,)},
)
rule(
    "masked_fill",
    "MaskedFillBackward0",
    ("self", "mask"),  # value: a Python number
    forward=lambda a, mask, value: np.where(mask, np.asarray(value, dtype=a.dtype), a),
    grads=(lambda c, g: A.where(c.mask, 0.0, g), None),
    saves={"mask": (0,)},
)
rule(
    "clamp",
    "ClampBackward1",
    ("self",),  # min, max: Python numbers or None
    forward=K.clamp,
    grads=(lambda c, g: A.where(A.clamp_mask(c.self, c.min, c.max), g, 0.0),),
    saves={"self": (0,)},
)
rule(
    "where",
    "WhereBackward0",
    ("condition", "self", "other"),
    forward=np.where,
    grads=(None, lambda c, g: A.where(c.condition, g, 0.0), lambda c, g: A.where(c.condition, 0.0, g)),
    saves={"condition": (1, 2)},
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
)
rule(
    "to",
    "ToCopyBackward0",
    ("self",),
    forward=lambda a, dtype: a.astype(dtype),
    grads=(lambda c, g: A.to(g, c.dtypes[0]),),
)
rule("clone", "CloneBackward0", ("self",), forward=lambda a: np.array(a, copy=True), grads=(lambda c, g: g,))

# ---- in-place-only primitives (copy_, fill_, zero_): the old value of self gets no gradient -----

rule(
    "copy",
    "torch::autograd::CopyBackwards",
    ("self", "src"),
    forward=lambda a, src: np.broadcast_to(src, a.shape).astype(a.dtype),
    grads=(lambda c, g: A.zeros_like(g), lambda c, g: A.to(g, c.dtypes[1])),
)
rule(
    "fill",
    "FillBackward2",
    ("self",),
    forward=lambda a, value: np.full_like(a, value),  # value: a number
    grads=(lambda c, g: A.zeros_like(g),),
)
rule(
    "fill_tensor",
    "FillBackward3",
    ("self", "value"),  # value: a 0-d tensor (also x[i] = number)
    forward=lambda a, value: np.full_like(a, value),
    grads=(lambda c, g: A.zeros_like(g), lambda c, g: A.sum(g)),
)
rule("zero", "ZeroBackward0", ("self",), forward=np.zeros_like, grads=(lambda c, g: A.zeros_like(g),))

# ---- reductions ----------------------------------------------------------------------------------

# aten's overloads: the full reduction (sum(x)) and the reduction over dims (sum(x, dim)).
for _suffix, _number in (("", "0"), ("_dim", "1")):
    rule(
        "sum" + _suffix,
        "SumBackward" + _number,
        ("self",),
        forward=K.sum_,
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim),),
    )
    rule(
        "mean" + _suffix,
        "MeanBackward" + _number,
        ("self",),
        forward=K.mean,
        grads=(lambda c, g: _unreduce(g, c.shapes[0], c.dim, c.keepdim) / _count(c.shapes[0], c.dim),),
    )
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
    )

# ---- softmax -------------------------------------------------------------------------------------

rule(
    "softmax",
    "SoftmaxBackward0",
    ("self",),
    forward=K.softmax,
    grads=(lambda c, g: c.result * (g - A.sum(g * c.result, c.dim, keepdim=True)),),
    saves={"result": (0,)},
)
rule(
    "log_softmax",
    "LogSoftmaxBackward0",
    ("self",),
    forward=K.log_softmax,
    grads=(lambda c, g: g - A.exp(c.result) * A.sum(g, c.dim, keepdim=True),),
    saves={"result": (0,)},
)

# ---- views (outputs alias the input's storage; see dispatch.apply_view) ---------------------------


def _index_grad(geometry):
    return lambda c, g: A.scatter_add(g, _view_index(c, geometry), c.shapes[0])


rule(
    "view", "ViewBackward0", ("self",), view=K.view_geometry, grads=(lambda c, g: A.reshape(g, c.shapes[0]),)
)
rule("alias", "AliasBackward0", ("self",), view=K.alias_geometry, grads=(lambda c, g: g,))
rule(
    "permute",
    "PermuteBackward0",
    ("self",),
    view=K.permute_geometry,
    grads=(lambda c, g: A.permute(g, tuple(np.argsort(c.params["dims"]))),),
)
for _name, _node in (("transpose", "TransposeBackward0"), ("t", "TBackward0")):
    rule(
        _name,
        _node,
        ("self",),
        view=K.permute_geometry,
        grads=(lambda c, g: A.permute(g, tuple(np.argsort(c.params["dims"]))),),
    )
rule(
    "expand",
    "ExpandBackward0",
    ("self",),
    view=K.expand_geometry,
    grads=(lambda c, g: A.sum_to(g, c.shapes[0]),),
)
rule(
    "unsqueeze",
    "UnsqueezeBackward0",
    ("self",),
    view=K.unsqueeze_geometry,
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
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
    )
rule("select", "SelectBackward0", ("self",), view=K.select_geometry, grads=(_index_grad(K.select_geometry),))
rule("slice", "SliceBackward0", ("self",), view=K.slice_geometry, grads=(_index_grad(K.slice_geometry),))
rule(
    "diagonal",
    "DiagonalBackward0",
    ("self",),
    view=K.diagonal_geometry,
    grads=(_index_grad(K.diagonal_geometry),),
)
rule(
    "as_strided",
    "AsStridedBackward0",
    ("self",),
    view=K.as_strided_geometry,
    grads=(lambda c, g: A.as_strided_backward(g, c.params),),
)
rule(
    "unbind",
    "UnbindBackward0",
    ("self",),
    view=K.unbind_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.stack(gs, c.params["dim"]),),
)
rule(
    "split",
    "SplitBackward0",
    ("self",),
    view=K.split_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),
)
rule(
    "split_with_sizes",
    "SplitWithSizesBackward0",
    ("self",),
    view=K.split_geometry,
    outputs=-1,
    vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),
)
rule(
    "reshape_copy",
    "UnsafeViewBackward0",
    ("self",),
    forward=lambda a, shape: np.array(a, copy=True).reshape(shape),
    grads=(lambda c, g: A.reshape(g, c.shapes[0]),),
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
    "cat", "CatBackward0", ("tensors",), forward=lambda *xs, dim: np.concatenate(xs, axis=dim), vjp=_cat_grads
)
rule(
    "stack",
    "StackBackward0",
    ("tensors",),
    forward=lambda *xs, dim: np.stack(xs, axis=dim),
    vjp=lambda c, g: [A.select(g, c.dim, i) if need else None for i, need in enumerate(c.needs)],
)

# ---- the linear pair behind view gradients, CopySlices and pooling -------------------------------

rule(
    "take",
    "TakeBackward0",
    ("self",),
    forward=K.take,
    grads=(lambda c, g: A.scatter_add(g, c.index, c.shapes[0]),),
)
rule(
    "scatter_add",
    "ScatterAddBackward0",
    ("self",),
    forward=K.scatter_add,
    grads=(lambda c, g: A.take(g, c.index),),
)
rule(
    "put",
    "IndexPutBackward0",
    ("self", "src"),
    forward=K.put,
    grads=(lambda c, g: A.put(g, c.index, 0.0), lambda c, g: A.take(g, c.index)),
)
rule(
    "pool_gather",
    "AvgPool2DBackwardBackward0",
    ("self",),
    forward=K.pool_gather,
    grads=(lambda c, g: A.pool_scatter(g, c.index, c.weight, c.shapes[0]),),
)
rule(
    "pool_scatter",
    "AvgPool2DBackward0",
    ("self",),
    forward=K.pool_scatter,
    grads=(lambda c, g: A.pool_gather(g, c.index, c.weight),),
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


rule(
    "avg_pool2d",
    "AvgPool2DBackward0",
    ("self",),
    forward=_avg_pool2d,
    has_aux=True,
    grads=(lambda c, g: A.pool_scatter(g, c.aux[0], c.aux[1], c.shapes[0]),),
    saves={"self": (0,)},
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


_ALL3 = (0, 1, 2)
_ALL5 = (0, 1, 2, 3, 4)
rule(
    "batch_norm",
    "NativeBatchNormBackward0",
    ("input", "weight", "bias", "running_mean", "running_var"),
    forward=K.batch_norm,
    vjp=_batch_norm_grads,
    saves={"input": _ALL3, "weight": _ALL3, "running_mean": _ALL3, "running_var": _ALL3},
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
)
rule(
    "dropout",
    "NativeDropoutBackward0",
    ("self", "mask"),
    forward=lambda a, mask, scale: (a * mask * scale).astype(a.dtype, copy=False),
    grads=(lambda c, g: g * c.mask * c.scale, None),
    saves={"mask": (0,)},
)


def _conv_grads(c, g):
    return A.convolution_backward(g, c.input, c.weight, c.shapes[2], c.conv, c.needs)


def _conv_double_grads(c, gg):
    return A.convolution_double_backward(gg, c.grad_output, c.input, c.weight, c.conv, c.needs)


rule(
    "convolution",
    "ConvolutionBackward0",
    ("input", "weight", "bias"),
    forward=lambda x, w, b, conv: A.conv_forward(x, w, b, conv),
    vjp=_conv_grads,
    saves={"input": _ALL3, "weight": _ALL3},
)
rule(
    "convolution_backward",
    "ConvolutionBackwardBackward0",
    ("grad_output", "input", "weight"),
    forward=lambda g, x, w, bias_sizes, conv, output_mask: A.conv_backward_arrays(
        g, x, w, bias_sizes, conv, output_mask
    ),
    outputs=3,
    vjp=_conv_double_grads,
    saves={"grad_output": _ALL3, "input": _ALL3, "weight": _ALL3},
)
