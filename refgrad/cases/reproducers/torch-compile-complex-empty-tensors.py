"""Two torch.compile departures on empty tensors, reached by the complex products campaign in the
compiled modes (the simplest draws have empty shapes):

1. Inductor cannot compile torch.addr (and addmm, addmv, baddbmm, addbmm under vmap or jvp) of empty
   complex tensors: BackendCompilerFailed "self.stride(0) must be divisible by 2 to view Float as
   ComplexFloat"; eager and the aot_eager backend return the empty result.
2. AOTAutograd's backward, given a cotangent that requires grad (create_graph=True, a double
   backward) whose strides differ from the output's (an empty tensor made from NumPy), copies it in
   place and raises "a leaf Variable that requires grad is being used in an in-place operation"
   where it otherwise refuses in its own words ("does not currently support double backward")."""
import numpy as np
import torch

s, a, b = (torch.zeros(0, dtype=torch.complex64) for _ in range(3))
print("eager addr of empty complex64 vectors:", tuple(torch.addr(s, a, b).shape))
for backend in ("aot_eager", "inductor"):
    try:
        out = torch.compile(torch.addr, backend=backend)(s, a, b)
        print(f"{backend} addr: {tuple(out.shape)}")
    except Exception as exc:  # noqa: BLE001 - what the compiler raises is the finding
        words = next((line for line in str(exc).splitlines() if "Error" in line), str(exc))
        print(f"{backend} addr raised {type(exc).__name__}: {words.strip()[:160]}")

f = torch.compile(lambda s, a, b: torch.addmm(s, a, b), backend="aot_eager")
for dtype, np_dtype in ((torch.float32, np.float32), (torch.complex64, np.complex64)):
    for n in (0, 2):
        xs = [torch.zeros(*shape, dtype=dtype, requires_grad=True) for shape in ((n,), (n, n), (n, n))]
        y = f(*xs)
        g = torch.tensor(np.zeros((n, n), np_dtype)).requires_grad_(True)
        try:
            torch.autograd.grad(y, xs, g, create_graph=True)
            print(f"{dtype} n={n} create_graph: returned")
        except RuntimeError as exc:
            print(f"{dtype} n={n} (cotangent strides {g.stride()}, output's {y.stride()}) create_graph raised: {exc}")
