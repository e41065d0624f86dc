"""f(x) = |V|^2 L + L with L, V = eigh(x + x^H) does not depend on the eigenvectors' phases; for a 1 x 1
matrix it is 4 Re x, so the JVP along t is 4 Re t and its VJP (reverse over forward) is 0 for x and
4 for t. PyTorch raises linalg_eigh_backward's phase error ('The eigenvectors in the complex case are
specified up to multiplication by e^{i phi}') when the reverse pass runs through the JVP
(torch.func.vjp of torch.func.jvp); the plain VJP and the JVP work. linalg.eig likewise
(linalg_eig_backward). JAX, TensorFlow and the reference compute the derivative."""

import torch

a = torch.tensor([[0.3 + 0.4j]], dtype=torch.complex128)
t = torch.tensor([[1.0 + 0.5j]], dtype=torch.complex128)


def f(x):
    L, V = torch.linalg.eigh(x + x.mT.conj())
    return V * V.conj() * L.unsqueeze(-2) + L.unsqueeze(-1)


def tangent(x, tx):
    return torch.func.jvp(f, (x,), (tx,))[1]


print("jvp:", tangent(a, t).item())
try:
    print("vjp of jvp:", torch.func.vjp(tangent, a, t)[1](torch.ones(1, 1, dtype=torch.complex128)))
except RuntimeError as e:
    print("vjp of jvp raises:", str(e)[:70])


def g(x):  # linalg.eig: sum_i |V_ji|^2 L_i and sum_i L_i^2, phase- and order-invariant
    L, V = torch.linalg.eig(x)
    return torch.cat([((V * V.conj()) * L.unsqueeze(-2)).sum(-1), (L * L).sum(-1, keepdim=True)], -1)


b = torch.tensor([[1.0 + 0.2j, 0.5], [0.3j, -1.0 + 0.1j]], dtype=torch.complex128)
tb = torch.tensor([[0.1, 0.2j], [0.3, 0.4 - 0.1j]], dtype=torch.complex128)
try:
    out = torch.func.vjp(lambda x, tx: torch.func.jvp(g, (x,), (tx,))[1], b, tb)[1](torch.ones(3, dtype=torch.complex128))
    print("eig: vjp of jvp:", out[0])
except RuntimeError as e:
    print("eig: vjp of jvp raises:", str(e)[:70])
