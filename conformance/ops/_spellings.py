"""Each op's other public spellings, per framework: a bug in one entry point is invisible through
another.

A record's primary spellings (``fn``/``torch``, ``jax``, ``tf`` in its family module) are one entry
point per framework. Users call others, and they run other code:

* PyTorch: the in-place variant (``x.exp_()``, ``F.elu(x, inplace=True)``), whose autograd formula
  is written in terms of the *result* (derivatives.yaml's ``result`` entries: ``exp_``,
  ``sigmoid_``, ``tanh_``, ``elu_`` with ``is_result=True``, ...), the Tensor method, and the
  ``torch.special`` aliases;
* JAX: ``jax.lax`` (the primitive itself, without ``jax.numpy``'s promotion and custom JVPs),
  ``jax.scipy.special`` and ``jax.numpy`` forms of ``jax.nn`` functions (``logaddexp(x, 0)`` for
  softplus);
* TensorFlow: ``tf.keras.ops`` (Keras 3's own formulas over TF ops: ``hard_sigmoid``, ``gelu``,
  ``log_softmax``, ...) and ``tf.experimental.numpy`` (NumPy's semantics over TF ops: ``hypot``,
  ``logaddexp``, ``sinc``, ``var`` with ``ddof``).

Each spelling takes the primary spelling's arguments and computes the same function (a test runs
every one against its primary at generic points). A case names the spelling a framework runs in
``params["spelling_<framework>"]`` (drawn per case: ``conformance.strategies.record_spellings``;
the coverage steering counts each as a feature, so a campaign reaches them all); results, known
entries (``where = [{path = "params.spelling_jax", ...}]``) and reproducers name it. The in-place
variants run on a clone: the op's input is a leaf a user would not write in place.
"""

from __future__ import annotations

from dataclasses import replace

from conformance.ops import FRAMEWORKS, PRIMARY, RECORDS
from conformance.ops._run import refuses
from conformance.ops.matmul import _highest
from conformance.ops.reductions import _axis
from conformance.unsupported import Unsupported


def _keras(tf):
    return tf.keras.ops


def _tnp(tf):
    import tensorflow.experimental.numpy as tnp

    return tnp


def _jss(J):
    import jax.scipy.special

    return jax.scipy.special


def _keras_moment(tf, x, dim, keepdim, correction, root):
    """keras.ops.var / std have no ddof: the correction-0 (population) form only."""
    if correction != 0:
        raise Unsupported("keras.ops.var and keras.ops.std have no correction (ddof) argument")
    return (_keras(tf).std if root else _keras(tf).var)(x, axis=_axis(dim), keepdims=keepdim)


def _abs_(x):
    """``Tensor.abs_``: PyTorch has no in-place abs of a complex tensor (its result is real)."""
    if x.is_complex():
        raise Unsupported(
            "Tensor.abs_ of a complex tensor: torch raises 'In-place abs is not supported for "
            "complex tensors.' (the result is real and cannot be written in place)"
        )
    return x.clone().abs_()


def spell(name, torch=None, jax=None, tensorflow=None):
    """Add ``name``'s other spellings (``{spelling name: function}`` per framework) to its record."""
    rec = RECORDS[name]
    added = {"torch": torch or {}, "jax": jax or {}, "tensorflow": tensorflow or {}}
    merged = {f: {**rec.spellings.get(f, {}), **added[f]} for f in FRAMEWORKS}
    for framework, named in added.items():
        if PRIMARY in named or any(n in rec.spellings.get(framework, {}) for n in named):
            raise ValueError(f"{name}: {framework} spelling declared twice or named {PRIMARY!r}")
        if named and isinstance(rec.spelling(framework), str):
            raise ValueError(f"{name}: {framework} has other spellings but no primary one")
    RECORDS[name] = replace(rec, spellings={f: s for f, s in merged.items() if s})


def primary_tf(name, fn):
    """A TensorFlow spelling for a record that had none (its family module says why not: tf.math
    has no such op), from ``tf.experimental.numpy``."""
    rec = RECORDS[name]
    if not isinstance(rec.tf, str) and rec.tf is not None:
        raise ValueError(f"{name}: already has a TensorFlow spelling")
    RECORDS[name] = replace(rec, tf=fn)


