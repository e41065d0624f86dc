"""Records of the pointwise primitives (reference/ops/rules/pointwise.py): trigonometric and
hyperbolic functions, special functions, rounding, binary pointwise ops, lerp/addcmul/addcdiv,
the clamp variants."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import RECORDS, not_fuzzed, record
from conformance.ops import _domains as D
from conformance.ops._conventions import (
    UNBOUNDED_DERIVATIVE_BY_ELEMENT,
    Alternative,
    Convention,
    any_equal_pair,
    any_nan,
    any_zero,
    at_params,
    away_from_nan,
    nan_mask,
)
from conformance.ops.elementwise import SIGN_OF_NAN, _binary, _unary
from conformance.strategies import broadcast_shapes, value_kinds
from conformance.unsupported import Unsupported

FAMILY = "pointwise"

_NO_TF = "TensorFlow has no {} op"
_NO_JAX = "JAX has no {} function"
#: Rounding-like ops: piecewise constant, their gradient is zero (vjp/jvp are checked to be zero).
_FINITE = ("normal", "wide", "ties", "large", "tiny")


def _jsp(J):
    import jax.scipy.special

    return jax.scipy.special


def unary(name, fn, jax=None, tf=None, domain="any", values=None, params=None, conventions=(), **kw):
    record(
        name,
        FAMILY,
        inputs=("input",),
        sample=_unary(values, **(params or {})),
        fn=fn,
        jax=jax,
        tf=tf,
        domains={"input": domain},
        # elementwise: a pole of the derivative is judged element by element beside non-finite inputs
        conventions=(*conventions, UNBOUNDED_DERIVATIVE_BY_ELEMENT),
        **kw,
    )


def binary(name, fn, jax, tf, domains=None, values=None, **kw):
    record(
        name,
        FAMILY,
        inputs=("input", "other"),
        sample=_binary(values),
        fn=fn,
        jax=jax,
        tf=tf,
        domains=domains or {},
        **kw,
    )



def _copysign_gradient_at_zero(sign_source):
    """copysign's derivative at self = ±0, a kink of ±|x|: PyTorch's 0, or JAX's ±1 (the sign of
    the zero times the sign of ``sign_source(T, x, other)``, the operand whose sign is copied)."""

    def the_sign_of_the_zero(T, x, other):
        signs = T.copysign(T.ones_like(x), x) * T.copysign(T.ones_like(x), sign_source(T, x, other))
        return T.where(x == 0, x * signs.detach(), T.copysign(x, other))

    return Convention(
        "copysign-gradient-at-zero",
        "copysign's derivative at self = ±0 (a kink of ±|x|): PyTorch's copysign_tensor_self_backward gives 0",
        any_zero,
        (
            Alternative(
                "the-sign-of-the-zero",
                the_sign_of_the_zero,
                "JAX: jnp.copysign's JVP is select(signbit(x) == signbit(other), t, -t), ±1 at a signed zero",
            ),
        ),
    )


def _halved_at_the_bound(name, bound, half, whole="the whole gradient to x"):
    """clamp's subgradient where x equals a bound: PyTorch gives x the whole gradient (min <= x <=
    max); jnp.maximum / jnp.minimum (what JAX spells clamp with) halve it between x and the bound.
    At a NaN the alternative keeps the record's own choice (its NaN convention decides there)."""
    def half_away_from_nan(T, *xs, **params):
        return away_from_nan(half, RECORDS[name].fn)(T, *xs, **params)

    return Convention(
        f"{name}-gradient-at-the-bound",
        f"{name}'s subgradient where x equals the bound (a kink): PyTorch gives {whole}",
        bound,
        (
            Alternative(
                "half", half_away_from_nan, "JAX: jnp.maximum/jnp.minimum halve the gradient at a tie"
            ),
        ),
    )


