"""Numerical-analysis composites with PyTorch's names, signatures, defaults and errors: diff,
gradient, trapezoid/trapz, cumulative_trapezoid, cov, corrcoef, quantile/nanquantile,
cartesian_prod, combinations.

Every function here is a composite in PyTorch too (CompositeImplicitAutograd in
``native_functions.yaml``: ATen's ``ReduceOps.cpp`` diff/gradient, ``Integration.cpp``,
``Correlation.cpp``, ``Sorting.cpp`` quantile, ``Itertools.cpp``), so it is written here as the
same sequence of differentiable reference ops; its ``grad_fn`` is that of the last op, its
gradients, JVPs and batch rules are those of the ops it is made of.
"""

from __future__ import annotations

import builtins
import itertools

import reference as T
from reference.autograd.tensor import Tensor, bool_, int64
from reference.backend import is_floating
from reference.ops import api as A
from reference.scalar_types import scalar_type_name

__all__ = [
    "diff",
    "gradient",
    "trapezoid",
    "trapz",
    "cumulative_trapezoid",
    "cov",
    "corrcoef",
    "quantile",
    "nanquantile",
    "cartesian_prod",
    "combinations",
]

METHODS = ["diff", "quantile", "nanquantile"]


def _sl(x, dim, start=None, stop=None):
    """``x`` sliced ``start:stop`` along ``dim`` (a view, ATen's ``at::slice``)."""
    return x[(slice(None),) * dim + (slice(start, stop),)]


# ---- diff ------------------------------------------------------------------------------------------


def _diff_check_compatible(input, other, dim):
    if other.ndim != input.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(input.ndim):
        if i != dim and other.shape[i] != input.shape[i]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input except "
                f"along the differencing dimension; input.size({i}) = {input.shape[i]}, but got "
                f"tensor.size({i}) = {other.shape[i]}"
            )


def diff(input, n=1, dim=-1, prepend=None, append=None):
    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if input.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = A._dim(dim, input.ndim)
    for t in (prepend, append):
        if t is not None:
            _diff_check_compatible(input, t, d)
    if n == 0:  # ATen: zeros_like(self).copy_(self) (CopyBackwards)
        return A.zeros_like(input).copy_(input)
    a = input
    if prepend is not None or append is not None:
        a = A.cat([t for t in (prepend, input, append) if t is not None], d)
    length = a.shape[d]
    for _ in range(builtins.min(n, length)):
        length = a.shape[d]
        if a.dtype == bool_:
            a = A.narrow(a, d, 1, length - 1) != A.narrow(a, d, 0, length - 1)  # logical_xor
        else:
            a = A.narrow(a, d, 1, length - 1) - A.narrow(a, d, 0, length - 1)
    return a


# ---- gradient --------------------------------------------------------------------------------------


def _prepend_append(center, prepend, append, dim):
    return A.cat([prepend, center, append], dim)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    if spacing is None:
        spacing = 1
    if input.dtype.name == "uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    scalar_spacing = not isinstance(spacing, (list, tuple))
    if scalar_spacing and isinstance(spacing, Tensor):
        raise TypeError("gradient(): argument 'spacing' must be tuple of Tensors or list of Scalars")
    n_spacing = None if scalar_spacing else len(spacing)
    if n_spacing is not None and dims is None and n_spacing != input.ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
            f"to 'self.dim() = {input.ndim}', since dim argument was not given, but got a list of "
            f"length {n_spacing}"
        )
    if n_spacing is not None and dims is not None and n_spacing != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length {n_spacing} "
            f"and a dim argument of length {len(dims)}."
        )
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is None:
        dims = list(range(input.ndim))
    else:
        wrapped = [A._dim(x, input.ndim) for x in dims]
        if len(set(wrapped)) != len(wrapped):
            dup = next(x for x in wrapped if wrapped.count(x) > 1)
            raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    for x in dims:
        if input.shape[x] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    if scalar_spacing:
        spacing = [spacing] * len(dims)
    if builtins.all(isinstance(s, Tensor) for s in spacing) and spacing:
        return tuple(_gradient_coords(input, s, x, edge_order) for s, x in zip(spacing, dims))
    return tuple(_gradient_uniform(input, s, x, edge_order) for s, x in zip(spacing, dims))


def _gradient_uniform(x, h, dim, edge_order):
    d = A._dim(dim, x.ndim)
    center = (_sl(x, d, 2) - _sl(x, d, 0, -2)) / h
    if edge_order == 1:
        pre = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h
        app = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h
    else:
        pre = (-1.5 * _sl(x, d, 0, 1) + 2 * _sl(x, d, 1, 2) - 0.5 * _sl(x, d, 2, 3)) / h
        app = (0.5 * _sl(x, d, -3, -2) - 2 * _sl(x, d, -2, -1) + 1.5 * _sl(x, d, -1)) / h
    return _prepend_append(center / 2, pre, app, d)


