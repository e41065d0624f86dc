"""The tolerance model: derived error bounds, never hand-tuned rtol/atol.

For a result element ``y`` that is a sum of ``K`` products computed in a dtype with unit
roundoff ``u``, every summation order satisfies the classical bound

    |observed − exact| ≤ K·u·M + u·|y|          M = Σ |x·w|  (the same op on |x|, |w|)

(``u·|y|`` covers rounding the result to the output dtype). Convolution and all its
gradients are such sums, so one formula covers them; the reference computes ``M`` by running
the *same* reference function on absolute values, and ``K`` is the reduction length of the
element's sum (:func:`reduction_lengths`). The judged figure is

    ratio = |observed − expected| / (u·M)

(``M = 0`` means the exact result is 0 from exact zeros: any difference is an infinite ratio),
and an element fails when ``ratio > K + |y|/M``, i.e. when it breaks the bound. Every verdict
records the bound it was judged against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from conformance.nonfinite import c99_class
from reference.conv.geometry import plan
from reference.errors import OVERFLOW

# Unit roundoff of each compute dtype (half the gap between 1 and the next float).
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "tf32": 2.0**-11,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}
BOUND_FORMULA = "|observed - expected| <= K*u*M + u*|y|, M = same op on |inputs|"
VERDICTS = ("pass", "convention", "fail", "error_mismatch", "crash", "timeout", "unsupported")
FAILING = ("fail", "error_mismatch", "crash", "timeout")
#: a report cell's verdict, and a bisected case's, is its most serious result's, in this order
#: (the harness's verdicts among them: ``known``, ``reference_error``, ``refused``)
SEVERITY = (
    "crash",
    "timeout",
    "fail",
    "error_mismatch",
    "known",
    "convention",
    "pass",
    "reference_error",
    "refused",
    "unsupported",
)


def compute_dtype(dtype: str, tf32: bool) -> str:
    """The dtype whose roundoff governs the products: float32 runs as TF32 when TF32 is on."""
    return "tf32" if dtype == "float32" and tf32 else dtype


def input_rounding_terms(compute: str) -> int:
    """Extra K for inputs the framework rounds before multiplying.

    The case's inputs are exact in its dtype, so only TF32 rounds them again (to 10 mantissa
    bits): each product then carries up to 2u of relative error, one more u than K counts.
    """
    return 1 if compute == "tf32" else 0


@dataclass(frozen=True)
class Expected:
    """One reference result: the value, its magnitude ``M`` and its reduction length ``K``."""

    value: np.ndarray
    magnitude: np.ndarray
    K: int


def reduction_lengths(case) -> dict[str, int]:
    """K for each result of a conv case, by the role it plays in the public op.

    ``forward`` (+1 for the bias add), ``grad_input``, ``grad_weight``, ``grad_bias``; a
    transposed convolution's forward is its correlation's input-gradient role and vice versa.
    """

    p = case.params
    pl = plan(
        case.shapes["input"],
        case.shapes["weight"],
        *p.geometry(),
    )
    c = pl.corr
    taps = math.prod(c.kernel)
    corr_forward = c.in_channels // c.groups * taps
    corr_grad_input = c.out_channels // c.groups * taps
    out_positions = c.batch * math.prod(pl.output_shape[2:])
    forward, grad_input = (corr_grad_input, corr_forward) if p.transposed else (corr_forward, corr_grad_input)
    return {
        "forward": forward + (1 if p.bias else 0),
        "grad_input": grad_input,
        "grad_weight": c.batch * math.prod(c.out_size),
        "grad_bias": out_positions,
        # conv(tx, w) + conv(x, tw) (+ tb): all the terms of both sums, whatever order they are added in
        "linearised": 2 * forward + (1 if p.bias else 0),
    }


def check_lengths(case, check: str) -> dict[str, int]:
    """K for each named output of ``check``."""
    k = reduction_lengths(case)
    grads = {"grad_input": k["grad_input"], "grad_weight": k["grad_weight"], "grad_bias": k["grad_bias"]}
    return {
        "forward": {"output": k["forward"]},
        "vmap": {"output": k["forward"]},
        "vjp": grads,
        "vmap_vjp": grads,
        "jvp": {"tangent_output": k["linearised"]},
        "vjp_vjp": {
            "g_grad_output": k["linearised"],
            "g_input": k["grad_input"],
            "g_weight": k["grad_weight"],
        },
    }[check]


def with_extra_terms(expected: dict[str, Expected], extra: int) -> dict[str, Expected]:
    return (
        {n: Expected(e.value, e.magnitude, e.K + extra) for n, e in expected.items()} if extra else expected
    )


def _worst_element(name, idx, observed, expected, dtype, **judged) -> dict:
    """The worst element's record: where, both values, the error in ulps of ``dtype`` (None without
    one) and how it was judged (ratio, limit, its bound)."""
    obs, exp = float(observed[idx]), float(expected[idx])
    return {
        "output": name,
        "index": [int(i) for i in idx],
        "observed": obs,
        "expected": exp,
        **judged,
        "dtype": dtype,
        "ulps": ulps(obs, exp, dtype),
    }


def judge(observed: dict, expected: dict[str, Expected], u: float, dtype: str | None = None) -> dict:
    """Compare every expected output with the observed one; return the verdict record.

    The record holds ``verdict`` (pass/fail), ``max_ratio`` (the largest ratio over all
    elements), ``bound`` (formula, u, K per output) and, for the element closest to or furthest
    past its bound, ``worst``: output, index, observed, expected, ratio, that element's limit,
    ``dtype`` (the case's, the observed values') and ``ulps`` (the error in ulps of it).
    """
    record = {
        "verdict": "pass",
        "max_ratio": 0.0,
        "bound": {"formula": BOUND_FORMULA, "u": u, "K": {n: e.K for n, e in expected.items()}},
        "worst": None,
    }
    worst_excess = -math.inf
    for name, exp in expected.items():
        if name not in observed or observed[name] is None:
            return {**record, "verdict": "fail", "reason": f"the adapter returned no '{name}'"}
        obs = np.asarray(observed[name], dtype=np.float64)
        if obs.shape != exp.value.shape:
            return {
                **record,
                "verdict": "fail",
                "reason": f"{name} has shape {list(obs.shape)} but the reference's is {list(exp.value.shape)}",
            }
        if obs.size == 0:
            continue
        err = np.abs(obs - exp.value)
        err = np.where(np.isnan(err), np.inf, err)
        scale = u * exp.magnitude
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(scale > 0, err / np.where(scale > 0, scale, 1.0), np.where(err > 0, np.inf, 0.0))
            limit = exp.K + np.where(
                exp.magnitude > 0, np.abs(exp.value) / np.where(exp.magnitude > 0, exp.magnitude, 1.0), 0.0
            )
            # an exact element (ratio 0) never outranks a wrong one, also where its limit is 0 (0/0)
            excess = np.where(np.isinf(ratio), np.inf, np.where(ratio == 0, 0.0, ratio / limit))
        flat = int(np.argmax(excess))
        idx = np.unravel_index(flat, obs.shape)
        record["max_ratio"] = max(record["max_ratio"], float(ratio.max()))
        if excess[idx] > worst_excess:
            worst_excess = float(excess[idx])
            record["worst"] = _worst_element(
                name, idx, obs, exp.value, dtype, ratio=float(ratio[idx]), limit=float(limit[idx])
            )
        if (ratio > limit).any():
            record["verdict"] = "fail"
            record["failing_elements"] = record.get("failing_elements", 0) + int((ratio > limit).sum())
    return record


def explain(record: dict, label: str = "") -> str:
    """One line: ``grad_input[0,2,1,1]=0.51300001 but reference says 0.4980000000000001 (3.1e+04 ulps of
    float32; ratio 3.1e+04 > bound 576) [...]``: each value with the digits that tell the two apart
    (:func:`shortest_repr`: the observed value in the case's dtype, the reference in float64) and the
    error in ulps of the dtype (:func:`ulps`) next to the ratio."""
    w = record.get("worst")
    if record.get("reason"):
        return f"{record['reason']} [{label}]"
    if not w:
        return f"no elements to compare [{label}]"
    rel = ">" if w["ratio"] > w["limit"] else "<="
    index = ",".join(str(i) for i in w["index"])
    dtype = w.get("dtype")
    ulp_text = f"{format_ulps(w['ulps'])} of {dtype}; " if w.get("ulps") is not None else ""
    return (
        f"{w['output']}[{index}]={shortest_repr(w['observed'], dtype)} but reference says "
        f"{shortest_repr(w['expected'], 'float64')} ({ulp_text}ratio {w['ratio']:.3g} {rel} bound {w['limit']:.3g}) "
        f"[{label}]"
    )


# ---- printing a compared value: shortest round-trip digits, error in ulps ----------------------

#: explicit mantissa bits and smallest normal exponent of each dtype
_FORMAT = {"float64": (52, -1022), "float32": (23, -126), "float16": (10, -14), "bfloat16": (7, -126)}


def _dtype_scalar(dtype: str):
    """The NumPy scalar type of ``dtype`` (bfloat16 from ml_dtypes)."""
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return {"float64": np.float64, "float32": np.float32, "float16": np.float16}[dtype]


def shortest_repr(x, dtype: str | None = "float64") -> str:
    """The shortest decimal that reads back as ``x`` in ``dtype`` (Python's repr layout).

    ``x`` is a float holding a value of ``dtype``; float64's digits are ``repr``'s, float32's and
    float16's NumPy's Dragon4 (``format_float_scientific(unique=True)``), bfloat16's the fewest
    significant digits (1 to 4) whose nearest bfloat16 is ``x``. A value ``dtype`` cannot hold
    exactly (or an unknown dtype, or none) is printed as float64, so no digit is ever invented.
    """
    x = float(x)
    if not math.isfinite(x) or dtype not in _FORMAT or dtype == "float64":
        return repr(x)
    kind = _dtype_scalar(dtype)
    value = kind(x)
    if float(value) != x:  # not a value of dtype: every float64 digit counts
        return repr(x)
    if dtype == "bfloat16":
        digits = next(
            (s for p in range(1, 6) for s in _nearest_decimals(x, p) if kind(float(s)) == value), repr(x)
        )
    else:
        digits = np.format_float_scientific(value, unique=True, trim="-")
    # a string of at most 9 significant digits: float64's repr of it is the same digits in repr's layout
    return repr(float(digits))


def _nearest_decimals(x: float, p: int) -> list[str]:
    """The p-significant-digit decimals next to ``x``: the nearest first, then its two neighbours
    (one of them can be the only one inside an interval that is narrower below a power of two)."""
    nearest = f"{x:.{p - 1}e}"
    step = 10.0 ** (int(nearest.split("e")[1]) - (p - 1))
    return sorted(
        {nearest, f"{float(nearest) - step:.{p - 1}e}", f"{float(nearest) + step:.{p - 1}e}"},
        key=lambda s: abs(float(s) - x),
    )


def ulp_of(values, dtype):
    """One ulp of each value in ``dtype``: the gap between the two ``dtype`` numbers around it,
    2^(e - mantissa bits) in the binade [2^e, 2^(e+1)) of |value|. In and below the smallest normal
    binade (0 included) it is the smallest subnormal, the dtype's gap there; an infinite value's ulp
    is taken as that of 1, a NaN's as the smallest subnormal. (The record judge adds one ulp to
    every bound: a last-bit difference is an implementation's freedom, e.g. an FMA or a libm that
    rounds the other way.)"""
    bits, emin = _FORMAT[dtype]
    mag = np.abs(np.asarray(values, dtype=np.float64))
    # frexp: mag = f * 2^e with f in [0.5, 1), so the binade's exponent is e - 1 (exact, unlike log2)
    _, e = np.frexp(np.where(np.isfinite(mag) & (mag > 0), mag, 1.0))
    exp = np.where(mag > 0, e - 1, emin)
    return np.ldexp(1.0, (np.maximum(exp, emin) - bits).astype(int))


def ulps(observed, expected, dtype: str | None) -> float | None:
    """|observed − expected| in ulps of ``dtype`` at the expected value (:func:`ulp_of`).

    Equal non-finite values (nan and nan, inf and inf of one sign) are 0 ulps apart, any other pair
    with a non-finite side infinitely many; None when ``dtype`` is not a floating dtype refgrad knows.
    """
    if dtype not in _FORMAT:
        return None
    observed, expected = float(observed), float(expected)
    if not (math.isfinite(observed) and math.isfinite(expected)):
        same = observed == expected or (math.isnan(observed) and math.isnan(expected))
        return 0.0 if same else math.inf
    return abs(observed - expected) / float(ulp_of(expected, dtype))


def format_ulps(n: float) -> str:
    """``3 ulps``, ``1 ulp``, ``0.5 ulp``, ``2.1e+06 ulps``, ``inf ulps``."""
    return f"{n:.3g} {'ulp' if n <= 1 else 'ulps'}"


# ---- the derived error model (op records): a per-element bound ---------------------------------

ERROR_MODEL_FORMULA = (
    "|observed - expected| <= bound, bound composed by reference.errors: sum_i |dy/dx_i|·e_i + own rounding "
    "(2·c·u·|y| for a c-ulp op; K·u_acc·M + u·|y| for sums of products) + eta (underflow), per primitive, "
    "through the forward and every differentiation pass"
)


def free_elements(value, bound, dtype: str | None = None) -> dict:
    """{"nan": n, "inf": m, "range": k}: elements whose reference value is finite but whose bound is
    nan (the error model lost track), infinite with the value inside ``dtype``'s range (an
    intermediate result may overflow, or the model lost track) or infinite with the value past it
    ("range": the result itself rounds to inf in the dtype, from :data:`reference.errors.OVERFLOW`
    on): the elements the judge holds to no finite
    bound (scripts/scan_free_bounds.py counts them)."""
    value = np.asarray(value)
    if value.dtype.kind not in "fc":
        return {}
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), value.shape)
    finite = np.isfinite(value)
    past = np.abs(value) >= OVERFLOW.get(dtype, np.inf)
    out = {
        "nan": int((finite & np.isnan(bound)).sum()),
        "inf": int((finite & np.isinf(bound) & ~past).sum()),
        "range": int((finite & np.isinf(bound) & past).sum()),
    }
    return {k: n for k, n in out.items() if n}


def known(bound):
    """The bound with nan read as 0: where the error model lost track of an element's error (inf·0,
    inf − inf inside a composite) it bounds nothing, and the element passes only exact agreement
    (:func:`with_last_bit`: the reference value rounded to the dtype)."""
    bound = np.asarray(bound, dtype=np.float64)
    return np.where(np.isnan(bound), 0.0, bound)


def with_last_bit(value, bound, dtype):
    """The judged bound of a real result: the model's ``bound`` plus one ulp of the expected value in
    ``dtype`` (an implementation's last-bit freedom). A nan bound counts as 0 (:func:`known`), so
    there the judged bound is one ulp: the framework's answer must be the float64 reference value
    rounded to ``dtype`` (either way: both neighbours are within one ulp). That counts the reference's
    own float64 rounding too, in float64 as well: a correctly rounded reference and a faithful answer
    lie on one side of every ``dtype`` number that the exact value lies on, so they are at most one
    ``dtype`` step apart, and a step is at most one ulp of the reference value
    (tests/conformance/test_free_bounds.py). An infinite bound stays infinite (a result that may
    leave the dtype's range: :func:`element_ratios`)."""
    return known(bound) + ulp_of(value, dtype)


def element_ratios(obs, value, bound):
    """|observed − expected| / bound per element (0 where a non-finite reference value is matched
    exactly or the bound is infinite, inf where a non-finite one is not): > 1 fails. A nan bound on
    a finite value bounds nothing (:func:`known`): only an exact answer passes there."""
    obs = np.asarray(obs, dtype=np.float64)
    value = np.asarray(value, dtype=np.float64)
    bound = np.broadcast_to(known(bound), value.shape)
    ref_finite = np.isfinite(value)
    same_nonfinite = (np.isnan(value) & np.isnan(obs)) | (np.isinf(value) & (obs == value))
    free = np.isinf(bound) & ref_finite
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(obs - value)
        err = np.where(np.isfinite(err), err, np.inf)
        ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0), np.where(err > 0, np.inf, 0.0))
    ratio = np.where(free | (~ref_finite & same_nonfinite), 0.0, ratio)
    return np.where(~ref_finite & ~same_nonfinite, np.inf, ratio)


