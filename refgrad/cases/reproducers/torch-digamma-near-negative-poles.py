"""PyTorch's digamma and its derivative polygamma(1, x) near and at the negative poles (x = 0, -1,
-2, ...): calc_digamma reflects through pi / tan(pi * x), and pi * x loses the distance to the pole,
so within ~1e-15 of -3 the value is 5% off; trigamma (digamma's gradient, lgamma's second derivative)
is finite at the negative integers, where the exact value is +inf (a pole of order 2; PyTorch's own
polygamma(1, 0.) is inf). Exact values: mpmath.psi(0, x), mpmath.psi(1, x)."""
import torch

x = torch.tensor(-3 + 2.0**-49, dtype=torch.float64)  # -2.9999999999999982
got = torch.digamma(x).item()
exact = -562949953421310.75  # mpmath.psi(0, -3 + 2**-49)
print("torch.digamma(-3 + 2**-49) =", got, "exact", exact)
at_pole = torch.polygamma(1, torch.tensor([-1.0, -2.0, 0.0], dtype=torch.float64))
print("torch.polygamma(1, [-1, -2, 0]) =", at_pole.tolist(), "exact [inf, inf, inf]")
print("wrong:", abs(got - exact) > 1e-3 * abs(exact) and bool(torch.isfinite(at_pole[:2]).all()))
