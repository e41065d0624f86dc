"""torch.compile (Inductor) of the batched forward over reverse of torch.trace on an empty matrix:
torch.func.vmap of torch.func.jvp of the VJP raises 'ZeroTensors are immutable' where eager returns
an empty-matrix result (trace of a 0 x 0 matrix is 0; its gradient is the empty identity)."""

import torch


def vjp_of_trace(x, g):
    _, pullback = torch.func.vjp(torch.trace, x)
    return pullback(g)[0]


def forward_over_reverse(x, g, tx, tg):
    return torch.func.jvp(vjp_of_trace, (x, g), (tx, tg))[1]


batched = torch.func.vmap(forward_over_reverse)
for dtype in (torch.complex64, torch.float32):
    x = torch.zeros(1, 0, 0, dtype=dtype)
    g = torch.ones(1, dtype=dtype)
    args = (x, g, torch.zeros_like(x), torch.ones_like(g))
    print(f"{dtype} eager:", tuple(batched(*args).shape))
    torch._dynamo.reset()
    try:
        print(f"{dtype} torch.compile:", tuple(torch.compile(batched, fullgraph=True)(*args).shape))
    except Exception as exc:  # noqa: BLE001 - what the compiler raises is the finding
        print(f"{dtype} torch.compile raised {type(exc).__name__}: {str(exc).splitlines()[-1][:160]}")
