"""torch.compile: a retained tensor (retain_grad) that a compiled function writes in place gets no
.grad: AOTAutograd applies the input mutation as a copy_ after the graph, whose node the retained
gradient moves to, while the graph's own uses of the written values go to the input's old node.
Eager: the retained gradient is the written tensor's (the loss reads it through the in-place node)."""
import torch


def f(v1, v2):
    v1.mul_(2.0)
    return (v2 * v1,)


for backend in ("eager", "aot_eager"):
    v0 = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    v1 = v0 * 1.0
    v2 = v1.exp()
    v1.retain_grad()
    g = f if backend == "eager" else torch.compile(f, backend=backend, fullgraph=True)
    (v3,) = g(v1, v2)
    v3.sum().backward()
    print(backend, "v1.grad", v1.grad)  # eager tensor([1.6487, 0.3679, 7.3891]); aot_eager None