def _to_the_bound_at_nan(name, op):
    """clamp with tensor bounds where an operand is NaN (the output is NaN): PyTorch's backward gives
    neither operand a gradient; TensorFlow's _MaximumGrad/_MinimumGrad and PyTorch's own forward-mode
    formula for clamp_min/clamp_max give the bound the whole of it, PyTorch's forward-mode clamp the
    input."""

    def routed(to_input):
        def fn(T, x, y):
            value = op(T, x, y)
            z = x if to_input else y
            return T.where(nan_mask(T, x, y), value.detach() + (z - z.detach()), value)

        return fn

    return Convention(
        f"{name}-gradient-at-nan",
        f"{name}'s derivative where an operand is NaN: PyTorch's backward gives neither operand any",
        any_nan,
        (
            Alternative(
                "to-the-bound",
                routed(False),
                "TensorFlow (x >= y is false for NaN) and torch.func.jvp of clamp_min/clamp_max: the bound",
            ),
            Alternative(
                "to-the-input", routed(True), "torch.func.jvp of clamp with tensor bounds: the input"
            ),
        ),
    )


def _at_a_tensor_bound(np_, inputs, params) -> bool:
    """clamp(x, y, y + 1)'s kinks: x == y, or x == y + 1 (as the dtype rounds it: within an ulp)."""
    x, y = np_.broadcast_arrays(inputs["input"], inputs["other"])
    hi = y + 1
    return bool(((x == y) | (np_.abs(x - hi) <= np_.spacing(np_.abs(hi)) * 2**29)).any())


def _simple(name, torch_name, jnp_name, tf_name, domain="any", values=None, **kw):
    """A one-argument op spelled T.<torch_name>, jnp/jax.scipy.special <jnp_name>, tf.math.<tf_name>."""

    def get(T, path):
        if path.startswith("jax.scipy"):
            return getattr(_jsp(T), path.rsplit(".", 1)[1])
        obj = T
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj

    def is_path(spelling):  # "tf.math.erf" (a spelling), not a sentence saying why there is none
        return bool(spelling) and "." in spelling and " " not in spelling

    unary(
        name,
        lambda T, x: get(T, torch_name)(x),
        jax=(lambda J, x: get(J, jnp_name)(x)) if is_path(jnp_name) else (jnp_name or _NO_JAX.format(name)),
        tf=(lambda tf, x: get(tf, tf_name)(x)) if is_path(tf_name) else (tf_name or _NO_TF.format(name)),
        domain=domain,
        values=values,
        **kw,
    )


# trigonometric and hyperbolic
for _n, _dom in (
    ("sin", D.SIN), ("cos", D.COS), ("tan", D.TAN), ("asin", D.ASIN), ("acos", D.ACOS),
    ("atan", D.ZERO_AT_0), ("sinh", D.ZERO_AT_0), ("cosh", D.EVEN_AT_0), ("asinh", D.ZERO_AT_0),
    ("atanh", D.ATANH),
):  # fmt: skip
    _simple(_n, _n, f"jnp.{'arc' + _n[1:] if _n.startswith('a') and _n != 'a' else _n}", f"math.{_n}", _dom)
_simple("acosh", "acosh", "jnp.arccosh", "math.acosh", D.ACOSH, values=("normal", "wide", "ties"))
_simple("log1p", "log1p", "jnp.log1p", "math.log1p", D.LOG1P)
_simple("expm1", "expm1", "jnp.expm1", "math.expm1", D.ZERO_AT_0)
_simple("log2", "log2", "jnp.log2", None, D.LOG)
_simple("log10", "log10", "jnp.log10", None, D.LOG)
_simple("exp2", "exp2", "jnp.exp2", None)
_simple("rsqrt", "rsqrt", "lax.rsqrt", "math.rsqrt", D.SQRT)
_simple("deg2rad", "deg2rad", "jnp.deg2rad", None)
_simple("rad2deg", "rad2deg", "jnp.rad2deg", None)
_simple("sinc", "sinc", "jnp.sinc", None, D.SINC, values=("normal", "ties", "tiny"))
_simple("erf", "erf", "jax.scipy.special.erf", "math.erf", D.ZERO_AT_0)
_simple("erfc", "erfc", "jax.scipy.special.erfc", "math.erfc")


def _torch_erfcx(T, x):
    if x.dtype in (T.bfloat16, T.float16):  # CPU: "erfcx_cpu" not implemented for 'Half', 'BFloat16'
        raise Unsupported("torch (CPU) has no float16 or bfloat16 erfcx kernel")
    return T.special.erfcx(x)


