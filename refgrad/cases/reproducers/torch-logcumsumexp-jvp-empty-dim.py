"""PyTorch's forward-mode derivative of logcumsumexp raises on an empty scan dimension; the
forward and the backward return empty results."""
import torch

x = torch.zeros(0, 3, dtype=torch.float64)
print("forward", tuple(torch.logcumsumexp(x, 0).shape))
try:
    out = torch.func.jvp(lambda a: torch.logcumsumexp(a, 0), (x,), (torch.ones_like(x),))[1]
    print("jvp", tuple(out.shape))
except (IndexError, RuntimeError) as exc:
    print("jvp raises", type(exc).__name__, str(exc).splitlines()[0])
