"""Anomaly detection: ``T.autograd.set_detect_anomaly`` / ``T.autograd.detect_anomaly``
(PyTorch's ``torch.autograd.anomaly_mode``).

While it is on:

* every node recorded remembers the Python stack of the forward call that made it (the frames of
  the user's program: frames inside the ``reference`` package are left out, as PyTorch's trace
  shows no C++ frames);
* the engine checks each backward function's outputs for NaN (unless ``check_nan=False``) and
  raises ``RuntimeError("Function 'SqrtBackward0' returned nan values in its 0th output.")``;
* when a backward function raises (that NaN error, a saved tensor modified in place, ...), a
  ``UserWarning`` "Error detected in SqrtBackward0. Traceback of forward call that caused the
  error: ..." carries the stored forward stack ("No forward pass information available..." when
  the node was made with anomaly mode off), and the error propagates unchanged.
"""

from __future__ import annotations

import os
import traceback
import warnings
import weakref

from reference.backend import is_inexact


class AnomalyState:
    """Anomaly mode's flags: ``state.enabled`` and ``state.check_nan``."""

    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled, self.check_nan = False, True


state = AnomalyState()
_stacks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # node -> formatted forward stack
_parents: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # node made in a backward -> that node
_running: list = []  # the backward functions being run (innermost last)

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../reference


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
    return state.check_nan


def _set(mode, check_nan):
    state.enabled = bool(mode)
    state.check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager (PyTorch's ``detect_anomaly(check_nan=True)``): anomaly mode on inside it.
    Making one warns, as PyTorch does, that the mode slows things down."""

    def __init__(self, check_nan=True):
        self.prev = state.enabled
        self.check_nan = check_nan
        self.prev_check_nan = state.check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
            "enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """``set_detect_anomaly(mode, check_nan=True)``: sets the mode at once; as a context manager it
    restores the previous mode on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = state.enabled
        self.prev_check_nan = state.check_nan
        _set(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(self.prev, self.prev_check_nan)


def store(node):
    """Remember the forward call's stack for ``node`` (called when a node is made in anomaly mode)."""
    frames = [
        f for f in traceback.extract_stack()[:-1] if not os.path.abspath(f.filename).startswith(_PACKAGE)
    ]
    _stacks[node] = "".join(traceback.format_list(frames))
    if _running:  # made by a backward function (create_graph): PyTorch's anomaly parent
        _parents[node] = _running[-1]


def run_node(node, buf):
    """``node.apply(buf)`` with anomaly mode's checks (the engine calls this while the mode is on)."""
    _running.append(node)
    try:
        outs = node.apply(buf)
        if state.check_nan:
            for i, g in enumerate(outs):
                if g is not None and is_inexact(g._data.dtype) and bool((g._data != g._data).any()):
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
        return outs
    except Exception:
        _print_stack(node)
        raise
    finally:
        _running.pop()


def _print_stack(node):
    """PyTorch's PyAnomalyMetadata::print_stack: the node's forward stack, then its parents'."""
    _warn_stack(node.name(), _stacks.get(node), False)
    parent = _parents.get(node)
    while parent is not None:
        _warn_stack(parent.name(), _stacks.get(parent), True)
        parent = _parents.get(parent)


def _warn_stack(name, stack, is_parent):
    if stack is None:
        msg = (
            f"Error detected in {name}. No forward pass information available. Enable detect anomaly during "
            "forward pass for more information."
        )
    elif is_parent:
        msg = (
            f"\n\nPrevious calculation was induced by {name}. Traceback of forward call that induced the "
            f"previous calculation:\n{stack}"
        )
    else:
        msg = f"Error detected in {name}. Traceback of forward call that caused the error:\n{stack}"
    warnings.warn(msg, stacklevel=4)
