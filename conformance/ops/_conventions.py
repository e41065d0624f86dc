"""Conventions: the choices the mathematics leaves open, declared on op records and judged apart.

At a kink (relu, abs at 0), a tie (max, sort, pooling), a NaN or a domain boundary, the derivative
(or value) is a choice, not a number the mathematics fixes. The reference keeps PyTorch's choice;
a record names each such choice as a :class:`Convention`: the *region* of inputs where it applies,
the checks it concerns, and the *alternatives* other frameworks document, each an ``fn`` with the
record's signature that the reference computes exactly like the record's own (the same checks,
the same error bounds): the op with the other choice made.

A framework's result that the derived bounds reject is judged ``convention`` (naming the
convention and the alternative) when, and only when,

* the check is one the convention concerns and the case's inputs touch its region;
* every rejected element is an element the choice decides: there the alternative's reference
  value differs from the primary value by more than a sixteenth of its bound (:data:`DECIDED`);
* and every rejected element lies inside the bound of that alternative's value, and nearer to it
  than to the reference's value.

Anything else stays ``fail``: an element outside the region, or inside it with a value that is
neither the reference's nor a declared alternative's (docs/verdicts.md, docs/conformance.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from conformance.ops import RECORDS, VMAP_CHECKS, op_params, vmap_spec
from conformance.tolerance import element_ratios

#: an element is decided by a choice when the alternative's value differs from the reference's by
#: more than this fraction of the element's bound
DECIDED = 1.0 / 16


@dataclass(frozen=True)
class Alternative:
    """Another documented choice: ``fn(T, *inputs, **params)`` computes the op with it; or, for a
    choice about how a non-number is spelled, ``on_values(value, observed) -> value``: the
    reference's float64 values with the choice made (``fn`` is then None); or, for a choice the
    framework makes case by case (which of equal elements a selection returns: conformance.ops._ties),
    ``routed(case, check, data, outputs, expected, alternative_expected) -> {name: (value, bound)}``:
    the reference with the framework's own choice read off its outputs, or None."""

    name: str
    fn: Callable | None
    note: str = ""
    on_values: Callable | None = None
    routed: Callable | None = None


@dataclass(frozen=True)
class Convention:
    """A choice the mathematics leaves open. ``region(np, inputs, params) -> bool``: whether the
    case's inputs ({input name: float64 array}; a vmap check's batched arrays) touch the region
    where the choice matters; ``checks``: the checks whose results it decides."""

    name: str
    description: str
    region: Callable
    alternatives: tuple
    checks: tuple = ("vjp", "vjp_vjp", "jvp", "jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_vjp", "vmap_jvp_vjp")


def region_inputs(case, check, data) -> dict:
    """{input name: the array the check reads for it}. A vmap check's inputs with their batch dim
    moved to the front, a shared one with a leading 1, so that the inputs broadcast as each sample's
    do."""
    names = RECORDS[case.op].inputs
    if check not in VMAP_CHECKS:
        return {n: np.asarray(data[n]) for n in names}
    dims = vmap_spec(case)[1]
    samples = {}
    for n, d in zip(names, dims):
        if d is None:
            samples[n] = np.expand_dims(np.asarray(data[n]), 0)
        else:
            batched = np.asarray(data[f"batched_{n}"])
            samples[n] = np.moveaxis(batched, d % batched.ndim, 0)
    # each sample's shape padded with leading 1s to the largest sample rank, after the batch dim
    rank = max((a.ndim - 1 for a in samples.values()), default=0)
    return {n: a.reshape(a.shape[:1] + (1,) * (rank - a.ndim + 1) + a.shape[1:]) for n, a in samples.items()}


def _applicable(case, check, data) -> list:
    rec = RECORDS.get(case.op)
    out = []
    if rec is None:
        return out
    inputs = None
    for conv in (*rec.conventions, *EVERY_RECORD):
        if check not in conv.checks:
            continue
        if inputs is None:
            inputs = region_inputs(case, check, data)
        with np.errstate(all="ignore"):
            if conv.region(np, inputs, op_params(case)):
                out.append(conv)
    return out


