"""torch.compile: returning an unbind view written in place under no_grad fails to compile
(BackendCompilerFailed 'Output 0 of Unbind is a view and its base ... has been modified inplace');
eager returns it."""
import torch


def h(v0):
    v4 = torch.zeros((1,)) * (v0 * 1.0)
    v5 = v4.unbind(0)[0]
    with torch.no_grad():
        v5.div_(4.0)
    return v4, v5


for backend in ("eager", "aot_eager"):
    fn = h if backend == "eager" else torch.compile(h, backend=backend, fullgraph=True)
    try:
        print(backend, "runs", fn(torch.tensor([0.5], requires_grad=True)))
    except Exception as exc:  # noqa: BLE001 - the departure is the exception
        print(backend, "raises", type(exc).__name__, str(exc).splitlines()[1][:200])
