"""torch.func.vmap of the gradient of torch.linalg.svd of complex matrices raises: svd_backward checks
that the loss does not depend on the singular vectors' phases with torch.allclose, which vmap cannot
batch ('vmap over torch.allclose isn't supported yet'); real matrices and the unbatched gradient work."""

import torch


def loss(a):
    U, S, Vh = torch.linalg.svd(a, full_matrices=False)
    return (U @ Vh).abs().sum() + S.sum()


a = torch.randn(2, 3, 3, dtype=torch.complex128, generator=torch.Generator().manual_seed(0))
print("unbatched grad shape", tuple(torch.func.grad(loss)(a[0]).shape))
try:
    print("vmap grad shape", tuple(torch.func.vmap(torch.func.grad(loss))(a).shape))
except RuntimeError as exc:
    print("vmap grad raises", str(exc).splitlines()[0][:80])
