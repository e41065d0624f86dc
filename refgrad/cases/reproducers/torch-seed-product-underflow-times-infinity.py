"""PyTorch's reverse over forward in float32 at an infinite input with tiny seeds: the tangent and
cotangent (2.3e-38 and 2.7e-38, both normal float32) are multiplied together first, their product
(6.4e-76) underflows to 0, and 0 * inf is nan, where the exact value d/dx (t f'(x)) c = t c f''(x) is
an infinity (float64: inf). Prints PyTorch's value next to the exact one."""

import torch


def reverse_over_forward(f, x, t, c):
    x = x.clone().requires_grad_()
    _, tangent_out = torch.func.jvp(f, (x,), (t,))
    return torch.autograd.grad(tangent_out, x, c)[0].item()


for dtype in (torch.float32, torch.float64):
    t = torch.tensor([-2.32e-38], dtype=dtype)
    c = torch.tensor([-2.75e-38], dtype=dtype)
    ninf = torch.tensor([float("-inf")], dtype=dtype)
    print(f"torch {dtype} 0.5 ** x at x = -inf:", reverse_over_forward(lambda v: torch.pow(0.5, v), ninf, t, c), "exact: inf")
    print(f"torch {dtype} exp(x) at x = inf:", reverse_over_forward(torch.exp, -ninf, t, c), "exact: inf")