def judge_bounds(observed: dict, expected: dict, dtype: str | None = None) -> dict:
    """Judge each element against its own bound: ``expected[name] = (value, bound)``.

    Non-finite reference values must be matched exactly (nan by nan, +inf by +inf); where the
    bound is infinite (a result past the dtype's range) any value passes; elsewhere the observed
    value must be finite and within the bound. ``ratio`` is |observed − expected| / bound; the
    worst element carries its error in ulps of ``dtype`` (:func:`judge`).
    """
    record = {"verdict": "pass", "max_ratio": 0.0, "worst": None}
    worst_excess = -math.inf
    unjudged = 0
    for name, (value, bound) in expected.items():
        if name not in observed or observed[name] is None:
            return {**record, "verdict": "fail", "reason": f"the adapter returned no '{name}'"}
        obs = np.asarray(observed[name], dtype=np.float64)
        value = np.asarray(value, dtype=np.float64)
        if obs.shape != value.shape:
            return {
                **record,
                "verdict": "fail",
                "reason": f"{name} has shape {list(obs.shape)} but the reference's is {list(value.shape)}",
            }
        if obs.size == 0:
            continue
        bound = np.broadcast_to(known(bound), value.shape)
        ref_finite = np.isfinite(value)
        free = np.isinf(bound) & ref_finite
        unjudged += int(free.sum())
        ratio = element_ratios(obs, value, bound)
        bad = ratio > 1.0
        flat = int(np.argmax(ratio))
        idx = np.unravel_index(flat, obs.shape)
        record["max_ratio"] = max(record["max_ratio"], float(ratio.max()))
        if ratio[idx] > worst_excess:
            worst_excess = float(ratio[idx])
            record["worst"] = _worst_element(
                name, idx, obs, value, dtype, bound=float(bound[idx]), ratio=float(ratio[idx]), limit=1.0
            )
        if bad.any():
            record["verdict"] = "fail"
            record["failing_elements"] = record.get("failing_elements", 0) + int(bad.sum())
            if not ref_finite[idx] or not np.isfinite(obs[idx]):
                record["nonfinite_mismatch"] = True
    if unjudged:
        record["unjudged_elements"] = unjudged
    return record


