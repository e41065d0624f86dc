"""PyTorch's float32 bessel_y1 is -inf for 0 < x < 2.9e-39 (1/x overflows in its formula), where
Y1(x) ~ -2/(pi x) is finite in float32 down to x = 1.88e-39: at x = 2.5e-39 it is -2.546e38.
Prints PyTorch's float32 value next to its float64 one rounded to float32."""

import numpy as np
import torch

x = np.float32(2.5e-39)
f32 = torch.special.bessel_y1(torch.tensor(x)).item()
f64 = np.float32(torch.special.bessel_y1(torch.tensor(float(x), dtype=torch.float64)).item())
print(f"torch.special.bessel_y1({x}) float32: {f32}; float64 rounded to float32: {f64}")