def judge_conventions(case, check, outputs, expected, alternative_expected, data) -> dict | None:
    """The conventions that explain every element the bounds reject, or None.

    ``expected``: {name: (value, bound)} of the reference; ``alternative_expected(fn)``: the same for
    the op computed by ``fn`` (None when the reference cannot evaluate it). Returns
    ``{"conventions": [{"name", "alternative", "elements"}], "reason": ...}``."""
    conventions = _applicable(case, check, data)
    if not conventions:
        return None
    bad = {}
    for name, (value, bound) in expected.items():
        obs = outputs.get(name)
        if obs is None or np.shape(obs) != np.shape(value):
            return None  # a missing output or a shape difference is no choice of value
        rejected = element_ratios(obs, value, bound) > 1.0
        if rejected.any():
            bad[name] = rejected
    if not bad:
        return None
    # the elements each alternative explains: rejected, decided by the choice, and within its bound
    candidates = []
    for conv in conventions:
        for alt in conv.alternatives:
            if alt.on_values is not None:
                alt_expected = {
                    n: (
                        alt.on_values(
                            np.asarray(v, dtype=np.float64), np.asarray(outputs[n], dtype=np.float64)
                        ),
                        b,
                    )
                    for n, (v, b) in expected.items()
                }
            elif alt.routed is not None:
                alt_expected = alt.routed(case, check, data, outputs, expected, alternative_expected)
            else:
                alt_expected = alternative_expected(alt.fn)
            if alt_expected is None:
                continue
            hits, contradicted = {}, 0
            for name, (value, bound) in expected.items():
                if name not in alt_expected or np.shape(alt_expected[name][0]) != np.shape(value):
                    continue
                rejected = bad.get(name, np.zeros(np.shape(value), dtype=bool))
                a_value, a_bound = alt_expected[name]
                # the choice changes this element: the alternative's value moves by more than a
                # sixteenth of the bound (a sum over tied and untied elements moves by less than the
                # whole bound), and the observed value is nearer the alternative's than the reference's
                decided = element_ratios(a_value, value, bound) > DECIDED
                obs = outputs[name]
                matches = (element_ratios(obs, a_value, a_bound) <= 1.0) & (
                    element_ratios(obs, a_value, bound) < element_ratios(obs, value, bound)
                )
                if name in bad:
                    hits[name] = rejected & decided & matches
                contradicted += int((decided & ~matches).sum())  # the choice decides, the framework differs
            if any(h.any() for h in hits.values()):
                candidates.append((conv, alt, hits, contradicted))
    # a framework makes one choice per convention: the alternatives that explain the most (net of the
    # elements they decide otherwise than the framework did), one per convention
    unexplained = {name: mask.copy() for name, mask in bad.items()}
    met, chosen = [], set()
    while True:
        scored = [
            (sum(int((h & unexplained[n]).sum()) for n, h in hits.items()), contradicted, conv, alt, hits)
            for conv, alt, hits, contradicted in candidates
            if conv.name not in chosen
        ]
        scored = [c for c in scored if c[0]]
        if not scored:
            break
        explained, _, conv, alt, hits = max(scored, key=lambda c: (c[0] - c[1], c[0]))
        for n, h in hits.items():
            unexplained[n] &= ~h
        chosen.add(conv.name)
        met.append({"name": conv.name, "alternative": alt.name, "elements": explained})
    if any(mask.any() for mask in unexplained.values()) or not met:
        return None
    said = "; ".join(f"{m['name']}: {m['alternative']} ({m['elements']} elements)" for m in met)
    return {
        "conventions": met,
        "reason": "differs from the reference only where a declared convention leaves the choice open, "
        f"and there equals a documented alternative: {said}",
    }


# ---- alternatives written once, used by several records ----------------------------------------


