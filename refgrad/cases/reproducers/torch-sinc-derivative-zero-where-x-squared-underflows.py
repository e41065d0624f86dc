"""PyTorch's sinc backward is grad * (pi x cos(pi x) - sin(pi x)) / (pi x x), masked to 0 where
x x pi == 0 (sinc_backward, torch 2.13.0): where x x underflows to 0 (|x| < 1.6e-162 in float64) the
gradient is 0 where the derivative is -pi^2 x / 3 (the series -pi^2 x / 3 + pi^4 x^3 / 30 - ...,
exact to the last bit there). (For |x| below about 1e-8 the numerator cancels to 0 as well, as at
x = 1e-160 below, but there the quotient's rounding error, about u / |x|, exceeds the derivative:
refgrad's bound admits that 0.)"""

import math

import torch

for x in (1e-160, 1e-162, 9.2285e-309):
    a = torch.tensor([x], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.sinc(a).sum(), a)
    masked = bool((a * a * math.pi == 0).item())  # sinc_backward's order
    print(f"x = {x:.4e} float64: x x pi == 0 {masked}, torch sinc'(x) = {g.item():.6e}, exact {-math.pi**2 * x / 3:.6e}")
