"""PyTorch's reverse over forward of torch.linalg.svd of a complex matrix loses the low bits of the
first-order VJP: for a 1 x 1 matrix a, |U|^2 S = |a|, and the gradient with respect to the tangent t
of <c, JVP(a)(t)> is the first-order VJP c·a/|a| (exactly 0.3j for a = 131.13465526949943j, c = 0.3).
linalg_svd_jvp forms sym(dP·S)/E with E's diagonal set to 1 after dP -= diag(Re diag dP): in reverse
mode the diagonal's cotangent 4·c·S^2 + c is formed and the real part is taken off again, so c keeps
only the bits that survive next to 4·c·S^2 (about 4·u·S^2 relative)."""

import torch

a = torch.tensor([[131.13465526949943j]], dtype=torch.complex128)
t = torch.tensor([[-0.08561890855293508 + 0j]], dtype=torch.complex128)


def u_u_s(q):
    u, s, _ = torch.linalg.svd(q, full_matrices=False)
    return (u * u.conj() * s.unsqueeze(-2)).reshape(())


for dtype in (torch.complex128, torch.complex64):
    c = torch.tensor(0.3 + 0j, dtype=dtype)
    tangent_part = torch.func.vjp(
        lambda q, tq: torch.func.jvp(u_u_s, (q,), (tq,))[1], a.to(dtype), t.to(dtype)
    )[1](c)[1]
    first_order = torch.func.vjp(u_u_s, a.to(dtype))[1](c)[0]
    print(
        f"torch svd {str(dtype).replace('torch.', '')} reverse over forward, tangent part:"
        f" {tangent_part.item().imag:.16f}j, first-order vjp {first_order.item().imag:.16f}j, exact 0.3j"
    )