def nan_mask(T, *xs):
    mask = T.isnan(xs[0])
    for x in xs[1:]:
        mask = mask | T.isnan(x)
    return mask


def away_from_nan(alternative, primary):
    """``alternative`` where no input is NaN, ``primary`` where one is: an alternative of a tie or a
    kink that leaves the NaN choice to its own convention (jnp.minimum halves a tie, and at a NaN
    makes JAX's NaN choice, which another convention declares)."""

    def fn(T, *xs, **params):
        return T.where(nan_mask(T, *xs), primary(T, *xs, **params), alternative(T, *xs, **params))

    return fn


def any_nan(np_, inputs, params) -> bool:
    return any(bool(np_.isnan(a).any()) for a in inputs.values())


def any_zero(np_, inputs, params) -> bool:
    return any(bool((a == 0).any()) for a in inputs.values())


def any_equal_pair(np_, inputs, params) -> bool:
    """Two inputs equal at some broadcast position: a tie of a binary max/min."""
    try:
        x, y = np_.broadcast_arrays(inputs["input"], inputs["other"])
    except ValueError:
        return False
    return bool((x == y).any())


def at_params(*names):
    """A region: some input element equals one of the op's scalar parameters ``names`` (a bound)."""

    def region(np_, inputs, params) -> bool:
        x = inputs["input"]
        return any(bool((x == params[n]).any()) for n in names if params.get(n) is not None)

    return region


def any_repeated(np_, inputs, params) -> bool:
    """A region: the input holds some value twice (a tie of a max, sort, mode or pool) or a NaN."""
    x = inputs["input"]
    if x.size == 0:
        return False
    return bool(np_.isnan(x).any()) or np_.unique(x).size < x.size


# ---- conventions every record has -------------------------------------------------------------


def _all_finite(np_, inputs, params) -> bool:
    return all(bool(np_.isfinite(a).all()) for a in inputs.values())


def _nan_for_infinity(value, observed):
    return np.where(np.isinf(value), np.nan, value)


def infinity_for_nan(value, observed):
    """The observed infinity where the reference says nan (a value or derivative with no signed value)."""
    return np.where(np.isnan(value) & np.isinf(observed), observed, value)


#: A derivative at a pole of the derivative (sqrt' and log' at 0, acosh' at 1, atanh' at +-1, 1/x's
#: at 0, and every derivative built from one): it has no value. PyTorch gives the one-sided limit,
#: an infinity, and nan where that infinity meets a zero or another infinity in the chain rule (a
#: zero tangent times inf, inf - inf); JAX and TensorFlow compose other formulas and may say nan
#: for the infinity or an infinity for the nan. Only where every input is finite (an infinite
#: derivative of finite inputs is a pole; of an infinite input, IEEE 754 and C99 Annex F fix the
#: value), only for derivatives (a value at a pole is fixed by C99 Annex F: log(0) = -inf), and
#: an infinity of the other sign stays a failure.
UNBOUNDED_DERIVATIVE = Convention(
    "unbounded-derivative",
    "a derivative where it is unbounded (a pole of the derivative at finite inputs) has no value: "
    "PyTorch gives its one-sided limit (an infinity), or nan where that infinity meets a zero or "
    "another infinity in the chain rule",
    _all_finite,
    (
        Alternative("nan-for-the-infinity", None, "nan where PyTorch gives an infinity", _nan_for_infinity),
        Alternative(
            "infinity-for-the-nan",
            None,
            "an infinity where PyTorch's chain rule gives nan",
            infinity_for_nan,
        ),
    ),
)


def _not_all_finite(np_, inputs, params) -> bool:
    return not _all_finite(np_, inputs, params)


