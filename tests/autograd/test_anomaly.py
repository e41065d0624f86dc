"""Anomaly mode (``T.autograd.detect_anomaly`` / ``set_detect_anomaly``) against PyTorch 2.13:
the NaN check names the backward function and output index, the warning carries the forward
call's stack, the errors propagate unchanged, and the modes nest and restore as in PyTorch."""

from __future__ import annotations

import re

import pytest

import reference
from tests.autograd._hooks_agree import agree, outcome, same, torch_or_skip

pytestmark = pytest.mark.torch

_TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\)\Z")
# a frame of torch's own Python code (autograd.grad's wrapper): the reference has no such frames
_TORCH_FRAME = re.compile(r'  File "[^"]*/site-packages/torch/[^"]*", line \d+, in [^\n]*\n(    [^\n]*\n)?')


def agree_warnings(prog):
    """``agree`` with warnings; PyTorch's C++ warnings end with a '(Triggered internally at
    <file>.cpp:<line>.)' note naming its C++ source, which is not part of the message."""
    torch = torch_or_skip()
    # one call site for both libraries: the forward stacks in the warnings share their frames
    expected, got = [outcome(lib, prog, capture_warnings=True) for lib in (torch, reference)]
    expected["warnings"] = [(c, _TORCH_FRAME.sub("", _TRIGGERED.sub("", m))) for c, m in expected["warnings"]]
    same(expected, got)
    return expected


def _x(T, data=(0.0, 1.0, 4.0)):
    return T.tensor(list(data), dtype=T.float64, requires_grad=True)


def test_nan_in_backward_names_the_function_and_the_forward_line():
    def prog(T, log):
        x = _x(T)
        with T.autograd.detect_anomaly():
            y = (x - x).sqrt() * 0  # the forward line the warning shows
            y.sum().backward()

    out = agree_warnings(prog)
    assert out["raised"] == (
        "RuntimeError",
        "Function 'SqrtBackward0' returned nan values in its 0th output.",
    )
    msgs = [m for _, m in out["warnings"]]
    assert msgs[0].startswith("Anomaly Detection has been enabled.")
    assert msgs[1].startswith(
        "Error detected in SqrtBackward0. Traceback of forward call that caused the error:"
    )
    assert "y = (x - x).sqrt() * 0  # the forward line the warning shows" in msgs[1]


def test_nan_in_second_output():
    def prog(T, log):
        a = T.tensor([float("inf"), 1.0], dtype=T.float64, requires_grad=True)
        b = T.tensor([2.0, 3.0], dtype=T.float64, requires_grad=True)
        with T.autograd.set_detect_anomaly(True):
            ((a * b) * 0).sum().backward()

    out = agree_warnings(prog)
    assert out["raised"][1] == "Function 'MulBackward0' returned nan values in its 1th output."


def test_check_nan_false_lets_nan_through():
    def prog(T, log):
        x = _x(T)
        with T.autograd.detect_anomaly(check_nan=False):
            log.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
            ((x - x).sqrt() * 0).sum().backward()
        return x.grad

    agree_warnings(prog)


def test_no_nan_no_error():
    def prog(T, log):
        x = _x(T)
        with T.autograd.detect_anomaly():
            x.sqrt().sum().backward()  # inf at 0, not nan
        return x.grad

    agree_warnings(prog)


def test_forward_outside_anomaly_mode_has_no_stack():
    def prog(T, log):
        x = _x(T)
        y = (x - x).sqrt() * 0
        with T.autograd.detect_anomaly():
            y.sum().backward()

    agree_warnings(prog)


def test_backward_outside_anomaly_mode_checks_nothing():
    def prog(T, log):
        x = _x(T)
        with T.autograd.detect_anomaly():
            y = (x - x).sqrt() * 0
        y.sum().backward()
        return x.grad

    agree_warnings(prog)


def test_other_errors_get_the_forward_stack_and_propagate():
    def prog(T, log):
        x = _x(T, (0.5, 1.0, 2.0))
        with T.autograd.detect_anomaly():
            z = x * 1
            y = z.exp()
            y.mul_(2)  # ExpBackward0's saved result is now stale
            y.sum().backward()

    out = agree_warnings(prog)
    assert "modified by an inplace operation" in out["raised"][1]


def test_autograd_grad_and_multi_output_views():
    def prog(T, log):
        x = _x(T)
        with T.autograd.detect_anomaly():
            a, b = (x - x).sqrt().unbind()[:2]
            T.autograd.grad(a * 0 + b * 0, x)

    agree_warnings(prog)


def test_error_in_double_backward_names_the_node_that_induced_it():
    """A node made by a backward function (create_graph) remembers that function: the warning
    chain goes on with "Previous calculation was induced by SqrtBackward0" and its forward line."""

    def prog(T, log):
        x = _x(T)
        with T.autograd.detect_anomaly():
            y = x.sqrt()
            (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
            (g * 0).sum().backward()

    out = agree_warnings(prog)
    assert out["warnings"][2][1].startswith("\n\nPrevious calculation was induced by SqrtBackward0.")


def test_modes_set_and_restore():
    def prog(T, log):
        log.append(T.is_anomaly_enabled())
        T.autograd.set_detect_anomaly(True, check_nan=False)
        log.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        T.autograd.set_detect_anomaly(False)
        log.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        with T.autograd.set_detect_anomaly(True):
            log.append(T.is_anomaly_enabled())
            with T.autograd.detect_anomaly(check_nan=False):
                log.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
            log.append((T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()))
        log.append(T.is_anomaly_enabled())

    agree(prog)


def test_detect_anomaly_is_not_a_decorator():
    def prog(T, log):
        @T.autograd.detect_anomaly()
        def f():
            return 1

    agree(prog)


def test_planted_bug_nan_check_off_by_default_is_caught(monkeypatch):
    """A NaN check that never fires (e.g. testing only for inf) is caught by the message test."""
    from reference.autograd import anomaly

    monkeypatch.setattr(anomaly.state, "check_nan", False)
    monkeypatch.setattr(anomaly, "_set", lambda mode, check_nan: setattr(anomaly.state, "enabled", bool(mode)))
    with pytest.raises(AssertionError):
        test_nan_in_backward_names_the_function_and_the_forward_line()
