"""Memory budget: estimate a case's memory before anything is allocated, refuse cases over budget.

The estimate counts, in float64 (the reference computes in float64; a framework's copy in a
narrower dtype is smaller), every array the check needs, the output and its gradient, the
reference's magnitude pass (``M``: the same op on absolute values, as large again) and the
workspace of the reference's default algorithm path (im2col: one column per output position and
kernel tap, per input channel). Each framework worker holds its own copy of the inputs and
outputs. The budget (``--memory-budget``, default a quarter of the machine's memory) applies to
the largest of the parent and one worker.
"""

from __future__ import annotations

import math
import os

from conformance.case import ITEM  # noqa: F401 - float64 bytes: the unit of Case.estimate_bytes

DEFAULT_FRACTION = 0.25


def machine_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default_budget() -> int:
    return int(machine_memory() * DEFAULT_FRACTION)


def estimate_bytes(case) -> int:
    """A generous upper estimate of the bytes one process needs to run ``case`` (any check): its
    format's (:meth:`conformance.case.Case.estimate_bytes`)."""
    return case.estimate_bytes()


def parse_size(text: str) -> int:
    """'4G', '512M', '1.5GiB', '1000000' -> bytes; ValueError on anything else."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    mult = 1
    if t and t[-1] in scale:
        mult, t = scale[t[-1]], t[:-1]
    value = float(t)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a positive size, got {text!r}")
    return int(value * mult)


def human(n: int) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"
