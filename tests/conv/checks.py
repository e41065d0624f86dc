"""Assertion helpers that explain themselves: one vectorised comparison, element-level
diagnosis only on failure, with the configuration in the message."""

from __future__ import annotations

import numpy as np


def assert_close_to_bound(name, observed, expected, magnitude, rel, context):
    """|observed − expected| ≤ rel · (magnitude + tiny), elementwise.

    ``magnitude`` is Σ|x·w| for each element (the same op on absolute values), the scale of
    the rounding error any summation order can make; ``rel`` is the allowed multiple of it.
    """
    observed, expected, magnitude = (np.asarray(a, dtype=np.float64) for a in (observed, expected, magnitude))
    assert observed.shape == expected.shape, (
        f"{name}: shape {observed.shape} but reference says {expected.shape} [{context}]"
    )
    bound = rel * (magnitude + np.finfo(np.float64).tiny)
    err = np.abs(observed - expected)
    bad = err > bound
    if bad.any():
        ratio = err / bound
        i = np.unravel_index(np.argmax(ratio), ratio.shape)
        raise AssertionError(
            f"{name}[{','.join(map(str, i))}]={observed[i]!r} but reference says {expected[i]!r} "
            f"(error {err[i]:.3g}, ratio {ratio[i]:.3g} > 1 at rel {rel:g}; {int(bad.sum())} of {bad.size} elements) "
            f"[{context}]"
        )


def assert_scalar_close(name, a, b, scale, rel, context):
    if not abs(a - b) <= rel * (abs(scale) + np.finfo(np.float64).tiny):
        raise AssertionError(
            f"{name}: {a!r} vs {b!r} (|diff| {abs(a - b):.3g} > {rel:g}·{abs(scale):.3g}) [{context}]"
        )
