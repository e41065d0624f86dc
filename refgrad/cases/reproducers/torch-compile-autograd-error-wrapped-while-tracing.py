"""torch.compile: an autograd error that Dynamo meets while tracing (on fake tensors) is raised as
torch._dynamo.exc.TorchRuntimeError 'RuntimeError when making fake tensor call ... got
RuntimeError(<PyTorch's message>)', where eager raises RuntimeError with the message itself (here an
in-place write to a leaf that requires grad)."""
import torch


def f(v1):
    v1.fill_(1.25)
    return (v1 * 2.0,)


for backend in ("eager", "aot_eager"):
    g = f if backend == "eager" else torch.compile(f, backend=backend, fullgraph=True)
    try:
        g(torch.tensor([0.5, -1.0], requires_grad=True))
        print(backend, "runs")
    except RuntimeError as exc:  # the departure is the exception's type and wording
        print(backend, "raises", type(exc).__name__, " ".join(str(exc).split())[:160])
