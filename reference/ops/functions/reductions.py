"""Reductions, scans and sorting with PyTorch's names, signatures, defaults, dtype rules and errors:
nansum, nanmean, prod, var/std (correction, unbiased), var_mean/std_mean, norm and
linalg.vector_norm, logsumexp, max/min (all elements, along a dim with indices, or elementwise
with a tensor), argmax/argmin, aminmax, median, nanmedian, kthvalue, mode, sort, argsort, msort,
topk, cumsum, cumprod, cummax, cummin, logcumsumexp, all, any, count_nonzero.

Functions that return values with indices return PyTorch's named tuples (``.values``,
``.indices``). Where PyTorch's CPU kernels pick among equal elements by an unspecified
selection algorithm (median/kthvalue/topk with ties, from ``std::nth_element`` and partial
sorts), the reference picks the stable-sort order; values and the gradient's total are the same.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from reference.autograd.dispatch import apply, apply_inplace
from reference.autograd.tensor import Tensor, bool_, default_dtype, int64
from reference.backend import is_floating, is_inexact
from reference.ops import api as A
from reference.ops.functions.linalg_decomp import matrix_norm
from reference.ops.rules.registry import RULES
from reference.scalar_types import scalar_type_name

__all__ = [
    "nansum",
    "nanmean",
    "prod",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "norm",
    "logsumexp",
    "max",
    "min",
    "argmax",
    "argmin",
    "aminmax",
    "median",
    "nanmedian",
    "kthvalue",
    "mode",
    "sort",
    "argsort",
    "msort",
    "topk",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "logcumsumexp",
    "all",
    "any",
    "count_nonzero",
]

_builtin_max, _builtin_min, _builtin_all, _builtin_any = max, min, all, any


def _nt(name, fields=("values", "indices")):
    return namedtuple(name, fields)


_types = {
    n: _nt(n)
    for n in ("max", "min", "median", "nanmedian", "kthvalue", "mode", "sort", "topk", "cummax", "cummin")
}
aminmax_type = _nt("aminmax", ("min", "max"))


def _ret(name, indices, values):
    return _types[name](values, indices)


def _float_only(input, what):
    if not is_floating(input.dtype):
        raise RuntimeError(what)


def _int_dim(dim, ndim):
    return A._dim(dim, ndim) if ndim else (A._dim(dim, 0) and 0)


def _dims_or_none(dim, ndim):
    if dim is None or dim == () or dim == []:
        return None
    return A._dims(dim, ndim)


def _cast_dtype(input, dtype):
    return input if dtype is None else A.to(input, dtype)


# ---- sums and products ----------------------------------------------------------------------------------


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    input = _cast_dtype(input, dtype)
    if not is_floating(input.dtype):
        return A.sum(input, dim, keepdim)
    return apply(RULES["nansum"], (input,), {"dim": _dims_or_none(dim, input.ndim), "keepdim": keepdim})


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    input = _cast_dtype(input, dtype)
    if not is_floating(input.dtype):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{scalar_type_name(input.dtype)}"
        )
    count = A.sum(A.logical_not(input != input), dim, keepdim=keepdim)
    return nansum(input, dim, keepdim) / count


def prod(input, dim=None, keepdim=False, *, dtype=None):
    input = _cast_dtype(input, dtype)
    if input.dtype.kind in "biu" and dtype is None:
        input = A.to(input, int64)
    if dim is None:
        return apply(RULES["prod"], (input,), {"dim": None, "keepdim": False})
    d = _int_dim(dim, input.ndim)
    if input.ndim == 0:
        return apply(RULES["prod"], (input,), {"dim": None, "keepdim": False})
    return apply(RULES["prod_dim"], (input,), {"dim": d, "keepdim": keepdim})


# ---- var, std ----------------------------------------------------------------------------------------------


def _correction(unbiased, correction):
    if correction is not None:
        if unbiased is not None:
            raise TypeError(
                "var() received an invalid combination of arguments - got both unbiased and correction; pass one"
            )
        return correction
    return 1 if unbiased in (None, True) else 0


def _var_args(input, dim, unbiased, keepdim, correction, name):
    if isinstance(dim, bool):  # var(x, unbiased) positional form
        unbiased, dim = dim, None
    if not is_inexact(input.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return {
        "dim": _dims_or_none(dim, input.ndim),
        "correction": _correction(unbiased, correction),
        "keepdim": keepdim,
    }


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return apply(RULES["var"], (input,), _var_args(input, dim, unbiased, keepdim, correction, "var"))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return apply(RULES["std"], (input,), _var_args(input, dim, unbiased, keepdim, correction, "std"))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return apply(
        RULES["var_mean"], (input,), _var_args(input, dim, unbiased, keepdim, correction, "var_mean")
    )


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return apply(
        RULES["std_mean"], (input,), _var_args(input, dim, unbiased, keepdim, correction, "std_mean")
    )


# ---- norms ---------------------------------------------------------------------------------------------------


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if isinstance(ord, str) or isinstance(ord, Tensor):
        raise TypeError(f"linalg.vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    if not is_inexact(x.dtype):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {scalar_type_name(x.dtype)}"
        )
    x = _cast_dtype(x, dtype)
    dims = _dims_or_none(dim, x.ndim)
    if (ord < 0 or math.isinf(ord)) and x.numel() == 0:
        # PyTorch's messages: the whole tensor (no dim), or the first empty dim as the caller wrote it
        # (its message has no space before "because")
        o = "inf" if ord == math.inf else "-inf" if ord == -math.inf else f"{ord:g}"
        if dims is None:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {o} norm on an empty tensor because the operation "
                "does not have an identity"
            )
        for written, d in zip((dim,) if isinstance(dim, int) else tuple(dim), dims):
            if x.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {o} norm on the dimension {written}because this "
                    "dimension is empty and the operation does not have an identity"
                )
    return apply(RULES["linalg_vector_norm"], (x,), {"ord": float(ord), "dim": dims, "keepdim": keepdim})


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "nuc":  # a matrix norm (the decomposition family's matrix_norm)
        return matrix_norm(
            input, "nuc", tuple(range(input.ndim)) if dim is None else dim, keepdim, dtype=dtype
        )
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def logsumexp(input, dim, keepdim=False):
    if not is_floating(input.dtype) and input.dtype.kind != "c":
        input = A.to(input, default_dtype.value)
    dims = A._dims(dim, input.ndim)
    if input.ndim == 0:
        dims = None
    return apply(RULES["logsumexp"], (input,), {"dim": dims, "keepdim": keepdim})


def logmeanexp(input, dim, keepdim=False):
    """jax.nn.logmeanexp: log(mean(e^x)) over ``dim`` = logsumexp(x, dim) - log n, n the number of
    elements each result reduces, as JAX's (PyTorch has none). log n is a rounded log of its own
    (JAX takes it of the count in the result's dtype), so its rounding is charged to the result."""
    lse = logsumexp(input, dim, keepdim)
    count = math.prod(input.shape[d] for d in A._dims(dim, input.ndim)) if input.ndim else 1
    return lse - A.log(A.full_like(lse, float(count)))


# ---- max, min, median and friends ----------------------------------------------------------------------------


def _empty_all(name, input):
    if input.numel() == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
            "with the 'dim' argument."
        )


