"""torch.compile (inductor and aot_eager alike) of the reverse over forward (torch.func.vjp of
torch.func.jvp) of torch.linalg.svd of a complex matrix fails to compile with NotImplementedError
'Cannot access storage of TensorWrapper'; eager returns the derivative, and real matrices compile."""

import torch


def vjp_of_jvp(part):
    def f(a):
        U, S, Vh = torch.linalg.svd(a, full_matrices=False)
        return {"S": S, "U @ Vh": U @ Vh}[part]

    def run(a, t, c):
        return torch.func.vjp(lambda x, tx: torch.func.jvp(f, (x,), (tx,))[1], a, t)[1](c)

    return run


g = torch.Generator().manual_seed(0)
for dtype in (torch.complex128, torch.complex64, torch.float64):
    a, t = (torch.randn(2, 2, dtype=dtype, generator=g) for _ in range(2))
    for part in ("S", "U @ Vh"):
        fn = vjp_of_jvp(part)
        # the cotangent of the JVP: real for S (singular values are real), the input's dtype for U @ Vh
        c = torch.randn(2, dtype=dtype.to_real(), generator=g) if part == "S" else torch.randn(2, 2, dtype=dtype, generator=g)
        fn(a, t, c)  # eager works
        for backend in ("inductor", "aot_eager"):
            torch._dynamo.reset()
            try:
                torch.compile(fn, backend=backend)(a, t, c)
                outcome = "compiles"
            except Exception as exc:  # torch._dynamo.exc.BackendCompilerFailed
                storage = "Cannot access storage of TensorWrapper" in str(exc)
                outcome = f"raises {type(exc).__name__}" + (": Cannot access storage of TensorWrapper" if storage else f": {str(exc)[:120]}")
            print(f"{str(dtype)[6:]} {part} {backend}: eager ok, compiled {outcome}", flush=True)
