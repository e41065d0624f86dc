"""torch.compile: an input of a compiled function that the loss does not reach gets a zero .grad
instead of None (eager leaves it None). Also with the default (Inductor) backend."""
import torch


def f(a, b):
    return a * 1.0, b * 1.0


for backend in ("eager", "aot_eager"):
    a = torch.tensor([0.5, -1.0], requires_grad=True)
    b = torch.tensor([0.25, 2.0], requires_grad=True)
    g = f if backend == "eager" else torch.compile(f, backend=backend, fullgraph=True)
    x, y = g(a, b)
    y.sum().backward()
    print(backend, "a.grad", a.grad)  # eager None; aot_eager tensor([0., 0.])