def _empty_dim(name, input, d):
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _selecting(name, rule_name, input, dim, keepdim, message_name=None, **params):
    d = _int_dim(dim, input.ndim)
    _empty_dim(message_name or name, input, d)
    idx, values = apply(RULES[rule_name], (input,), {"dim": d, "keepdim": keepdim, **params})
    return _ret(name, idx, values)


def _extreme(name, input, dim, keepdim, other):
    if isinstance(dim, Tensor):
        other, dim = dim, None
    if other is not None:
        return (A.maximum if name == "max" else A.minimum)(input, other)
    if dim is None:
        _empty_all(name, input)
        return apply(RULES[name], (input,), {"dim": None, "keepdim": False})
    return _selecting(name, name + "_dim", input, dim, keepdim)


def max(input, dim=None, keepdim=False, *, other=None):
    return _extreme("max", input, dim, keepdim, other)


def min(input, dim=None, keepdim=False, *, other=None):
    return _extreme("min", input, dim, keepdim, other)


def _arg(name, input, dim, keepdim):
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        return apply(RULES[name], (input,), {"dim": None, "keepdim": keepdim})
    d = _int_dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return apply(RULES[name], (input,), {"dim": d, "keepdim": keepdim})


def argmax(input, dim=None, keepdim=False):
    return _arg("argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return _arg("argmin", input, dim, keepdim)


def aminmax(input, *, dim=None, keepdim=False):
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
            )
        dims = None
    else:
        dims = _int_dim(dim, input.ndim)
        if input.ndim and input.shape[dims] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {dims} to have non-zero size.")
        dims = (dims,) if input.ndim else None
    mn, mx = apply(RULES["aminmax"], (input,), {"dim": dims, "keepdim": keepdim})
    return aminmax_type(mn, mx)


def median(input, dim=None, keepdim=False):
    if dim is None:
        if input.numel() == 0:
            return A.full((), math.nan, dtype=input.dtype)
        return apply(RULES["median"], (input,), {"dim": None, "keepdim": False})
    return _selecting("median", "median_dim", input, dim, keepdim)


def nanmedian(input, dim=None, keepdim=False):
    if dim is None:
        if input.numel() == 0:
            return A.full((), math.nan, dtype=input.dtype)
        return apply(RULES["nanmedian"], (input,), {"dim": None, "keepdim": False})
    # aten's nanmedian shares median's kernel and its message ("median(): Expected reduction dim ...")
    return _selecting("nanmedian", "nanmedian_dim", input, dim, keepdim, message_name="median")


def kthvalue(input, k, dim=-1, keepdim=False):
    d = _int_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx, values = apply(RULES["kthvalue"], (input,), {"dim": d, "keepdim": keepdim, "k": int(k)})
    return _ret("kthvalue", idx, values)


def mode(input, dim=-1, keepdim=False):
    return _selecting("mode", "mode", input, dim, keepdim)


