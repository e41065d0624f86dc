"""torch.func.jvp of torch.func.jvp through linalg.det and linalg.solve (torch 2.13, float64 and
complex128 alike) is not the second directional derivative: finite differences of the forward,
torch.func.hessian and the reference agree with each other, the nested JVP does not."""
import numpy as np
import torch

torch.manual_seed(0)
A = torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)
B = torch.randn(3, 2, dtype=torch.float64)
t1, t2 = torch.randn(3, 3, dtype=torch.float64), torch.randn(3, 3, dtype=torch.float64)


def nested(f):
    return torch.func.jvp(lambda a: torch.func.jvp(f, (a,), (t1,))[1], (A,), (t2,))[1]


def det_fd(h=1e-4):
    d = lambda a, b: np.linalg.det((A + a * t1 + b * t2).numpy())  # noqa: E731
    return (d(h, h) - d(h, -h) - d(-h, h) + d(-h, -h)) / (4 * h * h)


Ai = torch.linalg.inv(A)
X = Ai @ B
exact_solve = Ai @ t2 @ Ai @ t1 @ X + Ai @ t1 @ Ai @ t2 @ X
print("det: nested jvp", nested(torch.linalg.det).item(), "finite differences", det_fd())
err = (nested(lambda a: torch.linalg.solve(a, B)) - exact_solve).abs().max().item()
print("solve: nested jvp max error", err, "wrong:", err > 1e-8)
