"""``Unsupported``: a check a framework (or the harness's spelling of it) cannot run, and why.

A leaf module (nothing of the project imported): the op records' spellings (``conformance.ops``),
the record runner (``conformance.ops._run``), the program vocabulary (``conformance.functional``)
and the adapters raise it; the worker reports it as the ``unsupported`` verdict with its reason.
"""

from __future__ import annotations


class Unsupported(Exception):
    """This check has no counterpart in the framework (the message says why)."""


def unsupported_reason(exc) -> str:
    """An adapter's ``Unsupported`` reason. Raised inside a function TensorFlow traces (a
    ``tf.vectorized_map`` body, a ``tf.function``), TF re-raises it with its traceback around the
    message ("in user code: File ... Unsupported: <reason>"): the reason is the message alone."""
    text = str(exc)
    if text.lstrip().startswith("in user code:") and "Unsupported: " in text:
        return text.rsplit("Unsupported: ", 1)[1].strip()
    return text


__all__ = ["Unsupported", "unsupported_reason"]
