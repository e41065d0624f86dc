"""PyTorch's second derivative of binary_cross_entropy in the input, by every route: the double
backward (binary_cross_entropy_double_backward in FunctionsManual.cpp, (x + 1e-12)^2 (1 - x + 1e-12)^2
divisors), reverse over forward and forward over reverse (the JVP of binary_cross_entropy is
binary_cross_entropy_backward of the tangent, whose VJP and JVP are that double backward) and forward
over forward (the JVP of that JVP, the same formula) are each off by 2e-12 (1/x + 1/(1 - x)) relative
in float64, -8e-12 at x = 1/2. The mixed derivative (x then t) is exact."""
from fractions import Fraction as Q

import torch
import torch.nn.functional as F

d = torch.float64
x, t = torch.tensor(0.5, dtype=d), torch.tensor(0.3, dtype=d)
a, c = torch.tensor(0.7, dtype=d), torch.tensor(1.3, dtype=d)  # a tangent (or gg) and a cotangent
X, T, A, C = (Q(v.item()) for v in (x, t, a, c))
exact = A * C * (T / X**2 + (1 - T) / (1 - X) ** 2)  # a c d2/dx2 of -(t log x + (1 - t) log(1 - x))


def loss(y):
    return F.binary_cross_entropy(y, t)


def jvp_in_x(y, tangent):
    return torch.func.jvp(loss, (y,), (tangent,))[1]


xg = x.clone().requires_grad_()
g = torch.autograd.grad(loss(xg), xg, c, create_graph=True)[0]
routes = {
    "double backward": torch.autograd.grad(g, xg, a)[0],
    "reverse over forward": torch.func.vjp(lambda y: jvp_in_x(y, a), x)[1](c)[0],
    "forward over reverse": torch.func.jvp(lambda y: torch.func.vjp(loss, y)[1](c)[0], (x,), (a,))[1],
    "forward over forward": torch.func.jvp(lambda y: jvp_in_x(y, a), (x,), (c,))[1],
}
for name, got in routes.items():
    rel = (Q(got.item()) - exact) / exact
    print(f"{name}: {got.item()!r}, exact {float(exact)!r}, relative {float(rel):.1e}")
mixed = torch.func.jvp(lambda tt: torch.func.jvp(lambda y: F.binary_cross_entropy(y, tt), (x,), (a,))[1], (t,), (c,))[1]
exact_mixed = -A * C / (X * (1 - X))
print(f"mixed (x, t): {mixed.item()!r}, exact {float(exact_mixed)!r}")
