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


def check() -> None:
    """Raise :class:`Interrupted` if a SIGTERM arrived, even one whose exception was swallowed."""
    if requested:
        raise Interrupted()