# TensorFlow has no erfcx (tf.math has erf, erfc, erfinv, erfcinv; tf.math.special none).
_simple(
    "erfcx",
    "special.erfcx",
    "jax.scipy.special.erfcx",
    "TensorFlow has no erfcx op (tf.math: erf, erfc, erfinv, erfcinv only)",
    torch=_torch_erfcx,
)
_simple("erfinv", "erfinv", "jax.scipy.special.erfinv", "math.erfinv", D.ERFINV)
_simple("lgamma", "lgamma", "jax.scipy.special.gammaln", "math.lgamma", D.LGAMMA)
_simple(
    "digamma",
    "digamma",
    "jax.scipy.special.digamma",
    "math.digamma",
    D.DIGAMMA,
)
_simple("i0", "i0", "jax.scipy.special.i0", "math.bessel_i0", D.EVEN_AT_0)
_simple("i0e", "special.i0e", "jax.scipy.special.i0e", "math.bessel_i0e", D.KINK_0)
_simple("i1", "special.i1", "jax.scipy.special.i1", "math.bessel_i1", D.ZERO_AT_0)
_simple("i1e", "special.i1e", "jax.scipy.special.i1e", "math.bessel_i1e", D.ZERO_AT_0)
_simple("ndtri", "special.ndtri", "jax.scipy.special.ndtri", "math.ndtri", D.NDTRI,
        values=("normal", "ties"))  # fmt: skip
_simple("log_ndtr", "special.log_ndtr", "jax.scipy.special.log_ndtr", None)
# Φ(x), the normal CDF: TensorFlow has ndtri but no ndtr (tensorflow_probability has one)
_simple(
    "ndtr",
    "special.ndtr",
    "jax.scipy.special.ndtr",
    "TensorFlow has no ndtr op (tf.math and tf.math.special: ndtri only; ndtr is tensorflow_probability's)",
)


def _any_negative(np_, inputs, params) -> bool:
    return bool((inputs["input"] < 0).any())


_simple(
    "entr",
    "special.entr",
    "jax.scipy.special.entr",
    None,
    D.ENTR,
    conventions=(
        Convention(
            "entr-derivative-below-zero",
            "entr's derivative at x < 0, outside its domain [0, inf), where scipy's and PyTorch's "
            "entr is the constant -inf: PyTorch's formula -(1 + log x) gives nan (log of a negative)",
            _any_negative,
            (
                Alternative(
                    "zero",
                    # -inf (x * inf of a detached x < 0) as a constant; entr itself only where
                    # x >= 0, so that no nan of log x < 0 reaches a derivative of any order
                    lambda T, x: T.where(
                        x < 0, x.detach() * math.inf, T.special.entr(T.where(x < 0, T.ones_like(x), x))
                    ),
                    "JAX: 0 (jax.scipy.special.entr's where(x < 0, -inf, ...) branch is a constant)",
                ),
            ),
        ),
    ),
)
_simple("sgn", "sgn", "jnp.sign", "math.sign", D.STEP_0, conventions=(SIGN_OF_NAN,))
for _n in ("floor", "ceil", "trunc", "frac"):
    _simple(
        _n,
        _n,
        {"frac": None, "trunc": "jnp.trunc"}.get(_n, f"jnp.{_n}"),
        {"frac": None, "trunc": None}.get(_n, f"math.{_n}"),
        D.STEPS,
        values=_FINITE,
    )
