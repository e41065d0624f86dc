"""Records of the Bessel functions (reference/ops/rules/special.py): torch.special.bessel_j0,
bessel_j1, bessel_y0, bessel_y1, modified_bessel_k0, modified_bessel_k1.

TensorFlow differentiates all six (tf.math.special.bessel_*, its registered gradients); JAX has
J0 and J1 only, through jax.scipy.special.bessel_jn (a recurrence; no Y or K); PyTorch computes them
but gives them no derivative: their results do not require grad, so a program that adds them to a
differentiable term gets a silently wrong gradient (the term counted as a constant), and
differentiating them alone raises. Its spelling runs the forward checks only (:func:`_torch`)."""

from __future__ import annotations

import math

from conformance.ops import _domains as D
from conformance.ops import not_fuzzed, record
from conformance.ops._run import refuses
from conformance.ops.elementwise import _unary

FAMILY = "special"

#: finite value kinds: at ±inf PyTorch's bessel_j0/j1/y0/y1 say nan where the limit is 0
#: (docs/records.md)
_FINITE = ("normal", "wide", "ties", "large", "tiny")

# the first zeros of each function (relative accuracy there), the pole of Y and K at 0
_J0 = D.domain("whole line: J0", -math.inf, math.inf, D.Point("zero 2.40483", 2.404825557695773),
               D.Point("zero 5.52008", 5.520078110286311), gate="any")  # fmt: skip
_J1 = D.domain("whole line: J1", -math.inf, math.inf, D.Point("zero 0", 0.0),
               D.Point("zero 3.83171", 3.8317059702075125), gate="any")  # fmt: skip
_Y0 = D.domain("(0, inf): Y0", 0.0, math.inf, D.Point("pole 0", 0.0, "above"),
               D.Point("zero 0.893577", 0.8935769662791675), D.Point("zero 3.95768", 3.957678419314858),
               gate="pos")  # fmt: skip
_Y1 = D.domain("(0, inf): Y1", 0.0, math.inf, D.Point("pole 0", 0.0, "above"),
               D.Point("zero 2.19714", 2.197141326031017), gate="pos")  # fmt: skip
_K = D.domain("(0, inf): K", 0.0, math.inf, D.Point("pole 0", 0.0, "above"), gate="pos")

_NO_TORCH_DERIVATIVE = (
    "PyTorch gives torch.special.{} no derivative (its result does not require grad: autograd raises "
    "'element 0 of tensors does not require grad', and in a larger program the term is silently a "
    "constant); the forward checks run"
)


def _torch(name):
    def no_derivative(case, check):
        return None if check in ("forward", "vmap", "error") else _NO_TORCH_DERIVATIVE.format(name)

    @refuses(no_derivative)
    def fn(T, x):
        from conformance.functional import Unsupported

        if x.dtype in (T.bfloat16, T.float16):  # CPU: "<name>_cpu" not implemented for 'Half', 'BFloat16'
            raise Unsupported(f"torch (CPU) has no float16 or bfloat16 {name} kernel")
        return getattr(T.special, name)(x)

    return fn


def _tf(op):
    def fn(tf, x):
        from conformance.functional import Unsupported

        if x.dtype == tf.bfloat16:  # no BesselJ0 ... kernel registered for DT_BFLOAT16
            raise Unsupported(f"tf.math.special.{op} has no bfloat16 kernel")
        return getattr(tf.math.special, op)(x)

    return fn


def _jax_jn(n):
    def fn(J, x):
        import jax.scipy.special

        return jax.scipy.special.bessel_jn(x, v=1)[n]  # rows J0, J1 of the recurrence

    return fn


_NO_JAX = "JAX has no {} (jax.scipy.special: i0, i0e, i1, i1e and bessel_jn, J of integer order)"

for _name, _tf_name, _jax, _domain in (
    ("bessel_j0", "bessel_j0", _jax_jn(0), _J0),
    ("bessel_j1", "bessel_j1", _jax_jn(1), _J1),
    ("bessel_y0", "bessel_y0", _NO_JAX.format("Y0"), _Y0),
    ("bessel_y1", "bessel_y1", _NO_JAX.format("Y1"), _Y1),
    ("modified_bessel_k0", "bessel_k0", _NO_JAX.format("K0"), _K),
    ("modified_bessel_k1", "bessel_k1", _NO_JAX.format("K1"), _K),
):
    record(
        _name,
        FAMILY,
        inputs=("input",),
        sample=_unary(_FINITE),
        fn=lambda T, x, name=_name: getattr(T.special, name)(x),
        torch=_torch(_name),
        jax=_jax,
        tf=_tf(_tf_name),
        domains={"input": _domain},
    )

# the derivative primitive all six share (reference.ops.rules.special.bessel_derivative)
not_fuzzed(
    "bessel_derivative",
    FAMILY,
    "internal: the exact k-th derivative of a Bessel function; reached by the six Bessel records' vjp, "
    "vjp_vjp, jvp, the second-order forward checks and vmap_vjp",
)

#: The differentiable special functions of torch.special, jax.scipy.special / jax.nn and tf.math /
#: tf.math.special that have no record yet, each with why (docs/records.md renders this table).
MISSING = {
    "scaled_modified_bessel_k0, scaled_modified_bessel_k1 (torch.special; tf.math.special.bessel_k0e, "
    "bessel_k1e)": "their derivatives e^x (K0 - K1) and e^x (K1 - K0 - K1/x) cancel by log2(2x) bits: an "
    "exact kernel needs mpmath at a precision growing with log10 x (mpmath's besselk takes seconds per "
    "element near x = 30) or the termwise derivative of the asymptotic series; not written yet",
    "gammainc, gammaincc (torch.special; jax.scipy.special; tf.math.igamma, igammac)": "not written yet: "
    "the derivative in x is x^(a-1) e^(-x) / Gamma(a); in a it has no closed form (mpmath.diff of the "
    "elements), and PyTorch raises 'the derivative for igamma: input is not implemented' there while "
    "JAX and TensorFlow differentiate it",
    "zeta (torch.special.zeta; jax.scipy.special.zeta; tf.math.zeta)": "not written yet: d/dq zeta(s, q) = "
    "-s zeta(s + 1, q); PyTorch has no derivative in s ('the derivative for zeta is not implemented'), "
    "TensorFlow none either (None), JAX one",
    "betainc (jax.scipy.special.betainc; tf.math.betainc; torch has none)": "not written yet: d/dx = "
    "x^(a-1) (1-x)^(b-1) / B(a, b); JAX raises for a and b, TensorFlow gives None",
    "modified_bessel_i0, modified_bessel_i1, spherical_bessel_j0, airy_ai (torch.special)": "PyTorch "
    "gives them no derivative (results that do not require grad) and JAX and TensorFlow have no other "
    "spelling of the last two: a record would run the forward checks only; i0/i1 are records already "
    "(torch.special.i0, i1), these would be further PyTorch spellings of them",
    "chebyshev_polynomial_*, hermite_polynomial_*, laguerre_polynomial_l, legendre_polynomial_p "
    "(torch.special)": "no derivative in PyTorch and no JAX or TensorFlow function: nothing to "
    "differentiate against",
    "dawsn, expi, exp1, expn, spence, fresnel, sici, hyp1f1, hyp2f1, owens_t, wofz, gamma, gammasgn, "
    "loggamma, beta, betaln, poch, boxcox, boxcox1p, kl_div, rel_entr (jax.scipy.special; tf.math.special "
    "dawsn, expint, fresnel_cos, fresnel_sin, spence)": "not written yet: each needs an exact kernel "
    "(mpmath has every one), its derivative rule and a record",
}
