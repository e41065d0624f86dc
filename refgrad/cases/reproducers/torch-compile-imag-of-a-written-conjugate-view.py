"""torch.compile cannot compile x.imag of a lazily conjugated tensor written in place: eager PyTorch
reads it (a negative view of the base's imaginary part), torch.compile (backend aot_eager and
inductor alike) raises BackendCompilerFailed "view_as_real doesn't work on unresolved conjugated
tensors" while functionalizing the program (the conj view is replayed as view_as_real of the
conjugated tensor). Without the in-place write it compiles."""
import torch


def written(v0, v1):
    v3 = torch.complex(v0, v1).conj()
    v3.mul_(2 + 1j)
    return v3.imag * v0


def not_written(v0, v1):
    return torch.complex(v0, v1).conj().imag * v0


v0 = torch.tensor([0.5, -1.0], dtype=torch.float64)
v1 = torch.tensor([1.0, 0.5], dtype=torch.float64)
print("eager", written(v0, v1).tolist())
for backend in ("aot_eager", "inductor"):
    print(backend, "without the write", torch.compile(not_written, backend=backend, fullgraph=True)(v0, v1).tolist())
    try:
        print(backend, torch.compile(written, backend=backend, fullgraph=True)(v0, v1).tolist())
    except Exception as exc:  # noqa: BLE001 - the compiler's error is what is shown
        words = str(exc).split("\n")[1] if "\n" in str(exc) else str(exc)
        print(f"{backend} raises {type(exc).__name__}: {words[:120]}")
