"""The underflow term of the error model (``eta``: a rounded tiny result may be flushed or lose its
subnormal bits) applies where a result can be tiny, not to an exact zero nor to a copy.

Found on log-c956da8796b6 (``--ops log --dtypes complex128 --domains whole --draws seeded --seed 1``,
TensorFlow's vmap_jvp_vjp, flush-to-zero: eta = 2.2e-308): at z = 6.27e-308i with a zero cotangent,
the second derivative's bound was 7.75e306 on an element whose value is -0.4637, because the copies
of the seeds (clone) and the exact zero 0/conj(z) each added eta, which the derivative 1/z (1.6e307)
carried twice into the result: any answer passed. The bound is now 0.818 (the tiny tangent seed's
own contribution, docs/conformance.md "Seeds near the underflow threshold", and one eta through
1/z): a wrong answer is caught, an exact one rounded otherwise is not."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Case
from conformance.ops import RecordParams
from conformance.ops.judge import expected_for, precision_for, record_verdict
from reference.errors import SMALLEST_NORMAL, Precision, bound_of

pytest.importorskip("torch")  # reference.* imports only NumPy; the judge's case helpers import torch lazily

FLUSH = {"flush_denormal": True}  # TensorFlow's arithmetic (flush-to-zero)
Z = complex(-0.0, 6.272328180218111e-308)  # a normal number: 2.8 times the smallest normal
TAN = 1.1516945543505368 + 0.7437289609943735j
TAN_COT = complex(-0.0, 2.90850001741968e-308)


def _parts(values):
    return {"real": [v.real for v in values], "imag": [v.imag for v in values]}


def _log_jvp_vjp():
    """log's forward-over-reverse check at z = 6.27e-308i, cotangent -0-0i: the result is
    tan_cot·conj(1/z) = tan_cot/conj(z) = -0.46370341822875... (the cotangent's term
    g·conj(-t/z^2) is exactly 0)."""
    arrays = {"input": [Z], "cot_output": [complex(-0.0, -0.0)], "tan1_input": [TAN], "tan_cot_output": [TAN_COT]}
    return Case(
        "log",
        RecordParams.of({"values": "special"}),
        {"input": (1,)},
        "complex128",
        1,
        ("jvp_vjp",),
        data={n: _parts(v) for n, v in arrays.items()},
    )


def test_a_wrong_answer_of_the_old_bounds_size_is_caught_and_a_differently_rounded_one_passes():
    case = _log_jvp_vjp()
    ((value, bound),) = expected_for(case, "jvp_vjp", precision_for(case, FLUSH, "tensorflow"))[0].values()
    exact = TAN_COT / np.conj(Z)
    assert value[0] == pytest.approx(exact, rel=1e-15)
    # the tiny seed's own contribution |exact| (it may be lost to an underflowing partial product)
    # and one eta of the subtraction's tiny result carried by 1/|z|: 0.818, not 7.75e306
    assert bound[0] == pytest.approx(abs(exact) + SMALLEST_NORMAL["float64"] / abs(Z), rel=1e-3)
    # exact, rounded otherwise (a few ulps away, as another order of the same operations gives) passes
    re = value.real
    for _ in range(4):
        re = np.nextafter(re, 0)
    other = re + 1j * value.imag
    assert record_verdict(case, "jvp_vjp", "tensorflow", {"tangent_grad_input": other}, FLUSH)["verdict"] == "pass"
    # wrong: the old bound's size (any answer passed), ten times the value, the value's sign flipped
    for wrong in (value + 1e306, value * 10, -value):
        verdict = record_verdict(case, "jvp_vjp", "tensorflow", {"tangent_grad_input": wrong}, FLUSH)
        assert verdict["verdict"] == "fail", wrong


def test_exact_zeros_and_copies_carry_no_underflow_term():
    p = Precision(dtype="float64", flush=True)
    zero, tiny = np.array([complex(-0.0, -0.0)]), np.array([Z])
    # a copy moves values: no rounding, no underflow (the seeds' copies in the checks)
    (_,), (b,), _ = bound_of(lambda a: a.clone(), [tiny], p)
    assert b[0] == 0
    # 0 / z is an exact zero (every partial result of the division is 0): no eta
    (q,), (b,), _ = bound_of(lambda a, c: a / c, [zero, tiny], p)
    assert q[0] == 0 and b[0] == 0
    # a tiny nonzero quotient may be flushed: its six partial results' etas (reference/errors/complex.py DIV)
    (q,), (b,), _ = bound_of(lambda a, c: a / c, [tiny, np.array([3.0 + 0j])], p)
    assert 0 < abs(q[0]) < SMALLEST_NORMAL["float64"] and b[0] >= 6 * SMALLEST_NORMAL["float64"]
    # a zero that carries an error is not exact: the eta stays (real arrays too)
    x = np.array([0.0])
    (_,), (b,), _ = bound_of(lambda a: a * 2.0, [x], p, input_errors={id(x): np.array([1e-300])})
    assert b[0] >= SMALLEST_NORMAL["float64"]
