"""torch.compile: two losses computed by one compiled function, each backpropagated on its own
(gradient accumulation over micro-batches whose forwards ran first) -- the second backward raises
"Trying to backward through the graph a second time": AOTAutograd makes the whole compiled forward
one autograd node, so the first backward frees what the second needs. Eager: two graphs, no error.
Exit 1 while the departure is present, 0 once it is gone (torch 2.13.0+cpu: 1)."""

import sys

import torch


def losses(w, x):
    return (x[0:1] @ w.t()).tanh().sum(), (x[1:2] @ w.t()).tanh().sum()


def accumulate(fn):
    w = torch.tensor([[0.5, -1.0], [0.25, 2.0]], requires_grad=True)
    x = torch.tensor([[1.0, 2.0], [-0.5, 0.75]])
    for part in fn(w, x):
        (part / 2).backward()
    return w.grad


eager = accumulate(losses)
try:
    backend = sys.argv[1] if len(sys.argv) > 1 else "aot_eager"  # also "inductor"
    compiled = accumulate(torch.compile(losses, backend=backend, fullgraph=True))
except RuntimeError as exc:
    print(f"compiled: {type(exc).__name__}: {str(exc)[:90]}...; eager: {eager.tolist()}")
    sys.exit(1)
print("compiled:", compiled.tolist(), "eager:", eager.tolist())
sys.exit(0 if torch.allclose(compiled, eager) else 1)
