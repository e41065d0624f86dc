"""The second derivative of log|det A| along t1, t2 is -Re tr(A^-1 t2 A^-1 t1) (-0.0762 for the complex
A, t1, t2 below; the reference and TensorFlow's nested ForwardAccumulator give it). PyTorch's
forward-over-forward (torch.func.jvp of torch.func.jvp) of torch.linalg.slogdet(A).logabsdet of a
complex A is 0, and reverse-over-forward (torch.func.vjp of the JVP) gives a zero gradient for A;
the first-order JVP and VJP are right. A real A alike (torch 2.13): for a 1 x 1 matrix the JVP is
t1 / A, its derivative along t2 is -t1 t2 / A^2 and its gradient in A is -t1 / A^2."""

import numpy as np
import torch

A = torch.tensor([[1.0 + 0.5j, -0.3 + 0.2j], [0.2 - 0.7j, 1.5 + 0.1j]])
t1 = torch.tensor([[0.1 - 0.2j, 0.3], [0.2 + 0.1j, -0.4 + 0.3j]])
t2 = torch.tensor([[0.5j, -0.1], [0.3 + 0.3j, 0.2]])
Ai = np.linalg.inv(A.numpy())
exact = -np.real(np.trace(Ai @ t2.numpy() @ Ai @ t1.numpy()))


def logabsdet(x):
    return torch.linalg.slogdet(x).logabsdet


def tangent(x, t):
    return torch.func.jvp(logabsdet, (x,), (t,))[1]


second = torch.func.jvp(lambda x: tangent(x, t1), (A,), (t2,))[1]
grad_a = torch.func.vjp(tangent, A, t1)[1](torch.tensor(1.0, dtype=torch.float64))[0]
print(f"torch forward over forward {second.item():.4f}, exact {exact:.4f}; reverse over forward: {grad_a.abs().max().item()}")

for dtype in (torch.float32, torch.float64):
    a, s1, s2 = (torch.tensor([[v]], dtype=dtype) for v in (0.40092363953590393, -0.0734558179974556, -0.8484427928924561))
    second = torch.func.jvp(lambda x: torch.func.jvp(logabsdet, (x,), (s1,))[1], (a,), (s2,))[1]
    grad_a = torch.func.vjp(lambda x: torch.func.jvp(logabsdet, (x,), (s1,))[1], a)[1](torch.tensor(1.0, dtype=dtype))[0]
    print(f"torch real {str(dtype)[6:]} forward over forward {second.item():.4f}, exact {-(s1 * s2 / a**2).item():.4f};"
          f" reverse over forward {grad_a.item():.4f}, exact {-(s1 / a**2).item():.4f}")
