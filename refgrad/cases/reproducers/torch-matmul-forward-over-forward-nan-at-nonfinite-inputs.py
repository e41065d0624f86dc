"""The second derivative of a matrix product along tangents (A1, x1) and (A2, x2) is A1 x2 + A2 x1:
it does not read A or x. PyTorch's nested forward mode (torch.func.jvp of torch.func.jvp) of
torch.mv, torch.mm and torch.bmm multiplies a non-finite A or x into it (0 * inf or a NaN: nan);
torch.dot gives the value."""

import torch
from torch.func import jvp


def forward_over_forward(f, a, x, a1, x1, a2, x2):
    return jvp(lambda a, x: jvp(f, (a, x), (a1, x1))[1], (a, x), (a2, x2))[1]


def t(*rows):
    return torch.tensor(rows, dtype=torch.float64)


inf, nan = float("inf"), float("nan")
for a, x in ((t([1.0, 2.0]), t(inf, 1.0)), (t([nan, 1.0]), t(1.0, 2.0))):
    a1, a2, x1, x2 = torch.ones_like(a), torch.full_like(a, 2.0), t(0.5, 0.25), t(3.0, -1.0)
    exact = (a1 @ x2 + a2 @ x1).item()
    mv = forward_over_forward(torch.mv, a, x, a1, x1, a2, x2).item()
    mm = forward_over_forward(torch.mm, a, x[:, None], a1, x1[:, None], a2, x2[:, None]).item()
    dot = forward_over_forward(torch.dot, a[0], x, a1[0], x1, a2[0], x2).item()
    print(f"torch at A = {a.tolist()}, x = {x.tolist()}: mv {mv} mm {mm} dot {dot} exact {exact}")
