"""Departures `refgrad run --ops matmul --draws seeded --seed 3 --known builtin` reached that the known
file did not yet describe (seedsK): PyTorch's value next to the exact one."""

import torch

# PyTorch's bfloat16 GEMM on the CPU (the blocked kernel it takes for larger products) flushes a
# subnormal factor to 0, so a subnormal times an infinity is 0 * inf = nan, where the exact product
# (and float32's) is an infinity; a normal factor, or a small product, gives -inf
a = torch.zeros(2, 3, dtype=torch.bfloat16)
a[0] = torch.tensor([1.4693679385278594e-39, 1.0, -1.0])
b = torch.ones(3, 4095, dtype=torch.bfloat16)
b[0, :] = float("-inf")
print(
    "torch mm bfloat16 [1.47e-39, 1, -1] . [-inf, 1, 1]:",
    torch.mm(a, b)[0, 0].item(),
    "float32:",
    torch.mm(a.float(), b.float())[0, 0].item(),
    "exact: -inf",
)
