"""Records of jax.scipy.special's functions of two arguments that PyTorch and TensorFlow lack
(reference.special, reference/ops/functions/special_scipy.py): the beta function ``beta(a, b)``, the
Pochhammer symbol ``poch(z, m)`` (reference/ops/rules/special_gamma_ratio.py), scipy's relative
entropy ``rel_entr(x, y)`` and Kullback-Leibler divergence ``kl_div(x, y)``
(reference/ops/rules/special_entropy.py), the Box-Cox transformations ``boxcox(x, lmbda)`` and
``boxcox1p(x, lmbda)`` (reference/ops/rules/special_boxcox.py), Owen's T ``owens_t(h, a)``
(reference/ops/rules/special_owens_t.py); and TensorFlow's ``xdivy(x, y)``
(reference/ops/rules/special_xdivy.py).

JAX runs every check, both arguments differentiated; PyTorch and TensorFlow have no spelling of any
of them (unsupported, with the reason). xdivy is TensorFlow's alone: TensorFlow runs it, PyTorch and
JAX are unsupported."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import _domains as D
from conformance.ops import not_fuzzed, record
from conformance.ops._conventions import Alternative, Convention
from conformance.strategies import broadcast_shapes, value_kinds

FAMILY = "special"

_NO_TORCH = "PyTorch has no {} (torch 2.13: no torch.special.{} or Tensor method {})"
_NO_TF = "TensorFlow has no {} (tf.math and tf.math.special: none)"


def _jsp(name):
    def fn(J, u, v):
        import jax.scipy.special

        return getattr(jax.scipy.special, name)(u, v)

    return fn


#: the mpmath kernels take tens of microseconds to milliseconds an element (a derivative of order
#: three at arguments near 1e5: tens of milliseconds): at most 24 elements a case
_SIZE = 24


def _sample(first, second):
    """Two broadcasting shapes for the inputs named ``first`` and ``second``."""

    @st.composite
    def sample(draw):
        u, v = draw(broadcast_shapes(max_rank=2, max_size=_SIZE))
        return {"values": draw(value_kinds())}, {first: u, second: v}

    return sample


#: torch.kl_div and torch.nn.functional.kl_div are the loss of log-probabilities: kl_div(input,
#: target, reduction="none") = target·(ln target - input), the first argument ln y, not y
_TORCH_KL_LOSS = (
    "; its torch.kl_div / torch.nn.functional.kl_div is the loss of log-probabilities, target·(ln target - "
    "input): rel_entr of (target, e^input), another function of its arguments"
)


def _record(name, what, inputs, domains, torch_note="", **fields):
    record(
        name,
        FAMILY,
        inputs=inputs,
        sample=_sample(*inputs),
        fn=lambda T, u, v: getattr(T.special, name)(u, v),
        torch=_NO_TORCH.format(what, name, name) + torch_note,
        jax=_jsp(name),
        tf=_NO_TF.format(what),
        domains=domains,
        **fields,
    )
    not_fuzzed(
        f"{name}_derivative",
        FAMILY,
        f"internal: the exact partial derivatives of {what}; reached by the {name} record's vjp, jvp, the "
        "second-order checks and vmap_vjp",
    )


def _whole_line(label, *poles, gate="pos"):
    """The whole line with the poles of Γ at ``poles`` (the gate draws the positive half)."""
    return D.domain(f"whole line: {label}", -math.inf, math.inf, *(D.Point(f"pole {p:g}", p) for p in poles), gate=gate)


# ---- the beta function and the Pochhammer symbol ------------------------------------------------
# B(a, b) and (z)_m are defined on the whole plane but the poles of Γ: a, b, z at 0 and the negative
# integers (and a + b, z + m there: B = 0, (z)_m a pole); the gate draws both arguments positive
_record("beta", "beta function", ("a", "b"),
        {"a": _whole_line("a", 0.0, -1.0), "b": _whole_line("b", 0.0, -1.0)})  # fmt: skip
_record("poch", "Pochhammer symbol", ("z", "m"),
        {"z": _whole_line("z", 0.0, -1.0), "m": D.domain("whole line: m", -math.inf, math.inf, D.Point("m = 0", 0.0),
                                                            gate="pos")})  # fmt: skip


# ---- scipy's relative entropy and Kullback-Leibler divergence -----------------------------------
# x ln(x/y) (- x + y) on x, y > 0 (the value of the edges x = 0 <= y, inf elsewhere): both on [0,
# inf), 0 their lower edge; the gate draws them positive
def _edge(label):
    return D.domain(f"[0, inf): {label}", 0.0, math.inf, D.Point(f"{label} = 0", 0.0, "above"), gate="pos")


def _jax_at_the_edge(kl):
    """JAX's function: its value where x > 0 and y > 0 (through inputs replaced by 1 elsewhere), the
    edge's constants elsewhere (0 at x = 0 <= y, inf outside; kl_div adds -x + y), so that its
    derivatives are 0 there (kl_div's -1 and 1)."""

    def fn(T, x, y):
        inside = (x > 0) & (y > 0)
        one = T.ones_like(x) if x.dim() >= y.dim() else T.ones_like(y)
        safe = T.special.rel_entr(T.where(inside, x, one), T.where(inside, y, one))
        edge = T.where((x == 0) & (y >= 0), T.zeros_like(safe), T.full_like(safe, math.inf))
        value = T.where(inside, safe, edge)
        return value - x + y if kl else value

    return fn


def _outside_the_inside(np_, inputs, params):
    x, y = inputs["x"], inputs["y"]
    with np_.errstate(all="ignore"):
        return bool(np_.any(~((x > 0) & (y > 0))))


def _edge_convention(name, kl):
    return Convention(
        f"{name}-derivatives-at-the-edge",
        f"{name}'s derivatives where x > 0 and y > 0 fails (x = 0 <= y: the domain's edge, the value "
        "constant beside it; outside, the value the constant inf): the reference gives the one-sided limits "
        "from inside at x = 0 < y (∂_x = -inf, ∂_x² = inf) and nan where the value is a constant inf or y "
        "= 0; JAX's where over safe inputs makes them 0" + (" (kl_div's -x + y: -1 and 1)" if kl else ""),
        _outside_the_inside,
        (Alternative("jax-zero-outside", _jax_at_the_edge(kl), "jax.scipy.special." + name),),
    )


for _name, _what, _kl in (("rel_entr", "relative entropy x ln(x/y)", False),
                          ("kl_div", "Kullback-Leibler divergence x ln(x/y) - x + y", True)):  # fmt: skip
    _record(_name, _what, ("x", "y"), {"x": _edge("x"), "y": _edge("y")}, torch_note=_TORCH_KL_LOSS,
            conventions=(_edge_convention(_name, _kl),))  # fmt: skip


# ---- the Box-Cox transformations ----------------------------------------------------------------
# x on [0, inf) (boxcox1p: [-1, inf)), the base's zero at its edge and the value's zero at base 1; λ
# on the whole line, 0 where (x^λ - 1)/λ is ln x (a float formula cancels near it)
_LAMBDA = D.domain("whole line: lmbda", -math.inf, math.inf, D.Point("lmbda = 0", 0.0))
_record("boxcox", "Box-Cox transformation", ("x", "lmbda"),
        {"x": D.domain("[0, inf): x", 0.0, math.inf, D.Point("x = 0", 0.0, "above"), D.Point("zero x = 1", 1.0),
                       gate="pos"), "lmbda": _LAMBDA})  # fmt: skip
_record("boxcox1p", "Box-Cox transformation of 1 + x", ("x", "lmbda"),
        {"x": D.domain("[-1, inf): x", -1.0, math.inf, D.Point("x = -1", -1.0, "above"), D.Point("zero x = 0", 0.0),
                       gate="pos"), "lmbda": _LAMBDA})  # fmt: skip


# ---- Owen's T (reference/ops/rules/special_owens_t.py) --------------------------------------------
# T(h, a) on the whole plane: even in h, odd in a; a = 0 its zero, h = 0 its closed form atan(a)/(2π)
_record("owens_t", "Owen's T function", ("h", "a"),
        {"h": D.domain("whole line: h", -math.inf, math.inf, D.Point("h = 0", 0.0)),
         "a": D.domain("whole line: a", -math.inf, math.inf, D.Point("zero a = 0", 0.0))})  # fmt: skip

# ---- TensorFlow's xdivy (reference/ops/rules/special_xdivy.py) -----------------------------------
# x/y, 0 where x == 0. Not a spelling of the div record: the two functions differ at x = 0 where y is
# 0 or NaN (div: nan, xdivy: 0), and there xdivy is the constant 0 in y (∂_y = 0 where div's -x/y² is
# nan). x on the whole line (its line x = 0 the definition's), y a divisor (its pole 0)
record(
    "xdivy",
    FAMILY,
    inputs=("x", "y"),
    sample=_sample("x", "y"),
    fn=lambda T, x, y: T.special.xdivy(x, y),
    torch="PyTorch has no xdivy (torch 2.13: div gives nan at 0/0, where xdivy's definition gives 0)",
    jax="JAX has no xdivy (jax.numpy, jax.scipy.special and jax.nn: none)",
    tf=lambda tf, x, y: tf.math.xdivy(x, y),
    domains={"x": D.FACTOR_X, "y": D.DIVISOR},
)
not_fuzzed(
    "xdivy_derivative",
    FAMILY,
    "internal: the exact partial derivatives of xdivy; reached by the xdivy record's vjp, jvp, the "
    "second-order checks and vmap_vjp",
)
