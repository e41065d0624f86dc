"""Array-level forward kernels and view geometry, named after the ops (plain NumPy functions).

Where NumPy already has the semantics the table aliases it directly; what is here is what NumPy
spells differently from PyTorch: view geometry (``size``, ``stride``, ``storage_offset`` computed
from the input's, as PyTorch's meta functions do), ``view``'s stride computation, reductions
over ``dim`` tuples, softmax, pooling windows and batch norm.
"""

from __future__ import annotations

import math

import numpy as np

from reference.autograd import table
from reference.autograd.layout import contiguous_strides
from reference.backend import add_at, namespace_of

# ---- view geometry: (shape, stride, offset, **params) -> (size, stride, offset) ----------------


def select_geometry(shape, stride, offset, dim, index):
    return shape[:dim] + shape[dim + 1 :], stride[:dim] + stride[dim + 1 :], offset + index * stride[dim]


def slice_geometry(shape, stride, offset, dim, start, end, step):
    n = max(0, (end - start + step - 1) // step)
    size = shape[:dim] + (n,) + shape[dim + 1 :]
    new_stride = stride[:dim] + (stride[dim] * step,) + stride[dim + 1 :]
    return size, new_stride, offset + (start * stride[dim] if n > 0 else 0)


def permute_geometry(shape, stride, offset, dims):
    return tuple(shape[d] for d in dims), tuple(stride[d] for d in dims), offset


def expand_geometry(shape, stride, offset, size):
    lead = len(size) - len(shape)
    new_stride = [0] * lead
    for i, (n, s) in enumerate(zip(shape, stride)):
        new_stride.append(s if n == size[lead + i] else 0)
    return tuple(size), tuple(new_stride), offset


def unsqueeze_geometry(shape, stride, offset, dim):
    s = stride[dim] * shape[dim] if dim < len(shape) else 1
    return shape[:dim] + (1,) + shape[dim:], stride[:dim] + (s,) + stride[dim:], offset


def squeeze_geometry(shape, stride, offset, dims):
    keep = [i for i in range(len(shape)) if i not in dims]
    return tuple(shape[i] for i in keep), tuple(stride[i] for i in keep), offset


def view_geometry(shape, stride, offset, size):
    new_stride = compute_stride(shape, stride, size)
    if new_stride is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return tuple(size), new_stride, offset


def compute_stride(oldshape, oldstride, newshape):
    """PyTorch's ``computeStride``: strides for viewing ``oldshape`` as ``newshape``, or None."""
    if math.prod(oldshape) == 0 or len(oldshape) == 0:
        return contiguous_strides(newshape) if oldshape != newshape else tuple(oldstride)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (
            oldshape[tensor_d - 1] != 1 and oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def diagonal_geometry(shape, stride, offset, offset_diag, dim1, dim2):
    if offset_diag >= 0:
        n = max(0, min(shape[dim1], shape[dim2] - offset_diag))
        start = offset + (offset_diag * stride[dim2] if n > 0 else 0)
    else:
        n = max(0, min(shape[dim1] + offset_diag, shape[dim2]))
        start = offset + (-offset_diag * stride[dim1] if n > 0 else 0)
    keep = [i for i in range(len(shape)) if i not in (dim1, dim2)]
    size = tuple(shape[i] for i in keep) + (n,)
    new_stride = tuple(stride[i] for i in keep) + (stride[dim1] + stride[dim2],)
    return size, new_stride, start


def as_strided_geometry(shape, stride, offset, size, stride_, storage_offset, **_):
    return tuple(size), tuple(stride_), storage_offset


def alias_geometry(shape, stride, offset):
    return shape, stride, offset


def unbind_geometry(shape, stride, offset, dim):
    return tuple(select_geometry(shape, stride, offset, dim, i) for i in range(shape[dim]))


def split_geometry(shape, stride, offset, sizes, dim):
    out, start = [], 0
    for n in sizes:
        out.append(slice_geometry(shape, stride, offset, dim, start, start + n, 1))
        start += n
    return tuple(out)


# ---- reductions and normalisations -------------------------------------------------------------


def sum_(x, dim, keepdim):
    # the array's method: the same add.reduce as xp.sum, without np.sum's Python-level dispatch
    return x.sum(axis=dim, keepdims=keepdim)


def mean(x, dim, keepdim):
    return namespace_of(x).mean(x, axis=dim, keepdims=keepdim)


def amax(x, dim, keepdim):
    return namespace_of(x).amax(x, axis=dim, keepdims=keepdim)


def amin(x, dim, keepdim):
    return namespace_of(x).amin(x, axis=dim, keepdims=keepdim)


#: float64 host arrays get the exact repairs of sums, products, norms and softmax (issue 38:
#: reference/ops/rules/_sums.py and the kernels below); other backends (CuPy) run the plain array
#: path. ``False`` gives the host that plain path too: tests/autograd/test_strict_namespace.py
#: compares a device run with the host run bit for bit, which needs the same path on both.
HOST_REPAIRS = True


def on_host_float64(x):
    """Whether ``x`` gets the exact repairs: a float64 NumPy array, with :data:`HOST_REPAIRS` on."""
    return HOST_REPAIRS and isinstance(x, np.ndarray) and x.dtype == np.float64


def softmax(x, dim):
    if x.size == 0:
        return x.copy()
    xp = namespace_of(x)
    m = xp.amax(x, axis=dim, keepdims=True)
    e = xp.exp(x - m)
    if on_host_float64(x):
        # x - m rounds by up to u·|x - m| (14 ulps of e at x - m = -28): its exact residual (TwoSum)
        # multiplies e back, e·(1 + lo) (issue 38: docs/accuracy.md)
        with np.errstate(invalid="ignore", over="ignore"):
            lo = _two_sum_residual(x, -m, x - m)
            e = np.where(np.isfinite(lo), e + e * lo, e)
    return e / xp.sum(e, axis=dim, keepdims=True)


def _two_sum_residual(a, b, s):
    """(a + b) - s exactly, s = fl(a + b) (Knuth's TwoSum)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def log_sum_shifted(e, axes):
    """log(sum(e)) over ``axes`` (kept as size 1) for e = exp(x - max): the largest e is 1 there,
    and log(1 + rest) is log1p of the others' sum (log of the rounded 1 + rest loses rest's digits
    below 2^-53: log_softmax([0, -40])[0] was 0, exact -4.2e-18). Rows whose largest e is not 1
    (an infinite or nan max) keep log(sum(e))."""
    moved = np.moveaxis(e, axes, tuple(range(-len(axes), 0)))
    kept = moved.shape[: moved.ndim - len(axes)]
    flat = moved.reshape(kept + (-1,)).copy()
    total = flat.sum(axis=-1, keepdims=True)
    if flat.shape[-1] == 0:
        return np.log(total).reshape(_keep_shape(e.shape, axes))
    first = np.argmax(flat, axis=-1)[..., None]
    one = np.take_along_axis(flat, first, axis=-1)
    np.put_along_axis(flat, first, 0.0, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(one == 1.0, np.log1p(flat.sum(axis=-1, keepdims=True)), np.log(total))
    return out.reshape(_keep_shape(e.shape, axes))


def _keep_shape(shape, axes):
    return tuple(1 if d in axes else s for d, s in enumerate(shape))


def log_softmax(x, dim):
    if x.size == 0:
        return x.copy()
    xp = namespace_of(x)
    shifted = x - xp.amax(x, axis=dim, keepdims=True)
    if on_host_float64(x) and x.ndim:  # log1p of the others' sum (issue 38: docs/accuracy.md)
        return shifted - log_sum_shifted(np.exp(shifted), (dim % x.ndim,))
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))


def matmul(a, b):
    out = namespace_of(a, b).matmul(
        a, b
    )  # ml_dtypes' bfloat16 matmul returns float32 (float32 products and sums)
    return out if out.dtype == a.dtype else out.astype(a.dtype)  # rounded once, as PyTorch's bf16 matmul


def clamp(x, min, max):
    xp = namespace_of(x)
    if min is not None:
        x = xp.maximum(x, xp.asarray(min, dtype=x.dtype))
    if max is not None:
        x = xp.minimum(x, xp.asarray(max, dtype=x.dtype))
    return x.copy()


def batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, per channel (dim 1); running stats update."""
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        count = x.size // x.shape[1]
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {list(x.shape)}"
            )
        mean = x.mean(axis=dims)
        var = ((x - mean.reshape(bshape)) ** 2).mean(axis=dims)
        if running_mean is not None:  # updated in place, without a version bump, as PyTorch does
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean
        if running_var is not None:
            running_var[...] = (1 - momentum) * running_var + momentum * var * count / (count - 1)
    else:
        mean, var = running_mean, running_var
    y = (x - mean.reshape(bshape)) / namespace_of(x).sqrt(var.reshape(bshape) + eps)
    if weight is not None:
        y = y * weight.reshape(bshape)
    if bias is not None:
        y = y + bias.reshape(bshape)
    return y.astype(x.dtype, copy=False)


