"""The points of the complex plane on which the complex declarations of reference/errors/complex.py
are measured, and mpmath's values there (scripts/measure_complex_accuracy.py prints the frameworks'
errors; tests/conformance/test_complex_accuracy_declarations.py checks the declarations cover them).

The grid covers the plane: moduli from 1e-30 to 1e30 in complex64 (1e-300 to 1e300 in complex128)
and 0.5 ... 2 finely, 48 angles and the axes approached to 1e-3 and 1e-6 radians from both sides,
both signs of zero in each part, and the branch points ±1, ±i approached along and across the axes.
"""

from __future__ import annotations

import numpy as np

#: the ops measured: name -> mpmath's function's name, or a function of an mpmath number
MPMATH = {
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "expm1": "expm1",
    "log1p": "log1p",
    "sinh": "sinh",
    "cosh": "cosh",
    "sqrt": "sqrt",
    "rsqrt": lambda mp, z: 1 / mp.sqrt(z),
    "reciprocal": lambda mp, z: 1 / z,
    "sigmoid": lambda mp, z: 1 / (1 + mp.exp(-z)),
}

#: ops whose branch cut lies on the real axis (asin, acos, atanh: |x| > 1; acosh: x < 1; log1p:
#: x < -1; sqrt, rsqrt: x < 0) or on the imaginary one (asinh, atan: |y| > 1)
_REAL_CUT = {"asin": None, "acos": None, "atanh": None, "acosh": 1, "log1p": -1, "sqrt": 0, "rsqrt": 0}
_IMAG_CUT = {"asinh", "atan"}

#: the poles of each op (an infinity there, not measured)
POLES = {"atanh": (1, -1), "atan": (1j, -1j), "log1p": (-1,), "rsqrt": (0,), "reciprocal": (0,)}


def grid(dtype, step=None):
    """The points measured, as ``dtype`` (complex64 or complex128); ``step``: decades between the
    moduli (3 in complex64 and 10 in complex128 by default)."""
    big, default = (30, 3) if dtype == np.complex64 else (300, 10)
    moduli = np.concatenate([10.0 ** np.arange(-big, big + 1, step or default), np.linspace(0.5, 2, 16), [0.99, 1.01]])
    axes = np.arange(4) * np.pi / 2
    angles = np.concatenate([np.arange(48) * np.pi / 24, *(axes + s for s in (1e-3, -1e-3, 1e-6, -1e-6))])
    z = (moduli[:, None] * np.exp(1j * angles[None, :])).ravel()
    special = []
    for p in (1, -1, 1j, -1j):  # branch points, approached along and across the axes
        for d in (1e-7, 1e-4, 1e-2):
            for s in (1, -1):
                special += [p * (1 + s * d), p * (1 + s * d) + 1j * p * d, p * (1 + s * d) - 1j * p * d]
    z = np.unique(np.concatenate([z, special]).astype(dtype))
    signed = []
    for v in (0.0, 0.5, 1.0, 1.5, 3.0, 1e-5, 1e5):  # both signs of zero in each part
        for sv in (1, -1):
            for sz in (0.0, -0.0):
                signed += [complex(sv * v, sz), complex(sz, sv * v)]
    return np.concatenate([z, np.array(signed, dtype=dtype)])


def on_cut(name, z):
    """Whether a point has a zero part on the op's branch cut (the zero's sign picks the side)."""
    x, y = z.real, z.imag
    if name in _IMAG_CUT:
        return (x == 0) & (np.abs(y) > 1)
    if name not in _REAL_CUT:
        return np.zeros(z.shape, bool)
    end = _REAL_CUT[name]
    return (y == 0) & ((np.abs(x) > 1) if end is None else (x < end))


def at_pole(name, z):
    return np.isin(z, np.array(POLES.get(name, ()), dtype=z.dtype))


def exact(name, z):
    """mpmath's value of ``name`` at each point (complex128). A zero part on a cut is read as its
    sign's side (C99 Annex G: the argument moved by a signed 1e-1000). mpmath's own formulas cancel
    (asinh z = log(z + sqrt(z^2 + 1)) at tiny z): the working precision is 200 bits beyond the
    binary exponent of the smaller nonzero part."""
    import mpmath as mp

    f = MPMATH[name]
    f = getattr(mp, f) if isinstance(f, str) else (lambda w, f=f: f(mp, w))
    out = np.empty(z.shape, np.complex128)
    eps = mp.mpf("1e-1000")
    for i, v in enumerate(np.asarray(z, np.complex128)):
        re, im = mp.mpf(float(v.real)), mp.mpf(float(v.imag))
        if im == 0 and name in _REAL_CUT:
            im = eps if np.copysign(1, v.imag) > 0 else -eps
        if re == 0 and name in _IMAG_CUT:
            re = eps if np.copysign(1, v.real) > 0 else -eps
        scale = min((abs(float(p)) for p in (v.real, v.imag) if p != 0), default=1.0)
        with mp.workprec(200 + max(0, -int(np.log2(scale)))):
            try:
                out[i] = complex(f(mp.mpc(re, im)))
            except (ZeroDivisionError, ValueError, OverflowError):
                out[i] = complex(np.nan, np.nan)
    return out


def part_errors(got, want, dtype):
    """``|Δre| / (2u|y|)`` and ``|Δim| / (2u|y|)`` (u of the part dtype), 0 where the exact value is
    not finite in the part dtype or its modulus is below 1e3 times its smallest normal number (the
    underflow term's region); a non-finite answer to a finite value counts infinite."""
    part = np.float32 if np.dtype(dtype) == np.complex64 else np.float64
    u = float(np.finfo(part).eps) / 2
    tiny, big = float(np.finfo(part).tiny), float(np.finfo(part).max)
    mod = np.abs(want)
    measured = np.isfinite(want) & (mod > 1e3 * tiny) & (np.abs(want.real) < big) & (np.abs(want.imag) < big)
    got = np.asarray(got).astype(np.complex128)
    out = []
    with np.errstate(all="ignore"):
        for d in (got.real - want.real, got.imag - want.imag):
            out.append(np.where(measured, np.nan_to_num(np.abs(d) / (2 * u * mod), nan=np.inf), 0.0))
    return out
