"""torch.compile: the version-counter error of a tensor that a mark_dirty Function wrote in place
(inside a save_on_cpu context) and the program then wrote again is raised at the same backward call
as eager, but names another node and version: eager says "output 0 of Tanh, is at version 3",
compiled (the forward compiled in regions, as around a saved-tensor hook context: Dynamo skips the
context's __init__) "output 1 of CompiledFunction, is at version 2" (AOTAutograd applies the
Function's write as one copy_ after its graph). Also with the default (Inductor) backend."""
import torch


class MarkDirty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2.0)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2.0


def first(v0):
    v2 = v0 * 1.0
    return v2, v2.tanh()


def hooked(v3):
    return MarkDirty.apply(v3)


def last(v0, v2, v3, v4):
    v3.sub_(1.0)
    return (v0 * 1).sum() + (v4 * 2).sum() + (v2 * 3).sum()


def compiled(f, backend):
    return f if backend == "eager" else torch.compile(f, backend=backend, fullgraph=True)


for backend in ("eager", "aot_eager"):
    v0 = torch.tensor([[0.5, -1.0]], requires_grad=True)
    v2, v3 = compiled(first, backend)(v0)
    with torch.autograd.graph.save_on_cpu():
        v4 = compiled(hooked, backend)(v3)
    loss = compiled(last, backend)(v0, v2, v3, v4)
    try:
        loss.backward()
        print(backend, "no error")
    except RuntimeError as exc:
        print(backend, str(exc).split(". Hint")[0])