# ---- pooling: windows as index tables over each (H, W) plane -------------------------------------


def pool_output_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def take(x, index):
    return x.reshape(-1)[index]


def scatter_add(g, index, shape):
    out = namespace_of(g).zeros(math.prod(shape), dtype=g.dtype)
    add_at(out, index.ravel(), g.ravel())  # (index: a host or device array, as indexing takes)
    return out.reshape(shape)


def put(x, src, index):
    out = x.copy().reshape(-1)
    out[index.ravel()] = namespace_of(x).broadcast_to(src, index.shape).ravel()
    return out.reshape(x.shape)


# ---- windowed linear maps over the trailing dims: pooling, padding, resampling, im2col ----------
#
# An op of this family reads, for each output position ``o`` of its trailing output dims, a few
# positions ``index[o, k]`` of the flattened trailing input dims (``-1``: outside the input, reads
# zero) with weights ``weight[o, k]``; every leading dim (batch, channels) maps independently.
# The index tables are host-side bookkeeping built from shapes (NumPy); the data stays in the
# input's namespace.


def window_gather(x, index, weight, in_shape, out_shape):
    """out[..., o] = sum_k x[..., index[o, k]] * weight[o, k] over the trailing ``in_shape`` dims."""
    xp = namespace_of(x)
    nd = len(in_shape)
    lead = tuple(x.shape[: x.ndim - nd])
    planes = x.reshape(math.prod(lead), math.prod(in_shape))
    n_out = math.prod(out_shape)
    if planes.shape[0] == 0 or planes.shape[1] == 0 or n_out == 0 or index.shape[1] == 0:
        return xp.zeros(lead + tuple(out_shape), dtype=x.dtype)
    idx = xp.asarray(index)
    valid = idx >= 0
    vals = planes[:, xp.where(valid, idx, 0)]  # (P, O, K)
    vals = xp.where(valid, vals * xp.asarray(weight, dtype=x.dtype), xp.zeros((), dtype=x.dtype))
    return vals.sum(axis=-1).reshape(lead + tuple(out_shape)).astype(x.dtype, copy=False)


