"""A float64 overflow is a rounding, not an exact infinity (issue 38).

The reference computes in float64; where a finite computation overflows (e^355·e^355 = inf) the
exact value is finite, and what reads the infinity is not exact either: 1/(e^355·e^355) is
4.48e-309 exactly, the reference's 0. Before, a non-finite input carried no error term at all (the
fix for where(c, x, -inf) in logcumsumexp's backward, 6908d23), so the bound there was 0 and a
correct framework failed. The tracker now flags overflows by memory (reference.errors: an infinite
result that the same kernel in long double, a wider exponent range, leaves finite, or that read a
flagged element); a flagged infinity carries its infinite error on, and an exact infinity (a pole,
a -inf constant) still carries none. What a flagged input carries into an elementwise op is the
op's move over the tail where the exact value lies, [LARGEST/2, inf)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import reference as T
from conformance.tolerance import judge_bounds, with_last_bit
from reference.errors import Precision
from reference.errors import bound_of as _bound_of

#: the tracker flags an overflow where the kernel in long double is finite: a wider exponent range on
#: x86-64 and aarch64 Linux; long double is float64 on Windows and macOS on arm64, where nothing is
#: flagged and an overflow is still read as exact (docs/verdicts.md)
needs_wide = pytest.mark.skipif(
    np.finfo(np.longdouble).maxexp <= np.finfo(np.float64).maxexp,
    reason="long double is float64 on this platform: the reference cannot tell an overflow from an exact infinity",
)


def bound_of(*args):
    with np.errstate(all="ignore"):  # (the float64 overflows are the point)
        return _bound_of(*args)


def _within(exact, value, bound):
    return np.abs(np.asarray(exact) - value) <= bound


@needs_wide
def test_a_result_read_from_a_float64_overflow_is_not_exact():
    x = np.array([355.0, 1.0, 354.0])
    (value,), (bound,), _ = bound_of(lambda t: 1 / (T.exp(t) * T.exp(t)), [x], Precision("float64"))
    exact = np.array([float(1 / mpmath.exp(2 * mpmath.mpf(v))) for v in x])
    assert value[0] == 0 and exact[0] == 4.47628622567513e-309
    assert _within(exact, value, bound).all()  # before: bound 0 at x = 355, |0 - 4.48e-309| out
    # the tail term: the exact e^710 lies past LARGEST/2, so 1/e^710 is within 2/LARGEST of 0
    assert bound[0] <= 2 / np.finfo(np.float64).max * (1 + 2.0**-50)
    planted = exact.copy()
    planted[0] = 1e-300  # an answer far off the exact 4.48e-309 still fails
    judged = with_last_bit(value, bound, "float64")
    assert judge_bounds({"y": planted}, {"y": (value, judged)}, "float64")["verdict"] == "fail"


def test_an_overflow_that_cannot_move_the_result_keeps_its_bound():
    # erf's derivative e^(-x²) at x = 1e155: x² overflows, the exact e^(-1e310) is 0 as the
    # reference's; exp over the tail [LARGEST/2, inf) moves nothing, so the bound stays eta-sized
    x = np.array([1e155, -3e200, 0.5])
    (value,), (bound,), _ = bound_of(lambda t: T.exp(-(t * t)), [x], Precision("float64"))
    assert value[0] == value[1] == 0 and (bound[:2] <= 2.0**-1074).all()


@needs_wide
def test_an_overflow_reaches_through_a_sum():
    x = np.array([355.0, 1.0])  # the sum reads the overflowed square: its infinity is flagged too
    (value,), (bound,), _ = bound_of(lambda t: 1 / T.sum(T.exp(t) * T.exp(t)), [x], Precision("float64"))
    exact = float(1 / (mpmath.exp(710) + mpmath.exp(2)))
    assert value == 0 and exact > 0 and _within(exact, value, bound)


def test_exact_infinities_carry_no_error():
    # a -inf constant masking an exponent (logcumsumexp's backward) and a pole (log 0): exact, so
    # what reads them keeps a finite bound, and a wrong answer there still fails
    x = np.array([0.0, 2.0, -1.0])
    fn = lambda t: (T.exp(T.where(t > 0, t, -np.inf)), T.exp(T.log(T.abs(t))))  # noqa: E731
    values, bounds, _ = bound_of(fn, [x], Precision("float64"))
    for b in bounds:
        assert np.isfinite(b).all(), b
    masked = values[0]
    bound = with_last_bit(masked, bounds[0], "float64")
    wrong = masked.copy()
    wrong[0] = 1e-300  # exp(-inf) is 0 exactly
    assert judge_bounds({"y": wrong}, {"y": (masked, bound)}, "float64")["verdict"] == "fail"


@needs_wide
def test_a_planted_bug_beside_an_overflow_is_still_caught():
    x = np.array([355.0, 1.0])
    (value,), (bound,), _ = bound_of(lambda t: 1 / (T.exp(t) * T.exp(t)), [x], Precision("float64"))
    judged = with_last_bit(value, bound, "float64")
    right = np.array([4.47628622567513e-309, float(1 / mpmath.exp(2))])
    assert judge_bounds({"y": right}, {"y": (value, judged)}, "float64")["verdict"] == "pass"
    planted = right * np.array([1.0, 1 + 1e-12])  # e^-2 off in its 12th digit, beside the overflow
    assert judge_bounds({"y": planted}, {"y": (value, judged)}, "float64")["verdict"] == "fail"


@needs_wide
def test_a_complex_overflow_moves_each_infinite_part():
    # found by review: the tail term's copysign raised TypeError on a complex input (87 of 3,020
    # complex128 record checks crashed the reference). A complex product's overflow from inexact
    # operands is unbounded (no error box corners for complex operands); the element beside it keeps
    # its finite bound
    z = np.array([355.0 + 0j, 1.0 + 1.0j])
    (value,), (bound,), _ = bound_of(lambda t: 1 / (T.exp(t) * T.exp(t)), [z], Precision("float64"))
    exact = [complex(1 / mpmath.exp(2 * mpmath.mpc(complex(v)))) for v in z]
    assert _within(exact, value, bound).all() and np.isfinite(bound[1])


@needs_wide
def test_an_overflow_of_an_uncertain_operand_is_unbounded():
    # found by review: (t + 1e18) - 1e18 is 384 for t = 340 (bound 222), so e^(2·384) overflows where
    # the exact e^(2·340) does not: the exact 1/e^680 = 4.78e-296 is not past the tail's floor, and
    # the bound must cover it (inf: the model cannot say where the exact value lies)
    t, a = np.array([340.0]), np.array([1e18])
    (value,), (bound,), _ = bound_of(lambda t, a: 1 / T.exp(2 * ((t + a) - a)), [t, a], Precision("float64"))
    exact = float(1 / mpmath.exp(680))
    assert value[0] == 0 and _within(exact, value, bound).all()  # before: bound 1.1e-308


@needs_wide
def test_an_in_place_op_keeps_the_overflow_flags():
    # found by review: a result written into storage (mul_, copy_) dropped its flags: bound 0
    def in_place(t):
        y = T.exp(t) * 1.0
        y.mul_(T.exp(t))
        return 1 / y

    def copied(t):
        y = T.zeros_like(t)
        y.copy_(T.exp(t) * T.exp(t))
        return 1 / y

    x = np.array([355.0, 1.0])
    exact = np.array([float(1 / mpmath.exp(2 * mpmath.mpf(v))) for v in x])
    for fn in (in_place, copied):
        (value,), (bound,), _ = bound_of(fn, [x], Precision("float64"))
        assert value[0] == 0 and _within(exact, value, bound).all(), (fn.__name__, bound)


@needs_wide
def test_a_slope_that_overflows_float64_leaves_a_finite_term_at_a_subnormal_divisor():
    """log10's gradient g/(conj(z)·log 10) at a subnormal z (log10-2a4e988f28cf, torch vjp complex128
    'tiny'): div's slope in its divisor, (a/b)/b, is 7.6e614 and reads inf - inf i in float64, and the
    rounding error of conj(z)·log 10 (3.5e-323) times it was nan, so the element's bound was nan, read
    as 0 (last-bit agreement), where the term is 8.8e291 (2.1e-15 of the value). The tracker now
    evaluates such a lost term in long double: the bound is finite and holds both the reference's and
    PyTorch's float64 answers, each about 1.5 ulps from mpmath's."""
    z = np.array([complex(-1.33510758378852e-309, 1.4179499211751884e-308)])
    g = np.array([complex(-0.2733103547485949, -2.434396541588291e-308)])
    (value,), (bound,), _ = bound_of(lambda x, c: T.autograd.grad(T.log10(x), x, c)[0], [z, g], Precision("float64"))
    with mpmath.workprec(200):
        exact = complex(mpmath.mpc(g[0]) / (mpmath.conj(mpmath.mpc(z[0])) * mpmath.log(10)))
    assert np.isfinite(bound[0]) and bound[0] < 1e-14 * abs(exact)
    torch_answer = complex(7.812707006432298e305, -8.297479108387936e306)  # torch 2.13.0 at this element
    for answer in (complex(value[0]), torch_answer):
        assert abs(answer.real - exact.real) <= bound[0] and abs(answer.imag - exact.imag) <= bound[0]


def test_a_result_that_a_bounded_error_can_push_past_the_threshold_may_be_inf():
    # found by review: float16 exp's vjp g·e^x at x = 10.453125, g = 1.890625 is 65514.87 exactly,
    # below the round-to-nearest threshold 65520, but g times e^x already rounded up passes it:
    # PyTorch 2.13 answers inf. The model read the exact value alone (bound 160: a correct framework
    # failed); it now reads the value moved by the bound's part before the last rounding
    p = Precision(dtype="float16", accumulate="float32")
    x, g = np.array([10.453125, 1.0]), np.array([1.890625, 1.0])
    (value,), (bound,), _ = bound_of(lambda t, c: T.autograd.grad(T.exp(t), t, c)[0], [x, g], p)
    assert 65504 < value[0] < 65520 and np.isinf(bound[0]) and np.isfinite(bound[1])
    pytorch_answer = np.array([np.inf, np.exp(1.0)])
    judged = with_last_bit(value, bound, "float16")
    assert judge_bounds({"y": pytorch_answer}, {"y": (value, judged)}, "float16")["verdict"] == "pass"


@needs_wide
def test_an_op_that_shrinks_an_overflow_does_not_keep_its_floor():
    # found by review: an infinity read from a FLOORED one inherited the state, but the op may bring
    # the exact value back below LARGEST/2, and 1/x's tail term (2/LARGEST) missed the exact value
    t = 355.0
    cases = {
        "a small factor": (lambda x: 1 / ((T.exp(x) * T.exp(x)) * 1e-10), [np.array([t])],
                           1 / (mpmath.exp(2 * t) * mpmath.mpf(1e-10))),
        "a mean with zeros": (lambda x: 1 / T.mean(T.exp(x) * T.exp(x)), [np.array([t, 0.0, 0.0])],
                              3 / (mpmath.exp(2 * t) + 2)),
        "a sum that cancels": (lambda x, b: 1 / T.sum(T.exp(x) * T.exp(x) + b),
                               [np.array([t, t]), np.array([0.0, -1.7e308])],
                               1 / (2 * mpmath.exp(2 * t) - mpmath.mpf(1.7e308))),
    }
    for name, (fn, args, exact) in cases.items():
        (value,), (bound,), _ = bound_of(fn, args, Precision("float64"))
        assert _within(float(exact), value, bound), (name, value, bound, float(exact))
    # an op that keeps the value past the floor keeps its finite tail term
    (value,), (bound,), _ = bound_of(lambda x: 1 / ((T.exp(x) * T.exp(x)) * 2.0), [np.array([t])], Precision("float64"))
    assert np.isfinite(bound[0]) and _within(float(1 / (2 * mpmath.exp(2 * t))), value, bound)


@needs_wide
def test_a_leaf_grad_keeps_the_overflow_flags():
    # found by review: AccumulateGrad wrote .grad outside the table and dropped the flags, so 1/x.grad
    # at x = 355 had bound 0 where the exact value is 2.24e-309 (autograd.grad kept them)
    def via_grad(t):
        x = t.detach().requires_grad_(True)
        (T.exp(x) * T.exp(x)).sum().backward()
        return 1 / x.grad

    exact = float(1 / (2 * mpmath.exp(710)))
    (value,), (bound,), _ = bound_of(via_grad, [np.array([355.0, 1.0])], Precision("float64"))
    assert value[0] == 0 and _within(exact, value[0], bound[0]) and np.isfinite(bound[0])
