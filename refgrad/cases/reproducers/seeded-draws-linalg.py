"""Departures `refgrad run --ops linalg_decomp --dtypes float32,float64 --draws seeded --seed 0` reached
that the known file did not yet describe (seedsG): each line prints PyTorch's value next to the exact
one."""

import torch

# Reverse mode over PyTorch's forward-mode derivative of torch.linalg.eigh is nan wherever the
# eigenvectors are read: its JVP divides V^T dA V by E_ij = L_j - L_i, whose diagonal is 0, and then
# overwrites that diagonal; the derivative of the division there is 0 / 0. The VJP with respect to
# the tangent of a JVP is the gradient itself (the JVP is linear in the tangent), which reverse
# mode alone gives finite.
x = torch.tensor([[2.0, 1.0], [1.0, -1.0]], dtype=torch.float64)
t = torch.tensor([[0.5, 0.25], [0.25, 1.0]], dtype=torch.float64)


def f(a):
    L, V = torch.linalg.eigh(a)
    return (V * V * L).sum(-1)  # gauge-invariant: sum_i V_ji^2 L_i (the diagonal of a)


_, pull = torch.func.vjp(lambda a, ta: torch.func.jvp(f, (a,), (ta,))[1], x, t)
g_x, g_t = pull(torch.tensor([1.0, -2.0], dtype=torch.float64))
print("torch eigh reverse over forward at x = [[2, 1], [1, -1]]: d/dt", g_t.tolist(), "d/dx", g_x.tolist())
exact = torch.func.vjp(f, x)[1](torch.tensor([1.0, -2.0], dtype=torch.float64))[0]
print("its exact d/dt, the gradient of the same f:", exact.tolist(), "(d/dx: the second derivative, finite)")
