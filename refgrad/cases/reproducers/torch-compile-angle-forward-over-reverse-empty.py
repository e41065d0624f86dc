"""Inductor only: the forward over reverse (torch.func.jvp of torch.func.vjp) of torch.angle of an
empty (16, 16, 0) complex128 tensor, compiled whole, fails to compile with 'self.stride(1) must be
divisible by 2 to view Double as ComplexDouble'; eager and aot_eager return the empty result. The
cause of torch-compile-complex-empty-tensors-view-as-complex-strides (complex products of empty
tensors), reached through angle."""

import torch
import torch.func as F

z = torch.zeros(16, 16, 0, dtype=torch.complex128)
c = torch.zeros(16, 16, 0, dtype=torch.float64)
t1 = torch.zeros_like(z)


def forward_over_reverse(z, c, t1, tc):
    return F.jvp(lambda c_, z_: F.vjp(torch.angle, z_)[1](c_), (c, z), (tc, t1))[1]


for backend in ("aot_eager", "inductor"):
    try:
        out = torch.compile(forward_over_reverse, backend=backend)(z, c, t1, torch.zeros_like(c))
        print(f"{backend}: {tuple(out[0].shape)}")
    except Exception as exc:  # noqa: BLE001 (the error is what this prints)
        said = [line for line in str(exc).splitlines() if "stride" in line] or str(exc).splitlines()[:1]
        print(f"{backend}: {type(exc).__name__}: {said[0][:200]}")
