"""``torch.fft`` with PyTorch's names, signatures, promotion and errors, composed over the three
primitives of :mod:`reference.ops.rules.fft` (as aten composes them): ``n``/``s`` pad with zeros
or crop (differentiable ``cat`` / ``narrow``) before the transform; real inputs of ``fft`` are
converted to complex first (PyTorch runs a two-sided r2c: the same values and gradients); ``hfft``
is the c2r of the conjugate, ``ihfft`` the conjugate of the r2c, with the scaling swapped;
``fftshift``/``ifftshift`` are ``roll``s.
"""

from __future__ import annotations

from reference.backend import is_inexact
from reference.ops import api as A
from reference.ops.functions.complex import conj, conj_physical
from reference.ops.functions.shape import roll
from reference.ops.rules import fft as P
from reference.scalar_types import scalar_type_name

_NORMS = (None, "backward", "ortho", "forward")
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm or "backward"


def _floating(x):
    """Integer and bool inputs compute in the default float dtype, as PyTorch's fft does."""
    return x if is_inexact(x.dtype) else A.to(x, A.default_dtype.value)


def _complex(x):
    x = _floating(x)
    return x if x.dtype.kind == "c" else A.to(x, A.to_complex(x.dtype))


def _resize(x, dim, n):
    """Zero-pad or crop ``x`` along ``dim`` to ``n`` (PyTorch's resize_fft_input)."""
    m = x.shape[dim]
    if n == m:
        return x
    if n < m:
        return A.narrow(x, dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n - m
    return A.cat([x, A.zeros(tuple(shape), dtype=x.dtype, device=x.device)], dim)


def _check_n(n):
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _dims_and_sizes(x, s, dim, default_all=True):
    """PyTorch's canonicalize_fft_shape_and_dim_args: the dims transformed and their sizes."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [A._dim(d, x.ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [int(v) for v in s]
        if dim is None:
            if len(s) > x.ndim:
                raise RuntimeError(
                    f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions."
                )
            dims = list(range(x.ndim - len(s), x.ndim))
        elif len(s) != len(dims):
            raise RuntimeError(
                f"When given, dim and shape arguments must have the same length. Got dim {len(dims)} and shape {len(s)}"
            )
        sizes = [x.shape[d] if v == -1 else v for d, v in zip(dims, s)]
    else:
        if dim is None:
            dims = list(range(x.ndim)) if default_all else [x.ndim - 1]
        sizes = [x.shape[d] for d in dims]
    for n in sizes:
        _check_n(n)
    return dims, sizes


def _c2c_n(x, s, dim, norm, forward):
    norm = _norm(norm)
    x = _complex(x)
    dims, sizes = _dims_and_sizes(x, s, dim)
    for d, n in zip(dims, sizes):
        x = _resize(x, d, n)
    if not dims:
        return x
    return P.c2c(x, dims, norm, forward)


def _r2c_n(x, s, dim, norm, name):
    norm = _norm(norm)
    if x.dtype.kind == "c":
        raise RuntimeError(f"{name} expects a real input tensor, but got {_tname(x.dtype)}")
    x = _floating(x)
    dims, sizes = _dims_and_sizes(x, s, dim)
    for d, n in zip(dims, sizes):
        x = _resize(x, d, n)
    return P.r2c(x, dims, norm)


def _c2r_n(x, s, dim, norm):
    norm = _norm(norm)
    x = _complex(x)
    dims, sizes = _dims_and_sizes(x, s, dim)
    if s is None or s[-1] == -1:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    _check_n(sizes[-1])
    for d, n in zip(dims[:-1], sizes[:-1]):
        x = _resize(x, d, n)
    x = _resize(x, dims[-1], sizes[-1] // 2 + 1)
    return P.c2r(x, dims, norm, sizes[-1])


def _tname(dt):

    return scalar_type_name(dt)


def _one(n, dim):
    _check_n(n)
    return (None if n is None else [n]), [dim]


# ---- one-dimensional ------------------------------------------------------------------------------


def fft(input, n=None, dim=-1, norm=None):
    s, d = _one(n, dim)
    return _c2c_n(input, s, d, norm, True)


def ifft(input, n=None, dim=-1, norm=None):
    s, d = _one(n, dim)
    return _c2c_n(input, s, d, norm, False)


def rfft(input, n=None, dim=-1, norm=None):
    s, d = _one(n, dim)
    return _r2c_n(input, s, d, norm, "rfft")


def irfft(input, n=None, dim=-1, norm=None):
    s, d = _one(n, dim)
    return _c2r_n(input, s, d, norm)


def hfft(input, n=None, dim=-1, norm=None):
    """The real signal of a Hermitian half spectrum: irfft of the conjugate, scaled as a forward transform."""
    s, d = _one(n, dim)

    return _c2r_n(conj(_complex(input)), s, d, _SWAP[_norm(norm)])


def ihfft(input, n=None, dim=-1, norm=None):
    s, d = _one(n, dim)

    return conj(_r2c_n(input, s, d, _SWAP[_norm(norm)], "ihfft"))


def hfftn(input, s=None, dim=None, norm=None):
    """The inverse of ihfftn: irfftn of the conjugate, scaled as a forward transform."""

    return _c2r_n(conj(_complex(input)), s, dim, _SWAP[_norm(norm)])


def ihfftn(input, s=None, dim=None, norm=None):
    """The conjugate of rfftn (an unscaled-forward inverse transform of a real signal), scaling swapped:
    over one dim a conjugate view (is_conj(), as PyTorch's ``tmp.conj()``), over more a physical
    conjugate (PyTorch conjugates the r2c physically before its c2c over the other dims)."""

    out = _r2c_n(input, s, dim, _SWAP[_norm(norm)], "ihfftn")
    ndims = (
        (1 if isinstance(dim, int) else len(dim))
        if dim is not None
        else len(s)
        if s is not None
        else input.ndim
    )
    return conj(out) if ndims == 1 else conj_physical(out)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return ihfftn(input, s, dim, norm)


# ---- two- and n-dimensional -----------------------------------------------------------------------


def fftn(input, s=None, dim=None, norm=None):
    return _c2c_n(input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None):
    return _c2c_n(input, s, dim, norm, False)


def rfftn(input, s=None, dim=None, norm=None):
    return _r2c_n(input, s, dim, norm, "rfftn")


def irfftn(input, s=None, dim=None, norm=None):
    return _c2r_n(input, s, dim, norm)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return ifftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return irfftn(input, s, dim, norm)


# ---- shifts -----------------------------------------------------------------------------------------


def _shift(input, dim, sign):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [A._dim(d, input.ndim) for d in dims]
    shifts = [sign * (input.shape[d] // 2) for d in dims]

    return roll(input, shifts, dims) if dims else input


def fftshift(input, dim=None):
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    return _shift(input, dim, -1)


def fftfreq(n, d=1.0, *, dtype=None, requires_grad=False):
    """[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d n)."""
    import numpy as np

    values = np.fft.fftfreq(n, d)
    return A.tensor(values, dtype=dtype or A.default_dtype.value, requires_grad=requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, requires_grad=False):
    import numpy as np

    values = np.fft.rfftfreq(n, d)
    return A.tensor(values, dtype=dtype or A.default_dtype.value, requires_grad=requires_grad)


NAMESPACES = {
    "fft": [
        "fft",
        "ifft",
        "rfft",
        "irfft",
        "hfft",
        "ihfft",
        "hfftn",
        "ihfftn",
        "hfft2",
        "ihfft2",
        "fftn",
        "ifftn",
        "rfftn",
        "irfftn",
        "fft2",
        "ifft2",
        "rfft2",
        "irfft2",
        "fftshift",
        "ifftshift",
        "fftfreq",
        "rfftfreq",
    ]
}
