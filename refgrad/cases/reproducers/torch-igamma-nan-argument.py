"""PyTorch's torch.special.gammainc / gammaincc answer a number where an argument is nan: P(inf, nan)
= 0, P(nan, inf) = 1, P(nan, 0) = 0 (Q the complements), taking the value the other argument would
give for every number (P(inf, x) = 0 for finite x, P(a, inf) = 1, P(a, 0) = 0); but the nan may stand
for the one value where that fails (P(inf, inf) is nan in PyTorch itself, P(0, 0) too), so the
mathematics, JAX and the reference say nan. Prints PyTorch's values."""

import math

import torch

nan, inf = math.nan, math.inf
for a, x in ((inf, nan), (nan, inf), (nan, 0.0)):
    t = [torch.tensor(v, dtype=torch.float64) for v in (a, x)]
    print(f"gammainc({a}, {x}) = {torch.special.gammainc(*t).item()}, gammaincc = {torch.special.gammaincc(*t).item()}")
