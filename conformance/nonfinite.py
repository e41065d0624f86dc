"""Judging non-finite values: NaN against NaN at the same position, and infinities of the same sign,
agree; a non-finite value on one side only is a ``fail`` with its own message.

:func:`settle` runs before the finite error bound: it returns the arrays with the agreeing
non-finite positions set to an exact zero on both sides (so the bound judges only finite
elements), or the failure when one side alone is non-finite.
"""

from __future__ import annotations

import numpy as np


def _mask(obs: np.ndarray, exp: np.ndarray):
    obs_nf, exp_nf = ~np.isfinite(obs), ~np.isfinite(exp)
    with np.errstate(invalid="ignore"):
        agree = (np.isnan(obs) & np.isnan(exp)) | (
            np.isinf(obs) & np.isinf(exp) & (np.sign(obs) == np.sign(exp))
        )
    return agree, (obs_nf | exp_nf) & ~agree


def one_sided(name: str, obs: np.ndarray, exp: np.ndarray, bad: np.ndarray) -> dict:
    idx = np.unravel_index(int(np.argmax(bad)), obs.shape)
    o, e = float(obs[idx]), float(exp[idx])
    side = (
        "the framework"
        if not np.isfinite(o) and np.isfinite(e)
        else ("the reference" if np.isfinite(o) else "both sides (different non-finite values)")
    )
    return {
        "verdict": "fail",
        "reason": f"non-finite on one side: {name}{[int(i) for i in idx]} = {o!r} but the reference says {e!r} "
        f"({int(bad.sum())} element(s) non-finite on {side} only)",
        "worst": {
            "output": name,
            "index": [int(i) for i in idx],
            "observed": o,
            "expected": e,
            "ratio": float("inf"),
            "limit": 0.0,
        },
        "failing_elements": int(bad.sum()),
        "max_ratio": float("inf"),
    }


def settle(observed: dict, expected: dict, value=lambda e: e, rebuild=None):
    """(observed', expected', failure or None).

    ``expected`` maps names to objects holding the values (``value(e)`` extracts the array;
    ``rebuild(e, agree)`` returns a copy with the agreeing positions zeroed).
    """
    obs_out, exp_out = dict(observed), dict(expected)
    for name, e in expected.items():
        o = observed.get(name)
        v = value(e)
        if o is None or v is None:
            continue
        o = np.asarray(o, dtype=np.float64)
        v = np.asarray(v, dtype=np.float64)
        if o.shape != v.shape or o.size == 0:
            continue
        agree, bad = _mask(o, v)
        if bad.any():
            return observed, expected, one_sided(name, o, v, bad)
        if agree.any():
            o = np.where(agree, 0.0, o)
            obs_out[name] = o
            exp_out[name] = rebuild(e, agree) if rebuild else np.where(agree, 0.0, v)
    return obs_out, exp_out, None


def c99_class(z):
    """The C99 Annex G class of each complex element: 0 finite, 1 a NaN (a NaN part, no infinite
    part), 2 an infinity (an infinite part, whatever the other part is)."""
    inf = np.isinf(z.real) | np.isinf(z.imag)
    return np.where(inf, 2, np.where(np.isnan(z.real) | np.isnan(z.imag), 1, 0))