def _gradient_coords(x, coords, dim, edge_order):
    if coords.ndim != 1:
        raise RuntimeError(
            "torch.gradient expected each element of spacing to have one dimension, but got an "
            f"element with {coords.ndim} dimensions!"
        )
    d = A._dim(dim, x.ndim)
    shape = [1] * x.ndim
    shape[d] = -1
    dx = diff(coords, 1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = A.reshape(-dx2 / (dx1 * (dx1 + dx2)), shape)
    b = A.reshape((dx2 - dx1) / (dx1 * dx2), shape)
    c = A.reshape(dx1 / (dx2 * (dx1 + dx2)), shape)
    center = a * _sl(x, d, 0, -2) + b * _sl(x, d, 1, -1) + c * _sl(x, d, 2)
    if edge_order == 1:
        pre = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / dx[0]
        app = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / dx[-1]
    else:
        a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
        pre = a * _sl(x, d, 0, 1) + b * _sl(x, d, 1, 2) + c * _sl(x, d, 2, 3)
        a = (dx[-1]) / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        app = a * _sl(x, d, -3, -2) + b * _sl(x, d, -2, -1) + c * _sl(x, d, -1)
    return _prepend_append(center, pre, app, d)


# ---- trapezoid -------------------------------------------------------------------------------------


def _zeros_except(y, dim):
    shape = list(y.shape)
    del shape[dim]
    return A.zeros(shape, dtype=y.dtype)


def _x_viewed(y, x, dim, what):
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{what}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        return A.view(x, shape)
    if x.ndim < y.ndim:
        return A.view(x, [1] * (y.ndim - x.ndim) + list(x.shape))
    return x


def _check_dx(dx, what):
    if isinstance(dx, (bool, complex)) or (isinstance(dx, Tensor)):
        raise RuntimeError(f"{what}: Currently, we only support dx as a real number.")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    d = A._dim(dim, y.ndim)
    if isinstance(x, Tensor):
        if y.shape[d] == 0:
            return _zeros_except(y, d)
        if y.dtype == bool_ or x.dtype == bool_:
            raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
        xv = _x_viewed(y, x, d, "trapezoid")
        step = _sl(xv, d, 1) - _sl(xv, d, 0, -1)
        return A.sum((_sl(y, d, 0, -1) + _sl(y, d, 1)) * step, d) / 2.0
    h = 1 if dx is None and x is None else (x if dx is None else dx)
    if y.shape[d] == 0:
        return _zeros_except(y, d)
    if y.dtype == bool_:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    _check_dx(h, "trapezoid")
    return (A.sum(y, d) - (A.select(y, d, 0) + A.select(y, d, -1)) * 0.5) * float(h)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = A._dim(dim, y.ndim)
    if isinstance(x, Tensor):
        if y.dtype == bool_ or x.dtype == bool_:
            raise RuntimeError(
                "cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported"
            )
        xv = _x_viewed(y, x, d, "cumulative_trapezoid")
        step = _sl(xv, d, 1) - _sl(xv, d, 0, -1)
        return A_cumsum((_sl(y, d, 0, -1) + _sl(y, d, 1)) * step, d) / 2.0
    h = 1 if dx is None and x is None else (x if dx is None else dx)
    if y.dtype == bool_:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    _check_dx(h, "cumulative_trapezoid")
    return A_cumsum(float(h) / 2.0 * (_sl(y, d, 0, -1) + _sl(y, d, 1)), d)


def A_cumsum(x, dim):
    return T.cumsum(x, dim)


# ---- cov / corrcoef --------------------------------------------------------------------------------


def cov(input, *, correction=1, fweights=None, aweights=None):
    import warnings

    if input.ndim > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    if input.dtype == bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    inp = A.view(input, (1, -1)) if input.ndim < 2 else input
    n_obs = inp.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        if w.ndim > 1:
            raise RuntimeError(
                "cov(): expected fweights to have one or fewer dimensions but got fweights with "
                f"{w.ndim} dimensions"
            )
        if w.dtype.kind not in "iu":
            raise RuntimeError(
                "cov(): expected fweights to have integral dtype but got fweights with "
                f"{scalar_type_name(w.dtype)} dtype"
            )
        if w.numel() != n_obs:
            raise RuntimeError(
                "cov(): expected fweights to have the same numel as there are observations in the "
                f"input but got {w.numel()} != {n_obs}"
            )
        if n_obs != 0 and not bool(A.amin(w, ()) >= 0):
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        if aw.ndim > 1:
            raise RuntimeError(
                "cov(): expected aweights to have one or fewer dimensions but got aweights with "
                f"{aw.ndim} dimensions"
            )
        if not is_floating(aw.dtype):
            raise RuntimeError(
                "cov(): expected aweights to have floating point dtype but got aweights with "
                f"{scalar_type_name(aw.dtype)} dtype"
            )
        if aw.numel() != n_obs:
            raise RuntimeError(
                "cov(): expected aweights to have the same numel as there are observations in the "
                f"input but got {aw.numel()} != {n_obs}"
            )
        if n_obs != 0 and not bool(A.amin(aw, ()) >= 0):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else w * aw
    w_sum = A.sum(w) if w is not None else A.tensor(n_obs, dtype=int64)
    if w is not None and not bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = A.sum(inp * w if w is not None else inp, 1) / w_sum
    if w is None:
        norm = A.tensor(n_obs - correction, dtype=int64)
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    elif fweights is None and n_obs == 1 and correction == 1:
        norm = A.tensor(0, dtype=int64)
    else:
        norm = w_sum - correction * A.sum(w * aweights) / w_sum
    if bool(norm <= 0):
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = A.zeros_like(norm)
    if n_obs == 1 and (fweights is None) != (aweights is None):
        inp = A.zeros_like(inp)
        if inp.dtype.kind in "iub":
            inp = A.to(inp, T.float32)
    else:
        inp = inp - A.unsqueeze(avg, 1)
    other = inp * w if w is not None else inp
    # E[(x - mean)(y - mean)^H]: complex data keep the imaginary part (aten's cov: mm(input, other.t().conj()))
    c = A.matmul(inp, A.t(other).conj())
    return A.squeeze(T.true_divide(c, norm))


def corrcoef(input):
    if input.ndim > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = A.diagonal(c)
    std = A.sqrt(T.real(d) if d.dtype.kind == "c" else d)
    c = c / A.view(std, (-1, 1))
    c = c / A.view(std, (1, -1))
    if c.dtype.kind == "c":
        return T.complex(T.clip(T.real(c), -1, 1), T.clip(T.imag(c), -1, 1))
    return T.clip(c, -1, 1)


# ---- quantile --------------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    if not isinstance(q, Tensor):
        qv = float(q)
        if not 0 <= qv <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = A.tensor(qv, dtype=input.dtype)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype.name not in ("float32", "float64"):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype != input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    # every sample's values (under vmap, the physical batched values: torch's per-sample fallback
    # checks each sample)
    qa = A._physical_values(q)
    if qa.size and not bool(((qa >= 0) & (qa <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    # the result's shape without q's dim; the sorted values viewed as that shape plus the reduced
    # values last, and q as a 1-d tensor broadcasting along that last dim (ATen's order of ops)
    if input.ndim == 0:  # one value; dim (if given) must be 0 or -1, the result is 0-d
        if dim is not None:
            A._dim(dim, 0)
        input, dim, keepdim = A.view(input, (1,)), 0, False
    if dim is None:
        rest = [1] * input.ndim if keepdim else []
        sorted_ = T.sort(A.flatten(input)).values
    else:
        d = A._dim(dim, input.ndim)
        rest = list(input.shape)
        if keepdim:
            rest[d] = 1
        else:
            del rest[d]
        if d == input.ndim - 1:
            sorted_ = T.sort(input).values
        else:
            sorted_ = T.sort(A.transpose(A.unsqueeze(input, -1), d, -1)).values
    sorted_ = A.view(sorted_, rest + [sorted_.shape[-1]])
    qv = A.reshape(q, (-1,))
    last = sorted_.shape[-1] - 1
    nan = sorted_ != sorted_
    if ignore_nan:
        ranks = qv * (A.sum(A.logical_not(nan), -1, keepdim=True) - 1)
        ranks = A.masked_fill(ranks, ranks < 0, 0)
    else:
        qr, isnan = T.broadcast_tensors(qv * last, T.any(nan, -1, keepdim=True))
        ranks = A.masked_fill(qr, isnan, last)
    if interpolation == "lower":
        ranks = T.floor(ranks)
    elif interpolation == "higher":
        ranks = T.ceil(ranks)
    elif interpolation == "nearest":
        ranks = T.round(ranks)
    below_idx = A.to(ranks, int64)
    values = T.gather(sorted_, -1, below_idx)
    if interpolation in ("linear", "midpoint"):
        weights = A.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below_idx
        above_idx = A.to(T.ceil(ranks), int64)
        values = T.lerp(values, T.gather(sorted_, -1, above_idx), weights)
    if q.ndim == 0:
        values = A.squeeze(values, -1)
    else:
        values = A.squeeze(A.transpose(A.unsqueeze(values, 0), 0, -1), -1)
    return values


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, True, "quantile")


# ---- itertools -------------------------------------------------------------------------------------


def cartesian_prod(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]

    grids = T.meshgrid(*tensors, indexing="ij")
    return A.stack([A.flatten(g) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return A.empty((0,), dtype=input.dtype)
    n = input.shape[0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = [list(c) for c in pick(range(n), r)]
    cols = [A.tensor([c[j] for c in idx], dtype=int64) for j in range(r)]
    return A.stack([T.index_select(input, 0, c) for c in cols], 1)
