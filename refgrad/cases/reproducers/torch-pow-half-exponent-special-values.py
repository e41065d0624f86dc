"""PyTorch's pow by a Python 0.5 or -0.5 is sqrt or rsqrt, and departs from IEEE 754's pow (C99
Annex F.10.4.4) at -inf and -0: pow(-inf, 0.5) = +inf, pow(-0, 0.5) = +0, pow(-inf, -0.5) = +0,
pow(-0, -0.5) = +inf. torch.pow with the same exponent as a tensor follows C99, as do JAX, TensorFlow
and Python's math.pow."""

import math

import torch

x = torch.tensor([-math.inf, -0.0], dtype=torch.float64)
for y in (0.5, -0.5):
    got = torch.pow(x, y)
    as_tensor = torch.pow(x, torch.tensor(y, dtype=torch.float64))
    c99 = [math.pow(-math.inf, y), 0.0 if y > 0 else math.inf]
    print(f"torch.pow(x, {y}) = {got.tolist()}; with a tensor exponent {as_tensor.tolist()}; C99 {c99}")
    wrong = [str(a) != str(b) for a, b in zip(got.tolist(), c99)]
    print("wrong:", any(wrong))
