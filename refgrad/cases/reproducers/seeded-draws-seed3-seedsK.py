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

# torch.func.vmap of the forward over reverse of view_copy, batched along a dim other than the first:
# the batched tangent of the reshaped gradient is not contiguous and a view of it raises, where each
# sample (and the batch moved to dim 0) has a result
from torch.func import jvp, vjp, vmap  # noqa: E402

x = torch.randn(4, 3, 1, 2, dtype=torch.float64)  # a batch of 3 along dim 1
c, tx, tc = torch.randn(3, 8, dtype=torch.float64), torch.randn(3, 4, 1, 2, dtype=torch.float64), torch.randn(3, 8, dtype=torch.float64)


def per_sample(a, c_, ta, tc_):
    return jvp(lambda a2, c2: vjp(lambda v: torch.view_copy(v, [8]), a2)[1](c2)[0], (a, c_), (ta, tc_))[1]


try:
    got = tuple(vmap(per_sample, (1, 0, 0, 0))(x, c, tx, tc).shape)
except RuntimeError as exc:
    got = f"raises RuntimeError: {str(exc)[:60]}"
print("torch.func.vmap forward over reverse of view_copy, in_dims 1:", got, "in_dims 0:", tuple(vmap(per_sample)(x.movedim(1, 0).contiguous(), c, tx, tc).shape))
