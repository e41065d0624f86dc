"""Gathers and scatters along a dim: gather, scatter (src and value), scatter_add, scatter_reduce,
index_select, index_add, index_copy, index_fill, masked_select, masked_scatter, take.

Index tensors (and masks) are inputs of the rule without a gradient formula (``None``), like
``where``'s condition, so vmap batches them too. VJPs follow PyTorch's derivatives.yaml:
``gather`` <-> ``scatter_add``, ``index_select`` <-> ``index_add``, ``masked_select`` <->
``masked_scatter``; scatter_reduce's formulas are ``scatter_reduce_backward``'s (prod with zeros,
amax/amin sharing the gradient among ties, mean by counts).

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import numpy as np

from reference import errors
from reference import errors as E
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make
from reference.backend import add_at, is_floating, namespace_of, to_numpy, ufunc_at
from reference.ops import api as A
from reference.ops.rules.reductions import _batch_scalar_samples
from reference.ops.rules.registry import from_rule, rule

# ---- kernels: array-level, namespace from the inputs ------------------------------------------------


def _coords(index, dim):
    """Full coordinate arrays addressing ``out[..., index[...], ...]`` along ``dim``."""
    xp = namespace_of(index)
    nd = index.ndim
    grids = [xp.arange(n).reshape((1,) * d + (n,) + (1,) * (nd - d - 1)) for d, n in enumerate(index.shape)]
    grids[dim] = index
    return tuple(grids)


def _crop(x, shape, dim):
    """``x`` restricted to ``shape`` in every dim but ``dim`` (index may be smaller than self)."""
    return x[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(shape))]


def _crop_src(src, shape):
    """The part of ``src`` the index addresses (src may be larger than index in every dim)."""
    return src[tuple(slice(0, n) for n in shape)]


def gather_kernel(x, index, dim):
    xp = namespace_of(x)
    if index.size == 0:
        return xp.empty(index.shape, dtype=x.dtype)
    if x.ndim == 0:  # every (in-range: 0) index picks the one element
        xp = namespace_of(x)
        return xp.broadcast_to(x, index.shape).copy()
    return x[_coords(index, dim)]


def scatter_kernel(x, index, src, dim):
    out = x.copy()
    if index.size == 0:  # an empty index (of any rank, PyTorch skips its shape checks) writes nothing
        return out
    if x.ndim == 0:
        if index.size:
            out[...] = src.reshape(-1)[-1] if src.ndim else src
        return out
    out[_coords(index, dim)] = _crop_src(src, index.shape) if src.ndim else src
    return out


def scatter_value_kernel(x, index, dim, value):
    xp = namespace_of(x)
    return scatter_kernel(x, index, xp.asarray(value, dtype=x.dtype), dim)


def scatter_add_kernel(x, index, src, dim):
    out = x.copy()
    if index.size == 0:
        return out
    if x.ndim == 0:
        return out + src.sum()
    add_at(out, _coords(index, dim), _crop_src(src, index.shape))
    return out


_IDENTITY = {"sum": 0, "prod": 1, "mean": 0, "amax": float("-inf"), "amin": float("inf")}


def scatter_reduce_kernel(x, index, src, dim, reduce, include_self):
    xp = namespace_of(x)
    if index.size == 0:
        return x.copy()
    x0 = x.reshape(1) if x.ndim == 0 else x
    index = index.reshape(1) if index.ndim == 0 else index
    src = src.reshape(1) if src.ndim == 0 else src
    at = _coords(index, dim)
    vals = _crop_src(src, index.shape)
    out = x0.copy()
    if not include_self:
        ident = _IDENTITY[reduce]
        if not is_floating(x.dtype) and reduce in ("amax", "amin"):
            info = xp.iinfo(x.dtype)
            ident = info.min if reduce == "amax" else info.max
        out[at] = ident
    ufunc = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}[reduce]
    ufunc_at(ufunc, out, at, vals)
    if reduce == "mean":
        count = xp.full(x0.shape, 1 if include_self else 0, dtype=x.dtype)
        add_at(count, at, xp.ones(vals.shape, dtype=x.dtype))
        count = xp.where(count == 0, xp.ones((), dtype=x.dtype), count)
        out = out / count if is_floating(x.dtype) else out // count
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def _along(dim, ndim, index):
    return (slice(None),) * dim + (index,) + (slice(None),) * (ndim - dim - 1)


def index_select_kernel(x, index, dim):
    xp = namespace_of(x)
    if x.ndim == 0:  # a 0-d input stays 0-d (its one element), as in PyTorch
        return x.copy()
    return xp.take(x, index.reshape(-1), axis=dim)


def index_add_kernel(x, index, src, dim, alpha=1):
    xp = namespace_of(x)
    out = x.copy()
    vals = src if alpha == 1 else src * xp.asarray(alpha, dtype=x.dtype)
    if x.ndim == 0:
        return out + vals.sum()
    if src.ndim == 0:
        vals = vals.reshape(1)
    add_at(out, _along(dim, x.ndim, index.reshape(-1)), vals)
    return out


def index_copy_kernel(x, index, src, dim):
    out = x.copy()
    if x.ndim == 0:
        out[...] = src.reshape(-1)[-1] if src.size else out
        return out
    out[_along(dim, x.ndim, index.reshape(-1))] = src.reshape(
        out[_along(dim, x.ndim, index.reshape(-1))].shape
    )
    return out


def index_fill_kernel(x, index, dim, value):
    xp = namespace_of(x)
    out = x.copy()
    if x.ndim == 0:
        if index.size:
            out[...] = value
        return out
    out[_along(dim, x.ndim, index.reshape(-1))] = xp.asarray(value, dtype=x.dtype)
    return out


def index_fill_tensor_kernel(x, index, value, dim):
    return index_fill_kernel(x, index, dim, value)


def masked_select_kernel(x, mask):
    xp = namespace_of(x)
    xb, mb = xp.broadcast_arrays(x, mask)
    return xb[mb]


def masked_scatter_kernel(x, mask, source):
    xp = namespace_of(x)
    xb, m = xp.broadcast_arrays(x, mask)
    out = xb.copy()
    n = int(m.sum())
    out[m] = source.reshape(-1)[:n]
    return out


def take_kernel(x, index):
    return x.reshape(-1)[index]


def put_kernel(x, index, src, accumulate):
    out = x.copy().reshape(-1)
    if accumulate:
        add_at(out, index.reshape(-1), src.reshape(-1))
    else:
        out[index.reshape(-1)] = src.reshape(-1)
    return out.reshape(x.shape)


# ---- batch rules ------------------------------------------------------------------------------------


def _front(b, i):
    return b.expanded(i)


def _batch_index_dim(b, params):
    """Ops along ``dim`` with an index of the input's rank (gather, scatter*): batch first, dim + 1;
    an unbatched index or src is expanded over the batch; 0-d samples become one-element rows."""
    if not b.inputs[0].shape:
        if b.rule.name == "gather" and b.inputs[1].shape:  # the output follows the (1-d) index
            return apply(b.rule, (A.unsqueeze(b.expanded(0), -1), b.expanded(1)), {"dim": 1}), 0
        return _batch_scalar_samples(b, params)
    args = tuple(None if t is None else _front(b, i) for i, t in enumerate(b.inputs))
    return apply(b.rule, args, {**params, "dim": params["dim"] + 1}, cast=b.cast), 0


def _unsqueeze_to(t, ndim_logical, dim, size):
    """A 1-d (batched: (B, k)) index as a gather index of rank ``ndim_logical + 1`` along ``dim + 1``."""
    shape = [size] + [1] * ndim_logical
    shape[dim + 1] = t.shape[1]
    return A.reshape(t, tuple(shape))


def _batch_index_select(b, params):
    dim = params["dim"]
    x = _front(b, 0)
    nd = len(b.inputs[0].shape)
    if nd == 0:  # a 0-d input: each sample's result is its one element
        return A.clone(x), 0
    if b.bdims[1] is None:
        return apply(b.rule, (x, b.values[1]), {**params, "dim": dim + 1}), 0
    idx = A.reshape(b.front(1), (b.size, -1))
    shape = list(x.shape)
    shape[dim + 1] = idx.shape[1]
    idx = A.expand(_unsqueeze_to(idx, nd, dim, b.size), tuple(shape))
    return from_rule("gather", x, idx, dim=dim + 1), 0


def _batch_index_rw(b, params):
    """index_add/index_copy/index_fill with a 1-d index: with an unbatched index the op runs on the
    batch-first values along dim + 1; a batched index goes through the scatter of the same kind."""
    dim = params["dim"]
    nd = len(b.inputs[0].shape)
    if b.bdims[1] is None and nd > 0:
        args = [
            None if t is None else (b.values[i] if i == 1 else _front(b, i)) for i, t in enumerate(b.inputs)
        ]
        if b.rule.name == "index_fill_tensor":  # the 0-d value per sample, broadcast over its slices
            args[2] = A.reshape(args[2], (b.size,) + (1,) * nd)
        return apply(b.rule, tuple(args), {**params, "dim": dim + 1}, cast=b.cast), 0
    return _fallback_loop(b, params)


def _fallback_loop(b, params):
    """Per-sample application (for batched 1-d indices of the index_* family): each sample's op,
    stacked. Written here as a batch rule (not vmap's counted fallback) because the per-sample
    computation *is* the rule: index_add with a per-sample index has no single batched kernel."""
    outs = []
    for k in range(b.size):
        args = tuple(
            None if v is None else (v if d is None else A.select(v, d, k)) for v, d in zip(b.values, b.bdims)
        )
        outs.append(apply(b.rule, args, params, cast=b.cast))
    return A.stack(outs, 0), 0


def _batch_masked(b, params):
    """masked_select/masked_scatter: the number of selected elements may differ per sample; the
    result of masked_select is a per-sample 1-d tensor, so samples must agree in count."""
    return _fallback_loop(b, params)


def _batch_take(b, params):
    x = _front(b, 0)
    n = 1
    for s in b.inputs[0].shape:
        n *= s
    flat = A.reshape(x, (b.size, n))
    idx = b.values[1] if b.bdims[1] is None else b.front(1)
    if b.bdims[1] is None:
        idx = A.expand(A.unsqueeze(idx, 0), (b.size,) + tuple(idx.shape))
    shape = tuple(idx.shape)
    idx = A.reshape(idx, (b.size, -1))
    out = from_rule("gather", flat, idx, dim=1)
    return A.reshape(out, shape), 0


def _batch_put(b, params):
    x = _front(b, 0)
    n = 1
    for s in b.inputs[0].shape:
        n *= s
    flat = A.reshape(x, (b.size, n))
    idx = b.values[1] if b.bdims[1] is None else b.front(1)
    if b.bdims[1] is None:
        idx = A.expand(A.unsqueeze(idx, 0), (b.size,) + tuple(idx.shape))
    idx = A.reshape(idx, (b.size, -1))
    src = A.reshape(_front(b, 2), (b.size, -1))
    name = "scatter_add_dim" if params["accumulate"] else "scatter"
    out = from_rule(name, flat, idx, src, dim=1)
    return A.reshape(out, tuple(x.shape)), 0


# ---- VJP helpers (Tensor level) ---------------------------------------------------------------------


# ---- rounding-error declarations (reference.errors) ----------------------------------------------


def _filled_exact(kernel):
    """A fill with a number: the filled places are exact (the number is not an input), the rest
    keep their error: the op applied to the errors with the value 0."""

    def window(e_in, params, outs):
        return [np.abs(np.asarray(kernel(*e_in, **{**params, "value": 0.0}), dtype=np.float64))]

    return window


def _index_add_steps(x, index, src, dim, alpha=1):
    """x.index_add(dim, index, src, alpha=alpha) as a scatter-add of alpha*src (one product each
    when alpha != 1): sums of products with the signs of alpha handled by the product."""

    vals = src if alpha == 1 else src * alpha
    if x.ndim == 0:
        return x + A.sum(vals)
    idx = to_numpy(index._data).reshape(-1)  # host-side index table
    if src.ndim == 0:
        vals = vals.reshape((1,))
    shape = [1] * vals.ndim
    shape[dim] = -1
    full = np.ascontiguousarray(np.broadcast_to(idx.reshape(shape), tuple(vals.shape)))
    return x.scatter_add(dim, _make(namespace_of(x._data).asarray(full)), vals)  # (moved to x's device)


def _scatter_reduce_steps(x, index, src, dim, reduce, include_self):
    """sum and mean: scatter-adds (and one division by the exact count); amax and amin select: the
    largest error among the candidates (computed on the errors, registered with the tracker)."""

    shape = tuple(x.shape)
    x0 = x.reshape((1,)) if x.ndim == 0 else x
    xp = namespace_of(x._data)
    idx = to_numpy(index._data)  # host-side index table
    idx = idx.reshape(1) if idx.ndim == 0 else idx
    s0 = src.reshape((1,)) if src.ndim == 0 else src
    vals = s0[tuple(slice(0, n) for n in idx.shape)]
    it = _make(xp.asarray(np.ascontiguousarray(idx)))
    if reduce in ("sum", "mean"):
        base = x0 if include_self else x0.scatter(dim, it, 0.0)
        out = base.scatter_add(dim, it, vals)
        if reduce == "mean":
            count = np.full(tuple(x0.shape), 1.0 if include_self else 0.0)
            np.add.at(count, _coords(idx, dim), 1.0)
            out = out / _make(xp.asarray(np.where(count == 0, 1.0, count).astype(x.dtype)))
        return out.reshape(shape)
    if reduce in ("amax", "amin"):
        tracker = E.active()
        raw = scatter_reduce_kernel(x._data, it._data, src._data, dim, reduce, include_self)
        out = _make(raw.copy())
        if tracker is not None:
            ex = np.abs(tracker.error_of(x0)).reshape(tuple(x0.shape))
            es = np.abs(tracker.error_of(s0)).reshape(tuple(s0.shape))
            err = scatter_reduce_kernel(ex, idx, es, dim, "amax", include_self)
            tracker.set_error(out, err.reshape(shape))
        return out
    raise NotImplementedError(
        "no error model for scatter_reduce(reduce='prod'): a product of a data-dependent number of "
        "terms (not declared)"
    )


_SCATTER_VALUE_ERROR = errors.ErrorSpec(
    "gather",
    0.0,
    "values are moved; the filled number is exact",
    extra={"window": _filled_exact(scatter_value_kernel)},
)
_INDEX_FILL_ERROR = errors.ErrorSpec(
    "gather",
    0.0,
    "values are moved; the filled number is exact",
    extra={"window": _filled_exact(index_fill_kernel)},
)
_INDEX_ADD_ERROR = errors.composite(_index_add_steps, "a scatter-add of alpha*source (sums of products)")
_SCATTER_REDUCE_ERROR = errors.composite(_scatter_reduce_steps, "scatter-adds and a division, or selections")


def _gather(g, dim, index):
    return from_rule("gather", g, index, dim=dim)


def _scatter_add(base, dim, index, src):
    return from_rule("scatter_add_dim", base, index, src, dim=dim)


def _scatter_zero(g, dim, index):
    return from_rule("scatter_value", g, index, dim=dim, value=0)


def _index_select(g, dim, index):
    return from_rule("index_select", g, index, dim=dim)


def _index_add_zeros(shape, dim, index, g):
    return from_rule("index_add", A.zeros(shape, dtype=g.dtype, device=g.device), index, g, dim=dim)


def _index_fill_zero(g, dim, index):
    return from_rule("index_fill", g, index, dim=dim, value=0)


def _src_shaped(t, shape, node=None):
    """The src gradient (index-shaped) for a src of ``shape``: PyTorch refuses a src larger than
    the index in backward, with this error."""
    if tuple(t.shape) == tuple(shape):
        return t
    if t.numel() == _numel(shape):
        return A.reshape(t, shape)
    raise RuntimeError(
        f"Function {node} returned an invalid gradient at index 1 - got {list(t.shape)} but expected shape "
        f"compatible with {list(shape)}"
    )


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _linear_in(c, ts, name, inputs):
    """The JVP of an op linear in its float inputs: the op on their tangents (zeros where an input
    has none); integer inputs (indices, masks) stay as they are."""
    args = []
    for n, t in zip(inputs, ts):
        x = getattr(c, n)
        args.append(x if x.dtype.kind in "iub" else (t if t is not None else A.zeros_like(x)))
    return from_rule(name, *args, **c.params)


# ---- rules -----------------------------------------------------------------------------------------

rule(
    "gather",
    "GatherBackward0",
    ("self", "index"),
    forward=gather_kernel,
    grads=(
        lambda c, g: _scatter_add(A.zeros(c.shapes[0], dtype=g.dtype, device=g.device), c.dim, c.index, g),
        None,
    ),
    saves={"index": (0,)},
    jvp=(lambda c, t: _gather(t, c.dim, c.index), None),
    batch=_batch_index_dim,
    error=errors.GATHER,
)
rule(
    "scatter_add_dim",
    "ScatterAddBackward0",
    ("self", "index", "src"),
    forward=scatter_add_kernel,
    grads=(
        lambda c, g: g,
        None,
        lambda c, g: _src_shaped(_gather(g, c.dim, c.index), c.shapes[2], "ScatterAddBackward0"),
    ),
    saves={"index": (2,)},
    jvp=(lambda c, t: t, None, lambda c, t: _scatter_add(A.zeros_like(c.self), c.dim, c.index, t)),
    batch=_batch_index_dim,
    error=errors.products(),
)
rule(
    "scatter",
    "ScatterBackward0",
    ("self", "index", "src"),
    forward=scatter_kernel,
    grads=(
        lambda c, g: _scatter_zero(g, c.dim, c.index),
        None,
        lambda c, g: _src_shaped(_gather(g, c.dim, c.index), c.shapes[2], "ScatterBackward0"),
    ),
    saves={"index": (0, 2)},
    jvp=lambda c, ts: from_rule(
        "scatter",
        ts[0] if ts[0] is not None else A.zeros_like(c.self),
        c.index,
        ts[2] if ts[2] is not None else A.zeros_like(c.src),
        dim=c.dim,
    ),
    batch=_batch_index_dim,
    error=errors.GATHER,
)
rule(
    "scatter_value",
    "ScatterBackward1",
    ("self", "index"),
    forward=scatter_value_kernel,
    grads=(lambda c, g: _scatter_zero(g, c.dim, c.index), None),
    saves={"index": (0,)},
    jvp=(lambda c, t: _scatter_zero(t, c.dim, c.index), None),
    batch=_batch_index_dim,
    error=_SCATTER_VALUE_ERROR,
)


def _scatter_reduce_grads(c, g):
    """PyTorch's scatter_reduce_backward (FunctionsManual.cpp)."""
    dim, index, reduce = c.dim, c.index, c.reduce
    self, src, result = c.self, c.src, c.result
    gs = gsrc = None
    if reduce == "sum":
        gs, gsrc = g, _gather(g, dim, index)
    elif reduce == "prod":
        masked_self = A.masked_fill(self, self == 0, 1.0)
        masked_self_result = from_rule(
            "scatter_reduce", masked_self, index, src, dim=dim, reduce=reduce, include_self=c.include_self
        )
        gs = g * masked_self_result / masked_self
        src_zero = src == 0
        zeros = A.zeros(c.shapes[0], dtype=g.dtype, device=g.device)
        src_num_zeros = _gather(_scatter_add(zeros, dim, index, A.to(src_zero, g.dtype)), dim, index)
        src_single_zero = A.logical_and(src_zero, src_num_zeros == 1)
        masked_src = A.masked_fill(src, src_single_zero, 1.0)
        masked_src_result = from_rule(
            "scatter_reduce", self, index, masked_src, dim=dim, reduce=reduce, include_self=c.include_self
        )
        gsrc = A.where(
            src_single_zero,
            _gather(g * masked_src_result, dim, index),
            _gather(g * result, dim, index) / A.masked_fill(src, src_zero, 1.0),
        )
    elif reduce == "mean":
        base = (
            A.ones(c.shapes[0], dtype=g.dtype, device=g.device)
            if c.include_self
            else A.zeros(c.shapes[0], dtype=g.dtype, device=g.device)
        )
        n = _scatter_add(base, dim, index, A.ones(tuple(index.shape), dtype=g.dtype, device=g.device))
        n = A.masked_fill(n, n == 0, 1.0)
        gs = g / n
        gsrc = _gather(g, dim, index) / _gather(n, dim, index)
    else:  # amax, amin: the gradient is shared among the elements equal to the result
        value = _gather(result, dim, index)
        self_is = A.to(self == result, g.dtype)
        src_is = A.to(_crop_t(src, index) == value, g.dtype)
        n = _scatter_add(self_is, dim, index, src_is)
        dist = g / n
        gs = self_is * dist
        gsrc = src_is * _gather(dist, dim, index)
    if not c.include_self:
        gs = _scatter_zero(gs, dim, index)
    return gs, None, _pad_src(gsrc, c.shapes[2])


def _crop_t(src, index):
    if tuple(src.shape) == tuple(index.shape):
        return src
    out = src
    for d, n in enumerate(index.shape):
        if out.shape[d] != n:
            out = A.narrow(out, d, 0, n)
    return out


def _pad_src(gsrc, shape):
    """A gradient over the index's region of src, zero elsewhere (src may be larger than index)."""
    if tuple(gsrc.shape) == tuple(shape):
        return gsrc
    out = gsrc
    for d, n in enumerate(shape):
        if out.shape[d] != n:
            pad = list(out.shape)
            pad[d] = n - out.shape[d]
            out = A.cat([out, A.zeros(tuple(pad), dtype=out.dtype, device=out.device)], d)
    return out


def _scatter_reduce_jvp(c, ts):
    ts_self = ts[0] if ts[0] is not None else A.zeros_like(c.self)
    ts_src = ts[2] if ts[2] is not None else A.zeros_like(c.src)
    # The JVP of scatter_reduce: d result = sum over contributions of their partial derivatives.
    dim, index, reduce = c.dim, c.index, c.reduce
    if reduce == "sum":
        t_self = ts_self if c.include_self else _scatter_zero(ts_self, dim, index)
        return _scatter_add(t_self, dim, index, _crop_t(ts_src, index))
    if reduce == "mean":
        base = A.ones_like(c.self) if c.include_self else A.zeros_like(c.self)
        n = _scatter_add(
            base, dim, index, A.ones(tuple(index.shape), dtype=c.self.dtype, device=c.self.device)
        )
        n = A.masked_fill(n, n == 0, 1.0)
        t_self = ts_self if c.include_self else _scatter_zero(ts_self, dim, index)
        return _scatter_add(t_self, dim, index, _crop_t(ts_src, index)) / n
    if reduce == "prod":
        gs, _, gsrc = _scatter_reduce_grads(c, A.ones_like(c.result))
        # d result_i = sum_j d result_i / d x_j * t_j with the partial derivatives d result_i/d x_j
        # that the VJP at g = 1 gives per element (each element reaches one output only).
        t_self = gs * ts_self
        return _scatter_add(t_self, dim, index, _crop_t(gsrc * ts_src, index))
    gs, _, gsrc = _scatter_reduce_grads(c, A.ones_like(c.result))
    return _scatter_add(gs * ts_self, dim, index, _crop_t(gsrc * ts_src, index))


rule(
    "scatter_reduce",
    "ScatterReduceBackward0",
    ("self", "index", "src"),
    forward=scatter_reduce_kernel,
    vjp=_scatter_reduce_grads,
    grads=None,
    saves={"self": (0, 2), "index": (0, 2), "src": (0, 2), "result": (0, 2)},
    jvp=_scatter_reduce_jvp,
    batch=_batch_index_dim,
    error=_SCATTER_REDUCE_ERROR,
)
rule(
    "index_select",
    "IndexSelectBackward0",
    ("self", "index"),
    forward=index_select_kernel,
    grads=(lambda c, g: _index_add_zeros(c.shapes[0], c.dim, c.index, _src_shaped(g, _sel_shape(c))), None),
    saves={"index": (0,)},
    jvp=(lambda c, t: _index_select(t, c.dim, c.index), None),
    batch=_batch_index_select,
    error=errors.GATHER,
)


def _sel_shape(c):
    shape = list(c.shapes[0])
    if not shape:
        return ()
    shape[c.dim] = c.index.numel()
    return tuple(shape)


def _index_add_src_grad(c, g):
    out = _index_select(g, c.dim, c.index)
    if "alpha" in c.params and c.alpha != 1:
        out = out * c.alpha
    return _src_shaped(out, c.shapes[2])


rule(
    "index_add",
    "IndexAddBackward0",
    ("self", "index", "source"),
    forward=index_add_kernel,
    grads=(lambda c, g: g, None, _index_add_src_grad),
    saves={"index": (2,)},
    jvp=lambda c, ts: _linear_in(c, ts, "index_add", ("self", "index", "source")),
    batch=_batch_index_rw,
    error=_INDEX_ADD_ERROR,
)
rule(
    "index_copy",
    "IndexCopyBackward0",
    ("self", "index", "source"),
    forward=index_copy_kernel,
    grads=(
        lambda c, g: _index_fill_zero(g, c.dim, c.index),
        None,
        lambda c, g: _src_shaped(_index_select(g, c.dim, c.index), c.shapes[2]),
    ),
    saves={"index": (0, 2)},
    jvp=lambda c, ts: _linear_in(c, ts, "index_copy", ("self", "index", "source")),
    batch=_batch_index_rw,
    error=errors.GATHER,
)
rule(
    "index_fill",
    "IndexFillBackward0",
    ("self", "index"),
    forward=index_fill_kernel,
    grads=(lambda c, g: _index_fill_zero(g, c.dim, c.index), None),
    saves={"index": (0,)},
    jvp=(lambda c, t: _index_fill_zero(t, c.dim, c.index), None),
    batch=_batch_index_rw,
    error=_INDEX_FILL_ERROR,
)


def _unique_index(index):
    """The distinct entries of ``index`` (PyTorch's value gradient of index_fill sums each filled
    slice once)."""

    xp = namespace_of(index._data)
    return _make(xp.unique(index._data.reshape(-1)))


rule(
    "index_fill_tensor",
    "IndexFillBackward1",
    ("self", "index", "value"),
    forward=index_fill_tensor_kernel,
    grads=(
        lambda c, g: _index_fill_zero(g, c.dim, c.index),
        None,
        lambda c, g: A.sum(_index_select(g, c.dim, _unique_index(c.index))),
    ),
    saves={"index": (0, 2)},
    jvp=lambda c, ts: from_rule(
        "index_fill_tensor",
        ts[0] if ts[0] is not None else A.zeros_like(c.self),
        c.index,
        ts[2] if ts[2] is not None else A.zeros_like(c.value),
        dim=c.dim,
    ),
    batch=_batch_index_rw,
    error=errors.GATHER,
)


def _masked_select_grad(c, g):
    import numpy as np

    shape = tuple(np.broadcast_shapes(tuple(c.shapes[0]), tuple(c.mask.shape)))  # host-side shapes
    zeros = A.zeros(shape, dtype=g.dtype, device=g.device)
    mask = A.expand(c.mask, shape) if tuple(c.mask.shape) != shape else c.mask
    return from_rule("masked_scatter", zeros, mask, g)


def _masked_scatter_source_grad(c, g):
    """masked_select of the gradient, zero-padded to the source's size (masked_scatter_backward)."""
    sel = from_rule("masked_select", g, c.mask)
    n = 1
    for s in c.shapes[2]:
        n *= s
    k = sel.shape[0]
    if k < n:
        sel = A.cat([sel, A.zeros((n - k,), dtype=g.dtype, device=g.device)], 0)
    return A.reshape(sel, c.shapes[2])


rule(
    "masked_select",
    "MaskedSelectBackward0",
    ("self", "mask"),
    forward=masked_select_kernel,
    grads=(_masked_select_grad, None),
    saves={"mask": (0,)},
    jvp=(lambda c, t: from_rule("masked_select", t, c.mask), None),
    batch=_batch_masked,
    error=errors.GATHER,
)
rule(
    "masked_scatter",
    "MaskedScatterBackward0",
    ("self", "mask", "source"),
    forward=masked_scatter_kernel,
    grads=(lambda c, g: A.masked_fill(g, c.mask, 0.0), None, _masked_scatter_source_grad),
    saves={"mask": (0, 2)},
    jvp=lambda c, ts: from_rule(
        "masked_scatter",
        ts[0] if ts[0] is not None else A.zeros_like(c.self),
        c.mask,
        ts[2] if ts[2] is not None else A.zeros_like(c.source),
    ),
    batch=_batch_masked,
    error=errors.GATHER,
)
rule(
    "take_index",
    "TakeBackward0",
    ("self", "index"),
    forward=take_kernel,
    grads=(
        lambda c, g: from_rule(
            "put_index", A.zeros(c.shapes[0], dtype=g.dtype, device=g.device), c.index, g, accumulate=True
        ),
        None,
    ),
    saves={"index": (0,)},
    jvp=(lambda c, t: from_rule("take_index", t, c.index), None),
    batch=_batch_take,
    error=errors.GATHER,
)
rule(
    "put_index",
    "PutBackward0",
    ("self", "index", "source"),
    forward=put_kernel,
    grads=(
        lambda c, g: (
            g
            if c.accumulate
            else from_rule(
                "put_index",
                g,
                c.index,
                A.zeros(c.shapes[2], dtype=g.dtype, device=g.device),
                accumulate=False,
            )
        ),
        None,
        lambda c, g: A.reshape(from_rule("take_index", g, c.index), c.shapes[2]),
    ),
    saves={"index": (0, 2)},
    jvp=lambda c, ts: _linear_in(c, ts, "put_index", ("self", "index", "source")),
    batch=_batch_put,
    error=errors.products(),
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    gather index_add index_copy index_fill index_fill_tensor index_select masked_scatter
    masked_select put_index scatter scatter_add_dim scatter_value take_index
"""
