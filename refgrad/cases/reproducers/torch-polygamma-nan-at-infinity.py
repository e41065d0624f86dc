"""torch.polygamma(n, +inf) is nan for n >= 2, where the exact limit is 0 (polygamma(n, x) ~
(-1)^(n+1) (n-1)! / x^n) and PyTorch's own polygamma(1, inf) is 0; digamma's second derivative and
polygamma's derivatives inherit it. Prints PyTorch's value next to the exact one."""

import torch

inf = float("inf")
for n in (2, 3, 4):
    got = torch.polygamma(n, torch.tensor([inf, 1e300], dtype=torch.float64)).tolist()
    zero = "-0.0" if n % 2 == 0 else "0.0"  # the sign of (-1)^(n+1)
    print(f"torch polygamma({n}, [inf, 1e300]): {got} exact: [{zero}, {zero}]")
x = torch.tensor([inf], dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(torch.digamma(x), x, create_graph=True)
print("torch digamma'' at inf:", torch.autograd.grad(g, x)[0].item(), "exact: -0.0; digamma' at inf:", g.item())
