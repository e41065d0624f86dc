"""Verdicts of op-record cases: the reference's value and derived per-element bound for the
framework's arithmetic (dtype, accumulator, TF32, flush-to-zero), judged element by element."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from conformance.case import PART_DTYPE, case_data
from conformance.expected import ReferenceClock
from conformance.ops import check_arrays
from conformance.ops._conventions import judge_conventions
from conformance.ops._run import reference_expected
from conformance.ops.complex import nonfinite_convention, nonfinite_decided
from conformance.precision import ACCUMULATION, precision_for  # noqa: F401 (ACCUMULATION: re-exported)
from conformance.tolerance import (
    ERROR_MODEL_FORMULA,
    complex_parts,
    element_ratios,
    explain,
    judge_bounds,
    ulp_of,  # noqa: F401 (re-exported: conformance.record_reproducer, tests)
    with_last_bit,
)
from conformance.unsupported import unsupported_reason
from reference.errors import SMALLEST_NORMAL

_CACHE: OrderedDict = OrderedDict()


def expected_for(case, check, precision, reading="flushed"):
    """{name: (value, bound)} and the ops modelled. Under flush-to-zero the default ``reading`` is the
    reference at the inputs with subnormals read as zero (DAZ); ``reading="plain"`` is the reference
    at the inputs as given (None when flushing changes no input: the two readings are the same)."""
    key = (case.id, check, repr(precision), reading)
    if key not in _CACHE:
        data = case_data(case)
        errs = None
        if precision.flush:  # the framework may read subnormal inputs as zero (DAZ): so does the reference
            flushed, errs = _flushed(data, case, check, precision)
            if reading == "flushed":
                data = flushed
            elif not errs:
                data = None
            else:
                errs = None
        elif reading != "flushed":
            data = None
        with ReferenceClock.timing():
            _CACHE[key] = None if data is None else reference_expected(case, check, data, precision, errs)
        while len(_CACHE) > 64:
            _CACHE.popitem(last=False)
    _CACHE.move_to_end(key)
    return _CACHE[key]


def _either_reading(outputs, flushed, plain):
    """Per element, the reading (flushed or plain inputs) the observed value is closer to, in units of
    its bound: a kernel may or may not apply denormals-are-zero (TensorFlow's eager log reads a
    subnormal as itself, XLA's arithmetic as zero; a fused kernel may do either per element), so an
    element passes when it is within the bound of either reading. Returns the chosen expectations and
    how many elements only the plain reading accepts better."""
    import numpy as np

    chosen, n = {}, 0
    for name, (va, ba) in flushed.items():
        vb, bb = plain.get(name, (None, None))
        obs = outputs.get(name)
        if obs is None or vb is None or np.shape(obs) != np.shape(va) or np.shape(vb) != np.shape(va):
            chosen[name] = (va, ba)
            continue
        ba = np.broadcast_to(np.asarray(ba, dtype=np.float64), np.shape(va))
        bb = np.broadcast_to(np.asarray(bb, dtype=np.float64), np.shape(va))
        pick = element_ratios(obs, vb, bb) < element_ratios(obs, va, ba)
        n += int(np.sum(pick))
        chosen[name] = (np.where(pick, vb, va), np.where(pick, bb, ba))
    return chosen, n


def _either_alternative(outputs, flushed, plain):
    """A convention's alternative (fn -> {name: (value, bound)}, :func:`_alternative_expected`) at
    either reading of subnormal inputs, per element the one the observed value is closer to
    (:func:`_either_reading`): the flushed reading alone says a subnormal cotangent the framework
    passed through a select (TensorFlow's clip_by_value gradient at a bound) is 0, the reference's
    value too, so the alternative would not decide that element and the convention not explain it."""

    def compute(fn):
        a, b = flushed(fn), plain(fn)
        if a is None or b is None:
            return a if b is None else b
        return _either_reading(outputs, a, b)[0]

    return compute


def _flushed(data, case, check, precision):
    """The inputs with subnormals read as zero, and each flushed input's error |x|: denormals-are-zero
    applies to arithmetic, so a kernel that only moves values (a gather, a pad, a nearest resize)
    returns the subnormal itself; both readings are within the bound."""
    tiny = SMALLEST_NORMAL[precision.dtype]
    out, errs = {}, {}
    for name in check_arrays(case, check):
        a = data[name]
        if np.iscomplexobj(a):  # each part read as zero where it is subnormal; the error is |a - flushed|
            flushed = np.empty(a.shape, dtype=np.complex128)
            flushed.real = np.where(np.abs(a.real) < tiny, np.copysign(0.0, a.real), a.real)
            flushed.imag = np.where(np.abs(a.imag) < tiny, np.copysign(0.0, a.imag), a.imag)
            out[name] = flushed
            with np.errstate(invalid="ignore"):
                gap = np.where(np.isfinite(a), np.abs(a - flushed), 0.0)
            if np.any(gap > 0):
                errs[name] = gap
            continue
        sub = np.abs(a) < tiny
        out[name] = np.where(sub, np.copysign(0.0, a), a)
        if np.any(sub & (a != 0)):
            errs[name] = np.where(sub, np.abs(a), 0.0)
    return out, errs


def bound_record(precision, used=None, source=None) -> dict:
    out = {
        "formula": ERROR_MODEL_FORMULA + " + 1 ulp of the expected value",
        "compute_dtype": precision.dtype,
        "u": precision.u,
        **precision.terms(),
    }
    if source:
        out["accumulation_contract"] = source
    if used:
        out["ops"] = dict(used)
    return out


def record_verdict(case, check, framework, outputs, settings) -> dict:
    """verdict, max_ratio, worst, bound (with its terms), reason for one framework's answer."""
    precision = precision_for(case, settings, framework)
    source = settings.get("accumulation_source") or ACCUMULATION.get(framework, (None, None))[1]
    try:
        expected, used = expected_for(case, check, precision)
    except Exception as exc:  # a bug in the reference (or its model): never blamed on a framework
        return {
            "verdict": "crash",
            "reason": f"the reference raised {type(exc).__name__}: {exc}",
            "bound": bound_record(precision, source=source),
        }
    complex_case = case.dtype in PART_DTYPE
    if complex_case:  # judged part by part (conformance.tolerance.complex_parts)
        whole = (outputs, {n: v for n, (v, _) in expected.items()})  # (the nonfinite convention reads them)
        outputs, expected = complex_parts(outputs, expected, precision.dtype)
    else:
        expected = {n: (v, with_last_bit(v, b, case.dtype)) for n, (v, b) in expected.items()}
    readings = None
    if precision.flush:
        try:
            plain = expected_for(case, check, precision, reading="plain")
        except Exception:  # the reference cannot evaluate the unflushed inputs: the flushed reading alone
            plain = None
        if plain is not None:
            if complex_case:
                plain = complex_parts(outputs, plain[0], precision.dtype)[1]
            else:
                plain = {n: (v, with_last_bit(v, b, case.dtype)) for n, (v, b) in plain[0].items()}
            expected, unflushed = _either_reading(outputs, expected, plain)
            readings = {"flushed_inputs": True, "elements_judged_unflushed": unflushed}
    judged = judge_bounds(outputs, expected, precision.dtype if complex_case else case.dtype)
    met = None
    if judged["verdict"] == "fail":
        data, errs = case_data(case), None
        if precision.flush:  # the inputs as the framework's arithmetic reads them (a flushed -0 is a kink)
            data, errs = _flushed(data, case, check, precision)
        parts_of = whole[0] if complex_case else None  # an alternative's values judged part by part too
        alternative = _alternative_expected(case, check, precision, data, errs, parts_of)
        if precision.flush:  # an alternative read either way too, element by element, as the reference is
            plain_alternative = _alternative_expected(case, check, precision, case_data(case), None, parts_of)
            alternative = _either_alternative(outputs, alternative, plain_alternative)
        met = judge_conventions(case, check, outputs, expected, alternative, data)
    if judged["verdict"] == "fail" and complex_case and not met:
        met = nonfinite_convention(case, check, outputs, expected, *whole)
        if not met:
            judged = _beside_the_nonfinite_convention(case, check, outputs, expected, whole, judged, precision)
    rec = {
        "verdict": "convention" if met else judged["verdict"],
        "max_ratio": judged["max_ratio"],
        "worst": judged["worst"],
        "bound": bound_record(precision, used, source),
    }
    if readings is not None:
        # which reading of the subnormal inputs each element was judged by (docs/conformance.md,
        # "Denormals: either reading")
        rec["bound"]["denormal_readings"] = readings
    for key in ("failing_elements", "unjudged_elements", "nonfinite_mismatch"):
        if key in judged:
            rec[key] = judged[key]
    if judged["verdict"] != "pass":
        rec["reason"] = judged.get("reason") or explain(judged, f"{framework} {check} {case.describe()}")
    if met:
        rec["conventions"] = met["conventions"]
        rec["reason"] = f"{met['reason']} (against the reference alone: {rec['reason']})"
    return rec


def _beside_the_nonfinite_convention(case, check, outputs, expected, whole, judged, precision):
    """A failing complex result judged again without the elements the non-finite convention decides
    (an element of another C99 class from infinite parts), so that its worst element, its reason and
    its count name what no declared convention explains: a result is known or classified by that, not
    by an element the convention decides (log's forward over reverse at z = -inf + inf i: JAX's 0, the
    reference's nan, beside nan where finite at tiny moduli, log-4b50c69f1d19)."""
    got = nonfinite_decided(case, check, outputs, expected, *whole)
    if got is None or not any(m.any() for m in got[0].values()):
        return judged
    settled = {n: np.where(got[0][n], expected[n][0], o) if n in got[0] else o for n, o in outputs.items()}
    again = judge_bounds(settled, expected, precision.dtype)
    return again if again["verdict"] == "fail" else judged


def _alternative_expected(case, check, precision, data, errs, complex_outputs=None):
    """fn -> {name: (value, bound)} of the op computed by ``fn`` (a convention's alternative) at the
    inputs ``data`` (as the framework's arithmetic reads them), or None if the reference raises.
    ``complex_outputs``: a complex case's answers, whose results are judged part by part
    (:func:`complex_parts`), the alternative's as the reference's."""

    def compute(fn):
        try:
            with ReferenceClock.timing():
                values = reference_expected(case, check, data, precision, errs, fn=fn)[0]
        except Exception:  # an alternative the reference cannot evaluate here explains nothing
            return None
        if complex_outputs is not None:
            return complex_parts(complex_outputs, values, precision.dtype)[1]
        return {n: (v, with_last_bit(v, b, case.dtype)) for n, (v, b) in values.items()}

    return compute


def run_in_process(adapter, case, check, settings=None) -> dict:
    """One check of one record case on an adapter object in this process (tests, quick looks)."""
    import numpy as np

    reason = adapter.why_unsupported(case, check)
    if reason:
        return {"verdict": "unsupported", "reason": reason}
    data = case_data(case)
    try:
        with np.errstate(all="ignore"):
            out = adapter.run(case, check, data)
    except Exception as exc:
        if type(exc).__name__ == "Unsupported":
            return {"verdict": "unsupported", "reason": unsupported_reason(exc)}
        return {"verdict": "error_mismatch", "reason": f"{adapter.name} raised {type(exc).__name__}: {exc}"}
    out = {k: None if v is None else _as_array(_numpy(v)) for k, v in out.items()}
    return record_verdict(
        case, check, getattr(adapter, "record_framework", None) or adapter.name, out, settings or {}
    )


def _as_array(v):
    """float64, or complex128 for a complex result."""
    a = np.asarray(v)
    return np.asarray(a, dtype=np.complex128 if a.dtype.kind == "c" else np.float64)


def _numpy(v):
    if hasattr(v, "detach") and v.is_complex():  # a conjugate (or negative) view: its values
        return v.detach().resolve_conj().resolve_neg().cpu().numpy()
    if hasattr(v, "detach"):
        return (
            v.detach().float().cpu().numpy() if str(v.dtype) == "torch.bfloat16" else v.detach().cpu().numpy()
        )
    if "complex" in str(getattr(v, "dtype", "")):  # a JAX or TensorFlow complex result
        return np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype=np.complex128)
    try:
        return np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        return np.asarray(v.numpy(), dtype=np.float64)
