"""Verdicts that can be taken at their word (issue #38): an element whose reference value is finite
but whose bound is not was "free" (any answer passed). A nan bound (the error model lost track) now
passes only the reference value rounded to the dtype; causes that made bounds non-finite where the
framework's arithmetic stays in range are fixed in the model (the variance computed in PyTorch's
accumulator, std's derivative formulas in PyTorch's order from the saved σ, an overflowed input's
nan propagated as inf)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import reference as T
from conformance.case import Case, case_data
from conformance.ops.judge import record_verdict, run_in_process
from conformance.tolerance import element_ratios, free_elements, judge_bounds, ulp_of, with_last_bit
from reference.errors import Precision, bound_of

# ---- the judge --------------------------------------------------------------------------------


def test_a_nan_bound_passes_only_the_reference_rounded_to_the_dtype():
    value = np.array([0.1, 3.0])
    bound = with_last_bit(value, np.array([np.nan, np.nan]), "float16")
    assert np.array_equal(bound, ulp_of(value, "float16"))  # one ulp: the rounding either way
    rounded = np.array([float(np.float16(0.1)), 3.0])
    assert judge_bounds({"y": rounded}, {"y": (value, bound)}, "float16")["verdict"] == "pass"
    for wrong in ([0.1 + 2 * float(ulp_of(0.1, "float16")), 3.0], [np.nan, 3.0], [np.inf, 3.0], [0.1, 0.0]):
        verdict = judge_bounds({"y": np.array(wrong)}, {"y": (value, bound)}, "float16")
        assert verdict["verdict"] == "fail", (wrong, verdict)


def _neighbours(q: Fraction, dtype: str) -> list[float]:
    """The two ``dtype`` numbers around the exact value ``q`` (its faithful roundings)."""
    f = {"float64": np.float64, "float32": np.float32, "float16": np.float16}[dtype]
    near = f(float(q))  # float(Fraction) rounds correctly to float64; f() then to the dtype
    other = np.nextafter(near, f(np.inf) if Fraction(float(near)) < q else f(-np.inf), dtype=f)
    return [float(near), float(other)]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_a_nan_bound_admits_every_faithful_answer_beside_the_references_own_rounding(dtype):
    """The float64 reference is itself a rounding of the exact value (issue 38: the nan rule must not
    leave it out). It does not: the reference and a faithful answer (either dtype neighbour of the
    exact value) lie on one side of every dtype number that the exact value lies on (rounding to
    float64 is monotone and every dtype number is a float64), so they are at most one dtype step
    apart, and a step is at most one ulp of the reference value (at a binade edge the step below is
    half of it). Checked over exact values near the powers of two, in the subnormal range and at
    random, where the reference's rounding crosses the framework's (the exact value 2^-60 off a
    dtype number or a midpoint)."""
    rng = np.random.default_rng(38)
    f = {"float64": np.float64, "float32": np.float32, "float16": np.float16}[dtype]
    fi = np.finfo(f)
    grid = [Fraction(float(fi.smallest_subnormal)) * k for k in (1, 3, 7)]
    grid += [Fraction(2) ** e for e in (-20, -1, 0, 1, 10)] + [Fraction(float(x)) for x in rng.uniform(-9, 9, 40)]
    spacing = lambda q: Fraction(float(ulp_of(float(q), dtype)))  # noqa: E731
    checked = 0
    for base in grid:
        for frac in (Fraction(0), Fraction(1, 2), Fraction(1, 4)):
            for sign in (1, -1):
                q = sign * (base + frac * spacing(base))
                for nudge in (Fraction(2) ** -60, -(Fraction(2) ** -60)):
                    exact = q + nudge * abs(q)
                    value = np.array([float(exact)])  # the reference: one correct rounding
                    bound = with_last_bit(value, np.array([np.nan]), dtype)
                    for answer in _neighbours(exact, dtype):
                        verdict = judge_bounds({"y": np.array([answer])}, {"y": (value, bound)}, dtype)
                        assert verdict["verdict"] == "pass", (dtype, exact, value, answer, verdict)
                        checked += 1
                    two_off = float(value[0]) + 2 * float(bound[0]) + float(spacing(exact))
                    assert judge_bounds({"y": np.array([two_off])}, {"y": (value, bound)}, dtype)["verdict"] == "fail"
    assert checked > 500


def test_element_ratios_read_a_nan_bound_as_zero_and_an_infinite_one_as_any_value():
    value, obs = np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.5, 1.5])
    ratios = element_ratios(obs, value, np.array([np.nan, np.nan, np.inf]))
    assert ratios[0] == 0 and ratios[1] == np.inf and ratios[2] == 0


def test_free_elements_count_nan_infinite_and_out_of_range_bounds():
    value = np.array([1.0, 2.0, 7e4, np.nan, 5.0])
    bound = np.array([np.nan, np.inf, np.inf, np.nan, 0.1])
    assert free_elements(value, bound, "float16") == {"nan": 1, "inf": 1, "range": 1}
    assert free_elements(value, bound, "float32") == {"nan": 1, "inf": 2}


# ---- the error model --------------------------------------------------------------------------


def test_an_overflowed_inputs_nan_error_is_infinite():
    # 300² overflows float16: its error is inf, and 0·inf made the next product's bound nan
    x = np.array([300.0, 2.0])
    (value,), (bound,), _ = bound_of(lambda t: (t * t) * 0.0, [x], Precision(dtype="float16"))
    assert np.isinf(bound[0]) and np.isfinite(bound[1])


def test_only_elements_that_read_an_overflowed_input_turn_nan_into_inf():
    from reference.errors import _infinite_inputs

    err = np.array([np.inf, 0.0, 1e-9])
    assert _infinite_inputs([err, None], (3,), elementwise=True).tolist() == [True, False, False]
    assert _infinite_inputs([err[:, None]], (3, 2), elementwise=True)[:, 1].tolist() == [True, False, False]
    # a matmul's or a reduction's output element mixes its input's elements
    assert _infinite_inputs([err], (3,), elementwise=False).all()
    assert not _infinite_inputs([np.zeros(3)], (3,), elementwise=False).any()


DAWSN_AT_INFINITY = Case.from_dict(
    {"op": "dawsn", "params": {"values": "nonfinite"}, "shapes": {"input": [3]}, "dtype": "float64", "seed": 0,
     "checks": ["vjp"], "data": {"input": [math.inf, -math.inf, 1.0]}}
)


def test_a_nan_bound_at_an_infinite_input_passes_only_the_limit():
    # dawsn'(x) = 1 - 2x F(x) -> 0 as x -> ±inf (F(x) = 1/(2x) + 1/(4x³) + ...): the reference's limit,
    # whose bound the model loses (inf·0). Before, at values 'nonfinite'/'special' a nan bound was read
    # as inf and JAX's and TensorFlow's nan there passed
    from conformance.ops.judge import expected_for
    from conformance.precision import precision_for

    expected, _ = expected_for(DAWSN_AT_INFINITY, "vjp", precision_for(DAWSN_AT_INFINITY, {}, "jax"))
    value, bound = expected["grad_input"]
    assert value[:2].tolist() == [0.0, 0.0] and np.isnan(bound[:2]).all()
    limit = {"grad_input": np.array(value)}
    assert record_verdict(DAWSN_AT_INFINITY, "vjp", "jax", limit, {})["verdict"] == "pass"
    for wrong in (np.nan, 1e-300):
        planted = {"grad_input": np.where(np.isinf([math.inf, -math.inf, 1.0]), wrong, value)}
        verdict = record_verdict(DAWSN_AT_INFINITY, "vjp", "jax", planted, {})
        assert verdict["verdict"] == "fail" and verdict["worst"]["index"] == [0], verdict


def _exact_var(x, correction):
    xs = [Fraction(float(v)) for v in x]
    mean = sum(xs) / len(xs)
    return sum((v - mean) ** 2 for v in xs) / (len(xs) - correction)


def test_a_float16_variance_is_computed_in_pytorchs_accumulator():
    # squares of deviations near 300 overflow float16 (65504), not float32: PyTorch's std_var_kernel
    # runs Welford in float32 and rounds the result once
    rng = np.random.default_rng(0)
    x = np.asarray(np.float16(np.concatenate([[300.0, -290.0, 310.0], rng.uniform(-10, 10, 37)])), dtype=np.float64)
    exact = float(_exact_var(x, 1))
    torch_arith = Precision(dtype="float16", accumulate="float32")
    (value,), (bound,), _ = bound_of(lambda t: T.var(t, 0, correction=1), [x], torch_arith)
    assert value == pytest.approx(exact, rel=1e-15) and np.isfinite(bound) and bound < 1e-2 * exact
    observed = float(np.float16(np.var(x.astype(np.float32), ddof=1)))  # float32 accumulation, one rounding
    assert abs(observed - exact) <= bound + float(ulp_of(exact, "float16"))
    # without an accumulator (JAX's and TensorFlow's contract) the squares overflow: honestly unbounded
    (_,), (dtype_bound,), _ = bound_of(lambda t: T.var(t, 0, correction=1), [x], Precision(dtype="float16"))
    assert np.isinf(dtype_bound)


STD_LARGE = Case.from_json(
    '{"op": "std", "params": {"correction": 0, "dim": [-1, -2], "keepdim": true, "values": "large"},'
    ' "shapes": {"input": [64, 2]}, "dtype": "float16", "seed": 0, "checks": ["vjp", "vjp_vjp"]}'
)


@pytest.fixture(scope="module")
def torch_adapter():
    pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAdapter

    adapter = TorchAdapter()
    return adapter, adapter.setup()


@pytest.mark.parametrize("check", ["vjp", "vjp_vjp"])
def test_std_derivatives_of_large_float16_inputs_have_finite_bounds_torch_meets(torch_adapter, check):
    # Σ(x - mean)² of these 128 inputs (|x| <= 144) is 3.8e5, past float16; σ = 54 is not. The model
    # re-derived σ from that sum in float16 (inf, then nan bounds on every gradient element)
    adapter, settings = torch_adapter
    case = Case.from_dict({**STD_LARGE.to_dict(), "checks": [check]})
    result = run_in_process(adapter, case, check, settings)
    assert result["verdict"] == "pass" and "unjudged_elements" not in result, result


def test_a_planted_error_in_a_formerly_free_std_element_fails(torch_adapter):
    adapter, settings = torch_adapter
    from conformance.ops.judge import _as_array, _numpy

    out = adapter.run(STD_LARGE, "vjp_vjp", case_data(STD_LARGE))
    out = {k: _as_array(_numpy(v)) for k, v in out.items()}
    assert record_verdict(STD_LARGE, "vjp_vjp", "torch", out, settings)["verdict"] == "pass"
    planted = dict(out)
    g = np.array(out["g_input"])
    for wrong in (2 * g[5, 1], -g[5, 1], np.nan):  # a planted bug (before: nan bound, any value passed)
        g[5, 1] = wrong
        planted["g_input"] = g
        verdict = record_verdict(STD_LARGE, "vjp_vjp", "torch", planted, settings)
        assert verdict["verdict"] == "fail" and verdict["worst"]["index"] == [5, 1], verdict
        g = np.array(out["g_input"])


def test_std_with_no_degrees_of_freedom_is_pytorchs_nan():
    # one element, correction 1: σ = 0/0; PyTorch's derivative formula gives nan (the reference's
    # std_direction gave 0, hidden behind a nan bound)
    x = T.tensor(np.array([[1.5, -2.0, 3.0]]), requires_grad=True)
    (g,) = T.autograd.grad(T.std(x, 0, correction=1).sum(), (x,))
    assert np.isnan(g.detach().numpy()).all()
    assert not math.isnan(float(T.std(x, 1, correction=1).detach().numpy()[0]))


def test_a_value_condition_finds_an_infinite_element_beside_a_nan():
    # values 'nonfinite' draws +inf, -inf and nan together: max is nan there and no max == inf entry
    # matched (exp1's vmap at +inf), where a count of the infinite elements is defined
    from conformance.known import ValueCondition

    case = Case.from_dict(
        {"op": "exp1", "params": {"values": "nonfinite"}, "shapes": {"input": [3]}, "dtype": "float64", "seed": 0,
         "checks": ["forward"], "data": {"input": [math.inf, math.nan, 1.0]}}
    ).to_dict()
    assert not ValueCondition("input", "max", "==", math.inf).holds(case)
    assert ValueCondition("input", "posinf", ">", 0).holds(case)
    assert ValueCondition("input", "infinite", ">", 0).holds(case)
    assert not ValueCondition("input", "neginf", ">", 0).holds(case)


def test_a_result_that_rounds_to_the_largest_finite_number_has_a_finite_bound():
    # float16: x - max(x) = -65504.00006 rounds to -65504, not to -inf (round to nearest overflows
    # from 65520 on); the model marked every result past 65504 as overflowed, and the softmax column
    # holding it got an infinite bound (values 'special' draw the largest number)
    p = Precision(dtype="float16", accumulate="float32")
    x = np.array([1.0, 65504.0, -6.103515625e-05])
    with np.errstate(all="ignore"):
        value, bound, _ = bound_of(lambda t: T.softmax(t, 0), [x], p)
    assert np.isfinite(bound[0]).all() and value[0].tolist() == [0.0, 1.0, 0.0]
    assert bound[0][1] < 0.01  # 1 - exp(-65503)·2, within a few float16 ulps of 1


@pytest.mark.parametrize("accumulate", ["float32", None])
def test_an_intermediate_past_the_dtypes_range_is_carried_as_its_tail(accumulate):
    # -30 - 65504 = -65534 rounds to -inf in float16 (its error is infinite there); the framework's
    # value lies in [-inf, -32752] and so does the exact one, where exp moves from exp(-32752) = 0 to
    # exp(-inf) = 0: the softmax column's bound was infinite (any answer passed), it is now the
    # rounding of 1 and of the zeros (reference.errors._dtype_tail)
    p = Precision(dtype="float16", accumulate=accumulate)
    x = np.array([-30.0, 65504.0, 0.76])
    with np.errstate(all="ignore"):
        (value,), (bound,), _ = bound_of(lambda t: T.softmax(t, 0), [x], p)
    # exact: e^(x - 65504) / (1 + ...), below float16's smallest subnormal off the maximum
    assert value.tolist() == [0.0, 1.0, 0.0] and np.isfinite(bound).all() and bound.max() < 8 * 2.0**-10
    expected = {"y": (value, bound)}
    assert judge_bounds({"y": np.array([0.0, 1.0, 0.0])}, expected, "float16")["verdict"] == "pass"
    for index, wrong in ((0, 2.0**-10), (1, 0.98), (2, np.nan)):  # each passed before (bound inf)
        planted = np.array([0.0, 1.0, 0.0])
        planted[index] = wrong
        verdict = judge_bounds({"y": planted}, expected, "float16")
        assert verdict["verdict"] == "fail" and verdict["worst"]["index"] == [index], (index, verdict)


def test_the_overflow_threshold_is_where_round_to_nearest_gives_inf():
    import ml_dtypes

    from reference.errors import LARGEST, OVERFLOW

    for dtype, kind in (("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16), ("float32", np.float32)):
        below = np.nextafter(OVERFLOW[dtype], 0.0)
        # through float32 as the frameworks compute half types (double rounding included)
        assert float(kind(np.float32(below))) == LARGEST[dtype], dtype
        assert np.isinf(float(kind(np.float64(OVERFLOW[dtype]) * (1 + 2.0**-20))))
    assert OVERFLOW["float16"] > 65519.99 and np.isinf(OVERFLOW["float64"])


def test_a_value_condition_counts_a_complex_elements_infinite_part():
    # found by review: docs said a complex input satisfies `infinite` conditions, the code refused
    # every statistic of a complex input but the moduli's; posinf and neginf (a sign) stay undefined
    from conformance.known import ValueCondition

    case = Case.from_dict(
        {"op": "exp", "params": {"values": "nonfinite"}, "shapes": {"input": [2]}, "dtype": "complex128",
         "seed": 0, "checks": ["forward"], "data": {"input": {"real": [1.0, 1.0], "imag": [math.inf, 2.0]}}}
    ).to_dict()
    assert ValueCondition("input", "infinite", ">", 0).holds(case)
    assert not ValueCondition("input", "posinf", ">", 0).holds(case)
    assert not ValueCondition("input", "infinite", "==", 0).holds(case)


# ---- exact infinities in a selection (issue 38, part 2) ----------------------------------------

# a softmax column holding -inf: the -inf carries an infinite error out of any op that produced it
# (u·|y| of an infinite y; a clone: its result's overflow test), and amax's window took the largest
# error of its column, so max, x - max, exp, the sum and every softmax element and derivative of
# the column were unbounded (1,284 softmax and 1,142 log_softmax elements of the scan, n = 2)
SOFTMAX_COLUMNS = np.array([[0.2257, -0.739], [0.0, -np.inf], [-np.inf, 1.5]])
SOFTMAX_COTANGENT = np.array([[0.3, -1.2], [0.9, 0.4], [1.5, -0.6]])


def _exact_softmax_vjp(x, g):
    """softmax along dim 0 and its VJP y·(g - Σ g·y), in mpmath (exp(-inf) = 0)."""
    import mpmath

    mpmath.mp.prec = 200
    y, gx = np.zeros(x.shape), np.zeros(x.shape)
    for j in range(x.shape[1]):
        e = [mpmath.mpf(0) if np.isneginf(v) else mpmath.exp(mpmath.mpf(float(v))) for v in x[:, j]]
        ys = [ei / sum(e) for ei in e]
        dot = sum(mpmath.mpf(float(gi)) * yi for gi, yi in zip(g[:, j], ys))
        for i, yi in enumerate(ys):
            y[i, j], gx[i, j] = float(yi), float(yi * (mpmath.mpf(float(g[i, j])) - dot))
    return y, gx


def test_an_exact_infinity_in_a_max_window_leaves_softmax_and_its_vjp_bounded():
    def softmax_and_vjp(t, g):
        y = T.softmax(t.clone(), 0)  # the clone's -inf carries an infinite error
        (gx,) = T.autograd.grad(y, (t,), g, create_graph=True)
        return y, gx

    with np.errstate(all="ignore"):
        values, bounds, _ = bound_of(softmax_and_vjp, [SOFTMAX_COLUMNS, SOFTMAX_COTANGENT], Precision(dtype="float32"))
    exact = _exact_softmax_vjp(SOFTMAX_COLUMNS, SOFTMAX_COTANGENT)
    for name, value, bound, ex in zip(("y", "gx"), values, bounds, exact):
        assert np.isfinite(bound).all() and (bound < 1e-6).all(), (name, bound)
        rounded = {name: np.float32(ex).astype(np.float64)}  # a correctly rounded float32 answer
        assert judge_bounds(rounded, {name: (value, bound)}, "float32")["verdict"] == "pass"
        # a planted error of three bounds at a finite element beside the -inf (formerly free)
        planted = np.array(rounded[name])
        planted[0, 0] += 3 * (bound[0, 0] + float(ulp_of(value[0, 0], "float32")))
        verdict = judge_bounds({name: planted}, {name: (value, bound)}, "float32")
        assert verdict["verdict"] == "fail" and verdict["worst"]["index"] == [0, 0], (name, verdict)


SOFTMAX_SPECIAL = (
    '{"op": "%s", "params": {"dim": -2, "spelling_jax": "jax.scipy.special.%s", "spelling_tensorflow":'
    ' "keras.ops.%s", "spelling_torch": "torch.special.%s", "values": "special"}, "shapes": {"input":'
    ' [2, 3, 33]}, "dtype": "float32", "seed": 29937, "checks": ["vjp_jvp"]}'
)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_columns_with_minus_infinity_have_no_free_elements(op):
    # the scan's case: 15 of g_input's and 15 of g_tan1_input's elements had infinite bounds
    from conformance.ops.judge import expected_for
    from conformance.precision import precision_for

    case = Case.from_json(SOFTMAX_SPECIAL % ((op,) * 4))
    assert np.isneginf(np.asarray(case_data(case)["input"])).sum() >= 6
    with np.errstate(all="ignore"):
        expected, _ = expected_for(case, "vjp_jvp", precision_for(case, {}, "jax"))
    for name, (value, bound) in expected.items():
        assert free_elements(value, bound, "float32") == {}, name


def _exact_glu_vjp(x, g):
    """glu along dim 0 (a·σ(b)) and its VJP [g·σ(b), g·a·σ(b)·σ(-b)], in mpmath (σ(-inf) = 0)."""
    import mpmath

    mpmath.mp.prec = 200
    half = x.shape[0] // 2
    gx = np.zeros(x.shape)
    for j in range(x.shape[1]):
        for i in range(half):
            a, b, gi = (mpmath.mpf(float(v)) for v in (x[i, j], x[half + i, j], g[i, j]))
            s = mpmath.mpf(0) if mpmath.isinf(b) and b < 0 else 1 / (1 + mpmath.exp(-b))
            gx[i, j], gx[half + i, j] = float(gi * s), float(gi * a * s * (1 - s))
    return gx


def test_an_exact_infinity_carries_no_mixed_term_into_a_glu_gate():
    # the gate σ(b) is an exact-elementwise primitive (softplus_d1): its condition term at b = -inf
    # was slope 0 times spread 2·c·u·|b| = inf, nan, which the gate's infinite input error made inf:
    # every derivative of the gate's half was free (glu: 1,264 inf and 120 nan elements at n = 2)
    x = np.array([[1.5, -0.7, 2.0], [-np.inf, 0.3, -np.inf]])
    g = np.array([[0.8, -1.1, 0.6]])

    def glu_vjp(t, gy):
        (gx,) = T.autograd.grad(T.nn.functional.glu(t.clone(), 0), (t,), gy, create_graph=True)
        return gx

    with np.errstate(all="ignore"):
        (value,), (bound,), _ = bound_of(glu_vjp, [x, g], Precision(dtype="float32"))
    exact = _exact_glu_vjp(x, g)
    assert np.isfinite(bound).all() and (bound < 1e-6).all(), bound
    assert judge_bounds({"gx": np.float32(exact).astype(np.float64)}, {"gx": (value, bound)}, "float32")["verdict"] == "pass"
    for index in ((0, 0), (1, 0), (0, 1)):  # the gate's zero at -inf, its product, a finite column
        planted = np.float32(exact).astype(np.float64)
        planted[index] += 3 * (bound[index] + float(ulp_of(value[index], "float32"))) + 1e-30
        verdict = judge_bounds({"gx": planted}, {"gx": (value, bound)}, "float32")
        assert verdict["verdict"] == "fail" and verdict["worst"]["index"] == list(index), (index, verdict)


# ---- the monotone tails (reference.errors._overflow_tail, _dtype_tail) -------------------------

#: parameters for the elementwise rules whose kernels take some (the others run on arrays alone)
_TAIL_PARAMS = {
    "clamp": {"min": -1.0, "max": 2.0}, "clamp_max": {"max": 2.0}, "clamp_min": {"min": -1.0},
    "copysign_scalar": {"other": -1.0}, "fill": {"value": 3.0}, "hardshrink": {"lambd": 0.5},
    "hardtanh": {"min_val": -1.0, "max_val": 1.0}, "leaky_relu": {"negative_slope": 0.01},
    "nan_to_num": {"nan": 0.0, "posinf": None, "neginf": None}, "pow": {"exponent": 3.0},
    "softshrink": {"lambd": 0.5}, "threshold": {"threshold": 1.0, "value": 0.0},
    "xlogy_scalar_other": {"other": 2.0},
}


def _tail_escapes(f, floor, sign):
    """The largest distance by which f leaves [f(±floor), f(±inf)] on the tail sampled from floor to
    float64's largest (log-spaced): 0 where the tail term |f(±floor) - f(±inf)| bounds every value
    of f there (or is not finite: the term is then infinite)."""
    with np.errstate(all="ignore"):
        ends = [float(np.asarray(f(np.array([sign * v]))).real.ravel()[0]) for v in (floor, np.inf)]
        if not np.isfinite(ends).all():
            return 0.0
        tail = sign * np.geomspace(floor, np.finfo(np.float64).max, 400)
        inside = np.asarray(f(tail), dtype=np.complex128).real.ravel()
    inside = inside[np.isfinite(inside)]
    return float(max(0.0, (inside - max(ends)).max(initial=0.0), (min(ends) - inside).max(initial=0.0)))


def test_the_tail_check_finds_a_kernel_that_is_not_monotone_past_the_floor():
    # sin(x)/x -> 0 at inf and is -2.4e-5 at 32752 (float16's floor): the term |f(floor) - f(inf)|
    # bounds [-2.4e-5, 0], and f is positive at other points of the tail
    def damped(x):
        return np.where(np.isinf(x), 0.0, np.sin(x) / x)

    assert _tail_escapes(damped, 32752.0, 1.0) > 1e-6
    assert _tail_escapes(np.exp, 32752.0, -1.0) == 0 and _tail_escapes(np.tanh, 32752.0, 1.0) == 0


def test_every_elementwise_rule_is_monotone_on_the_overflow_tails():
    """The tail terms bound an overflowed input's effect by the op's range between ±L/2 (L: float64's
    largest for a float64 overflow, the dtype's for a dtype overflow) and ±inf: true where the op is
    monotone there, checked for every elementwise rule the tail reaches (declared ``derived`` or
    ``elementwise`` but not mixed: a mixed one's condition term is infinite at a flagged input), in
    each input with the others at 0.5, 2, -0.5, -2, and on each dtype's tail. None escapes (sin, cos,
    tan, fmod, remainder and frac are nan at infinity: their tail term is infinite)."""
    from reference.autograd import table
    from reference.errors import LARGEST, _spec, rule_forward

    checked, escapes = 0, []
    for name, rule in sorted(table.RULES.items()):
        spec = _spec(rule)
        if spec.kind not in ("derived", "elementwise") or spec.extra.get("mixed") or rule.batch != "batch_elementwise":
            continue
        kernel, params, n = rule_forward(rule), _TAIL_PARAMS.get(name, {}), len(rule.inputs)
        for i in range(n):
            for other in (0.5, 2.0, -0.5, -2.0):
                def f(v, i=i, other=other, kernel=kernel, params=params):
                    args = [np.full(v.shape, other) for _ in range(n)]
                    args[i] = v
                    r = kernel(*args, **params)
                    return r[0] if rule.has_aux else r

                try:
                    with np.errstate(all="ignore"):
                        f(np.array([1.5]))
                except Exception:  # a kernel of other arguments (an index, a mask, a dtype)
                    continue
                checked += 1
                for dtype in ("float64", "float32", "float16", "bfloat16"):
                    for sign in (1.0, -1.0):
                        out = _tail_escapes(f, LARGEST[dtype] / 2, sign)
                        if out > 0:
                            escapes.append((name, i, other, dtype, sign, out))
    assert checked > 250 and not escapes, (checked, escapes)


def test_softmax_after_a_masked_fill_with_minus_infinity_is_bounded():
    # attention's mask: masked_fill(scores, mask, -inf) gives the filled elements an infinite error
    # (u·|-inf|), which amax spread over the row: softmax and its VJP were unbounded in every element
    # (docs/conformance.md, the attention template's -1e4); the filled -inf is exact
    x = np.array([[0.3, -1.2, 0.8], [1.5, 0.2, -0.4]])
    mask = np.array([[False, True, False], [False, False, True]])

    def masked_softmax(t):
        return T.softmax(T.masked_fill(t, T.tensor(mask), float("-inf")), -1)

    with np.errstate(all="ignore"):
        (value,), (bound,), _ = bound_of(masked_softmax, [x], Precision(dtype="float32"))
    exact = np.where(mask, 0.0, np.exp(np.where(mask, -np.inf, x)))
    exact = exact / exact.sum(-1, keepdims=True)  # float64: far inside float32's one ulp
    assert np.isfinite(bound).all() and bound.max() < 2e-6
    assert judge_bounds({"y": np.float32(exact).astype(np.float64)}, {"y": (value, bound)}, "float32")["verdict"] == "pass"
    planted = np.float32(exact).astype(np.float64)
    planted[1, 0] *= 1 + 1e-4  # 1e-4 relative: about 800 float32 ulps (it passed before: bound inf)
    assert judge_bounds({"y": planted}, {"y": (value, bound)}, "float32")["verdict"] == "fail"