def window_scatter(g, index, weight, in_shape, out_shape):
    """The transpose of :func:`window_gather`: add g[..., o] * weight[o, k] into x[..., index[o, k]]."""
    xp = namespace_of(g)
    nd = len(out_shape)
    lead = tuple(g.shape[: g.ndim - nd])
    P, S = math.prod(lead), math.prod(in_shape)
    out = xp.zeros((P, S), dtype=g.dtype)
    if P and S and index.size:
        valid = index >= 0
        contrib = g.reshape(P, -1)[:, :, None] * xp.asarray(weight, dtype=g.dtype)[None]  # (P, O, K)
        cols = xp.asarray(index[valid])
        add_at(out, (slice(None), cols), contrib[:, xp.asarray(valid)])
    return out.reshape(lead + tuple(in_shape))


def window_argmax(x, index, in_shape, out_shape):
    """Max over each window as PyTorch's CPU pooling kernels pick it: the first strict maximum, a
    NaN wins (the last NaN of a window), an all ``-inf`` window picks its first valid position.
    Returns (values, flat index into the trailing dims) shaped ``lead + out_shape``."""
    xp = namespace_of(x)
    nd = len(in_shape)
    lead = tuple(x.shape[: x.ndim - nd])
    P = math.prod(lead)
    O, Kw = index.shape
    if P == 0 or O == 0:
        return xp.zeros(lead + tuple(out_shape), dtype=x.dtype), xp.zeros(
            lead + tuple(out_shape), dtype=np.int64
        )
    planes = x.reshape(P, math.prod(in_shape))
    idx = xp.asarray(index)
    valid = idx >= 0
    vals = xp.where(valid, planes[:, xp.where(valid, idx, 0)], xp.asarray(-xp.inf, dtype=x.dtype))
    arg = xp.argmax(vals, axis=-1)
    first_valid = xp.argmax(valid, axis=-1)
    best = xp.take_along_axis(vals, arg[..., None], axis=-1)[..., 0]
    arg = xp.where(best == -xp.inf, first_valid[None], arg)
    nan = xp.isnan(vals)
    last_nan = Kw - 1 - xp.argmax(nan[..., ::-1], axis=-1)
    arg = xp.where(nan.any(axis=-1), last_nan, arg)
    values = xp.take_along_axis(vals, arg[..., None], axis=-1)[..., 0]
    flat = xp.take_along_axis(xp.broadcast_to(idx, vals.shape), arg[..., None], axis=-1)[..., 0]
    shape = lead + tuple(out_shape)
    return values.reshape(shape).astype(x.dtype, copy=False), flat.reshape(shape).astype(np.int64)


