"""Records of the beta family of special functions (reference/ops/rules/special_beta.py): the
regularized incomplete beta function ``betainc(a, b, x)``.

JAX (jax.scipy.special.betainc, lax.betainc) and TensorFlow (tf.math.betainc) differentiate it in x
alone, twice; PyTorch has none (``unsupported``, with the reason). The record differentiates x (a
and b ``nondiff``: JAX raises for their gradient, TensorFlow's is None; tests/conformance/
test_beta_declarations.py holds that on the installed frameworks)."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import _domains as D
from conformance.ops import not_fuzzed, record
from conformance.ops._run import refuses
from conformance.strategies import broadcast_shapes, value_kinds

FAMILY = "special"

#: the mpmath kernels take about a millisecond per element (a, b below 100) to a tenth of a second
#: (a, b near 1e4, x at the mean): at most 24 elements a case
_SIZE = 24

# a and b on (0, inf) (at 0 the mass of the beta distribution sits at an edge); x on [0, 1], the
# density's power singularities at its edges; the gate draws a, b positive and x inside (0.05, 0.95)
_A = D.domain("(0, inf): a", 0.0, math.inf, D.Point("a -> 0", 0.0, "above"), D.Point("a = 1", 1.0), gate="pos")
_B = D.domain("(0, inf): b", 0.0, math.inf, D.Point("b -> 0", 0.0, "above"), D.Point("b = 1", 1.0), gate="pos")
_X = D.domain("[0, 1]: x", 0.0, 1.0, D.Point("x = 0", 0.0, "above"), D.Point("x = 1", 1.0, "below"),
              gate=D.domain("(0, 1)", 0.0, 1.0))  # fmt: skip


def _three_shapes():
    """Three shapes that broadcast together (two drawn so, the third one of them or a scalar)."""

    @st.composite
    def shapes(draw):
        first, second = draw(broadcast_shapes(max_rank=2, max_size=_SIZE))
        third = draw(st.sampled_from([first, second, ()]))
        return draw(st.permutations([first, second, third]))

    return shapes()


def _sample():
    @st.composite
    def sample(draw):
        a, b, x = draw(_three_shapes())
        return {"values": draw(value_kinds())}, {"a": a, "b": b, "x": x}

    return sample


_NO_TORCH_BETAINC = (
    "PyTorch has no regularized incomplete beta function (no torch.special.betainc, torch.betainc or "
    "Tensor method: torch 2.x's special functions stop at the incomplete gamma functions)"
)


def _jax_betainc(J, a, b, x):
    import jax.scipy.special

    return jax.scipy.special.betainc(a, b, x)


def _tf_half(case, check):
    if case.dtype in ("float16", "bfloat16"):  # "Value for attr 'T' of half is not in the list ..."
        return "tf.math.betainc has no float16 or bfloat16 kernel (float and double only)"
    return None


@refuses(_tf_half)
def _tf_betainc(tf, a, b, x):
    """tf.math.betainc takes operands of one shape or scalars ('Shapes of a and b are inconsistent'):
    users broadcast them first."""
    shape = tf.broadcast_dynamic_shape(tf.broadcast_dynamic_shape(tf.shape(a), tf.shape(b)), tf.shape(x))
    return tf.math.betainc(*(tf.broadcast_to(v, shape) for v in (a, b, x)))


record(
    "betainc",
    FAMILY,
    inputs=("a", "b", "x"),
    sample=_sample(),
    fn=lambda T, a, b, x: T.special.betainc(a, b, x),
    torch=_NO_TORCH_BETAINC,
    jax=_jax_betainc,
    tf=_tf_betainc,
    nondiff=("a", "b"),
    domains={"a": _A, "b": _B, "x": _X},
    # lax takes operands of one shape: users broadcast them first
    spellings={"jax": {"lax.betainc": lambda J, a, b, x: J.lax.betainc(*J.jnp.broadcast_arrays(a, b, x))}},
)

not_fuzzed(
    "betainc_derivative",
    FAMILY,
    "internal: ∂_x^m of the regularized incomplete beta function; reached by the betainc record's vjp, "
    "jvp, the second-order checks and vmap_vjp",
)

# ---- the log-beta function betaln(a, b) = ln|B(a, b)| -------------------------------------------
# jax.scipy.special.betaln; TensorFlow's tf.math.lbeta reduces its last axis (ln B of the entries
# along it): lbeta of the stacked pair is betaln. a and b on (0, inf): the poles of Γ at 0 (ln B ->
# inf) and the cancellation of ψ(a) - ψ(a + b) where one parameter is much the smaller.
_BETALN_A = D.domain("(0, inf): a", 0.0, math.inf, D.Point("pole a = 0", 0.0, "above"), D.Point("a = 1", 1.0),
                     gate="pos")  # fmt: skip
_BETALN_B = D.domain("(0, inf): b", 0.0, math.inf, D.Point("pole b = 0", 0.0, "above"), D.Point("b = 1", 1.0),
                     gate="pos")  # fmt: skip


def _two_sample():
    @st.composite
    def sample(draw):
        a, b = draw(broadcast_shapes(max_rank=2, max_size=_SIZE))
        return {"values": draw(value_kinds())}, {"a": a, "b": b}

    return sample


def _jax_betaln(J, a, b):
    import jax.scipy.special

    return jax.scipy.special.betaln(a, b)


def _tf_lbeta(tf, a, b):
    """tf.math.lbeta of the pair stacked on a last axis (broadcast first: tf.stack takes one shape)."""
    shape = tf.broadcast_dynamic_shape(tf.shape(a), tf.shape(b))
    return tf.math.lbeta(tf.stack([tf.broadcast_to(a, shape), tf.broadcast_to(b, shape)], axis=-1))


record(
    "betaln",
    FAMILY,
    inputs=("a", "b"),
    sample=_two_sample(),
    fn=lambda T, a, b: T.special.betaln(a, b),
    torch="PyTorch has no beta or log-beta function (no torch.special.betaln, torch.lbeta or Tensor "
    "method; users write lgamma(a) + lgamma(b) - lgamma(a + b))",
    jax=_jax_betaln,
    tf=_tf_lbeta,
    domains={"a": _BETALN_A, "b": _BETALN_B},
)

not_fuzzed(
    "betaln_derivative",
    FAMILY,
    "internal: ∂_a^i ∂_b^j of the log-beta function; reached by the betaln record's vjp, jvp, the "
    "second-order checks and vmap_vjp",
)
