"""torch.compile: a retained intermediate (retain_grad) that the loss does not reach, then read by a
compiled function, gets a zero .grad instead of None (eager leaves it None). The compiled function's
backward returns zeros for an input the loss does not reach (torch-compile-unreached-input-zero-grad),
and retain_grad stores them. This is how a program compiled in regions around retain_grad (Dynamo
graph-breaks on it) shows it. Also with the default (Inductor) backend."""
import torch


def region(v0, v1):
    return v1.exp(), (v0 * 1).sum()


for backend in ("eager", "aot_eager"):
    v0 = torch.tensor([0.5, -1.0], requires_grad=True)
    v1 = v0 * 1.0
    v1.retain_grad()
    g = region if backend == "eager" else torch.compile(region, backend=backend, fullgraph=True)
    v2, loss = g(v0, v1)
    loss.backward()
    print(backend, "v1.grad", v1.grad)  # eager None; aot_eager tensor([0., 0.])
