"""torch.compile (aot_eager and Inductor) of torch.func.vmap of the forward over reverse of
torch.linalg.lu_factor_ex on an empty (0 x 0) matrix: Dynamo's fake-tensor tracing raises
TorchRuntimeError 'Tensor device mismatch ... meta and cpu' where eager returns the empty result;
complex64 and float32 alike."""

import torch


def vjp_of(x, g):
    _, pullback = torch.func.vjp(lambda a: torch.linalg.lu_factor_ex(a)[0], x)
    return pullback(g)[0]


def forward_over_reverse(x, g, tx, tg):
    return torch.func.jvp(vjp_of, (x, g), (tx, tg))[1]


batched = torch.func.vmap(forward_over_reverse)
for dtype in (torch.complex64, torch.float32):
    x = torch.zeros(1, 0, 0, dtype=dtype)
    args = (x, torch.zeros_like(x), torch.zeros_like(x), torch.zeros_like(x))
    print(f"{dtype} eager:", tuple(batched(*args).shape))
    torch._dynamo.reset()
    try:
        print(f"{dtype} aot_eager:", tuple(torch.compile(batched, backend="aot_eager", fullgraph=True)(*args).shape))
    except Exception as exc:  # noqa: BLE001 - what the compiler raises is the finding
        print(f"{dtype} aot_eager raised {type(exc).__name__}: {str(exc).splitlines()[0][:100]}")
