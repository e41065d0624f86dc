"""torch.func.jvp of torch.cholesky_inverse of a complex factor is not the directional derivative:
(F F^H)^-1 has derivative -X (dF F^H + F dF^H) X (X = (F F^H)^-1); torch's cholesky_inverse_jvp
(a Cholesky factor: real diagonal) disagrees with central differences of torch's own forward (the reference agrees with them)."""

import torch

g = torch.Generator().manual_seed(0)
F = torch.tril(torch.randn(2, 2, dtype=torch.complex128, generator=g), -1) + torch.diag(
    torch.tensor([2.0, 1.5])
)
dF = torch.tril(torch.randn(2, 2, dtype=torch.complex128, generator=g), -1) + torch.diag(
    torch.tensor([0.3, -0.2])
)
_, jvp = torch.func.jvp(torch.cholesky_inverse, (F,), (dF,))
h = 1e-6
fd = (torch.cholesky_inverse(F + h * dF) - torch.cholesky_inverse(F - h * dF)) / (2 * h)
X = torch.cholesky_inverse(F)
exact = -X @ (dF @ F.mH + F @ dF.mH) @ X
print(
    "jvp matches finite differences:",
    torch.allclose(jvp, fd, atol=1e-6),
    "; formula matches:",
    torch.allclose(exact, fd, atol=1e-6),
)