def combine_axes(axes, in_shape):
    """Separable window tables -> one table over the flattened trailing dims.

    ``axes[d] = (pos, w)``: ``pos`` (O_d, K_d) positions along dim ``d`` (out of ``[0, n_d)``:
    outside, reads zero), ``w`` (O_d, K_d) weights (None: 1). The table of the N-d op reads the
    product of the per-dim windows with the product of their weights."""
    nd = len(axes)
    idx = np.zeros((1,) * (2 * nd), dtype=np.int64)
    weight = np.ones((1,) * (2 * nd))
    valid = np.ones((1,) * (2 * nd), dtype=bool)
    for d, ((pos, w), n) in enumerate(zip(axes, in_shape)):
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = pos.shape
        p = np.asarray(pos, dtype=np.int64).reshape(shape)
        valid = valid & (p >= 0) & (p < n)
        idx = idx * n + np.clip(p, 0, max(n - 1, 0))
        if w is not None:
            weight = weight * np.asarray(w, dtype=np.float64).reshape(shape)
    full = tuple(a[0].shape[0] for a in axes) + tuple(a[0].shape[1] for a in axes)
    O, Kw = math.prod(full[:nd]), math.prod(full[nd:])
    idx = np.where(valid, idx, -1)
    return np.broadcast_to(idx, full).reshape(O, Kw), np.broadcast_to(weight, full).reshape(O, Kw)


def transpose_table(index, weight, n_in, keep_last=False):
    """The table of the transposed map: for each input position, the output positions reading it
    (with their weights); ``keep_last``: only the last reader (an assignment, as max_unpool)."""
    O, Kw = index.shape
    rows, cols = np.nonzero(index >= 0)
    src = index[rows, cols]
    w = weight[rows, cols]
    if keep_last:
        _, last = np.unique(src[::-1], return_index=True)
        keep = len(src) - 1 - last
        rows, src, w = rows[keep], src[keep], w[keep]
    order = np.argsort(src, kind="stable")
    rows, src, w = rows[order], src[order], w[order]
    counts = np.bincount(src, minlength=n_in)
    width = int(counts.max()) if counts.size else 0
    out_idx = np.full((n_in, width), -1, dtype=np.int64)
    out_w = np.zeros((n_in, width))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if n_in else np.zeros(0, dtype=np.int64)
    slot = np.arange(len(src)) - starts[src]
    out_idx[src, slot] = rows
    out_w[src, slot] = w
    return out_idx, out_w


def pool_axis(n, k, s, p, d, ceil_mode):
    """One dim of a pooling window table: (out_len, positions (O, K), window starts)."""
    out = pool_output_size(n, k, s, p, d, ceil_mode)
    starts = np.arange(max(out, 0)) * s - p
    return out, starts[:, None] + np.arange(k)[None, :] * d, starts


def adaptive_axis(n, out):
    """One dim of an adaptive pooling table: window [floor(o n / out), ceil((o + 1) n / out))."""
    o = np.arange(out)
    start = (o * n) // out if out else o
    end = -((-(o + 1) * n) // out) if out else o
    width = int((end - start).max()) if out else 0
    pos = start[:, None] + np.arange(width)[None, :]
    pos = np.where(pos < end[:, None], pos, -1)
    return pos, (end - start)


def index_key(indices, lead=0):
    """The NumPy key of an advanced index (``None``: the whole dim), after ``lead`` whole dims."""
    return (slice(None),) * lead + tuple(slice(None) if i is None else i for i in indices)


def region_shape(shape, indices):
    """Shape of ``x[indices]`` for ``x`` of ``shape`` (host-side, no data)."""
    xp = namespace_of(*[i for i in indices if i is not None and not isinstance(i, (int, slice))])
    return xp.broadcast_to(xp.empty((), dtype=bool), tuple(shape))[index_key(indices)].shape


table.register(view_geometry=view_geometry)  # (reshape's view, as vmap's batch rules need it)