# ---- elementwise: in-place variants (result-based backward), lax, tf.keras.ops, tnp ---------------
spell(
    "exp",
    torch={"Tensor.exp_": lambda T, x: x.clone().exp_()},
    jax={"lax.exp": lambda J, x: J.lax.exp(x)},
    tensorflow={
        "keras.ops.exp": lambda tf, x: _keras(tf).exp(x),
        "tnp.exp": lambda tf, x: _tnp(tf).exp(x),
    },
)
spell(
    "log",
    torch={"Tensor.log_": lambda T, x: x.clone().log_()},
    jax={"lax.log": lambda J, x: J.lax.log(x)},
    tensorflow={"keras.ops.log": lambda tf, x: _keras(tf).log(x)},
)
spell(
    "tanh",
    torch={"Tensor.tanh_": lambda T, x: x.clone().tanh_()},
    jax={"lax.tanh": lambda J, x: J.lax.tanh(x)},
    tensorflow={"keras.ops.tanh": lambda tf, x: _keras(tf).tanh(x)},
)
spell(
    "sigmoid",
    torch={
        "Tensor.sigmoid_": lambda T, x: x.clone().sigmoid_(),
        "torch.special.expit": lambda T, x: T.special.expit(x),
    },
    jax={
        "lax.logistic": lambda J, x: J.lax.logistic(x),
        "jax.scipy.special.expit": lambda J, x: _jss(J).expit(x),
    },
    tensorflow={"keras.ops.sigmoid": lambda tf, x: _keras(tf).sigmoid(x)},
)
spell(
    "sqrt",
    torch={"Tensor.sqrt_": lambda T, x: x.clone().sqrt_()},
    jax={"lax.sqrt": lambda J, x: J.lax.sqrt(x)},
    tensorflow={"keras.ops.sqrt": lambda tf, x: _keras(tf).sqrt(x)},
)
spell("rsqrt", torch={"Tensor.rsqrt_": lambda T, x: x.clone().rsqrt_()})
spell(
    "reciprocal",
    torch={"Tensor.reciprocal_": lambda T, x: x.clone().reciprocal_()},
    tensorflow={"tnp.reciprocal": lambda tf, x: _tnp(tf).reciprocal(x)},
)
spell(
    "expm1",
    torch={"Tensor.expm1_": lambda T, x: x.clone().expm1_()},
    jax={"lax.expm1": lambda J, x: J.lax.expm1(x)},
    tensorflow={"keras.ops.expm1": lambda tf, x: _keras(tf).expm1(x)},
)
spell(
    "log1p",
    torch={"Tensor.log1p_": lambda T, x: x.clone().log1p_()},
    jax={"lax.log1p": lambda J, x: J.lax.log1p(x)},
    tensorflow={"keras.ops.log1p": lambda tf, x: _keras(tf).log1p(x)},
)
spell(
    "erf",
    torch={"Tensor.erf_": lambda T, x: x.clone().erf_()},
    jax={"lax.erf": lambda J, x: J.lax.erf(x)},
    tensorflow={"keras.ops.erf": lambda tf, x: _keras(tf).erf(x)},
)
spell(
    "erfinv",
    torch={"Tensor.erfinv_": lambda T, x: x.clone().erfinv_()},
    jax={"lax.erf_inv": lambda J, x: J.lax.erf_inv(x)},
    tensorflow={"keras.ops.erfinv": lambda tf, x: _keras(tf).erfinv(x)},
)
spell(
    "lgamma",
    torch={"Tensor.lgamma_": lambda T, x: x.clone().lgamma_()},
    jax={"lax.lgamma": lambda J, x: J.lax.lgamma(x)},
)
spell(
    "digamma",
    torch={
        "Tensor.digamma_": lambda T, x: x.clone().digamma_(),
        "torch.special.psi": lambda T, x: T.special.psi(x),
    },
    jax={"lax.digamma": lambda J, x: J.lax.digamma(x)},
)
spell("sin", torch={"Tensor.sin_": lambda T, x: x.clone().sin_()}, jax={"lax.sin": lambda J, x: J.lax.sin(x)})
spell("cos", torch={"Tensor.cos_": lambda T, x: x.clone().cos_()}, jax={"lax.cos": lambda J, x: J.lax.cos(x)})
spell("tan", torch={"Tensor.tan_": lambda T, x: x.clone().tan_()}, jax={"lax.tan": lambda J, x: J.lax.tan(x)})
spell(
    "abs",
    torch={"Tensor.abs_": lambda T, x: _abs_(x)},
    jax={"lax.abs": lambda J, x: J.lax.abs(x)},
    tensorflow={"keras.ops.abs": lambda tf, x: _keras(tf).abs(x)},
)
# tf.math has none of these; tf.experimental.numpy spells them (NumPy's formulas over TF ops)
primary_tf("sinc", lambda tf, x: _tnp(tf).sinc(x))
primary_tf("hypot", lambda tf, x, y: _tnp(tf).hypot(x, y))
primary_tf("log2", lambda tf, x: _tnp(tf).log2(x))
primary_tf("log10", lambda tf, x: _tnp(tf).log10(x))
primary_tf("exp2", lambda tf, x: _tnp(tf).exp2(x))
primary_tf("deg2rad", lambda tf, x: _tnp(tf).deg2rad(x))
primary_tf("rad2deg", lambda tf, x: _tnp(tf).rad2deg(x))
primary_tf("logaddexp", lambda tf, x, y: _tnp(tf).logaddexp(x, y))
spell("logaddexp", tensorflow={"keras.ops.logaddexp": lambda tf, x, y: _keras(tf).logaddexp(x, y)})
spell(
    "atan2",
    jax={"lax.atan2": lambda J, x, y: J.lax.atan2(*J.jnp.broadcast_arrays(x, y))},
    tensorflow={"tnp.arctan2": lambda tf, x, y: _tnp(tf).arctan2(x, y)},
)
spell(
    "maximum",
    jax={"lax.max": lambda J, x, y: J.lax.max(*J.jnp.broadcast_arrays(x, y))},
    tensorflow={"keras.ops.maximum": lambda tf, x, y: _keras(tf).maximum(x, y)},
)
spell(
    "minimum",
    jax={"lax.min": lambda J, x, y: J.lax.min(*J.jnp.broadcast_arrays(x, y))},
    tensorflow={"keras.ops.minimum": lambda tf, x, y: _keras(tf).minimum(x, y)},
)
spell("pow", tensorflow={"tnp.power": lambda tf, x, exponent: _tnp(tf).power(x, exponent)})