_simple("round", "round", "jnp.round", "math.round", D.TIES, values=_FINITE)
unary(
    "round_decimals",
    lambda T, x, decimals: T.round(x, decimals=decimals),
    jax=lambda J, x, decimals: J.jnp.round(x, decimals),
    tf="TensorFlow's round has no decimals argument",
    params={"decimals": st.sampled_from([1, 2, -1])},
    values=("normal", "wide"),
)
unary(
    "polygamma",
    lambda T, x, n: T.polygamma(n, x),
    jax=lambda J, x, n: _jsp(J).polygamma(n, x),
    tf=lambda tf, x, n: tf.math.polygamma(tf.constant(float(n), x.dtype), x),
    domain=D.POLYGAMMA,
    params={"n": st.sampled_from([1, 2, 3])},
    values=("normal", "ties"),
)
unary(
    "mvlgamma",
    lambda T, x, p: T.mvlgamma(x + p, p),  # domain x > (p - 1) / 2: the record shifts a positive input
    jax=lambda J, x, p: _jsp(J).multigammaln(x + p, p),
    tf="TensorFlow has no multivariate lgamma op",
    domain="pos",
    params={"p": st.sampled_from([1, 2, 3])},
    values=("normal", "ties"),
    rules=("mvlgamma", "add"),
)
unary(
    "logit",
    lambda T, x, eps: T.logit(x, eps),
    jax=lambda J, x, eps: _jsp(J).logit(x if eps is None else J.jnp.clip(x, eps, 1 - eps)),
    tf="TensorFlow has no logit op",
    domain=D.LOGIT,
    params={"eps": st.sampled_from([None, 1e-3])},
    values=("normal", "ties"),
)
unary(
    "nan_to_num",
    lambda T, x: T.nan_to_num(x, nan=0.5, posinf=2.0, neginf=-2.0),
    jax=lambda J, x: J.jnp.nan_to_num(x, nan=0.5, posinf=2.0, neginf=-2.0),
    tf="TensorFlow has no nan_to_num op",
    values=("nonfinite", "normal"),
)
unary(
    "copysign_scalar",
    lambda T, x, other: T.copysign(x, other),
    jax=lambda J, x, other: J.jnp.copysign(x, other),
    tf="TensorFlow has no copysign op",
    params={"other": st.sampled_from([-1.0, 2.0, -0.0])},
    conventions=(_copysign_gradient_at_zero(lambda T, x, other: T.full_like(x, other)),),
)
unary(
    "xlogy_scalar_self",
    lambda T, x, s: T.xlogy(s, x),
    jax=lambda J, x, s: _jsp(J).xlogy(J.jnp.asarray(s, x.dtype), x),
    tf=lambda tf, x, s: tf.math.xlogy(tf.constant(s, x.dtype), x),
    domain=D.LOG,
    params={"s": st.sampled_from([2.0, 0.0, -0.5])},
)
unary(
    "xlogy_scalar_other",
    lambda T, x, s: T.xlogy(x, s),
    jax=lambda J, x, s: _jsp(J).xlogy(x, J.jnp.asarray(s, x.dtype)),
    tf=lambda tf, x, s: tf.math.xlogy(x, tf.constant(s, x.dtype)),
    params={"s": st.sampled_from([2.0, 0.5, 3.0])},
)
for _n, _tf in (("fmod_scalar", "fmod"), ("remainder_scalar", "remainder")):
    unary(
        _n,
        (lambda t: lambda T, x, other: getattr(T, t)(x, other))(_tf),
        jax=(lambda t: lambda J, x, other: getattr(J.jnp, t)(x, other))(_tf),
        tf=(lambda tf, x, other: tf.math.floormod(x, tf.constant(other, x.dtype)))
        if _tf == "remainder"
        else "TensorFlow's truncatemod is fmod for integers; no float spelling is recorded",
        domain=D.MULTIPLES,
        params={"other": st.sampled_from([1.5, -2.0, 0.75])},
    )
