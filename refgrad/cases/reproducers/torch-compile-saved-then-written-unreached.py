"""torch.compile: a tensor an op saved for backward, then written in place, where the loss does not
reach that op: eager never runs its backward (no error); AOTAutograd traces the joint graph of every
output that requires grad and fails to compile, BackendCompilerFailed '... modified by an inplace
operation'. Also through a reentrant checkpoint whose input is written after it."""
import torch


def saved_then_written(v0):
    v4 = v0 * 1.0
    v4.tanh_()  # saves its output
    v4.add_(1.0)  # writes it
    return v4, v0 * 2.0


def block(x):
    return (x.exp() * x).tanh()


def checkpointed(v0):
    v1 = v0 * 1.0
    v3 = torch.utils.checkpoint.checkpoint(block, v1, use_reentrant=True)
    v1.neg_()
    return v3, v1


for fn in (saved_then_written, checkpointed):
    for backend in ("eager", "aot_eager"):
        v0 = torch.tensor([0.5], requires_grad=True)
        f = fn if backend == "eager" else torch.compile(fn, backend=backend, fullgraph=True)
        try:
            _, reached = f(v0)
            reached.sum().backward()
            print(fn.__name__, backend, "runs", v0.grad)
        except Exception as exc:  # noqa: BLE001 - the departure is the exception
            print(fn.__name__, backend, "raises", type(exc).__name__, " ".join(str(exc).split())[:200])
