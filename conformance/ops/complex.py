"""Complex numbers in the op records: which records run in complex64/complex128, how their complex
inputs are drawn, and the records of the complex-number primitives (reference.ops.rules.complex).

A record listed in :data:`COMPLEX_RECORDS` is *complex-capable*: its cases may have dtype
``complex64`` or ``complex128`` (``--dtypes complex64,complex128``), its inputs, cotangents and
tangents are then complex, drawn by :func:`complex_draw`, and its results are judged against the
reference (PyTorch's convention, docs/complex.md) with the complex error model of
``reference.errors.complex``. Each framework's gradients are mapped to that convention by the
harness (``conformance.ops._run``: JAX's cotangents and gradients conjugated, TensorFlow's taken as
they are, as measured in tests/conformance/test_complex_records.py). Every other record keeps the
real dtypes only: asking for a complex dtype on it is reported (``conformance run`` says which
records it skipped, and exits 2 when nothing is left).

The primitives below (views between real and complex storage, conj, angle, complex, polar) are not
fuzzed on their own: checked against PyTorch in tests/autograd/test_torch_complex.py and against
JAX in tests/autograd/test_complex_jax.py.
"""

from __future__ import annotations

import numpy as np

from conformance.ops import not_fuzzed

#: The complex-capable records (record name -> what the complex cases reach). Each is defined on
#: the whole complex plane in all three frameworks, with the same spelling as its real cases.
COMPLEX_RECORDS = {
    "add": "complex addition (each part rounded once)",
    "sub": "complex subtraction",
    "mul": "complex multiplication: sqrt(5) u (no FMA), 2u (FMA)",
    "div": "complex division (textbook, Smith's, scaled): tiny and huge divisors",
    "neg": "negation (exact)",
    "reciprocal": "1/z",
    "abs": "|z| (real result of a complex input; hypot: |z|^2 overflows for huge parts)",
    "exp": "exp(x) cis(y)",
    "log": "the branch cut on the negative real axis, both signs of a zero imaginary part",
    "sqrt": "the branch cut on the negative real axis, both signs of a zero imaginary part",
    "tanh": "tanh of complex arguments (poles at i(k + 1/2)pi)",
    "sin": "sin x cosh y + i cos x sinh y",
    "cos": "cos x cosh y - i sin x sinh y",
    "sinh": "sinh x cos y + i cosh x sin y",
    "cosh": "cosh x cos y + i sinh x sin y",
    "sum": "complex sums (each part an independent real sum)",
    "mean": "complex means",
    "dot": "complex inner products (no conjugation: torch.dot)",
    "mv": "complex matrix-vector products",
    "mm": "complex matrix products",
    "bmm": "batched complex matrix products",
}


def complex_draw(rng, shape, kind, dtype, seed=False, huge=True):
    """Complex values for a case of ``dtype`` (complex64/complex128), as complex128 (the caller
    rounds each part to the part dtype).

    Each part is drawn like a real value of the part dtype: by the case's ``values`` kind
    (``conformance.ops.real_values``: normal, wide, ties, large, tiny, nonfinite) for inputs, like
    the second-order seeds (zeros of both signs, +-1, small integers, tiny, huge) for those. ``large``
    scales the parts to 2^(emax/2) when ``huge`` (|z|^2 overflows the dtype: abs and reciprocal
    must scale; a record of one input), else to 2^(emax/4) (a product of two huge moduli would overflow the dtype itself, where
    the float64 reference has no more range than complex128).
    Then each element is given, with equal chances, one of the shapes complex functions treat
    apart: purely real (imaginary part +0 or -0), purely imaginary (real part +0 or -0), on the
    branch cut of log/sqrt (negative real part, imaginary part +0 or -0), just off it (imaginary
    part of either sign at the smallest normal magnitude), or left as drawn (two of six)."""
    from conformance.case import PART_DTYPE
    from conformance.ops import _seed_draw, real_values
    from reference.errors import LARGEST, SMALLEST_NORMAL

    part = PART_DTYPE[dtype]
    if seed:
        re, im = _seed_draw(rng, shape, part), _seed_draw(rng, shape, part)
    else:
        re, im = real_values(rng, shape, kind, part), real_values(rng, shape, kind, part)
        if kind == "large":
            big = 2.0 ** (np.floor(np.log2(LARGEST[part])) // (2 if huge else 4) + 1) / 60.0
            re, im = re * big, im * big
    how = rng.integers(0, 6, shape)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    tiny = SMALLEST_NORMAL[part] * rng.uniform(1, 4, shape)
    im = np.where(how == 0, np.copysign(0.0, sign), im)  # purely real
    re = np.where(how == 1, np.copysign(0.0, sign), re)  # purely imaginary
    re = np.where((how == 2) | (how == 3), -np.abs(re), re)  # the negative real axis ...
    im = np.where(how == 2, np.copysign(0.0, sign), im)  # ... on the cut, either side
    im = np.where(how == 3, sign * tiny, im)  # ... just off it
    out = np.empty(np.shape(re), dtype=np.complex128)
    out.real, out.imag = re, im  # (re + 1j*im would make inf*0j a nan)
    return out


_REASON = (
    "a conversion between real and complex storage or a conjugation: reached through the gradients of "
    "the complex-capable records (COMPLEX_RECORDS), not fuzzed on its own yet; checked against torch in "
    "tests/autograd/test_torch_complex.py and against JAX in tests/autograd/test_complex_jax.py"
)

for _name in ("view_as_real", "view_as_complex", "conj", "conj_physical", "angle", "complex", "polar"):
    not_fuzzed(_name, "complex", _REASON)
not_fuzzed(
    "_neg_view",
    "complex",
    "the negative-bit view (torch._neg_view) is reached only through imag() of a conjugate view; "
    "checked against torch in tests/autograd/test_torch_conj_view.py",
)
