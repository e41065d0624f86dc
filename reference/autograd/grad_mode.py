"""Grad mode: whether operations record the graph (``no_grad``, ``enable_grad``, ``set_grad_enabled``).

One flag per thread, as PyTorch's ``GradMode`` is thread-local: a new thread starts with grad
mode on whatever the mode of the thread that made it. Each context manager also works as a
decorator.
"""

from __future__ import annotations

import functools
import threading


class GradState(threading.local):
    """Grad mode's flag for the running thread: ``grad_state.enabled`` (read on every op)."""

    def __init__(self):
        self.enabled = True


grad_state = GradState()


def is_grad_enabled() -> bool:
    return grad_state.enabled


class _GradModeContext:
    mode = True

    def _fresh(self):
        return type(self)()

    def __enter__(self):
        self.prev = grad_state.enabled
        grad_state.enabled = self.mode
        return self

    def __exit__(self, *exc):
        grad_state.enabled = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._fresh():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Operations inside do not record the graph; results do not require grad."""

    mode = False


class enable_grad(_GradModeContext):
    """Record the graph inside, even within ``no_grad``."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to ``mode`` now; used as a context manager, restore the previous mode on exit."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self.prev = grad_state.enabled
        grad_state.enabled = self.mode

    def _fresh(self):
        return set_grad_enabled(self.mode)

    def __enter__(self):
        return self
