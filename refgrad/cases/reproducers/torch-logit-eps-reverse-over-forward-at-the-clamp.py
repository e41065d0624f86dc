"""torch.logit(x, eps) clamps x to [eps, 1 - eps], so its derivative is 0 outside and so is every
higher one. The reverse over forward (torch.func.vjp of torch.func.jvp) is nan there where its
intermediate c t (2x - 1) / (x (1 - x))^2 overflows (x near 0 or 1, or exactly 0 or 1) before the
clamp's mask multiplies it by 0; the forward over reverse gives the 0."""

import torch
from torch.func import jvp, vjp


def reverse_over_forward(x, t, c, dtype, eps=1e-3):
    x, t, c = (torch.tensor([v], dtype=dtype) for v in (x, t, c))
    tangent = lambda x: jvp(lambda x: torch.logit(x, eps), (x,), (t,))[1]  # noqa: E731
    return vjp(tangent, x)[1](c)[0].item()


def forward_over_reverse(x, t, c, dtype, eps=1e-3):
    x, t, c = (torch.tensor([v], dtype=dtype) for v in (x, t, c))
    gradient = lambda x: vjp(lambda x: torch.logit(x, eps), x)[1](c)[0]  # noqa: E731
    return jvp(gradient, (x,), (t,))[1].item()


for x, dtype in ((-0.005611419677734375, torch.float16), (-1e-20, torch.float32), (0.0, torch.float64), (-0.3, torch.float16)):
    print(
        f"torch logit(eps=0.001) {str(dtype)[6:]} at x = {x}, t = -3, c = -5.8515625: reverse over forward",
        reverse_over_forward(x, -3.0, -5.8515625, dtype),
        "forward over reverse",
        forward_over_reverse(x, -3.0, -5.8515625, dtype),
        "exact: 0",
    )
