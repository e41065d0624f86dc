"""Records of jax.scipy.special's hypergeometric functions (reference.special,
reference/ops/functions/special_hyper.py, reference/ops/rules/special_hyper.py): the confluent
``hyp1f1(a, b, x)`` and Gauss's ``hyp2f1(a, b, c, x)``.

JAX differentiates both in every argument (custom JVPs: a termwise digamma series in each
parameter, the contiguous relation in x), so the records differentiate every argument. Its
parameter JVPs are ``lax.while_loop`` s, which JAX cannot transpose: reverse mode over them (vjp_vjp
and vjp_jvp) raises "Reverse-mode differentiation does not work for lax.while_loop", and the
records say so (unsupported, with the reason); forward over reverse (jvp_vjp) runs. PyTorch (torch
2.13) and TensorFlow (2.21: tf.math.special has no hypergeometric function) have neither.

The cases draw the value kinds but ``wide`` and ``special``: parameters past about 1e4 (the largest
float among the special values) are beyond the reference's reach (mpmath's series raise
NoConvergence or take tens of seconds; the uniform expansions in a large parameter are not written),
and JAX's series stop after 250 terms there."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import VALUES, not_fuzzed, record
from conformance.ops import _domains as D
from conformance.ops._conventions import Alternative, Convention, infinity_for_nan
from conformance.ops._run import refuses
from conformance.strategies import broadcast_shapes, value_kinds

FAMILY = "special"

#: the mpmath kernels take a millisecond to a tenth of a second an element (a parameter derivative
#: of order three: several evaluations at raised precision): at most 12 elements a case
_SIZE = 12
#: the value kinds the records draw (see the module docstring: no parameters past 1e4)
KINDS = tuple(k for k in VALUES if k not in ("wide", "special"))

_NO_TORCH = "PyTorch has no {} (torch 2.13: no torch.special.{} or Tensor method)"
_NO_TF = "TensorFlow has no {} (tf.math and tf.math.special: none; TensorFlow Probability's is another library)"
#: the checks that differentiate JAX's parameter JVPs in reverse mode
_REVERSE_OVER_JVP = ("vjp_vjp", "vjp_jvp")
_JAX_WHILE = (
    "JAX cannot reverse-differentiate its {} derivative in a parameter: the custom JVP sums a "
    "lax.while_loop ('Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
    "with dynamic start/stop values'; JAX 0.10.2)"
)


def _jax(name):
    @refuses(lambda case, check: _JAX_WHILE.format(name) if check in _REVERSE_OVER_JVP else None)
    def fn(J, *args):
        import jax.scipy.special

        return getattr(jax.scipy.special, name)(*args)

    return fn


def _sample(inputs):
    """Shapes that broadcast together (two drawn so, the others one of them or a scalar)."""

    @st.composite
    def sample(draw):
        first, second = draw(broadcast_shapes(max_rank=2, max_size=_SIZE))
        others = [draw(st.sampled_from([first, second, ()])) for _ in inputs[2:]]
        shapes = draw(st.permutations([first, second, *others]))
        return {"values": draw(value_kinds(KINDS))}, dict(zip(inputs, shapes))

    return sample


def _upper(label):
    """An upper parameter: the whole line, entire; a nonpositive integer terminates the series."""
    return D.domain(f"whole line: {label}", -math.inf, math.inf, D.Point(f"{label} = 0 (terminating)", 0.0),
                    D.Point(f"{label} = -1 (terminating)", -1.0), gate="pos")  # fmt: skip


def _lower(label):
    """A lower parameter: the whole line with poles at the nonpositive integers."""
    return D.domain(f"whole line: {label}", -math.inf, math.inf, D.Point(f"pole {label} = 0", 0.0),
                    D.Point(f"pole {label} = -1", -1.0), D.Point(f"pole {label} = -2", -2.0), gate="pos")  # fmt: skip


#: 1F1's x: the whole line (entire), its large |x| where the asymptotic expansions take over
#: (JAX: |x| >= 100), the gate's positive half
_X1 = D.domain("whole line: x", -math.inf, math.inf, D.Point("x = 0", 0.0), D.Point("x = 100", 100.0),
               D.Point("x = -100", -100.0), gate="pos")  # fmt: skip
#: 2F1's x: (-inf, 1], the branch point 1 (a logarithmic or power singularity; the value complex
#: above), the edge -1 of the Taylor series' disc; the gate draws inside (-1, 1)
_X2 = D.domain("(-inf, 1]: x", -math.inf, 1.0, D.Point("branch point x = 1", 1.0, "below"), D.Point("x = 0", 0.0),
               D.Point("x = -1", -1.0), gate=D.domain("(-1, 1)", -1.0, 1.0))  # fmt: skip


def _value_at_a_lower_pole(lower):
    """The value where the lower parameter ``lower`` (1F1's b, 2F1's c) is a negative integer that no
    upper parameter terminates the series before: a simple pole of the function in that parameter,
    whose sign flips across it (the residue over p - n), so it has no signed value. The reference
    says nan (reference/ops/rules/special_hyper.py: "at a negative integer nan"); scipy.special's
    hyp2f1 says inf, and JAX's series divides a term by (c + k) = 0 and carries the infinity.
    At 0 the reference says ±inf (the residue's sign times the zero's) but where that residue is 0,
    at x = 0: there 1F1(a; 0; x) is 1 along x = 0 and ±inf along b = 0, no value either (its nan);
    JAX selects inf at every b == 0 (hyp1f1(2, 0, 0) = inf; hyp1f1-99e130ae5f3f, the seeded run at
    seed 1, vmap float16, ties). An infinity only replaces the reference's nan, so the sign at ±0
    elsewhere is still judged."""

    def region(np_, inputs, params) -> bool:
        p = inputs[lower]
        finite = all(bool(np_.isfinite(v).all()) for v in inputs.values())
        return finite and bool(((p <= 0) & (p == np_.round(p))).any())

    return Convention(
        "hypergeometric-value-at-a-lower-pole",
        f"the value at a nonpositive integer {lower} (a pole whose sign flips across it): the reference's nan",
        region,
        (Alternative("an-infinity", None, "an infinity where the reference says nan (scipy.special, JAX)",
                     on_values=infinity_for_nan),),  # fmt: skip
        checks=("forward", "vmap"),
    )


def _record(name, what, inputs, domains, lower):
    record(
        name,
        FAMILY,
        inputs=inputs,
        sample=_sample(inputs),
        fn=lambda T, *args: getattr(T.special, name)(*args),
        torch=_NO_TORCH.format(what, name),
        jax=_jax(name),
        tf=_NO_TF.format(what),
        domains=domains,
        conventions=(_value_at_a_lower_pole(lower),),
    )
    not_fuzzed(
        f"{name}_derivative",
        FAMILY,
        f"internal: the exact partial derivatives of the {what}; reached by the {name} record's vjp, jvp, "
        "the second-order checks and vmap_vjp",
    )


_record("hyp1f1", "confluent hypergeometric function 1F1", ("a", "b", "x"),
        {"a": _upper("a"), "b": _lower("b"), "x": _X1}, "b")  # fmt: skip
_record("hyp2f1", "Gauss hypergeometric function 2F1", ("a", "b", "c", "x"),
        {"a": _upper("a"), "b": _upper("b"), "c": _lower("c"), "x": _X2}, "c")  # fmt: skip
