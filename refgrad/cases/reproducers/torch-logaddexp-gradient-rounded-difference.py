"""PyTorch's logaddexp and logaddexp2 gradients, grad / (1 + exp(other - self)) and
grad / (1 + 2^(other - self)) (derivatives.yaml), exponentiate the *rounded* difference
other - self: its rounding, up to u·|other - self|/2 absolute, moves the partial, a tiny
σ(-k·|other - self|), by the relative k·|other - self|·u/2: hundreds of ulps where the partial is
below ~1e-154 (there the error model's composite of that formula loses the propagated error: 1/p
squared underflows, and PyTorch's answer falls outside its bound). The exact value
(mpmath, 50 digits) of the partial in self is 1 / (1 + base^(other - self)) of the float64 inputs;
the reference forms σ(k(self - other)) with the difference as a double-double."""

import mpmath
import torch

mpmath.mp.dps = 50
worst = 0.0
for fn, base, a, b in (
    (torch.logaddexp, mpmath.e, -400.1, 0.3),
    (torch.logaddexp2, 2, -573.4152014453, 0.15520529189346713),
):
    x = torch.tensor([a], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([b], dtype=torch.float64)
    (g,) = torch.autograd.grad(fn(x, y).sum(), x)
    exact = 1 / (1 + mpmath.mpf(base) ** (mpmath.mpf(b) - mpmath.mpf(a)))
    ulps = float(abs(g.item() - exact) / exact) / 2.0**-52
    worst = max(worst, ulps)
    print(
        f"torch {fn.__name__}'s partial at ({a}, {b}): {g.item()!r}, exact {mpmath.nstr(exact, 17)} ({ulps:.0f} ulps)"
    )
print("departs:", worst > 8)
