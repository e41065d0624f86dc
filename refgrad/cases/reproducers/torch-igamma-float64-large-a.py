"""PyTorch's float64 torch.special.gammainc / gammaincc (igamma, igammac) lose 7 digits past a = 20:
P(25, 20) is 0.15677262160714048, exactly 0.15677262182623772 (scipy.special.gammainc, the Cephes
igam PyTorch ported, says 0.1567726218262377): a relative error of 1.4e-9, 6.3e6 ulps. Prints
PyTorch's value, scipy's and the error in ulps."""

import scipy.special
import torch

a, x = 25.0, 20.0
exact = 0.15677262182623772  # mpmath.gammainc(25, 0, 20, regularized=True), 30 digits, rounded
got = torch.special.gammainc(torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)).item()
ulps = abs(got - exact) / (exact * 2.0**-52)
print(f"torch.special.gammainc({a}, {x}) float64 = {got!r}; scipy {scipy.special.gammainc(a, x)!r}; "
      f"exact {exact!r}: {ulps:.3g} ulps")