unary(
    "remainder_scalar_self",
    lambda T, x, s: T.remainder(s, x),
    jax=lambda J, x, s: J.jnp.remainder(J.jnp.asarray(s, x.dtype), x),
    tf=lambda tf, x, s: tf.math.floormod(tf.constant(s, x.dtype), x),
    params={"s": st.sampled_from([1.5, -2.0])},
    checks=("forward",),  # PyTorch: the derivative for remainder's other is not implemented
)
unary(
    "clamp_min",
    lambda T, x, min: T.clamp_min(x, min),
    jax=lambda J, x, min: J.jnp.maximum(x, min),
    tf=lambda tf, x, min: tf.math.maximum(x, min),
    params={"min": st.sampled_from([-0.5, 0.0, 1.0, -256.0])},
    domain=D.domain("whole line: a kink at min", -math.inf, math.inf, D.param_point("kink min", "min")),
    conventions=(
        _halved_at_the_bound(
            "clamp_min", at_params("min"), lambda T, x, min: T.maximum(x, T.full_like(x, min))
        ),
    ),
)
unary(
    "clamp_max",
    lambda T, x, max: T.clamp_max(x, max),
    jax=lambda J, x, max: J.jnp.minimum(x, max),
    tf=lambda tf, x, max: tf.math.minimum(x, max),
    params={"max": st.sampled_from([-0.5, 0.0, 1.0, 256.0])},
    domain=D.domain("whole line: a kink at max", -math.inf, math.inf, D.param_point("kink max", "max")),
    conventions=(
        _halved_at_the_bound(
            "clamp_max", at_params("max"), lambda T, x, max: T.minimum(x, T.full_like(x, max))
        ),
    ),
)
unary(
    "heaviside",
    lambda T, x: T.heaviside(x, T.tensor(0.5, dtype=x.dtype)),
    jax=lambda J, x: J.jnp.heaviside(x, J.jnp.asarray(0.5, x.dtype)),
    tf="TensorFlow has no heaviside op",
    domain=D.STEP_0,
    values=("ties", "normal"),
    checks=("forward",),  # PyTorch: the derivative of heaviside is not implemented
)

# binary
binary(
    "atan2",
    lambda T, x, y: T.atan2(x, y),
    lambda J, x, y: J.jnp.arctan2(x, y),
    lambda tf, x, y: tf.math.atan2(x, y),
    domains={"input": D.ZERO_AT_0, "other": D.ZERO_AT_0},  # the branch cut y = +-0, x < 0; the origin
)
binary(
    "hypot",
    lambda T, x, y: T.hypot(x, y),
    lambda J, x, y: J.jnp.hypot(x, y),
    _NO_TF.format("hypot"),
    domains={"input": D.HYPOT, "other": D.HYPOT},
)
binary(
    "logaddexp",
    lambda T, x, y: T.logaddexp(x, y),
    lambda J, x, y: J.jnp.logaddexp(x, y),
    _NO_TF.format("logaddexp"),
)
binary(
    "logaddexp2",
    lambda T, x, y: T.logaddexp2(x, y),
    lambda J, x, y: J.jnp.logaddexp2(x, y),
    _NO_TF.format("logaddexp2"),
)
binary(
    "copysign",
    lambda T, x, y: T.copysign(x, y),
    lambda J, x, y: J.jnp.copysign(x, y),
    _NO_TF.format("copysign"),
    domains={"input": D.KINK_0, "other": D.STEP_0},  # |x| sgn(y): the kink of |x|, the step of sgn(y)
    conventions=(_copysign_gradient_at_zero(lambda T, x, other: other),),
)
binary(
    "xlogy",
    lambda T, x, y: T.xlogy(x, y),
    lambda J, x, y: _jsp(J).xlogy(x, y),
    lambda tf, x, y: tf.math.xlogy(x, y),
    domains={"input": D.FACTOR_X, "other": D.LOG},
)
binary(
    "xlog1py",
    lambda T, x, y: T.special.xlog1py(x, y),
    lambda J, x, y: _jsp(J).xlog1py(x, y),
    lambda tf, x, y: tf.math.xlog1py(x, y),
    domains={"input": D.FACTOR_X, "other": D.LOG1P},
)


def _zero_divisor(np_, inputs, params) -> bool:
    try:
        _, y = np_.broadcast_arrays(inputs["input"], inputs["other"])
    except ValueError:
        return False
    return bool((y == 0).any())


def _nan_at_a_zero_divisor(op_name):
    """The op with its first and second derivatives nan where the divisor is 0, as its value is
    (a quadratic times nan: a linear one's second derivative is an exact 0); the other branch reads
    a divisor of 1, so that no nan of the unselected side reaches a gradient."""

    def fn(T, x, y):
        at = y == 0
        s = x + y
        return T.where(at, (s * s + s) * math.nan, getattr(T, op_name)(x, T.where(at, T.ones_like(y), y)))

    return fn


