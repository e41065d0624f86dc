"""SIGTERM handled like SIGINT, without being lost.

A signal handler's exception is raised wherever the main thread happens to be; inside a garbage
collector callback or a ``__del__`` (Hypothesis registers one) Python prints "Exception ignored"
and drops it, and a harness that then goes on would record a spurious result and exit as if
nothing happened. So the handler also sets :data:`requested`, and the campaign checks it
(:func:`check`) at every point where it would record a result or swallow an error.
"""

from __future__ import annotations

requested = False


class Interrupted(BaseException):
    """SIGTERM, handled like SIGINT (a BaseException: no ``except Exception`` swallows it)."""


def on_sigterm(signum, frame):
    global requested
    requested = True
    raise Interrupted()


def on_sigint(signum, frame):
    """SIGINT as Python's default handler raises it (KeyboardInterrupt), but remembered: Ray's code,
    a garbage-collector callback or a ``__del__`` may swallow the exception, and a Ctrl-C must never
    be lost (the run would go on and exit 0)."""
    global requested
    requested = True
    raise KeyboardInterrupt()


def check() -> None:
    """Raise :class:`Interrupted` if a SIGTERM or SIGINT arrived, even one whose exception was
    swallowed."""
    if requested:
        raise Interrupted()