# ---- activations: in-place variants (their backward reads the result), jax.numpy / keras forms --
spell(
    "relu",
    torch={
        "F.relu(inplace=True)": lambda T, x: T.nn.functional.relu(x.clone(), inplace=True),
    },
    tensorflow={"keras.ops.relu": lambda tf, x: _keras(tf).relu(x)},
)
spell(
    "elu",
    torch={
        "F.elu(inplace=True)": lambda T, x, alpha: T.nn.functional.elu(x.clone(), alpha, inplace=True),
    },
    tensorflow={"keras.ops.elu": lambda tf, x, alpha: _keras(tf).elu(x, alpha)},
)
spell(
    "selu",
    torch={"F.selu(inplace=True)": lambda T, x: T.nn.functional.selu(x.clone(), inplace=True)},
    tensorflow={"keras.ops.selu": lambda tf, x: _keras(tf).selu(x)},
)
spell(
    "celu",
    torch={
        "F.celu(inplace=True)": lambda T, x, alpha: T.nn.functional.celu(x.clone(), alpha, inplace=True),
    },
    tensorflow={"keras.ops.celu": lambda tf, x, alpha: _keras(tf).celu(x, alpha)},
)
spell(
    "leaky_relu",
    torch={
        "F.leaky_relu(inplace=True)": lambda T, x, slope: T.nn.functional.leaky_relu(
            x.clone(), slope, inplace=True
        ),
    },
    tensorflow={
        "keras.ops.leaky_relu": lambda tf, x, slope: _keras(tf).leaky_relu(x, negative_slope=slope),
    },
)
def _at_unit_bounds(case, check):
    """jax.nn.hard_tanh is hardtanh at the bounds [-1, 1] only (it takes no bounds)."""
    p = case.params.as_dict()
    if (p.get("lo"), p.get("hi")) != (-1.0, 1.0):
        return f"jax.nn.hard_tanh clips to [-1, 1] only (it takes no bounds): lo={p.get('lo')}, hi={p.get('hi')}"
    return None


@refuses(_at_unit_bounds)
def _jax_hard_tanh(J, x, lo, hi):
    """jax.nn.hard_tanh, where(x > 1, 1, where(x < -1, -1, x)): the whole gradient at the bounds
    (hardtanh-gradient-at-the-bounds' "whole") and at NaN (the reference's)."""
    return J.nn.hard_tanh(x)


