"""torch.polygamma(1, x) (digamma's derivative, lgamma's second) at huge negative arguments: every
float64 beyond -2^52 (float32 beyond -2^23) is a negative integer, a pole of order 2 where the exact
value is +inf. PyTorch gives nan in float32 and bfloat16 and a finite number in float64. Prints
PyTorch's value next to the exact one."""

import torch

x = -3.3895313892515355e38  # the lowest bfloat16, an integer in every dtype
for dtype in (torch.float64, torch.float32, torch.bfloat16):
    print(f"torch polygamma(1, {x:.5g}) {dtype}:", torch.polygamma(1, torch.tensor([x], dtype=dtype)).item(), "exact: inf")
print("torch polygamma(1, -2**60) float64:", torch.polygamma(1, torch.tensor([-(2.0**60)], dtype=torch.float64)).item(), "exact: inf")
