"""Records of the elementwise primitives (reference/ops/rules/elementwise.py)."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import _domains as D
from conformance.ops import not_fuzzed, record
from conformance.ops._conventions import (
    Alternative,
    Convention,
    any_equal_pair,
    any_nan,
    any_zero,
    at_params,
    away_from_nan,
    nan_mask,
)
from conformance.strategies import broadcast_shapes, tensor_shapes, value_kinds

FAMILY = "elementwise"


def _unary(values=None, **params):
    @st.composite
    def sample(draw):
        drawn = {k: draw(v) for k, v in params.items()}
        return {**drawn, "values": draw(value_kinds(values))}, {"input": draw(tensor_shapes())}

    return sample


def _binary(values=None):
    @st.composite
    def sample(draw):
        a, b = draw(broadcast_shapes())
        return {"values": draw(value_kinds(values))}, {"input": a, "other": b}

    return sample


@st.composite
def _no_broadcast(draw):
    """The error check: two shapes of the same rank that do not broadcast (one dim differs, and
    neither side is 1 there)."""
    shape = list(draw(tensor_shapes(1, 3, 256, 2)))
    other = list(shape)
    i = draw(st.integers(0, len(shape) - 1))
    other[i] = shape[i] + draw(st.integers(1, 3))
    return {"values": "normal", "invalid": "shapes_do_not_broadcast"}, {
        "input": tuple(shape),
        "other": tuple(other),
    }


def unary(name, fn, jax=None, tf=None, domain="any", values=None, params=None, **kw):
    record(
        name,
        FAMILY,
        inputs=("input",),
        sample=_unary(values, **(params or {})),
        fn=fn,
        jax=jax,
        tf=tf,
        domains={"input": domain},
        **kw,
    )


def binary(name, fn, jax, tf, domains=None, values=None, **kw):
    record(
        name,
        FAMILY,
        inputs=("input", "other"),
        sample=_binary(values),
        invalid=lambda: _no_broadcast(),
        fn=fn,
        jax=jax,
        tf=tf,
        domains=domains or {},
        **kw,
    )


def _max_min_conventions(name, op, keeps):
    """maximum/minimum: PyTorch halves the gradient between tied operands and gives a NaN output's
    gradient to both operands; TensorFlow routes it to x where x >= y (<=) and to y elsewhere (at a
    tie to x, at a NaN to y); JAX gives a NaN output no gradient."""

    def first_at_ties(T, x, y):
        # TensorFlow's tie routing (x where x >= y, <= for minimum) and PyTorch's NaN handling: each
        # alternative changes one choice only, so a framework's result is explained convention by
        # convention
        value = op(T)(x, y)
        first = T.where(x >= y if keeps == ">=" else x <= y, x, y)
        return T.where(nan_mask(T, x, y), value, first)

    def second_at_nan(T, x, y):
        # TensorFlow at a NaN operand: x >= y is false, so y takes the whole gradient (value: NaN)
        value = op(T)(x, y)
        return T.where(nan_mask(T, x, y), value.detach() + (y - y.detach()), value)

    def none_at_nan(T, x, y):
        value = op(T)(x, y)
        return T.where(nan_mask(T, x, y), value.detach(), value)

    return (
        Convention(
            f"{name}-gradient-at-ties",
            f"the derivative of {name}(x, y) where x == y: PyTorch (and JAX) give each operand half; "
            "the mathematics has a subdifferential there, any split of the whole is a subgradient",
            any_equal_pair,
            (
                Alternative(
                    "all-to-first", first_at_ties, f"TensorFlow: x {keeps} y takes the whole gradient"
                ),
            ),
        ),
        Convention(
            f"{name}-gradient-at-nan",
            f"the derivative of {name}(x, y) where an operand is NaN (the output is NaN): PyTorch gives "
            "the whole gradient to both operands",
            any_nan,
            (
                Alternative("none", none_at_nan, "JAX: neither operand gets a gradient"),
                Alternative("to-second", second_at_nan, f"TensorFlow: x {keeps} y is false, y takes it"),
            ),
        ),
    )


def _zero_base_negative_exponent(np_, inputs, params) -> bool:
    try:
        x, y = np_.broadcast_arrays(inputs["input"], inputs["other"])
    except ValueError:
        return False
    return bool(((x == 0) & (y < 0)).any())


def _pow_nan_exponent_gradient(T, x, y):
    """x**y with a NaN derivative in y where x = 0 and y < 0 (its value and x's derivative kept):
    there sqrt(d*d) with d = y - y.detach() adds 0 whose derivative is inf * 0; the other branch reads
    safe operands so that no 0 * inf of the unselected side reaches the gradient."""
    at = (x == 0) & (y < 0)
    one = T.ones_like(x * y)
    d = y - y.detach()
    at_zero = T.pow(T.where(at, x, one), y.detach()) + T.sqrt(T.where(at, d * d, one))
    return T.where(at, at_zero, T.pow(T.where(at, one, x), y))


def _negative_base(np_, inputs, params) -> bool:
    try:
        x, _ = np_.broadcast_arrays(inputs["input"], inputs["other"])
    except ValueError:
        return False
    return bool((x < 0).any())


def _pow_zero_exponent_gradient_at_negative_base(T, x, y):
    """x**y with a zero derivative in y where x < 0 (its value and x's derivative kept): the exponent
    is read detached there; the other branch reads the safe base 1, so that no nan of log x < 0
    reaches the gradient through the unselected side."""
    at = x < 0
    one = T.ones_like(x * y)
    return T.where(at, T.pow(T.where(at, x, one), y.detach()), T.pow(T.where(at, one, x), y))


binary("add", lambda T, x, y: x + y, lambda J, x, y: x + y, lambda tf, x, y: tf.math.add(x, y))
binary("sub", lambda T, x, y: x - y, lambda J, x, y: x - y, lambda tf, x, y: tf.math.subtract(x, y))
binary("mul", lambda T, x, y: x * y, lambda J, x, y: x * y, lambda tf, x, y: tf.math.multiply(x, y))
binary("div", lambda T, x, y: x / y, lambda J, x, y: x / y, lambda tf, x, y: tf.math.divide(x, y), domains={"other": D.DIVISOR})
binary(
    "maximum",
    lambda T, x, y: T.maximum(x, y),
    lambda J, x, y: J.jnp.maximum(x, y),
    lambda tf, x, y: tf.math.maximum(x, y),
    conventions=_max_min_conventions("maximum", lambda T: T.maximum, ">="),
)
binary(
    "minimum",
    lambda T, x, y: T.minimum(x, y),
    lambda J, x, y: J.jnp.minimum(x, y),
    lambda tf, x, y: tf.math.minimum(x, y),
    conventions=_max_min_conventions("minimum", lambda T: T.minimum, "<="),
)
binary(
    "where",
    lambda T, x, y: T.where(x > 0, x, y),
    lambda J, x, y: J.jnp.where(x > 0, x, y),
    lambda tf, x, y: tf.where(x > 0, x, y),
)
binary(
    "pow_tensor",
    lambda T, x, y: T.pow(x, y),
    lambda J, x, y: J.jnp.power(x, y),
    lambda tf, x, y: tf.math.pow(x, y),
    domains={"input": D.POW_BASE, "other": D.POW_EXPONENT},
    values=("normal", "ties", "nonfinite"),
    conventions=(
        Convention(
            "pow-exponent-gradient-at-zero-base",
            "d(x**y)/dy at x = 0, y < 0, where x**y = inf whatever y is (no derivative there): PyTorch "
            "evaluates x**y log(x) = -inf",
            _zero_base_negative_exponent,
            (
                Alternative(
                    "nan", _pow_nan_exponent_gradient, "JAX and TensorFlow: NaN (inf times their masked log)"
                ),
            ),
        ),
        Convention(
            "pow-exponent-gradient-at-a-negative-base",
            "d(x**y)/dy at x < 0, where x**y is real only at integer y (no derivative in y): PyTorch "
            "and JAX evaluate x**y log(x) = nan",
            _negative_base,
            (
                Alternative(
                    "zero",
                    _pow_zero_exponent_gradient_at_negative_base,
                    "TensorFlow: 0 (_PowGrad reads log x as 0 where x <= 0)",
                ),
            ),
        ),
    ),
)
unary(
    "rsub",
    lambda T, x, other: other - x,
    lambda J, x, other: other - x,
    lambda tf, x, other: other - x,
    params={"other": st.sampled_from([2.0, -0.5, 0.0])},
)
unary("neg", lambda T, x: -x, lambda J, x: -x, lambda tf, x: tf.math.negative(x))
unary(
    "pow",
    lambda T, x, exponent: T.pow(x, exponent),
    lambda J, x, exponent: J.jnp.power(x, exponent),
    lambda tf, x, exponent: tf.math.pow(x, exponent),
    domain=D.POW_BASE,
    params={"exponent": st.sampled_from([2.0, 3.0, 0.5, -1.0, 2.5])},
)
unary(
    "pow_scalar_base",
    lambda T, x, base: base**x,
    lambda J, x, base: J.jnp.power(base, x),
    lambda tf, x, base: tf.math.pow(tf.constant(base, x.dtype), x),
    params={"base": st.sampled_from([2.0, 0.5, 3.0])},
    values=("normal", "ties", "tiny", "nonfinite"),
)
unary("exp", lambda T, x: T.exp(x), lambda J, x: J.jnp.exp(x), lambda tf, x: tf.math.exp(x))
unary("log", lambda T, x: T.log(x), lambda J, x: J.jnp.log(x), lambda tf, x: tf.math.log(x), domain=D.LOG)
unary(
    "sqrt", lambda T, x: T.sqrt(x), lambda J, x: J.jnp.sqrt(x), lambda tf, x: tf.math.sqrt(x), domain=D.SQRT
)
unary(
    "tanh",
    lambda T, x: T.tanh(x),
    lambda J, x: J.jnp.tanh(x),
    lambda tf, x: tf.math.tanh(x),
    domain=D.ZERO_AT_0,
    rules=("tanh", "tanh_backward", "tanh_backward_output_grad"),  # its VJP and that VJP's derivative
)
unary(
    "sigmoid",
    lambda T, x: T.sigmoid(x),
    lambda J, x: J.nn.sigmoid(x),
    lambda tf, x: tf.math.sigmoid(x),
    rules=("sigmoid", "sigmoid_backward", "sigmoid_one_minus_twice"),  # its VJP and that VJP's derivative
)
unary(
    "relu",
    lambda T, x: T.nn.functional.relu(x),
    lambda J, x: J.nn.relu(x),
    lambda tf, x: tf.nn.relu(x),
    domain=D.KINK_0,
    rules=("relu", "threshold_backward"),  # relu's VJP is threshold_backward (vjp_vjp reaches its VJP)
    conventions=(
        Convention(
            "relu-gradient-at-nan",
            "relu's derivative at NaN (no number): PyTorch's threshold_backward passes the gradient "
            "(x <= 0 is false for NaN)",
            any_nan,
            (
                Alternative(
                    "zero",
                    lambda T, x: T.where(T.isnan(x), x.detach(), T.nn.functional.relu(x)),
                    "JAX, TensorFlow: the gradient passes where x > 0 only",
                ),
            ),
        ),
    ),
)


def _abs_complex_at_zero_jax(T, x):
    """JAX's complex abs at z = 0: its JVP Re(conj(z) / select(|z| == 0, 1, |z|) · t) is 0 there, as
    PyTorch's, but differentiated again the select's constant 1 leaves conj(t1) / 1: the second
    derivatives are those of |z|^2 / 2 (forward over reverse c·t, reverse over reverse gg·g), where
    PyTorch's sgn(0) = 0 makes them 0; |z|'s own are unbounded at 0 (1/|z|): no value is the
    mathematics' (the complex whole-domain draws at the origin, abs-7a62437673d4, abs-d3d4504c6c90,
    cplx27). Real inputs: abs itself (JAX's real choice is the alternative "one")."""
    if not x.is_complex():
        return T.abs(x)
    return T.where(x == 0, T.real(x * x.conj()) / 2, T.abs(x))


unary(
    "abs",
    lambda T, x: T.abs(x),
    lambda J, x: J.jnp.abs(x),
    lambda tf, x: tf.math.abs(x),
    domain=D.KINK_0,
    conventions=(
        Convention(
            "abs-gradient-at-zero",
            "abs's subgradient at its kink x = 0: PyTorch's sgn(0) = 0 (any value in [-1, 1] is one)",
            any_zero,
            (
                Alternative(
                    "one", lambda T, x: T.where(x == 0, x, T.abs(x)), "JAX: 1 (its JVP's select x >= 0)"
                ),
                Alternative(
                    "complex-second-order-of-half-the-squared-modulus",
                    _abs_complex_at_zero_jax,
                    "JAX, complex z = 0: first derivative 0, second that of |z|^2/2, Re(conj(t1) t2)",
                ),
            ),
        ),
        Convention(
            "abs-gradient-at-nan",
            "abs's derivative at NaN: PyTorch's sgn(NaN) = 0",
            any_nan,
            (
                Alternative(
                    "propagate",
                    # x*x*x: NaN at a NaN x, and so are its first and second derivatives
                    lambda T, x: T.where(T.isnan(x), x * x * x, T.abs(x)),
                    "TensorFlow: grad * sign(x), NaN (and NaN in the second order)",
                ),
                Alternative(
                    "minus-one",
                    lambda T, x: T.where(T.isnan(x), -x, T.abs(x)),
                    "JAX: its JVP's select(x >= 0, t, -t) takes -t for NaN",
                ),
            ),
        ),
    ),
)
#: sign's and sgn's value at a NaN (on real tensors sgn is sign): PyTorch's 0, the others' NaN
SIGN_OF_NAN = Convention(
    "sign-of-nan",
    "sign(NaN): PyTorch's is 0; NumPy's, JAX's and TensorFlow's NaN (IEEE 754 leaves it open)",
    any_nan,
    (Alternative("nan", lambda T, x: T.where(T.isnan(x), x.detach(), T.sgn(x)), "NaN (NumPy's)"),),
    checks=("forward", "vmap"),
)
unary(
    "sign",
    lambda T, x: T.sign(x),
    lambda J, x: J.jnp.sign(x),
    lambda tf, x: tf.math.sign(x),
    domain=D.STEP_0,
    conventions=(SIGN_OF_NAN,),
)
unary(
    "reciprocal",
    # the reference's spelling of reciprocal is rdiv by a number (1.0 / x), except on complex
    # tensors: there PyTorch's 1.0 / x is reciprocal() * (1 + 0j), whose complex product turns
    # reciprocal(0) = inf + nan j into nan + nan j (torch too: 1.0 / torch.tensor([0j])), so it is
    # not torch.reciprocal (inf + nan j, an infinity under C99 Annex G)
    lambda T, x: T.reciprocal(x) if x.is_complex() else 1.0 / x,
    torch=lambda torch, x: torch.reciprocal(x),
    jax=lambda J, x: J.jnp.reciprocal(x),
    tf=lambda tf, x: tf.math.reciprocal(x),
    domain=D.DIVISOR,
)


def jax_masked_fill(J, x, mask, value):
    """``x.masked_fill(mask, value)`` in JAX: the record's (mask ``x > 0``) and the program
    vocabulary's (conformance.functional: a constant mask, a number or a tensor ``value``)."""
    return J.jnp.where(J.jnp.asarray(mask), J.jnp.asarray(value, x.dtype), x)


def tf_masked_fill(tf, x, mask, value):
    """``x.masked_fill(mask, value)`` in TensorFlow (as :func:`jax_masked_fill`)."""
    return tf.where(mask, tf.cast(value, x.dtype) * tf.ones_like(x), x)


unary(
    "masked_fill",
    lambda T, x, value: x.masked_fill(x > 0, value),
    lambda J, x, value: jax_masked_fill(J, x, x > 0, value),
    lambda tf, x, value: tf_masked_fill(tf, x, x > 0, value),
    params={"value": st.sampled_from([0.5, -1.0, 0.0])},
)
unary(
    "clamp",
    lambda T, x, min, max: T.clamp(x, min, max),
    lambda J, x, min, max: J.jnp.clip(x, min, max),
    lambda tf, x, min, max: tf.clip_by_value(x, min, max),
    # after the simplest draw: min = max = 0, min above max (1 > 0.5: every element max, gradient 0), far out
    params={"min": st.sampled_from([-1.0, -0.5, 0.0, 1.0, -256.0]), "max": st.sampled_from([0.5, 1.0, 2.0, 0.0, 256.0])},
    domain=D.domain("whole line: kinks at min and max", -math.inf, math.inf, D.param_point("kink min", "min"),
                    D.param_point("kink max", "max")),  # fmt: skip
    conventions=(
        Convention(
            "clamp-gradient-at-the-bounds",
            "clamp's subgradient where x equals a bound (a kink): PyTorch passes the whole gradient "
            "for min <= x <= max",
            at_params("min", "max"),
            (
                Alternative(
                    "half",
                    away_from_nan(
                        lambda T, x, min, max: T.minimum(
                            T.maximum(x, T.full_like(x, min)), T.full_like(x, max)
                        ),
                        lambda T, x, min, max: T.clamp(x, min, max),
                    ),
                    "JAX: jnp.clip is minimum(maximum(x, lo), hi), which halves the gradient at a tie",
                ),
            ),
        ),
    ),
)
unary(
    "clone",
    lambda T, x: T.clone(x),
    lambda J, x: J.jnp.array(x, copy=True),
    lambda tf, x: tf.identity(x),
)

_IN_PLACE = (
    "an in-place-only primitive (x.{op}_): the reference's semantics of writes into storage are checked "
    "by program cases (conformance run --ops programs), which run it on all three frameworks"
)
for _name in ("copy", "fill", "fill_tensor", "zero"):
    not_fuzzed(_name, FAMILY, _IN_PLACE.format(op=_name.split("_")[0]))
for _name in ("pow_partial_self", "pow_partial_exponent", "pow_partial_self_self", "pow_partial_mixed"):
    not_fuzzed(
        _name,
        FAMILY,
        "internal: a partial of pow(self, exponent) or its derivative, exact at positive finite self (the "
        "rounding of exponent - k corrected); reached by the pow_tensor record's vjp, vjp_vjp, jvp and vmap_vjp",
    )
not_fuzzed(
    "tanh_backward",
    FAMILY,
    "internal: tanh's VJP (aten tanh_backward); reached by the tanh record's vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "sigmoid_backward",
    FAMILY,
    "internal: sigmoid's VJP (aten sigmoid_backward); reached by the sigmoid record's vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "sigmoid_one_minus_twice",
    FAMILY,
    "internal: 1 - 2s of sigmoid's result, exact from x, in the derivative of sigmoid_backward in its "
    "output; reached by the sigmoid record's vjp_vjp",
)
not_fuzzed(
    "tanh_backward_output_grad",
    FAMILY,
    "internal: the derivative of tanh_backward in its output; reached by the tanh record's vjp_vjp",
)
not_fuzzed(
    "threshold_backward",
    FAMILY,
    "internal: relu's VJP; reached by the relu record's vjp and vjp_vjp checks",
)
not_fuzzed(
    "to",
    FAMILY,
    "a dtype cast: record cases draw values exact in the case's dtype and the reference computes in "
    "float64, so a cast has nothing to compare; program cases use .to",
)
