"""Planted framework bugs in program cases: adapters that run PyTorch as the built-in ones do and
corrupt one thing where a real bug would, so a campaign must catch them (issue #33).

* :class:`BFloat16GradUlps`: PyTorch eager, with the first element of the first leaf's gradient
  (``grad[v0]``) 16 ulps of bfloat16 off in bfloat16 programs: a low-precision bug the derived
  per-element bound must tell from rounding (a result that differs by summation order only passes,
  ``tests/conformance/test_program_precision.py``).
* :class:`AutocastGradUlps`: the same plant in mixed-precision programs (``torch.autocast`` CPU
  bfloat16 or float16 around the forward, conformance.amp): ``grad[v0]``'s first element 16 ulps of
  the policy's compute dtype off.
* :class:`AotEagerBackwardScaled`: ``torch:aot_eager`` whose compiled *backward* (AOTAutograd's
  ``bw_compiler``) returns its first gradient scaled by 1 + 2^-4: a compiled-mode bug that eager
  PyTorch does not have, in the code only a compiling mode runs.
"""

from __future__ import annotations

import numpy as np

from conformance.adapters.torch_adapter import TorchAdapter, TorchAotEagerAdapter
from conformance.amp import low_dtype
from conformance.tolerance import ulp_of

ULPS = 16
SCALE = 1.0 + 2.0**-4


class BFloat16GradUlps(TorchAdapter):
    name = "planted_bf16_grad_ulps"

    def program(self, case, a):
        out = super().program(case, a)
        g = out.get("grad[v0]")
        if case.dtype == "bfloat16" and g is not None and np.size(g):
            g = np.array(g, dtype=np.float64)
            flat = g.reshape(-1)
            flat[0] += ULPS * ulp_of(flat[0], "bfloat16")
            out["grad[v0]"] = g
        return out


class AutocastGradUlps(TorchAdapter):
    name = "planted_autocast_grad_ulps"

    def program(self, case, a):
        out = super().program(case, a)
        g = out.get("grad[v0]")
        if case.amp and g is not None and np.size(g):
            g = np.array(g, dtype=np.float64)
            flat = g.reshape(-1)
            flat[0] += ULPS * ulp_of(flat[0], low_dtype(case.amp))
            out["grad[v0]"] = g
        return out


def _scaled_backward(fx_g, example_inputs):
    """AOTAutograd's ``bw_compiler`` of ``aot_eager`` (run the graph as it is), planted: the first
    gradient it returns is scaled."""

    def run(args):
        outs = list(fx_g(*args))
        first = next((i for i, o in enumerate(outs) if o is not None and o.numel()), None)
        if first is not None:
            outs[first] = outs[first] * SCALE
        return outs

    run._boxed_call = True
    return run


class AotEagerBackwardScaled(TorchAotEagerAdapter):
    name = "planted_aot_backward_scaled"

    def __init__(self):
        super().__init__()
        from functorch.compile import make_boxed_func
        from torch._dynamo.backends.common import aot_autograd

        self.backend = aot_autograd(
            fw_compiler=lambda fx_g, example_inputs: make_boxed_func(fx_g), bw_compiler=_scaled_backward
        )

    def setup(self, device="cpu", precision="highest") -> dict:
        settings = super().setup(device, precision)
        settings["backend"] = f"aot_autograd, planted bw_compiler (first gradient x {SCALE})"
        return settings