def _zero_divisor_convention(op_name, quotient):
    return Convention(
        f"{op_name}-derivatives-at-a-zero-divisor",
        f"{op_name}'s derivatives where the divisor is 0, where its value is nan and so are the "
        f"mathematics' derivatives: PyTorch's formulas give 1 in x, -{quotient}(x/y) in y and 0 in "
        "the second order",
        _zero_divisor,
        (Alternative("nan", _nan_at_a_zero_divisor(op_name), "TensorFlow: nan (floormod's gradient)"),),
    )


binary(
    "fmod",
    lambda T, x, y: T.fmod(x, y),
    lambda J, x, y: J.jnp.fmod(x, y),
    "TensorFlow's truncatemod is fmod for integers; no float spelling is recorded",
    domains={"other": D.DIVISOR_GATE_POS},
    conventions=(_zero_divisor_convention("fmod", "trunc"),),
    values=("normal", "ties", "wide"),
)
binary(
    "remainder",
    lambda T, x, y: T.remainder(x, y),
    lambda J, x, y: J.jnp.remainder(x, y),
    lambda tf, x, y: tf.math.floormod(x, y),
    domains={"other": D.DIVISOR_GATE_POS},
    conventions=(_zero_divisor_convention("remainder", "floor"),),
    values=("normal", "ties", "wide"),
)
for _n, _j, _t in (("fmax", "fmax", "maximum"), ("fmin", "fmin", "minimum")):
    binary(
        _n,
        (lambda n: lambda T, x, y: getattr(T, n)(x, y))(_n),
        (lambda j: lambda J, x, y: getattr(J.jnp, j)(x, y))(_j),
        "TensorFlow's maximum/minimum propagate nan (fmax/fmin ignore it): no spelling",
        conventions=(
            Convention(
                f"{_n}-gradient-at-ties",
                f"{_n}'s subgradient where x == y: PyTorch's backward gives the whole gradient to x "
                f"(x {'>=' if _n == 'fmax' else '<='} y, or y NaN)",
                any_equal_pair,
                (
                    Alternative(
                        "to-second",
                        (lambda strict: lambda T, x, y: T.where(strict(x, y) | T.isnan(y), x, y))(
                            (lambda x, y: x > y) if _n == "fmax" else (lambda x, y: x < y)
                        ),
                        f"JAX (jnp.{_n}) and PyTorch's own forward-mode formula: y takes it at a tie",
                    ),
                ),
            ),
        ),
    )
binary(
    "nextafter",
    lambda T, x, y: T.nextafter(x, y),
    lambda J, x, y: J.jnp.nextafter(x, y),
    lambda tf, x, y: tf.math.nextafter(x, y),
    checks=("forward",),  # PyTorch: the derivative of nextafter is not implemented
)
for _n in ("clamp_min_tensor", "clamp_max_tensor"):
    binary(
        _n,
        (lambda n: lambda T, x, y: getattr(T, n.replace("_tensor", ""))(x, y))(_n),
        (lambda f: lambda J, x, y: f(J.jnp)(x, y))(
            lambda jnp, n=_n: jnp.maximum if "min" in n else jnp.minimum
        ),
        (lambda f: lambda tf, x, y: f(tf.math)(x, y))(lambda m, n=_n: m.maximum if "min" in n else m.minimum),
        conventions=(
            _halved_at_the_bound(
                _n,
                any_equal_pair,
                (lambda n: lambda T, x, y: (T.maximum if "min" in n else T.minimum)(x, y))(_n),
                "x the whole gradient, the bound none",
            ),
            _to_the_bound_at_nan(
                _n, (lambda n: lambda T, x, y: getattr(T, n.replace("_tensor", ""))(x, y))(_n)
            ),
        ),
    )


@st.composite
def _ternary(draw, values=None):
    a, b = draw(broadcast_shapes())
    return {"values": draw(value_kinds(values)), "value": draw(st.sampled_from([1.0, -0.5, 2.0]))}, {
        "input": a,
        "tensor1": b,
        "tensor2": a,
    }


