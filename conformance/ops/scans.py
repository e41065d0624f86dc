"""Records of the scans (reference/ops/rules/scans.py): cumulative sums, products, extremes and
log-sum-exps along a dim."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "scans"


def along(kinds, max_size=256, min_rank=1):
    @st.composite
    def sample(draw):
        shape = draw(tensor_shapes(min_rank, 3, max_size))
        dim = draw(st.integers(-len(shape), len(shape) - 1)) if shape else 0
        return {"dim": dim, "values": draw(value_kinds(kinds))}, {"input": shape}

    return sample


def _ax(x, dim):
    return dim % len(x.shape)


record(
    "cumsum",
    FAMILY,
    sample=along(None),
    fn=lambda T, x, dim: T.cumsum(x, dim),
    jax=lambda J, x, dim: J.jnp.cumsum(x, axis=dim),
    tf=lambda tf, x, dim: tf.math.cumsum(x, axis=dim),
)
record(
    "cumprod",
    FAMILY,
    sample=along(("normal", "ties", "nonfinite"), max_size=48),
    fn=lambda T, x, dim: T.cumprod(x, dim),
    jax=lambda J, x, dim: J.jnp.cumprod(x, axis=dim),
    tf=lambda tf, x, dim: tf.math.cumprod(x, axis=dim),
    note="ties draw zeros: PyTorch's cumprod gradient with zero factors",
)
record(
    "logcumsumexp",
    FAMILY,
    sample=along(("normal", "ties"), max_size=48),
    fn=lambda T, x, dim: T.logcumsumexp(x, dim),
    jax=lambda J, x, dim: J.lax.cumlogsumexp(x, axis=_ax(x, dim)),
    tf=lambda tf, x, dim: tf.math.cumulative_logsumexp(x, axis=dim),
    note="values spread by less than ~80: PyTorch's logcumsumexp JVP normalises by the max over the "
    "whole dim, so a prefix far below it underflows (a PyTorch departure, docs/conformance.md: "
    "torch.func.jvp(lambda x: torch.logcumsumexp(x, 0), (torch.tensor([0., 100.]),), "
    "(torch.tensor([1., 0.]),)) gives 3.8e-31 for the first element, whose JVP is 1)",
)
for _name, _lax in (("cummax", "cummax"), ("cummin", "cummin")):
    record(
        _name,
        FAMILY,
        sample=along(("normal", "wide", "large")),
        fn=lambda T, x, dim, _n=_name: getattr(T, _n)(x, dim).values,
        jax=lambda J, x, dim, _l=_lax: getattr(J.lax, _l)(x, axis=_ax(x, dim)),
        tf="TensorFlow has no cumulative max/min (tf.scan with tf.maximum is a user loop, not a primitive)",
        note="no ties: PyTorch gives a tie's gradient to the last index reaching the extreme",
    )
