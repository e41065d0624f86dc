"""Run one program on ``torch`` and on ``reference`` and compare what it observed.

A program is ``prog(T, log)``: program text for both libraries (``T`` is ``torch`` or
``reference``); it may append observations to ``log`` (hook calls, counters) and returns a value
(tensors, tuples, numbers, strings). The outcome is the normalised return value and log, or the
raised error's builtin type, message and the log up to the error. Tensors become NumPy arrays
(compared with a tight tolerance), graph nodes their ``name()``, dtypes their names.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import reference


def torch_or_skip():
    return pytest.importorskip("torch")


def _builtin_type(exc):
    """The first builtin class of the error (the reference's AutogradError is a RuntimeError)."""
    return next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")


def norm(v):
    """A comparable form of an observation."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return type(v)(norm(x) for x in v) if not hasattr(v, "_fields") else tuple(norm(x) for x in v)
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if hasattr(v, "detach") and hasattr(v, "shape"):
        return np.asarray(v.detach().numpy()).copy()
    if hasattr(v, "name") and hasattr(v, "next_functions"):
        return ("node", v.name())
    if isinstance(v, np.dtype) or type(v).__name__ == "dtype":
        return str(v).replace("torch.", "")
    return repr(v)


def outcome(T, prog, *, capture_warnings=False):
    log = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = prog(T, log)
            out = {"ok": norm(res), "log": norm(log)}
        except Exception as e:  # noqa: BLE001 - the error is the observation
            out = {"raised": (_builtin_type(e), str(e)), "log": norm(log)}
    if capture_warnings:
        out["warnings"] = [
            (w.category.__name__, str(w.message))
            for w in caught
            if "jit" not in str(w.message)  # torch's own deprecation noise
            and not (w.category is RuntimeWarning and "encountered in" in str(w.message))  # NumPy's
        ]
    return out


def same(a, b, path="outcome", rtol=1e-12, atol=1e-14):
    """Assert two normalised observations agree; the message names the first difference."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), f"{path}: {a!r} vs {b!r}"
        assert a.shape == b.shape, f"{path}: shape {a.shape} vs {b.shape}"
        assert np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True), f"{path}: torch {a} but reference {b}"
        return
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), f"{path}: keys {sorted(a)} vs {sorted(b)} (torch {a} / reference {b})"
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]", rtol, atol)
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), f"{path}: length {len(a)} vs {len(b)}: torch {a} / reference {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]", rtol, atol)
        return
    if isinstance(a, float) and isinstance(b, float):
        assert np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True), f"{path}: torch {a} but reference {b}"
        return
    assert a == b, f"{path}: torch {a!r} but reference {b!r}"


def agree(prog, **kw):
    """Run ``prog`` on both libraries and assert the outcomes agree; returns torch's outcome."""
    torch = torch_or_skip()
    expected = outcome(torch, prog, **kw)
    got = outcome(reference, prog, **kw)
    same(expected, got)
    return expected