record(
    "addcmul",
    FAMILY,
    inputs=("input", "tensor1", "tensor2"),
    sample=lambda: _ternary(),
    fn=lambda T, a, t1, t2, value: T.addcmul(a, t1, t2, value=value),
    jax=lambda J, a, t1, t2, value: a + value * t1 * t2,
    tf=lambda tf, a, t1, t2, value: a + value * t1 * t2,
)
record(
    "addcdiv",
    FAMILY,
    inputs=("input", "tensor1", "tensor2"),
    sample=lambda: _ternary(("normal", "ties", "wide")),
    fn=lambda T, a, t1, t2, value: T.addcdiv(a, t1, t2, value=value),
    jax=lambda J, a, t1, t2, value: a + value * t1 / t2,
    tf=lambda tf, a, t1, t2, value: a + value * t1 / t2,
    domains={"tensor2": D.DIVISOR_GATE_POS},
)


@st.composite
def _lerp_scalar(draw):
    a, b = draw(broadcast_shapes())
    return {"values": draw(value_kinds()), "weight": draw(st.sampled_from([0.25, 0.5, 0.75, 1.5]))}, {
        "input": a,
        "end": b,
    }


record(
    "lerp",
    FAMILY,
    inputs=("input", "end"),
    sample=lambda: _lerp_scalar(),
    rules=("lerp", "lerp_backward_self"),  # its VJP in self: a primitive (its error covers g - w·g)
    fn=lambda T, a, b, weight: T.lerp(a, b, weight),
    jax=lambda J, a, b, weight: a + weight * (b - a),
    tf=lambda tf, a, b, weight: a + weight * (b - a),
    note="JAX and TensorFlow have no lerp: spelled a + w (b - a)",
)


@st.composite
def _lerp_tensor(draw):
    a, b = draw(broadcast_shapes())
    return {"values": draw(value_kinds(("normal", "ties")))}, {"input": a, "end": b, "weight": a}


record(
    "lerp_tensor",
    FAMILY,
    inputs=("input", "end", "weight"),
    sample=lambda: _lerp_tensor(),
    rules=("lerp_tensor", "lerp_tensor_backward_self"),
    fn=lambda T, a, b, w: T.lerp(a, b, w),
    jax=lambda J, a, b, w: a + w * (b - a),
    tf=lambda tf, a, b, w: a + w * (b - a),
    domains={"weight": "unit"},
)

for _n, _op in (("lerp_backward_self", "lerp"), ("lerp_tensor_backward_self", "lerp_tensor")):
    not_fuzzed(
        _n,
        FAMILY,
        f"internal: {_op}'s VJP in self, g·(1 − w); reached by the {_op} record's vjp, vjp_vjp and vmap_vjp",
    )
for _n in ("asinh_inplace", "acosh_inplace", "atanh_inplace", "polygamma_inplace"):
    not_fuzzed(
        _n,
        FAMILY,
        f"an in-place-only primitive (x.{_n.split('_')[0]}_): its own formula (a saved result) is "
        "checked by tests/autograd; program cases cover writes into storage",
    )

# new elementwise rules (reference/ops/rules/elementwise.py)
unary(
    "div_mode",
    lambda T, x, rounding_mode: T.div(x, 0.75, rounding_mode=rounding_mode),
    jax=lambda J, x, rounding_mode: (J.jnp.trunc if rounding_mode == "trunc" else J.jnp.floor)(x / 0.75),
    tf="TensorFlow has no float truncating division (truncatediv is for integers)",
    params={"rounding_mode": st.sampled_from(["trunc", "floor"])},
    values=_FINITE,
)
unary(
    "masked_fill_tensor",
    lambda T, x: x.masked_fill(x > 0, T.tensor(0.5, dtype=x.dtype)),
    jax=lambda J, x: J.jnp.where(x > 0, J.jnp.asarray(0.5, x.dtype), x),
    tf=lambda tf, x: tf.where(x > 0, tf.constant(0.5, x.dtype), x),
)
binary(
    "clamp_tensor",
    lambda T, x, y: T.clamp(x, y, y + 1),
    lambda J, x, y: J.jnp.minimum(J.jnp.maximum(x, y), y + 1),
    lambda tf, x, y: tf.math.minimum(tf.math.maximum(x, y), y + 1),
    rules=("clamp_tensor", "add"),
    conventions=(
        _halved_at_the_bound(
            "clamp_tensor",
            _at_a_tensor_bound,
            lambda T, x, y: T.minimum(T.maximum(x, y), y + 1),
            "x the whole gradient where min <= x <= max, the bounds none",
        ),
        _to_the_bound_at_nan("clamp_tensor", lambda T, x, y: T.clamp(x, y, y + 1)),
    ),
)


