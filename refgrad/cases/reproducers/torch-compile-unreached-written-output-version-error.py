"""torch.compile: a compiled function's output that another compiled function writes in place, where
the loss does not reach it, makes backward raise the version-counter error that eager never meets.
The second function's compiled backward returns a (zero) gradient for its written input, though the
loss does not reach it (as in torch-compile-unreached-input-zero-grad), so backward runs the first
function's backward, whose saved exp output was written: "output 1 of CompiledFunction, is at version
1". Eager never runs exp's backward and returns. Also with the default (Inductor) backend."""
import torch


def first(v0):
    v1 = v0 * 1.0
    return v1, v1.exp()


def last(v0, v2):
    v2.add_(0.5)
    return (v0 * 1).sum()


def compiled(f, backend):
    return f if backend == "eager" else torch.compile(f, backend=backend, fullgraph=True)


for backend in ("eager", "aot_eager"):
    v0 = torch.tensor([0.5, -1.0], requires_grad=True)
    v1, v2 = compiled(first, backend)(v0)
    loss = compiled(last, backend)(v0, v2)
    try:
        loss.backward()
        print(backend, "no error; v0.grad", v0.grad)
    except RuntimeError as exc:
        print(backend, "RuntimeError:", str(exc).split(". Hint")[0])