def complex_parts(outputs, expected, part_dtype):
    """A complex case's results judged on their real and imaginary parts: every complex array (the
    reference's value or the framework's answer) becomes its parts, a trailing axis of 2 (index 0 the
    real part, 1 the imaginary part), and the bound of each part is the element's bound on the
    modulus of its error (|d re|, |d im| <= |dz| <= bound) plus one ulp (of ``part_dtype``) of the
    larger part. A non-finite reference element is matched by any framework element of its C99 class
    (an infinity: an infinite part; a NaN: a NaN part and no infinite one). A real result of complex inputs (abs) is judged as it is, unless the framework
    answered a complex array (then its imaginary part must be within the bound of 0)."""
    obs_out, exp_out = dict(outputs), {}
    for name, (value, bound) in expected.items():
        obs = outputs.get(name)
        if value is None:
            exp_out[name] = (value, bound)
            continue
        value, bound = np.asarray(value), np.asarray(bound, dtype=np.float64)
        if value.dtype.kind != "c" and (obs is None or np.asarray(obs).dtype.kind != "c"):
            exp_out[name] = (value, with_last_bit(value, bound, part_dtype))
            continue
        value = np.asarray(value, dtype=np.complex128)
        larger = np.maximum(np.abs(value.real), np.abs(value.imag))
        bound = np.broadcast_to(known(bound) + ulp_of(larger, part_dtype), value.shape)
        exp_out[name] = (_parts(value), np.stack([bound, bound], axis=-1))
        if obs is not None:
            obs = np.asarray(obs, dtype=np.complex128)
            if obs.shape == value.shape:
                # C99 Annex G.3: a complex value with an infinite part is an infinity (whatever its other
                # part, a NaN included), one with a NaN part and no infinite part a NaN; non-finite
                # values of one class are the same value (their parts are implementation choices)
                same = (c99_class(value) > 0) & (c99_class(value) == c99_class(obs))
                obs = np.where(same, value, obs)
            obs_out[name] = _parts(obs)
    return obs_out, exp_out


def _parts(z):
    return np.stack([z.real, z.imag], axis=-1)
