"""Records of the activation primitives (reference/ops/rules/activations.py)."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import _domains as D
from conformance.ops import not_fuzzed, record
from conformance.ops._conventions import Alternative, Convention, any_nan, any_zero, at_params, away_from_nan
from conformance.ops._run import refuses
from conformance.ops.elementwise import _unary
from conformance.ops.pointwise import not_fuzzed_derivatives
from conformance.strategies import broadcast_shapes, tensor_shapes, value_kinds

FAMILY = "activations"


def unary(name, fn, jax, tf, params=None, values=None, **kw):
    record(
        name, FAMILY, inputs=("input",), sample=_unary(values, **(params or {})), fn=fn, jax=jax, tf=tf, **kw
    )


def _tf_gelu(tf, x, approximate):
    return tf.nn.gelu(x, approximate=approximate == "tanh")


#: the second-order checks: where a convention decides only a second derivative
SECOND_ORDER = ("vjp_vjp", "jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp")
#: torch.nn.functional.selu's constants
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def elu_second_derivative_at_zero(negative_branch, primary):
    """elu, selu and celu have a kink of the first derivative at x = 0 (1 on the right, alpha e^0 / scale
    on the left; continuous only when they agree), so their second derivative at 0 is a choice.
    PyTorch's first derivative takes the negative branch there (elu_backward: x <= 0) and its second
    the positive one (elu_double_backward multiplies by x < 0): 0. The alternative keeps the negative
    branch for both, as jax.nn.elu/selu (where(x > 0, ...) takes the else branch at 0) and the
    TensorFlow spellings (expm1(minimum(x, 0)): tf.minimum passes the tie's gradient to x) do.
    ``negative_branch(T, x, **params)`` is the function left of 0, given min(x, 0) so that its
    unselected values never overflow."""

    def alternative(T, x, **params):
        return T.where(x > 0, primary(T, x, **params), negative_branch(T, T.clamp(x, max=0.0), **params))

    return Convention(
        "elu-second-derivative-at-zero",
        "the second derivative of elu, selu and celu at their kink x = 0: PyTorch's is the positive "
        "branch's, 0 (its first derivative there is the negative branch's)",
        any_zero,
        (
            Alternative(
                "the-negative-branch",
                away_from_nan(alternative, primary),
                "jax.nn.elu and jax.nn.selu, and the TensorFlow spellings of elu and celu: the negative "
                "branch's alpha e^0 (elu), scale alpha (selu), 1 / alpha (celu)",
            ),
        ),
        checks=SECOND_ORDER,
    )


unary(
    "gelu",
    lambda T, x, approximate: T.nn.functional.gelu(x, approximate=approximate),
    lambda J, x, approximate: J.nn.gelu(x, approximate=approximate == "tanh"),
    _tf_gelu,
    params={"approximate": st.sampled_from(["none", "tanh"])},
)
unary("silu", lambda T, x: T.nn.functional.silu(x), lambda J, x: J.nn.silu(x), lambda tf, x: tf.nn.silu(x))
unary(
    "mish",
    lambda T, x: T.nn.functional.mish(x),
    lambda J, x: J.nn.mish(x) if hasattr(J.nn, "mish") else x * J.jnp.tanh(J.nn.softplus(x)),
    lambda tf, x: x * tf.math.tanh(tf.math.softplus(x)),
    note="TensorFlow has no mish: spelled x * tanh(softplus(x))",
)
unary(
    "log_sigmoid",
    lambda T, x: T.nn.functional.logsigmoid(x),
    lambda J, x: J.nn.log_sigmoid(x),
    lambda tf, x: tf.math.log_sigmoid(x),
)
def _softsign_grad_has_no_gradient(case, check):
    if check in ("forward", "vjp", "vmap", "vmap_vjp"):
        return None
    return (
        "tf.math.softsign's gradient SoftsignGrad has no gradient registered (LookupError: gradient "
        "registry has no entry for: SoftsignGrad): no forward mode (the accumulator transposes the "
        "VJP) and no second order"
    )


# softsign x/(1 + |x|): PyTorch's F.softsign is a composite (DivBackward0 over AbsBackward0), the
# reference's the same; tf.math.softsign is differentiated once, in reverse mode only
unary(
    "softsign",
    lambda T, x: T.nn.functional.softsign(x),
    lambda J, x: J.nn.soft_sign(x),
    refuses(_softsign_grad_has_no_gradient)(lambda tf, x: tf.math.softsign(x)),
    rules=("div", "abs", "add"),  # the composite's table primitives: no softsign rule of its own
    domains={"input": D.domain("whole line: softsign'' jumps at 0", -math.inf, math.inf, D.Point("jump of softsign'' 0", 0.0))},
    conventions=(
        Convention(
            "softsign-second-derivative-at-zero",
            "softsign''(x) = -2 sgn(x) / (1 + |x|)^3 jumps from 2 to -2 at x = 0, so the second "
            "derivative there is a choice; PyTorch's composite differentiates |x| by sgn(x), 0 at 0: 0",
            any_zero,
            (
                Alternative(
                    "the-right-branch",
                    lambda T, x: x / (1 + T.where(x >= 0, x, -x)),
                    "jax.nn.soft_sign (x / (|x| + 1)): JAX's derivative of |x| at 0 is 1, the right "
                    "branch's -2",
                ),
            ),
            checks=SECOND_ORDER,
        ),
    ),
)
def _jax_only(name, rules, **kw):
    """A record of jax.nn.``name`` over the reference composite reference.nn.functional.``name``,
    whose table primitives are ``rules`` (no rule of its own); PyTorch and TensorFlow have none."""
    unary(
        name,
        lambda T, x: getattr(T.nn.functional, name)(x),
        lambda J, x: getattr(J.nn, name)(x),
        f"TensorFlow has no {name} (tf.nn and tf.math: none)",
        torch=f"PyTorch has no {name} (torch 2.13: no torch.nn.functional.{name})",
        rules=rules,
        **kw,
    )


# jax.nn.sparse_plus: the reference's composite is JAX's where over the three pieces (second
# derivative at ±1 the outer piece's 0, as JAX's)
_jax_only("sparse_plus", ("where", "mul", "add", "div"))
# jax.nn.log1mexp log(1 - e^-x), x >= 0, over the exact primitive (reference/ops/rules/special_log1mexp.py)
_jax_only("log1mexp", ("log1mexp", "log1mexp_derivative"), domains={"input": D.LOG1MEXP})


def _at_a_knot(np_, inputs, params) -> bool:
    """Some x + 1 at 0 or 2 in the case's dtype: x within a bfloat16 spacing of ±1."""
    x = inputs["input"]
    with np_.errstate(invalid="ignore"):
        return bool((np_.abs(np_.abs(x) - 1) <= 2.0**-7).any())


def _clip_splitting_ties(T, x):
    # JAX's clip is minimum(maximum(x + 1, 0), 2): at a tie with a bound the gradient is halved
    zero = T.zeros_like(x)
    return T.minimum(T.maximum(x + 1, zero), zero + 2) * 0.5


# jax.nn.sparse_sigmoid (sparse_plus' derivative): the reference's composite is clamp's
_jax_only(
    "sparse_sigmoid",
    ("clamp", "add", "mul"),
    conventions=(
        Convention(
            "sparse-sigmoid-derivative-at-the-knots",
            "sparse_sigmoid's derivative at x = ±1 (x + 1 at a bound of the clamp to [0, 2]): the "
            "reference (PyTorch's clamp) passes the gradient there, 1/2; JAX's clip (minimum of maximum) "
            "splits the tie, 1/4",
            _at_a_knot,
            (Alternative("jax-clip-splits-the-tie", _clip_splitting_ties, "jax.nn.sparse_sigmoid"),),
        ),
    ),
)
unary(
    "softplus",
    lambda T, x, beta: T.nn.functional.softplus(x, beta=beta),
    lambda J, x, beta: J.nn.softplus(x * beta) / beta,
    lambda tf, x, beta: tf.math.softplus(x * beta) / beta,
    params={"beta": st.sampled_from([1.0, 2.0, 0.5])},
    note="JAX and TensorFlow have no beta or threshold: softplus(beta x) / beta (PyTorch returns x past "
    "beta x > 20, within rounding of the smooth form)",
)
unary(
    "elu",
    lambda T, x, alpha: T.nn.functional.elu(x, alpha),
    lambda J, x, alpha: J.nn.elu(x, alpha),
    lambda tf, x, alpha: tf.where(
        x > 0, x, alpha * tf.math.expm1(tf.math.minimum(x, 0))
    ),  # no inf*0 in the unselected branch
    domains={"input": D.KINK_0},
    params={"alpha": st.sampled_from([1.0, 0.5, 2.0])},
    rules=("elu",),
    conventions=(
        Convention(
            "elu-gradient-at-nan",
            "elu's derivative at NaN: PyTorch's elu_backward passes the gradient (x <= 0 is false for "
            "NaN: the positive branch, 1)",
            any_nan,
            (
                Alternative(
                    "the-negative-branch",
                    lambda T, x, alpha: T.where(T.isnan(x), alpha * x, T.nn.functional.elu(x, alpha)),
                    "TensorFlow (tf.where(x > 0, x, alpha * expm1(minimum(x, 0))) and keras.ops.elu): "
                    "x > 0 is false for NaN, the negative branch's slope alpha * e^0 = alpha",
                ),
            ),
        ),
        elu_second_derivative_at_zero(
            lambda T, x, alpha: alpha * T.expm1(x), lambda T, x, alpha: T.nn.functional.elu(x, alpha)
        ),
    ),
)
unary(
    "selu",
    lambda T, x: T.nn.functional.selu(x),
    lambda J, x: J.nn.selu(x),
    lambda tf, x: tf.nn.selu(x),
    domains={"input": D.KINK_0},
    rules=("elu",),
    conventions=(
        elu_second_derivative_at_zero(
            lambda T, x: SELU_SCALE * SELU_ALPHA * T.expm1(x), lambda T, x: T.nn.functional.selu(x)
        ),
    ),
)
unary(
    "celu",
    lambda T, x, alpha: T.nn.functional.celu(x, alpha),
    lambda J, x, alpha: J.nn.celu(x, alpha),
    lambda tf, x, alpha: tf.where(x > 0, x, alpha * tf.math.expm1(tf.math.minimum(x, 0) / alpha)),
    domains={"input": D.KINK_0},
    params={"alpha": st.sampled_from([1.0, 0.5, 2.0])},
    conventions=(
        elu_second_derivative_at_zero(
            lambda T, x, alpha: alpha * T.expm1(x / alpha), lambda T, x, alpha: T.nn.functional.celu(x, alpha)
        ),
    ),
)


def leaky_relu_at_zero(slope_of):
    """leaky_relu's subgradient at its kink x = 0: PyTorch's is the slope (x > 0 ? 1 : slope)."""

    def one(T, x, **params):
        return T.where(x >= 0, x, x * slope_of(params))

    return Convention(
        "leaky-relu-gradient-at-zero",
        "leaky_relu's subgradient at its kink x = 0: PyTorch's leaky_relu_backward gives the slope",
        any_zero,
        (Alternative("one", one, "JAX: jax.nn.leaky_relu is where(x >= 0, x, slope * x), 1 at 0"),),
    )


unary(
    "leaky_relu",
    lambda T, x, slope: T.nn.functional.leaky_relu(x, slope),
    lambda J, x, slope: J.nn.leaky_relu(x, slope),
    lambda tf, x, slope: tf.nn.leaky_relu(x, slope),
    domains={"input": D.KINK_0},
    params={"slope": st.sampled_from([0.01, 0.2, -0.5])},
    conventions=(leaky_relu_at_zero(lambda params: params["slope"]),),
)
# relu6 = hardtanh on [0, 6] (F.relu6 calls it; jax.nn.relu6, tf.nn.relu6): every framework's
# gradient is 0 at the kinks 0 and 6 (hardtanh_backward, JAX's select on 0 < x < 6, Relu6Grad)
unary(
    "relu6",
    lambda T, x: T.nn.functional.relu6(x),
    lambda J, x: J.nn.relu6(x),
    lambda tf, x: tf.nn.relu6(x),
    rules=("hardtanh",),
    domains={"input": D.domain("whole line: kinks at 0 and 6", -math.inf, math.inf, D.Point("kink 0", 0.0),
                               D.Point("kink 6", 6.0))},  # fmt: skip
    conventions=(
        Convention(
            "relu6-gradient-at-nan",
            "relu6's derivative at NaN: the reference passes the gradient (PyTorch's scalar hardtanh "
            "formula: x <= 0 and x >= 6 are false for NaN)",
            any_nan,
            (
                Alternative(
                    "zero",
                    lambda T, x: T.where(T.isnan(x), x.detach(), T.nn.functional.relu6(x)),
                    "PyTorch's vectorised CPU loop, JAX's select on 0 < x < 6, TensorFlow's Relu6Grad: 0",
                ),
            ),
        ),
    ),
)
unary(
    "hardtanh",
    lambda T, x, lo, hi: T.nn.functional.hardtanh(x, lo, hi),
    lambda J, x, lo, hi: J.jnp.clip(x, lo, hi),
    lambda tf, x, lo, hi: tf.clip_by_value(x, lo, hi),
    # after the simplest draw: a kink at 0, min_val = max_val = 0 (the two kinks at one point), far out
    params={"lo": st.sampled_from([-1.0, -0.5, 0.0, -256.0]), "hi": st.sampled_from([1.0, 2.0, 0.0, 256.0])},
    domains={"input": D.domain("whole line: kinks at min_val and max_val", -math.inf, math.inf,
                               D.param_point("kink min_val", "lo"), D.param_point("kink max_val", "hi"))},  # fmt: skip
    conventions=(
        Convention(
            "hardtanh-gradient-at-the-bounds",
            "hardtanh's subgradient where x equals a bound (a kink): PyTorch's hardtanh_backward gives 0 "
            "at x <= min_val and x >= max_val",
            at_params("lo", "hi"),
            (
                Alternative(
                    "half",
                    away_from_nan(
                        lambda T, x, lo, hi: T.minimum(T.maximum(x, T.full_like(x, lo)), T.full_like(x, hi)),
                        lambda T, x, lo, hi: T.nn.functional.hardtanh(x, lo, hi),
                    ),
                    "jnp.clip (JAX has no hardtanh): minimum(maximum(x, lo), hi) halves it",
                ),
                Alternative(
                    "whole",
                    lambda T, x, lo, hi: T.clamp(x, lo, hi),
                    "tf.clip_by_value (TensorFlow has no hardtanh): the whole gradient, as torch.clamp",
                ),
            ),
        ),
        Convention(
            "hardtanh-gradient-at-nan",
            "hardtanh's derivative at NaN: the reference passes the gradient (PyTorch's scalar formula: "
            "x <= min_val and x >= max_val are false for NaN)",
            any_nan,
            (
                Alternative(
                    "zero",
                    lambda T, x, lo, hi: T.where(T.isnan(x), x.detach(), T.nn.functional.hardtanh(x, lo, hi)),
                    "PyTorch's vectorised CPU loop, jnp.clip's select masks, tf.clip_by_value: 0",
                ),
            ),
        ),
    ),
)
unary(
    "hardsigmoid",
    lambda T, x: T.nn.functional.hardsigmoid(x),
    lambda J, x: J.nn.hard_sigmoid(x),
    # Keras's hard_sigmoid (keras.activations, TensorFlow backend): relu6's gradient is 0 at x + 3 = 0
    # and 6, PyTorch's at x = -3 and 3; tf.clip_by_value passes the gradient at its bounds (g/6 at
    # x = +-3, seed-2 campaign)
    lambda tf, x: tf.nn.relu6(x + 3) / 6,
    domains={"input": D.KINKS_3},
    checks=("forward", "vjp", "jvp"),  # PyTorch: the derivative of hardsigmoid_backward is not implemented
    conventions=(
        Convention(
            "hardsigmoid-gradient-at-nan",
            "hardsigmoid's derivative at NaN (no number): PyTorch's hardsigmoid_backward gives 0 "
            "(-3 < x < 3 is false for NaN)",
            any_nan,
            (
                Alternative(
                    "propagate",
                    # x * x: NaN at a NaN x, and so is its derivative
                    lambda T, x: T.where(T.isnan(x), x * x, T.nn.functional.hardsigmoid(x)),
                    "TensorFlow's forward mode (tf.autodiff.ForwardAccumulator of relu6(x + 3) / 6, "
                    "keras.ops.hard_sigmoid alike): NaN; its GradientTape gives 0",
                ),
            ),
        ),
    ),
)
unary(
    "hardswish",
    lambda T, x: T.nn.functional.hardswish(x),
    lambda J, x: J.nn.hard_swish(x),
    # Keras's hard_silu, x * relu6(x + 3) / 6: gradient 0 at x = -3 and 1 at 3 as PyTorch's
    # hardswish_backward; x * clip_by_value(x + 3, 0, 6) / 6 gave -1/2 and 3/2 there
    lambda tf, x: x * tf.nn.relu6(x + 3) / 6,
    domains={"input": D.KINKS_3},
    rules=("hardswish", "hardswish_backward"),  # its VJP is hardswish_backward (vjp_vjp reaches its VJP)
)
unary(
    "hardshrink",
    lambda T, x, lambd: T.nn.functional.hardshrink(x, lambd),
    # PyTorch's formula (neither framework has the op): nan passes through, with its gradient
    lambda J, x, lambd: J.jnp.where((x >= -lambd) & (x <= lambd), 0, x),
    lambda tf, x, lambd: tf.where((x >= -lambd) & (x <= lambd), tf.zeros_like(x), x),
    params={"lambd": st.sampled_from([0.5, 1.0, 0.0, 256.0])},  # (0: the two steps at one point)
    domains={"input": D.domain("whole line: steps at -lambd and lambd", -math.inf, math.inf,
                               D.param_point("step -lambd", "lambd", -1.0), D.param_point("step lambd", "lambd"))},  # fmt: skip
)
unary(
    "softshrink",
    lambda T, x, lambd: T.nn.functional.softshrink(x, lambd),
    # PyTorch's formula: nan passes through, with its gradient
    lambda J, x, lambd: J.jnp.where(
        x > lambd, x - lambd, J.jnp.where(x < -lambd, x + lambd, J.jnp.where(x != x, x, 0))
    ),
    lambda tf, x, lambd: tf.where(
        x > lambd, x - lambd, tf.where(x < -lambd, x + lambd, tf.where(x != x, x, tf.zeros_like(x)))
    ),
    params={"lambd": st.sampled_from([0.5, 1.0, 0.0, 256.0])},  # (0: the two kinks at one point)
    domains={"input": D.domain("whole line: kinks at -lambd and lambd", -math.inf, math.inf,
                               D.param_point("kink -lambd", "lambd", -1.0), D.param_point("kink lambd", "lambd"))},  # fmt: skip
)
unary(
    "threshold",
    lambda T, x, th, value: T.nn.functional.threshold(x, th, value),
    # x <= th takes value: nan passes through with its gradient, as in PyTorch
    lambda J, x, th, value: J.jnp.where(x <= th, value, x),
    lambda tf, x, th, value: tf.where(x <= th, tf.fill(tf.shape(x), tf.constant(value, x.dtype)), x),
    # 0.5 first: the simplest draw's (the reach sweep's) step is away from 0, where a fixed point would be
    params={"th": st.sampled_from([0.5, 0.0, -1.5, 256.0]), "value": st.sampled_from([0.0, -1.0])},
    domains={"input": D.domain("whole line: a step at threshold", -math.inf, math.inf,
                               D.param_point("step threshold", "th"))},  # fmt: skip
)


@st.composite
def _prelu(draw):
    # a batch of 1 to 3 first, the empty batch after: the simplest draw (the reach sweep's at the
    # default budget) then holds elements, so its kink x = 0 is evaluated with data
    n = draw(st.one_of(st.integers(1, 3), st.just(0)))
    c = draw(st.integers(1, 4))
    rest = draw(tensor_shapes(0, 2, 64, 0))
    return {"values": draw(value_kinds())}, {"input": (n, c, *rest), "weight": (c,)}


def _bcast(x, w, reshape):
    return reshape(w, (-1,) + (1,) * (len(x.shape) - 2))


record(
    "prelu",
    FAMILY,
    inputs=("input", "weight"),
    sample=lambda: _prelu(),
    fn=lambda T, x, w: T.nn.functional.prelu(x, w),
    domains={"input": D.KINK_0},  # the weight is the slope left of 0 (torch-prelu-jvp-at-zero: its derivatives there)
    # the slope masked to 0 where x > 0 (no inf*0 in the unselected branch): with w * x there, an
    # infinite or NaN weight times the zero cotangent the select sends that branch made the input's
    # derivative at x > 0 NaN, where PyTorch's prelu_backward (and the mathematics: prelu is x there)
    # gives 1 (seed-2 seeded draws, values 'nonfinite')
    jax=lambda J, x, w: J.jnp.where(x > 0, x, J.jnp.where(x > 0, 0, _bcast(x, w, J.jnp.reshape)) * x),
    tf=lambda tf, x, w: tf.where(x > 0, x, tf.where(x > 0, tf.zeros_like(x), _bcast(x, w, tf.reshape)) * x),
)


@st.composite
def _glu(draw):
    shape = list(draw(tensor_shapes(1, 3, 256, 1)))
    dim = draw(st.integers(0, len(shape) - 1))
    shape[dim] = 2 * draw(st.integers(1, 3))
    return {"dim": dim, "values": draw(value_kinds())}, {"input": tuple(shape)}


def _halves(x, dim, split):
    return split(x, 2, axis=dim)


record(
    "glu",
    FAMILY,
    sample=lambda: _glu(),
    fn=lambda T, x, dim: T.nn.functional.glu(x, dim),
    jax=lambda J, x, dim: J.nn.glu(x, axis=dim),
    tf=lambda tf, x, dim: (lambda a, b: a * tf.math.sigmoid(b))(*_halves(x, dim, tf.split)),
)


@st.composite
def _rrelu(draw):
    return {"values": draw(value_kinds())}, {"input": draw(tensor_shapes()), "noise": None}


record(
    "rrelu_with_noise",
    FAMILY,
    inputs=("input",),
    sample=lambda: _unary(None)(),
    fn=lambda T, x: T.nn.functional.rrelu(x, 0.125, 0.25, training=False),
    domains={"input": D.KINK_0},
    jax=lambda J, x: J.nn.leaky_relu(x, (0.125 + 0.25) / 2),
    tf=lambda tf, x: tf.nn.leaky_relu(x, (0.125 + 0.25) / 2),
    conventions=(leaky_relu_at_zero(lambda params: (0.125 + 0.25) / 2),),
    note="evaluation mode (the slope is (lower + upper) / 2): training draws random slopes no other "
    "framework can reproduce",
    vmap_refused={
        "torch": "torch.func.vmap has no batching rule for rrelu: it raises 'vmap: we do not yet support "
        "aten::rrelu' (aten::rrelu_with_noise for the per-sample VJP)",
    },
)

# The exact derivative primitives of the smooth activations (reference/ops/rules/activations.py,
# "exact derivatives"): reached through their functions' records.
for _fn, _record in (
    ("softplus", "softplus, log_sigmoid and glu records (sigmoid and its derivatives)"),
    ("silu", "silu record"),
    ("mish", "mish record"),
    ("gelu", "gelu record (approximate='none')"),
    ("gelu_tanh", "gelu record (approximate='tanh')"),
):
    not_fuzzed_derivatives(_fn, FAMILY, _record)


# ---- jax.nn.squareplus (reference/ops/rules/jax_activations.py) ---------------------------------
# (x + √(x² + b))/2 with b >= 0 (So 2021; b = 4 by default), both arguments differentiated: JAX
# alone has it. b on [0, inf) (at b = 0 the function is relu, its kink at x = 0); the gate draws b
# positive
@st.composite
def _squareplus_sample(draw):
    x, b = draw(broadcast_shapes(max_rank=2, max_size=24))
    return {"values": draw(value_kinds())}, {"x": x, "b": b}


def _jax_squareplus(J, x, b):
    import jax.nn

    return jax.nn.squareplus(x, b)


record(
    "squareplus",
    FAMILY,
    inputs=("x", "b"),
    sample=_squareplus_sample,
    fn=lambda T, x, b: T.nn.functional.squareplus(x, b),
    torch="PyTorch has no squareplus (torch 2.13: no torch.nn.functional.squareplus)",
    jax=_jax_squareplus,
    tf="TensorFlow has no squareplus (tf.math and tf.nn: none)",
    domains={"b": D.domain("[0, inf): b", 0.0, math.inf, D.Point("b = 0", 0.0, "above"), gate="pos")},
)
not_fuzzed(
    "squareplus_derivative",
    FAMILY,
    "internal: the exact partial derivatives of squareplus; reached by the squareplus record's vjp, jvp, the "
    "second-order checks and vmap_vjp",
)
