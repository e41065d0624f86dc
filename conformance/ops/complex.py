"""Complex numbers in the op records: which records run in complex64/complex128, how their complex
inputs are drawn, and the records of the complex-number primitives (reference.ops.rules.complex).

A record listed in :data:`COMPLEX_RECORDS` is *complex-capable*: its cases may have dtype
``complex64`` or ``complex128`` (``--dtypes complex64,complex128``), its inputs, cotangents and
tangents are then complex, drawn by :func:`conformance.ops.complex_draw`, and its results are judged against the
reference (PyTorch's convention, docs/complex.md) with the complex error model of
``reference.errors.complex``. Each framework's gradients are mapped to that convention by the
harness (``conformance.ops._run``: JAX's cotangents and gradients conjugated, TensorFlow's taken as
they are, as measured in tests/conformance/test_complex_records.py). Every other record keeps the
real dtypes only: asking for a complex dtype on it is reported (``conformance run`` says which
records it skipped, and exits 2 when nothing is left).

The primitives below (views between real and complex storage, conj, angle, complex, polar) have
records of their own in the complex dtypes only (:data:`COMPLEX_ONLY`; their real inputs drawn in
the part dtype: :data:`REAL_INPUTS`); also checked against PyTorch in
tests/autograd/test_torch_complex.py and against JAX in tests/autograd/test_complex_jax.py.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance.case import arrays_for, case_data
from conformance.nonfinite import c99_class
from conformance.ops import COMPLEX_ONLY, COMPLEX_RECORDS, PLANE_POINTS, REAL_INPUTS, not_fuzzed, record
from conformance.ops._domains import PlanePoint, cut_sides
from conformance.strategies import broadcast_shapes, tensor_shapes, value_kinds
from conformance.tolerance import element_ratios

#: The complex-capable records (record name -> what the complex cases reach). Each is defined on
#: the whole complex plane in all three frameworks, with the same spelling as its real cases.
COMPLEX_RECORDS.update(
    {
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
)

#: Records added by the second complex slice (issue 34), by family: each one's rules accept complex
#: tensors in the reference (reference.ops.rules.complex) and its spellings in all its frameworks.
#: Not yet: the records whose masks compare complex values (masked_fill, where). (acosh, the
#: decompositions and FFT joined in later slices, below.)
COMPLEX_RECORDS.update(
    {
        # holomorphic elementwise functions (the plane, whatever the record's real domain)
        "tan": "tan z = -i tanh(iz): poles at (k + 1/2)pi",
        "asin": "branch cuts on the real axis beyond +-1, both signs of a zero imaginary part",
        "acos": "branch cuts on the real axis beyond +-1",
        "atan": "branch cuts on the imaginary axis beyond +-i",
        "asinh": "branch cuts on the imaginary axis beyond +-i",
        "atanh": "branch cuts on the real axis beyond +-1",
        "expm1": "exp(z) - 1 near 0",
        "log1p": "log(1 + z): the cut below -1",
        "log2": "log z / log 2",
        "log10": "log z / log 10",
        "rsqrt": "1/sqrt(z): the cut of sqrt",
        "sigmoid": "1/(1 + exp(-z)): poles at i(2k + 1)pi",
        "sgn": "z/|z| (not holomorphic), 0 at 0",
        "rsub": "other - alpha * z",
        "clone": "a copy",
        "addcmul": "input + value * t1 * t2",
        "addcdiv": "input + value * t1 / t2",
        "lerp": "input + weight * (end - input), real weight",
        # reductions and scans
        "sum_dim": "complex sums along dims",
        "mean_dim": "complex means along dims",
        "prod": "complex products (holomorphic: prod / z_i, zeros through the cofactor rule)",
        "prod_dim": "complex products along a dim",
        "cumsum": "complex prefix sums",
        "cumprod": "complex prefix products",
        "var": "a real result of complex input: mean |z - mean|^2",
        "std": "a real result of complex input",
        "linalg_vector_norm": "a real norm of the moduli (every ord; sgn(z) in the gradient)",
        # products
        "addmm": "beta * input + alpha * mat1 @ mat2 (complex)",
        "addmv": "complex matrix-vector products with an added input",
        "addr": "complex outer products (no conjugation)",
        "baddbmm": "batched complex products with an added input",
        "addbmm": "batched complex products summed",
        "trace": "the sum of a complex diagonal",
        "vdot": "the conjugating inner product sum(conj(a) b) (not holomorphic in a)",
        # linear algebra (holomorphic: det, inv, solve; slogdet's sign and logabsdet are not)
        "linalg_det": "complex determinants (LU with |re| + |im| pivots)",
        "linalg_inv": "complex inverses",
        "linalg_solve": "complex solves A X = B",
        # the third slice: decompositions (gauge-invariant programs: |v|^2, U Vh) and factorizations
        "linalg_eigh": "x + x^H: real eigenvalues, eigenvectors up to a phase (the program reads |v|^2)",
        "linalg_svd": "real singular values, U and V up to a common phase per triplet (|u|^2 S, U Vh)",
        "linalg_qr": "R's diagonal real (LAPACK's convention): Q and R unique",
        "linalg_slogdet": "logabsdet of a complex matrix (real)",
        "linalg_solve_triangular": "complex triangular solves",
        "linalg_cholesky_ex": "A A^H + n I: Hermitian positive-definite; upper = L^H",
        "cholesky": "A A^H + n I (the deprecated torch.cholesky)",
        "cholesky_solve": "L L^H X = B",
        "cholesky_inverse": "(L L^H)^-1",
        # the fourth slice: LU, pinv, lstsq, the general eigendecomposition, acosh
        "linalg_lu_factor_ex": "the packed LU factors (zgetrf: pivots of largest |re| + |im|)",
        "linalg_lu": "U of a complex LU",
        "linalg_lu_solve": "lu_factor then lu_solve; adjoint=True solves with A^H (conjugated)",
        "linalg_pinv": "the pseudo-inverse (hermitian=True: of x + x^H, through eigh)",
        "linalg_lstsq": "the minimum-norm least-squares solution of complex systems",
        "linalg_eig": "complex eigenvalues, eigenvectors up to a phase (|v|^2 L and L^2 summed, both parts)",
        "acosh": "the cut on the real axis below 1, both signs of a zero imaginary part",
        # shape and layout (exact, linear)
        "expand": "a view, exact",
        "permute": "a view, exact",
        "reshape_copy": "a copy, exact",
        "select": "a view, exact",
        "slice": "a view, exact",
        "split": "views, exact",
        "squeeze": "a view, exact",
        "squeeze_dim": "a view, exact",
        "transpose": "a view, exact",
        "unbind": "views, exact",
        "unsqueeze": "a view, exact",
        "view": "a view, exact",
        "flip": "a copy, exact",
        "roll": "a copy, exact",
        "repeat": "a copy, exact",
        "tril": "a copy with zeros, exact",
        "triu": "a copy with zeros, exact",
        "narrow_copy": "a copy, exact",
        "constant_pad_nd": "a copy padded with a real constant",
        "gather": "a gather, exact",
        "index_select": "a gather, exact",
        "take_index": "a gather, exact",
        "scatter_add_dim": "a scatter with complex additions",
    }
)

#: complex8 (issue 34): the rest of the shape, gather and indexing records whose primitives accept
#: complex tensors (reference.ops.rules: shape, shape_ops and indexing COMPLEX_INPUTS = True, gather's
#: names) and whose spellings are the same for complex values. Left out: scatter_reduce (its record
#: draws amax/amin, which PyTorch does not define on complex numbers).
COMPLEX_RECORDS.update(
    {
        "diagonal": "a view, exact",
        "diagonal_copy": "a copy, exact",
        "diag_embed": "a copy with zeros, exact",
        "rot90": "a copy, exact",
        "select_scatter": "a slice written, exact",
        "slice_scatter": "a slice written, exact",
        "diagonal_scatter": "a diagonal written, exact",
        "block_diag": "blocks with zeros, exact",
        "unfold": "overlapping windows (the VJP adds the overlaps)",
        "scatter": "a scatter, exact",
        "scatter_value": "a real number written into a complex tensor",
        "index_add": "complex additions, a real alpha",
        "index_copy": "a copy, exact",
        "index_fill": "a real number written into a complex tensor",
        "index_fill_tensor": "a complex 0-d value written (its gradient sums the places')",
        "masked_select": "a gather, exact",
        "masked_scatter": "a scatter, exact",
        "put_index": "Tensor.put: complex additions with accumulate",
        "index": "a gather, exact",
        "index_put": "complex additions with accumulate",
        "take": "a gather with duplicates (the VJP adds them)",
        "put": "a scatter, exact",
    }
)


#: The complex-only records (the transforms): complex inputs or outputs whatever the input dtype.
COMPLEX_ONLY.update(
    {
        "fft": "the DFT of a complex signal: fft_c2c, both signs of the zero's imaginary part kept",
        "ifft": "the inverse DFT: fft_c2c",
        "fftn": "fftn / ifftn over two dims: fft_c2c",
        "rfft": "the half spectrum of a real signal: fft_r2c (a real input, a complex output)",
        "ihfft": "conj(rfft) with the inverse's scale: fft_r2c",
        "irfft": "a real signal from a Hermitian half spectrum: fft_c2r (not holomorphic)",
        "hfft": "irfft of the conjugate: fft_c2r",
    }
)
COMPLEX_RECORDS.update(COMPLEX_ONLY)
# rfft of a complex tensor is an error in every framework: its signal is drawn real
REAL_INPUTS.update({"rfft": ("input",), "ihfft": ("input",)})


# ---- the hard points of the complex records' arguments (issue 32; conformance.ops._domains.PlanePoint)
# The reach sweep draws each in the complex dtypes, at it and near it (both sides of each branch cut,
# the zero part's sign deciding the side: C99 Annex G's, PyTorch's convention); labels start with
# "z " so that the reach table's rows of complex cases stay apart from the real domain's.
PI = np.pi
#: log, log2, log10, sqrt, rsqrt, angle: the branch point 0 (log's and rsqrt's pole, sqrt's
#: derivative's, the origin of arg) and the cut along the negative real axis
_CUT_NEGATIVE = (PlanePoint("z branch 0", 0), *cut_sides("z cut (-inf, 0)", 0, -1))
#: asin, acos, atanh: branch points +-1 (atanh's logarithmic poles), the cuts beyond them on the real axis
_CUTS_BEYOND_1 = (PlanePoint("z branch 1", 1), PlanePoint("z branch -1", -1),
                  *cut_sides("z cut (1, inf)", 1, 1), *cut_sides("z cut (-inf, -1)", -1, -1))  # fmt: skip
#: asinh, atan: branch points +-i (atan's logarithmic poles), the cuts beyond them on the imaginary axis
_CUTS_BEYOND_I = (PlanePoint("z branch i", 1j), PlanePoint("z branch -i", -1j),
                  *cut_sides("z cut (i, i inf)", 1j, 1j), *cut_sides("z cut (-i inf, -i)", -1j, -1j))  # fmt: skip
#: a divisor: the zero divisor (1/z's pole)
_ZERO_DIVISOR = (PlanePoint("z pole 0", 0),)
PLANE_POINTS.update(
    {
        "log": {"input": _CUT_NEGATIVE},
        "log2": {"input": _CUT_NEGATIVE},
        "log10": {"input": _CUT_NEGATIVE},
        "sqrt": {"input": _CUT_NEGATIVE},
        "rsqrt": {"input": _CUT_NEGATIVE},
        "angle": {"input": _CUT_NEGATIVE},
        # log1p(z) = log(1 + z): the branch point -1 and the cut below it
        "log1p": {"input": (PlanePoint("z branch -1", -1), *cut_sides("z cut (-inf, -1)", -1, -1))},
        "asin": {"input": _CUTS_BEYOND_1},
        "acos": {"input": _CUTS_BEYOND_1},
        "atanh": {"input": _CUTS_BEYOND_1},
        # acosh(z) = log(z + sqrt(z + 1) sqrt(z - 1)): branch points +-1, one cut along (-inf, 1)
        "acosh": {"input": (PlanePoint("z branch 1", 1), PlanePoint("z branch -1", -1),
                            *cut_sides("z cut (-inf, 1)", 1, -1))},  # fmt: skip
        "asinh": {"input": _CUTS_BEYOND_I},
        "atan": {"input": _CUTS_BEYOND_I},
        "reciprocal": {"input": _ZERO_DIVISOR},
        "div": {"other": _ZERO_DIVISOR},
        "addcdiv": {"tensor2": _ZERO_DIVISOR},
        # |z|, z/|z|: the origin, where the modulus is not differentiable and sgn's rule is 0
        "abs": {"input": (PlanePoint("z origin 0", 0),)},
        "sgn": {"input": (PlanePoint("z origin 0", 0),)},
        # the poles: tan at (k + 1/2) pi, tanh at i (k + 1/2) pi, sigmoid at i (2k + 1) pi
        "tan": {"input": (PlanePoint("z pole pi/2", PI / 2), PlanePoint("z pole -pi/2", -PI / 2))},
        "tanh": {"input": (PlanePoint("z pole i pi/2", 1j * PI / 2), PlanePoint("z pole -i pi/2", -1j * PI / 2))},
        "sigmoid": {"input": (PlanePoint("z pole i pi", 1j * PI), PlanePoint("z pole -i pi", -1j * PI))},
    }
)


#: The choice C99 Annex G and the textbook formulas make differently (docs/complex.md, "Non-finite
#: parts"): the name of the convention a complex result is judged by where only it differs.
NONFINITE = "complex-nonfinite-arithmetic"
NONFINITE_ALTERNATIVES = (
    "C99 Annex G (an infinity times a nonzero number or divided into a finite one is recovered as an "
    "infinity or a zero: libgcc's __muldc3/__divdc3, XLA's complex division), or the textbook formulas "
    "((ac - bd) + i(ad + bc), Smith's division: NumPy's, c10::complex's, BLAS's), or another order of a "
    "sum of infinite terms"
)


def nonfinite_decided(case, check, parts_out, parts_expected, outputs, values):
    """Per output, the parts the bounds reject that the complex non-finite convention decides, and
    whether it decides every rejected part: ``({name: mask over the parts}, all)``, or None where an
    output cannot be compared (missing, another shape).

    On the extended complex plane infinity is one point, and sums and products with it (inf - inf,
    0 * inf, inf + nan j times a finite number) have no value the mathematics fixes: which class the
    result has (an infinity, a NaN, or a finite number recovered from an infinity) is the complex
    arithmetic's choice (:data:`NONFINITE_ALTERNATIVES`). An element is decided by that choice when
    the reference's value and the framework's are of different C99 classes and either both are
    non-finite, or the reference's is a NaN, the framework's finite and an array the check reads has an
    infinite part (Annex G's recovery: 1 / (inf + nan j) = 0). A finite reference value answered with
    an infinity or a NaN, or any finite value outside its bound, is not decided."""
    data = case_data(case)
    infinite_input = any(np.any(c99_class(data[n]) == 2) for n in arrays_for(case, check) if np.size(data[n]))
    masks, every = {}, True
    for name, (value, bound) in parts_expected.items():
        obs = parts_out.get(name)
        if value is None or obs is None or np.shape(obs) != np.shape(value):
            return None
        rejected = element_ratios(obs, value, bound) > 1.0
        if not rejected.any():
            continue
        ref, got = np.asarray(values[name]) + 0j, np.asarray(outputs[name]) + 0j
        if np.shape(ref) != np.shape(got):
            return None
        cr, co = c99_class(ref), c99_class(got)
        by_choice = (cr != co) & (((cr > 0) & (co > 0)) | ((cr == 1) & (co == 0) & infinite_input))
        if np.ndim(value) > np.ndim(ref):  # the parts axis: an element's parts decided together
            by_choice = np.broadcast_to(by_choice[..., None], np.shape(value))
        masks[name] = rejected & by_choice
        every = every and bool(np.all(by_choice[rejected]))
    return masks, every


def nonfinite_convention(case, check, parts_out, parts_expected, outputs, values):
    """The complex non-finite convention (:func:`nonfinite_decided`), when it decides every element
    the bounds reject, or None. A finite reference value answered with an infinity or a NaN, or any
    finite value outside its bound, stays a failure."""
    got = nonfinite_decided(case, check, parts_out, parts_expected, outputs, values)
    if got is None or not got[1]:
        return None
    masks = got[0]
    # an element is decided when a part is (the parts axis is the last)
    decided = sum(
        int(m.any(axis=-1).sum()) if np.ndim(m) > np.ndim(values[n]) else int(m.sum()) for n, m in masks.items()
    )
    if not decided:
        return None
    return {
        "conventions": [{"name": NONFINITE, "alternative": NONFINITE_ALTERNATIVES, "elements": decided}],
        "reason": f"differs from the reference only where a declared convention leaves the choice open: "
        f"{NONFINITE} ({decided} element(s) of another C99 class than the reference's, from infinite or "
        "NaN parts)",
    }


# ---- the records of the complex-number primitives (complex dtypes only) -----------------------------


@st.composite
def _unary(draw, last=None):
    shape = draw(tensor_shapes(0, 3, 256))
    if last is not None:  # view_as_complex: a trailing dim of the two parts
        shape = (*shape, last)
    return {"values": draw(value_kinds(_KINDS))}, {"input": shape}


def _binary(names, kinds=None):
    @st.composite
    def sample(draw):
        a, b = draw(broadcast_shapes())
        return {"values": draw(value_kinds(kinds or _KINDS))}, dict(zip(names, (a, b)))

    return sample


_KINDS = ("normal", "wide", "ties", "large", "tiny", "nonfinite")
#: torch.polar is undefined for a negative or NaN abs and an infinite angle (its documentation): the
#: abs is drawn >= 0 (``domains``), and no non-finite kind
_POLAR_KINDS = ("normal", "wide", "ties", "large", "tiny")


def _parts(m, x):
    """view_as_real's (re, im) pairs: a last dim of 2 (JAX's and TensorFlow's spelling)."""
    return (
        m.stack([m.real(x), m.imag(x)], -1)
        if m.__name__ != "tensorflow"
        else m.stack([m.math.real(x), m.math.imag(x)], -1)
    )


def _primitive(
    name, fn, jax, tf, rules=None, inputs=("input",), sample=None, real_inputs=(), note="", domains=None
):
    COMPLEX_ONLY[name] = note
    COMPLEX_RECORDS[name] = note
    if real_inputs:
        REAL_INPUTS[name] = real_inputs
    record(
        name, "complex", rules=rules or (name,), inputs=inputs, sample=sample or _unary, fn=fn, jax=jax, tf=tf,
        note=note, domains=domains or {},
    )  # fmt: skip


# angle, real, imag: one function of the same name in each framework (tf.math's)
for _name, _rules, _note in (
    ("angle", None, "arg z = atan2(Im z, Re z): a real result, the cut's zero sign decides +-pi"),
    ("real", ("view_as_real", "select"), "x.real: select(view_as_real(x), -1, 0), a real view"),
    ("imag", ("view_as_real", "select"), "x.imag: select(view_as_real(x), -1, 1), a real view"),
):
    _primitive(
        _name,
        lambda T, x, f=_name: getattr(T, f)(x),
        lambda J, x, f=_name: getattr(J.jnp, f)(x),
        lambda tf, x, f=_name: getattr(tf.math, f)(x),
        rules=_rules,
        note=_note,
    )
_primitive(
    "view_as_real",
    lambda T, x: T.view_as_real(x),
    lambda J, x: _parts(J.jnp, x),
    lambda tf, x: _parts(tf, x),
    note="the (re, im) pairs of a complex tensor, a real view (JAX, TF: stacked parts)",
)
_primitive(
    "view_as_complex",
    lambda T, x: T.view_as_complex(x),
    lambda J, x: J.lax.complex(x[..., 0], x[..., 1]),
    lambda tf, x: tf.complex(x[..., 0], x[..., 1]),
    sample=lambda: _unary(2),
    real_inputs=("input",),
    note="a complex view of (re, im) pairs of a real tensor (JAX, TF: complex of the parts)",
)
_primitive(
    "conj",
    lambda T, x: T.conj(x),
    lambda J, x: J.jnp.conj(x),
    lambda tf, x: tf.math.conj(x),
    note="the lazy conjugate view (PyTorch; resolved to read it)",
)
_primitive(
    "conj_physical",
    lambda T, x: T.conj_physical(x),
    lambda J, x: J.jnp.conj(x),
    lambda tf, x: tf.math.conj(x),
    note="a conjugated copy",
)
_primitive(
    "complex",
    lambda T, re, im: T.complex(re, im),
    lambda J, re, im: J.lax.complex(*J.jnp.broadcast_arrays(re, im)),  # (lax.complex does not broadcast)
    lambda tf, re, im: tf.complex(re, im),
    inputs=("real", "imag"),
    sample=_binary(("real", "imag")),
    real_inputs=("real", "imag"),
    note="re + i im of two real tensors (broadcast), the parts kept exactly",
)
_primitive(
    "polar",
    lambda T, r, theta: T.polar(r, theta),
    lambda J, r, theta: J.lax.complex(r * J.jnp.cos(theta), r * J.jnp.sin(theta)),
    lambda tf, r, theta: tf.complex(r * tf.math.cos(theta), r * tf.math.sin(theta)),
    inputs=("abs", "angle"),
    sample=_binary(("abs", "angle"), _POLAR_KINDS),
    domains={"abs": "pos"},
    real_inputs=("abs", "angle"),
    note="abs (cos angle + i sin angle) of two real tensors (JAX, TF: spelled with cos and sin)",
)
not_fuzzed(
    "_neg_view",
    "complex",
    "the negative-bit view (torch._neg_view) is reached only through imag() of a conjugate view; "
    "checked against torch in tests/autograd/test_torch_conj_view.py",
)
