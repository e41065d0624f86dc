"""Op records of the discrete Fourier transforms (reference.ops.rules.fft: ``fft_c2c``, ``fft_r2c``,
``fft_c2r``), as ``torch.fft`` spells them: ``fft``, ``ifft``, ``fftn`` (two dims, either direction),
``rfft``, ``irfft``, ``hfft``, ``ihfft``, each with ``n`` (zero-padding or cropping), ``dim`` and every
``norm``.

Their inputs or outputs are complex, so they run in the complex dtypes only
(``conformance.ops.complex.COMPLEX_ONLY``): a ``complex64`` case of ``rfft`` or ``ihfft`` draws its
input real in ``float32`` (``conformance.ops.complex.REAL_INPUTS``), a ``complex64`` case of
``irfft`` or ``hfft`` has a real ``float32`` output (and real cotangents). JAX spells them as
``jnp.fft`` (NumPy's signatures). TensorFlow's ``tf.signal`` transforms the innermost dims only,
without ``norm``, and its ``ifft``/``irfft`` scale by 1/N: the spelling moves ``dim`` last, crops or
pads to ``n`` and rescales to the ``norm`` asked for (``_tf_fft``).
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import value_kinds

FAMILY = "fft"
_KINDS = ("normal", "wide", "ties", "large", "tiny", "nonfinite")
NORMS = ("backward", "ortho", "forward")


@st.composite
def _one_dim(draw, min_size=1):
    """A signal of 1 or 2 dims (sizes >= min_size), the transformed ``dim``, ``n`` (None: the
    signal's own length) and ``norm``."""
    shape = tuple(draw(st.integers(min_size, 6)) for _ in range(draw(st.integers(1, 2))))
    params = {
        "values": draw(value_kinds(_KINDS)),
        "dim": draw(st.sampled_from([-1, 0] if len(shape) > 1 else [-1])),
        "n": draw(st.one_of(st.none(), st.integers(1, 8))),
        "norm": draw(st.sampled_from(NORMS)),
    }
    return params, {"input": shape}


@st.composite
def _two_dims(draw):
    shape = tuple(draw(st.integers(1, 4)) for _ in range(draw(st.integers(2, 3))))
    params = {
        "values": draw(value_kinds(_KINDS)),
        "inverse": draw(st.booleans()),
        "norm": draw(st.sampled_from(NORMS)),
    }
    return params, {"input": shape}


def _scale(norm, n, forward):
    """The factor of a transform over ``n`` points in the direction asked (NumPy's ``norm``)."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") == forward else 1.0


def _tf_fft(tf, kind, x, n, dim, norm):
    """``torch.fft.<kind>(x, n, dim, norm)`` in ``tf.signal``: ``dim`` moved last, ``n`` points, the
    scale of ``norm`` (tf.signal's inverse transforms divide by N, which is undone first)."""
    tnp = tf.experimental.numpy
    x = tnp.moveaxis(x, dim, -1)
    m = int(x.shape[-1])
    if kind in ("fft", "ifft"):
        n = m if n is None else n
        x = x[..., :n] if n <= m else tf.pad(x, [[0, 0]] * (len(x.shape) - 1) + [[0, n - m]])
        y = tf.signal.fft(x) if kind == "fft" else tf.signal.ifft(x) * n
        forward = kind == "fft"
    elif kind in ("rfft", "ihfft"):
        n = m if n is None else n
        y = tf.signal.rfft(x, fft_length=[n])
        y, forward = (y, True) if kind == "rfft" else (tf.math.conj(y), False)
    else:  # irfft, hfft: a real signal of n points from a half spectrum
        n = 2 * (m - 1) if n is None else n
        y = tf.signal.irfft(tf.math.conj(x) if kind == "hfft" else x, fft_length=[n]) * n
        forward = kind == "hfft"
    y = y * tf.constant(_scale(norm, n, forward), y.dtype)  # (tf.cast of a float rounds it to float32)
    return tnp.moveaxis(y, -1, dim)


def _one_dim_record(name, rule, note, min_size=1):
    record(
        name,
        FAMILY,
        rules=(rule,),
        sample=lambda: _one_dim(min_size),
        fn=lambda T, x, dim, n, norm: getattr(T.fft, name)(x, n=n, dim=dim, norm=norm),
        jax=lambda J, x, dim, n, norm: getattr(J.jnp.fft, name)(x, n=n, axis=dim, norm=norm),
        tf=lambda tf, x, dim, n, norm: _tf_fft(tf, name, x, n, dim, norm),
        note=note,
    )


_one_dim_record("fft", "fft_c2c", "the DFT of a complex signal along one dim")
_one_dim_record("ifft", "fft_c2c", "the inverse DFT along one dim")
_one_dim_record("rfft", "fft_r2c", "the half spectrum of a real signal (float32 input in complex64)")
_one_dim_record("ihfft", "fft_r2c", "conj(rfft(x)) with the inverse's scale: a real input")
# a half spectrum of one bin has no default length (n = 2(m - 1) = 0): two bins at least, or n given
_one_dim_record("irfft", "fft_c2r", "a real signal from a Hermitian half spectrum (a real output)", 2)
_one_dim_record("hfft", "fft_c2r", "irfft(conj(x)) with the forward's scale: a real output", 2)


def _tf_fftn(tf, x, inverse, norm):
    n = int(x.shape[-1]) * int(x.shape[-2])
    y = tf.signal.ifft2d(x) * n if inverse else tf.signal.fft2d(x)
    return y * tf.constant(_scale(norm, n, not inverse), y.dtype)


record(
    "fftn",
    FAMILY,
    rules=("fft_c2c",),
    sample=_two_dims,
    fn=lambda T, x, inverse, norm: (T.fft.ifftn if inverse else T.fft.fftn)(x, dim=(-2, -1), norm=norm),
    jax=lambda J, x, inverse, norm: (J.jnp.fft.ifftn if inverse else J.jnp.fft.fftn)(
        x, axes=(-2, -1), norm=norm
    ),
    tf=lambda tf, x, inverse, norm: _tf_fftn(tf, x, inverse, norm),
    note="fftn / ifftn over the last two dims (tf.signal.fft2d / ifft2d)",
)
