"""Bounds of low-precision derivatives whose framework formula rounds an intermediate into the
subnormal range, found by ``refgrad run --domains whole`` (issue 32)."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Case
from conformance.ops import RecordParams
from conformance.ops.judge import run_in_process


def test_float16_asinh_second_derivative_carries_the_rounding_of_rsqrt_backwards_cube():
    """asinh''(146.5) in float16 through PyTorch's rsqrt_backward, -0.5 * grad * result.pow(3): the
    cube of rsqrt(146.5^2 + 1) = 0.00683 is 3.2e-7, a float16 subnormal (spacing 6e-8), so PyTorch's
    -3.49e-05 is 25% from the exact -4.66e-05. The reference derives the bound in PyTorch's order
    (the cube rounded on its own), which covers it; in the order -0.5 * g * r * r * r no product
    underflows and the bound (1.4e-5 at x = 146.5 with a cotangent of 8.6) did not."""
    torch = pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAdapter

    data = {"input": [146.5, 2.0], "grad_output": [1.0, 1.0], "gg_input": [1.0, 1.0]}
    case = Case(
        "asinh",
        RecordParams.of({"values": "large"}),
        {"input": (2,)},
        "float16",
        0,
        ("vjp_vjp",),
        data=data,
    )
    x = torch.tensor(data["input"], dtype=torch.float16, requires_grad=True)
    (g,) = torch.autograd.grad(torch.asinh(x), x, torch.ones_like(x), create_graph=True)
    (h,) = torch.autograd.grad(g, x, torch.ones_like(x))
    exact = -146.5 / (1 + 146.5**2) ** 1.5
    assert abs(h[0].item() - exact) > 0.2 * abs(exact)  # the framework's value is this far off
    adapter = TorchAdapter()
    got = run_in_process(adapter, case, "vjp_vjp", adapter.setup())
    assert got["verdict"] == "pass", got.get("reason")
    # and the bound is no blanket: a value twice as far off still fails
    from conformance.ops.judge import record_verdict

    planted = {"g_input": np.array([2 * h[0].item() - exact, float(h[1])]), "g_grad_output": np.asarray(g.detach(), np.float64)}
    assert record_verdict(case, "vjp_vjp", "planted", planted, {})["verdict"] == "fail"
