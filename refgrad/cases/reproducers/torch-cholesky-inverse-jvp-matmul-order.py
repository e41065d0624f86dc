"""torch.func.jvp of torch.cholesky_inverse is not the derivative of X = (L L^H)^-1, real factors included.

The exact directional derivative along dL is dX = -X (dL L^H + L dL^H) X. PyTorch's
cholesky_inverse_jvp (torch/csrc/autograd/FunctionsManual.cpp) multiplies in another order,
P = -X dL X L^H, and returns P + P^H; X and L^H do not commute, so the tangent is wrong for
every factor but a multiple of I. Reverse mode (cholesky_inverse_backward) is right: its
directional derivative, central differences and the formula agree. Prints torch's value, the
exact one (formula, float64) and the central difference."""

import torch

L = torch.tensor([[2.0, 0.0, 0.0], [0.5, 1.5, 0.0], [-0.3, 0.8, 1.2]], dtype=torch.float64)
dL = torch.tensor([[0.3, 0.0, 0.0], [1.0, -0.2, 0.0], [0.4, 0.7, 0.5]], dtype=torch.float64)
for upper in (False, True):
    F, dF = (L.mT, dL.mT) if upper else (L, dL)
    X = torch.cholesky_inverse(F, upper=upper)
    _, fwd = torch.func.jvp(lambda f, upper=upper: torch.cholesky_inverse(f, upper=upper), (F,), (dF,))
    exact = -X @ (dL @ L.mT + L @ dL.mT) @ X  # A = L L^T in both spellings
    h = 1e-6
    fd = (
        torch.cholesky_inverse(F + h * dF, upper=upper) - torch.cholesky_inverse(F - h * dF, upper=upper)
    ) / (2 * h)
    print(
        f"upper={upper}: torch jvp [2,2] = {fwd[2, 2].item():.10f}, exact {exact[2, 2].item():.10f}, "
        f"central difference {fd[2, 2].item():.10f}; max |jvp - exact| = {(fwd - exact).abs().max().item():.3g}"
    )
