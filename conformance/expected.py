"""Reference expectations for each check, computed directly from ``reference.conv``.

Each check is one plain function from the case's arrays to named results. The expected
values are that function on the arrays; the magnitudes ``M`` of the tolerance model are the
*same function* on the arrays' absolute values (every result is a sum of products, so this is
Σ|x·w| term by term). All arithmetic is float64 on values already rounded to the case's dtype.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from functools import singledispatch

import numpy as np

from conformance.case import Case, CaseData, ConvCase
from conformance.tolerance import Expected, check_lengths
from reference.conv import (
    convolution,
    convolution_backward,
    convolution_double_backward,
)


class ReferenceClock:
    """Wall seconds the campaign process has spent computing the reference's expected values and
    their bounds (conv cases here, op records in conformance.ops.judge): the reference's share of a
    campaign in benchmarks/campaign.py."""

    seconds = 0.0

    @classmethod
    @contextmanager
    def timing(cls):
        start = time.perf_counter()
        try:
            yield
        finally:
            cls.seconds += time.perf_counter() - start


def _conv(case: Case, x, w, b=None):
    return convolution(x, w, b, **case.params.reference_kwargs())


def _backward(case: Case, g, x, w):
    p = case.params
    bias_sizes = (g.shape[1],) if p.bias else None
    gx, gw, gb = convolution_backward(
        g,
        x,
        w,
        bias_sizes,
        *p.geometry(),
        (True, True, p.bias),
    )
    out = {"grad_input": gx, "grad_weight": gw}
    if p.bias:
        out["grad_bias"] = gb
    return out


def forward(case, a):
    return {"output": _conv(case, a["input"], a["weight"], a["bias"])}


def vjp(case, a):
    return _backward(case, a["grad_output"], a["input"], a["weight"])


def vjp_vjp(case, a):
    """Second order: the VJP of (grad_output, input, weight) ↦ vjp, with cotangents gg_*."""

    p = case.params
    ggo, gi, gw = convolution_double_backward(
        a["gg_input"],
        a["gg_weight"],
        a["gg_bias"],
        a["grad_output"],
        a["weight"],
        a["input"],
        *p.geometry(),
        (True, True, True),
    )
    return {"g_grad_output": ggo, "g_input": gi, "g_weight": gw}


def jvp(case, a):
    """By linearity: conv(tx, w) + conv(x, tw) + tb."""
    t = _conv(case, a["tangent_input"], a["weight"]) + _conv(case, a["input"], a["tangent_weight"])
    if a["tangent_bias"] is not None:
        t = t + a["tangent_bias"].reshape((1, -1) + (1,) * case.params.rank)
    return {"tangent_output": t}


def _sample(case, a, b):
    """The b-th sample of a vmap check: batched operands sliced, the others shared."""
    x = a["batched_input"][b] if "input" in case.vmap_over else a["input"]
    w = a["batched_weight"][b] if "weight" in case.vmap_over else a["weight"]
    return x, w


def vmap(case, a):
    """The unbatched reference in a loop, stacked."""
    outs = [_conv(case, *_sample(case, a, b), a["bias"]) for b in range(case.vmap_size)]
    return {"output": np.stack(outs)}


def vmap_vjp(case, a):
    """Per-sample gradients: the unbatched backward in a loop, with the b-th cotangent."""
    per = [_backward(case, a["batched_grad_output"][b], *_sample(case, a, b)) for b in range(case.vmap_size)]
    return {name: np.stack([p[name] for p in per]) for name in per[0]}


CHECK_FUNCTIONS = {
    "forward": forward,
    "vjp": vjp,
    "vjp_vjp": vjp_vjp,
    "jvp": jvp,
    "vmap": vmap,
    "vmap_vjp": vmap_vjp,
}


class _Abs(dict):
    def __init__(self, data):
        super().__init__()
        self.data = data

    def __missing__(self, name):
        value = self.data[name]
        value = None if value is None else np.abs(value)
        self[name] = value
        return value


@singledispatch
def expected(case: Case, check: str, data: CaseData | None = None) -> dict[str, Expected] | None:
    """The reference's results of ``check`` on ``case`` with their bounds' ``M`` and ``K`` (a
    convolution's: one implementation per case type).

    None for an op record's case: its expected values and bounds depend on the framework's
    arithmetic (the accumulation contract) and are made by :func:`conformance.ops.judge.record_verdict`;
    None for a program's too (its reference runs in the reference worker, conformance.programs).
    """
    return None


@expected.register(ConvCase)
def _(case: ConvCase, check: str, data: CaseData | None = None) -> dict[str, Expected]:
    data = CaseData(case) if data is None else data
    fn = CHECK_FUNCTIONS[check]
    values = fn(case, data)
    magnitudes = fn(case, _Abs(data))
    lengths = check_lengths(case, check)
    return {
        name: Expected(
            np.asarray(values[name], dtype=np.float64),
            np.asarray(magnitudes[name], dtype=np.float64),
            lengths[name],
        )
        for name in values
    }


def reference_rejects(case: Case) -> str | None:
    """The reference's rejection of this case's configuration (a convolution's ConvConfigError
    message, an op record's error case), or None where it accepts it (:meth:`Case.rejects`; a
    program case has no configuration to reject: whether its program raises is its outcome)."""
    return case.rejects()
