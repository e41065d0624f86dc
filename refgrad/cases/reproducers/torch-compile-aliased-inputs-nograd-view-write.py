"""torch.compile: a compiled function given a base and a view of it (both requiring grad) that writes
the view in place under no_grad fails in AOTAutograd: BackendCompilerFailed 'AssertionError:
outs_to_grad length (3) != tangents length (2)'; eager runs it."""
import torch


def f(v2, v3):
    v4 = torch.nn.functional.softmax(v2.sum(0), 0)
    with torch.no_grad():
        v3.add_(0.5)
    return v4, (v2 * 1).sum() + (v4 * 2).sum()


for backend in ("eager", "aot_eager"):
    v0 = torch.tensor([[0.5, -1.0], [2.0, 0.25], [1.0, 1.5]], requires_grad=True)
    v2 = v0 * 1.0
    v3 = v2[1:3]
    g = f if backend == "eager" else torch.compile(f, backend=backend, fullgraph=True)
    try:
        v4, loss = g(v2, v3)
        loss.backward()
        print(backend, "runs", v0.grad.tolist())
    except Exception as exc:  # noqa: BLE001 - the departure is the exception
        print(backend, "raises", type(exc).__name__, " ".join(str(exc).split())[:200])