def _at_finite_inputs(on_values):
    """``on_values`` applied only at the elements whose input is finite: an elementwise op of one
    input, each output element (and its derivatives) reading the input's element at its index."""

    def routed(case, check, data, outputs, expected, alternative_expected):
        (x,) = region_inputs(case, check, data).values()
        out = {}
        for name, (value, bound) in expected.items():
            value = np.asarray(value, dtype=np.float64)
            try:
                finite = np.broadcast_to(np.isfinite(x), value.shape)
            except ValueError:
                return None
            observed = np.asarray(outputs[name], dtype=np.float64)
            out[name] = (np.where(finite, on_values(value, observed), value), bound)
        return out

    return routed


#: UNBOUNDED_DERIVATIVE element by element, for an elementwise op of one input whose case holds
#: non-finite inputs too (values 'special': atanh at 1 beside an inf): a pole of the derivative is
#: where that element's input is finite; the elements at an infinite or NaN input keep IEEE 754's
#: value. Its region is the other cases', so one of the two applies to a case.
UNBOUNDED_DERIVATIVE_BY_ELEMENT = Convention(
    UNBOUNDED_DERIVATIVE.name,
    UNBOUNDED_DERIVATIVE.description,
    _not_all_finite,
    tuple(
        Alternative(
            alt.name, None, f"{alt.note}, where the element's input is finite", routed=_at_finite_inputs(alt.on_values)
        )
        for alt in UNBOUNDED_DERIVATIVE.alternatives
    ),
)


def _zero_for_nan(value, observed):
    return np.where(np.isnan(value) & (observed == 0), observed, value)


#: An exact zero cotangent or tangent times a derivative with no value (an infinity at a pole of
#: the derivative, 0 * inf in PyTorch's chain rule): PyTorch multiplies and says nan; TensorFlow's
#: gradient functions (mul_no_nan, where(grad == 0, 0, ...)) and JAX's symbolic zeros say the zero
#: seed's answer, 0. Only a zero where the reference says nan, only where every input is finite.
ZERO_SEED = Convention(
    "zero-seed-at-an-unbounded-derivative",
    "an exact zero cotangent or tangent times a derivative with no value: PyTorch's chain rule says "
    "nan (0 * inf), a framework that lets the zero seed win says 0",
    _all_finite,
    (
        Alternative(
            "zero-for-the-nan",
            None,
            "TensorFlow's and JAX's zero seed: 0 where PyTorch says nan",
            _zero_for_nan,
        ),
    ),
)
#: the conventions of every record, besides its own (``OpRecord.conventions``); a complex case's
#: results are judged by them part by part (conformance.ops.judge)
EVERY_RECORD = (UNBOUNDED_DERIVATIVE, ZERO_SEED)


def max_pool_gradient_at_nan(pool):
    """Max pooling's derivative in a window holding a NaN: the maximum is NaN (PyTorch, JAX), and
    PyTorch's max_pool selects the NaN, so the gradient and the tangent go to it. JAX's
    reduce_window max differentiates another element in some checks (its reverse over forward and
    forward over reverse) and TensorFlow's forward mode likewise: the window's largest number.
    ``pool(T, x, **params)`` is the record's op; the alternative keeps its value (NaN where the
    window holds one) and routes the derivatives past the NaNs."""

    def past_nan(T, x, **params):
        nan = T.isnan(x)
        largest = pool(T, T.where(nan, T.full_like(x, -float("inf")), x), **params)
        window_nan = pool(T, T.where(nan, T.ones_like(x), T.zeros_like(x)), **params) > 0
        # the value stays NaN where the window holds one; the constant carries no derivative
        return (
            largest + T.where(window_nan, T.full_like(largest, float("nan")), T.zeros_like(largest)).detach()
        )

    return Convention(
        "max-pool-gradient-at-nan",
        "max pooling's derivative in a window holding a NaN: PyTorch's max_pool selects the NaN "
        "(the derivatives go to it)",
        any_nan,
        (
            Alternative(
                "to-the-largest-number",
                past_nan,
                "JAX's reduce_window max in reverse over forward and forward over reverse, TensorFlow's "
                "forward mode: the window's largest non-NaN element",
            ),
        ),
    )
