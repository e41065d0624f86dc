"""The second derivative of log|det A| along t1, t2 is -Re tr(A^-1 t2 A^-1 t1) (-0.0762 for the complex
A, t1, t2 below; the reference and TensorFlow's nested ForwardAccumulator give it). PyTorch's
forward-over-forward (torch.func.jvp of torch.func.jvp) of torch.linalg.slogdet(A).logabsdet of a
complex A is 0, and reverse-over-forward (torch.func.vjp of the JVP) gives a zero gradient for A;
the first-order JVP and VJP are right, and a real A is right."""

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
