"""torch.compile: a custom Function's output that is a view of its input (the input returned as-is),
returned from a compiled function and then written in place. Eager raises PyTorch's custom-Function
view+inplace error naming the Function ('Output 0 of Identity is a view and is being modified
inplace ...'). Compiled: where the Function's input is an input of the compiled function the error
names the compiled node ('Output 0 of CompiledFunction ...'); where the input is made inside it and
returned too, the write is allowed (the regenerated output view lost the custom Function's mark)."""
import torch


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 0.5


def of_input(v1):
    return (Identity.apply(v1),)


def of_intermediate(v0):
    v1 = v0 * 1.0
    return v1, Identity.apply(v1)


for fn in (of_input, of_intermediate):
    for backend in ("eager", "aot_eager"):
        v0 = torch.tensor([0.5, -1.0], requires_grad=True)
        f = fn if backend == "eager" else torch.compile(fn, backend=backend, fullgraph=True)
        out = f(v0.sigmoid()) if fn is of_input else f(v0)
        try:
            out[-1].clamp_(-0.5, 0.5)
            print(fn.__name__, backend, "runs")
        except RuntimeError as exc:  # the departure is the message, or no error at all
            print(fn.__name__, backend, "raises", " ".join(str(exc).split())[:80])