# ---- sorting -----------------------------------------------------------------------------------------------------


_SORT_OVERLOADS = (
    " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None)\n"
    " * (Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)\n"
)


def _torch_type_name(value) -> str:
    return "Tensor" if hasattr(value, "_data") else type(value).__name__


def sort(input, *args, dim=-1, descending=False, stable=None):
    """torch.sort's two overloads: ``sort(input, dim=-1, descending=False)`` and
    ``sort(input, *, stable, dim=-1, descending=False)`` (with ``stable=`` every other argument is a
    keyword: a positional dim is torch's TypeError)."""
    if args and stable is not None:
        got = ", ".join(
            [_torch_type_name(input), *(_torch_type_name(a) for a in args)]
            + [f"{k}={type(v).__name__}" for k, v in (("stable", stable), ("descending", descending)) if v]
        )
        raise TypeError(
            f"sort() received an invalid combination of arguments - got ({got}), but expected one of:\n"
            + _SORT_OVERLOADS
        )
    if len(args) > 2:
        raise TypeError(f"sort() takes at most 3 positional arguments ({1 + len(args)} given)")
    if args:
        dim = args[0]
    if len(args) == 2:
        descending = args[1]
    if isinstance(dim, bool):  # a bool in dim's place is `stable` (torch's legacy positional form)
        stable, dim = dim, -1
    d = _int_dim(dim, input.ndim)
    name = "sort_stable" if stable is not None else "sort"
    idx, values = apply(RULES[name], (input,), {"dim": d, "descending": bool(descending)})
    return _ret("sort", idx, values)


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim=dim, descending=descending, stable=stable if stable else None).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):
    d = _int_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    idx, values = apply(
        RULES["topk"], (input,), {"k": int(k), "dim": d, "largest": bool(largest), "sorted": bool(sorted)}
    )
    return _ret("topk", idx, values)


# ---- scans ----------------------------------------------------------------------------------------------------------


def _scan_input(input, dtype):
    input = _cast_dtype(input, dtype)
    if input.dtype.kind in "biu" and dtype is None:
        input = A.to(input, int64)
    return input


def cumsum(input, dim, *, dtype=None):
    input = _scan_input(input, dtype)
    return apply(RULES["cumsum"], (input,), {"dim": _int_dim(dim, input.ndim)})


def cumprod(input, dim, *, dtype=None):
    input = _scan_input(input, dtype)
    return apply(RULES["cumprod"], (input,), {"dim": _int_dim(dim, input.ndim)})


def _cum_extreme(name, input, dim):
    idx, values = apply(RULES[name], (input,), {"dim": _int_dim(dim, input.ndim)})
    return _ret(name, idx, values)


def cummax(input, dim):
    return _cum_extreme("cummax", input, dim)


def cummin(input, dim):
    return _cum_extreme("cummin", input, dim)


def logcumsumexp(input, dim):
    if not is_floating(input.dtype) and input.dtype.kind != "c":
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{scalar_type_name(input.dtype)}'"
        )
    return apply(RULES["logcumsumexp"], (input,), {"dim": _int_dim(dim, input.ndim)})


# ---- logical reductions --------------------------------------------------------------------------------------------


def _logical(name, input, dim, keepdim):
    dims = _dims_or_none(dim, input.ndim)
    out = apply(RULES[name], (input,), {"dim": dims, "keepdim": keepdim})
    return A.to(out, input.dtype) if input.dtype == np.dtype(np.uint8) else out


def all(input, dim=None, keepdim=False):
    return _logical("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    return _logical("any", input, dim, keepdim)


def count_nonzero(input, dim=None):
    dims = _dims_or_none(dim, input.ndim)
    return apply(RULES["count_nonzero"], (input,), {"dim": dims, "keepdim": False})


# ---- in-place variants and methods ---------------------------------------------------------------------------------


def _inplace(fn, name):
    def op_(self, *args, **kwargs):
        return A.copy_(self, fn(self, *args, **kwargs))

    op_.__name__ = name
    return op_


def _scan_inplace(name, fn):
    """cumsum_/cumprod_: PyTorch's in-place scan kernels (CumprodBackward0 saves the input as it was
    before the write); with ``dtype=`` or an integer self, the out-of-place scan copied back."""

    def op_(self, dim, *, dtype=None):
        if (dtype is None or dtype == self.dtype) and is_inexact(self.dtype):  # floating or complex
            return apply_inplace(RULES[name], self, (), {"dim": _int_dim(dim, self.ndim)})
        return A.copy_(self, fn(self, dim, dtype=dtype))

    op_.__name__ = name + "_"
    return op_


METHODS = {name: globals()[name] for name in __all__ if name != "msort"}
METHODS.update(
    {
        "msort": msort,
        "cumsum_": _scan_inplace("cumsum", cumsum),
        "cumprod_": _scan_inplace("cumprod", cumprod),
        "norm": norm,
    }
)
NAMESPACES = {"linalg": {"vector_norm": vector_norm}}
NN_FUNCTIONAL = ["logmeanexp"]  # jax.nn.logmeanexp (PyTorch has none)
_ = bool_
