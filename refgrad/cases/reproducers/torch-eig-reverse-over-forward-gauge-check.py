"""Reverse mode over torch.func.jvp of torch.linalg.eig raises linalg_eig_backward's gauge check
('The eigenvectors in the complex case are specified up to multiplication by e^{i phi}...') for a
function that does not depend on the eigenvectors' phases, where reverse over reverse and forward
over forward of the same function return. f(x) = Re sum_i |V_ji|^2 L_i, a 2x2 matrix with distinct
real eigenvalues. Prints what torch does and the value by central differences of torch's own JVP."""

import torch


def f(x):
    L, V = torch.linalg.eig(x)
    return ((V * V.conj()) * L.unsqueeze(-2)).sum(-1).real


x = torch.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=torch.float64)
t = torch.tensor([[0.3, -0.2], [0.7, 0.1]], dtype=torch.float64)
w = torch.tensor([1.0, -2.0], dtype=torch.float64)  # the cotangent of the JVP's output


def jvp_dot_w(p):
    return (torch.func.jvp(f, (p,), (t,))[1] * w).sum()


try:
    _, pull = torch.func.vjp(lambda p: torch.func.jvp(f, (p,), (t,))[1], x)
    said = f"{pull(w)[0][0, 0].item():.10f}"
except RuntimeError as exc:
    said = "RuntimeError: " + str(exc)[:60]
h = 1e-6
e = torch.zeros_like(x)
e[0, 0] = h
fd = (jvp_dot_w(x + e) - jvp_dot_w(x - e)) / (2 * h)
print(f"vjp of jvp of eig, element [0, 0]: {said}; central differences of torch's JVP: {fd.item():.10f}")