def not_fuzzed_derivatives(fn, family, record):
    """The exact derivative primitives ``fn``_d1, _d2, _d3 of the derivative table
    (reference.ops.rules.pointwise.derivative_chain): internal, reached through ``record``."""
    for k in (1, 2):
        not_fuzzed(
            f"{fn}_d{k}",
            family,
            f"internal: the exact derivative of order {k} of {fn}; reached by the {record}'s vjp, "
            "vjp_vjp, jvp and vmap_vjp",
        )
    not_fuzzed(
        f"{fn}_d3",
        family,
        f"internal: the third derivative of {fn} (the second derivative's VJP); no check differentiates "
        "three times",
    )


# the exact derivative primitives of sinc, logit, erfinv, asin (and acos), atanh, atan, asinh, erfcx
# ndtr and log_ndtr, and e^(c x²) (reference/ops/rules/pointwise.py)
for _fn in ("sinc", "logit", "erfinv", "asin", "atanh", "atan", "asinh", "erfcx", "ndtr", "log_ndtr"):
    not_fuzzed_derivatives(_fn, FAMILY, "asin (and acos) record" if _fn == "asin" else f"{_fn} record")
# the Bessel functions' exact derivatives (i0's derivative is i1: its higher ones are i1's chain)
for _fn, _records in (("i0e", "i0e record"), ("i1", "i1 (and i0) record"), ("i1e", "i1e record")):
    not_fuzzed_derivatives(_fn, FAMILY, _records)
for _fn in ("expm1", "ndtri"):
    not_fuzzed(
        f"{_fn}_backward",
        FAMILY,
        f"internal: {_fn}'s VJP, exact from the input PyTorch does not save (result_backward); reached by "
        f"the {_fn} record's vjp, vjp_vjp, jvp and vmap_vjp",
    )
not_fuzzed(
    "tan_backward",
    FAMILY,
    "internal: tan's VJP g·(1 + y²) from the saved result (result_backward; its error also declares "
    "TensorFlow's g·square(1/cos x)); reached by the tan record's vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "tan_backward_output_grad",
    FAMILY,
    "internal: the derivative gg·2gy of tan's VJP in the result (its error the frameworks' two orders of "
    "the three factors); reached by the tan record's vjp_vjp, jvp_jvp, vjp_jvp and jvp_vjp",
)
for _fn in ("logaddexp_weight", "logaddexp_weight_d1"):
    not_fuzzed(
        _fn,
        FAMILY,
        f"internal: {'σ' if _fn.endswith('weight') else 'σ′'}(k(a - b)) of logaddexp's and logaddexp2's "
        "partials, exact (the difference a double-double); reached by their records' vjp, vjp_vjp, jvp "
        "and vmap_vjp",
    )
for _fn in (
    "atan2_partial",
    "atan2_partial_pq",
    "atan2_partial_diff",
    "hypot_partial",
    "hypot_partial_qq",
    "hypot_partial_pq",
):
    not_fuzzed(
        _fn,
        FAMILY,
        f"internal: a partial of {_fn.split('_')[0]} or its derivative, exact at extreme arguments (scaled "
        "by a power of 2); reached by its record's vjp, vjp_vjp, jvp and vmap_vjp",
    )
not_fuzzed(
    "exp_square",
    FAMILY,
    "internal: e^(c x²) with x² split exactly, in the derivatives of erf, erfc and ndtri; reached by "
    "their records' vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "exp_square_backward",
    FAMILY,
    "internal: exp_square's VJP g·2cx·e^(c x²), the frameworks' order (e^(c x²) last); reached by the "
    "vjp_vjp, jvp_vjp and vjp_jvp checks of erf, erfc and ndtri",
)
