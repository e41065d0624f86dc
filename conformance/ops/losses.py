"""Records of the loss primitives (reference/ops/rules/losses.py): nll_loss (targets with ignored
entries, class weights, every reduction) and binary_cross_entropy."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.strategies import value_kinds

FAMILY = "losses"
IGNORE = -100


@st.composite
def _nll(draw):
    n, c = draw(st.integers(1, 9)), draw(st.sampled_from([1, 2, 3, 5, 8, 16, 17]))
    target = [draw(st.one_of(st.integers(0, c - 1), st.just(IGNORE))) for _ in range(n)]
    if all(t == IGNORE for t in target):
        target[0] = 0  # 'mean' over no target is 0/0
    return {
        "target": target,
        "reduction": draw(st.sampled_from(["mean", "sum", "none"])),
        "values": draw(value_kinds(("normal", "wide", "ties", "large"))),
    }, {"input": (n, c), "weight": (c,)}


def _jax_nll(J, x, w, target, reduction):
    jnp = J.jnp
    t = jnp.asarray(target)
    valid = t != IGNORE
    ts = jnp.where(valid, t, 0)
    picked = jnp.take_along_axis(x, ts[:, None], axis=1)[:, 0]
    wt = jnp.where(valid, w[ts], 0.0)
    per = -(picked * wt)
    if reduction == "none":
        return per
    return per.sum() if reduction == "sum" else per.sum() / wt.sum()


def _tf_nll(tf, x, w, target, reduction):
    t = tf.constant(target)
    valid = tf.not_equal(t, IGNORE)
    ts = tf.where(valid, t, 0)
    picked = tf.gather(x, ts, axis=1, batch_dims=1)
    wt = tf.where(valid, tf.gather(w, ts), tf.zeros_like(picked))
    per = -(picked * wt)
    if reduction == "none":
        return per
    return tf.reduce_sum(per) if reduction == "sum" else tf.reduce_sum(per) / tf.reduce_sum(wt)


def _torch_target(T, target):
    return T.tensor(target, dtype=T.int64)


record(
    "nll_loss",
    FAMILY,
    rules=("nll_loss", "nll_loss_backward"),
    inputs=("input", "weight"),
    nondiff=("weight",),
    domains={"weight": "pos"},
    sample=_nll,
    fn=lambda T, x, w, target, reduction: T.nn.functional.nll_loss(
        x, _torch_target(T, target), weight=w.detach(), reduction=reduction
    ),
    jax=_jax_nll,
    tf=_tf_nll,
    note="class weights (not differentiable: PyTorch refuses), ignore_index=-100 targets; JAX and TF "
    "spelled with take_along_axis/gather as users write it",
)
not_fuzzed(
    "nll_loss_backward",
    FAMILY,
    "internal: nll_loss's VJP; reached by the nll_loss record's vjp and vjp_vjp checks",
)


@st.composite
def _bce(draw):
    shape = tuple(draw(st.integers(0, 5)) for _ in range(draw(st.integers(0, 3))))
    return {"values": draw(value_kinds(("normal",)))}, {"input": shape, "target": shape}


record(
    "binary_cross_entropy",
    FAMILY,
    inputs=("input", "target"),
    domains={"input": "unit", "target": "unit"},
    sample=_bce,
    fn=lambda T, x, t: T.nn.functional.binary_cross_entropy(x.abs(), t.abs(), reduction="none"),
    jax=lambda J, x, t: (
        -(
            J.jnp.abs(t) * J.jnp.maximum(J.jnp.log(J.jnp.abs(x)), -100.0)
            + (1 - J.jnp.abs(t)) * J.jnp.maximum(J.jnp.log1p(-J.jnp.abs(x)), -100.0)
        )
    ),
    tf=lambda tf, x, t: (
        -(
            tf.abs(t) * tf.maximum(tf.math.log(tf.abs(x)), -100.0)
            + (1 - tf.abs(t)) * tf.maximum(tf.math.log1p(-tf.abs(x)), -100.0)
        )
    ),
    note="input and target |u|, u in (-0.9, 0.9), no exact zeros (PyTorch's gradient at the -100 clamp "
    "is its own kernel's, which the JAX/TF formula spelling does not reproduce); no weight; "
    "JAX and TF have no BCE on probabilities with PyTorch's clamp: spelled as its formula",
)