spell(
    "hardtanh",
    torch={
        "F.hardtanh(inplace=True)": lambda T, x, lo, hi: T.nn.functional.hardtanh(x.clone(), lo, hi, inplace=True),
    },
    jax={"jax.nn.hard_tanh": _jax_hard_tanh},
)
spell(
    "hardsigmoid",
    torch={
        "F.hardsigmoid(inplace=True)": lambda T, x: T.nn.functional.hardsigmoid(x.clone(), inplace=True),
    },
    tensorflow={"keras.ops.hard_sigmoid": lambda tf, x: _keras(tf).hard_sigmoid(x)},
)
spell(
    "hardswish",
    torch={
        "F.hardswish(inplace=True)": lambda T, x: T.nn.functional.hardswish(x.clone(), inplace=True),
    },
    tensorflow={"keras.ops.hard_silu": lambda tf, x: _keras(tf).hard_silu(x)},
)
spell(
    "silu",
    torch={"F.silu(inplace=True)": lambda T, x: T.nn.functional.silu(x.clone(), inplace=True)},
    tensorflow={"keras.ops.silu": lambda tf, x: _keras(tf).silu(x)},
)
spell(
    "gelu",
    tensorflow={
        "keras.ops.gelu": lambda tf, x, approximate: _keras(tf).gelu(x, approximate=approximate == "tanh"),
    },
)
spell(
    "softplus",
    jax={"jnp.logaddexp(x, 0)": lambda J, x, beta: J.jnp.logaddexp(x * beta, 0) / beta},
    tensorflow={"keras.ops.softplus": lambda tf, x, beta: _keras(tf).softplus(x * beta) / beta},
)
spell(
    "log_sigmoid",
    tensorflow={"keras.ops.log_sigmoid": lambda tf, x: _keras(tf).log_sigmoid(x)},
)
spell(
    "softmax",
    torch={"torch.special.softmax": lambda T, x, dim: T.special.softmax(x, dim)},
    jax={"jax.scipy.special.softmax": lambda J, x, dim: _jss(J).softmax(x, axis=dim)},
    tensorflow={"keras.ops.softmax": lambda tf, x, dim: _keras(tf).softmax(x, axis=dim)},
)
spell(
    "log_softmax",
    torch={"torch.special.log_softmax": lambda T, x, dim: T.special.log_softmax(x, dim)},
    jax={"jax.scipy.special.log_softmax": lambda J, x, dim: _jss(J).log_softmax(x, axis=dim)},
    tensorflow={"keras.ops.log_softmax": lambda tf, x, dim: _keras(tf).log_softmax(x, axis=dim)},
)

# ---- reductions and products: the numpy-style and keras entry points ----------------------------
spell(
    "logsumexp",
    torch={"torch.special.logsumexp": lambda T, x, dim, keepdim: T.special.logsumexp(x, dim, keepdim)},
    tensorflow={
        "keras.ops.logsumexp": lambda tf, x, dim, keepdim: _keras(tf).logsumexp(x, axis=_axis(dim), keepdims=keepdim),
    },
)
spell(
    "var",
    tensorflow={
        "tnp.var": lambda tf, x, dim, keepdim, correction: _tnp(tf).var(
            x, axis=_axis(dim), ddof=correction, keepdims=keepdim
        ),
        "keras.ops.var": lambda tf, x, dim, keepdim, correction: _keras_moment(tf, x, dim, keepdim, correction, False),
    },
)
spell(
    "std",
    tensorflow={
        "keras.ops.std": lambda tf, x, dim, keepdim, correction: _keras_moment(tf, x, dim, keepdim, correction, True),
    },
)  # tnp.std has no ddof
spell(
    "cumsum",
    jax={"lax.cumsum": lambda J, x, dim: J.lax.cumsum(x, axis=dim % max(x.ndim, 1)) if x.ndim else x},
    tensorflow={"keras.ops.cumsum": lambda tf, x, dim: _keras(tf).cumsum(x, axis=dim)},
)
spell(
    "cumprod",
    jax={"lax.cumprod": lambda J, x, dim: J.lax.cumprod(x, axis=dim % max(x.ndim, 1)) if x.ndim else x},
    tensorflow={"keras.ops.cumprod": lambda tf, x, dim: _keras(tf).cumprod(x, axis=dim)},
)
spell(
    "mm",
    torch={"Tensor.__matmul__": lambda T, a, b: a @ b},
    jax={
        "lax.dot_general": lambda J, a, b: J.lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision=_highest(J)),
        "jnp.einsum": lambda J, a, b: J.jnp.einsum("ij,jk->ik", a, b, precision=_highest(J)),
    },
    tensorflow={
        "keras.ops.matmul": lambda tf, a, b: _keras(tf).matmul(a, b),
        "tf.einsum": lambda tf, a, b: tf.einsum("ij,jk->ik", a, b),
    },
)
