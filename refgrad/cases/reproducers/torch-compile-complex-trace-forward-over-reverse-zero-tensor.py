"""torch.compile (Inductor) of the batched forward over reverse of torch.trace on an empty matrix, and
of torch.index_select with an empty index: torch.func.vmap of torch.func.jvp of the VJP raises
'ZeroTensors are immutable' for complex64 where eager returns the result (trace of a 0 x 0 matrix is
0, its gradient the empty identity; index_select's gradient zeros of x's shape) and float32 compiles."""

import torch


def forward_over_reverse_of(op):
    def vjp_of(x, g):
        _, pullback = torch.func.vjp(op, x)
        return pullback(g)[0]

    def forward_over_reverse(x, g, tx, tg):
        return torch.func.jvp(vjp_of, (x, g), (tx, tg))[1]

    return torch.func.vmap(forward_over_reverse)


def empty_index_select(x):
    return torch.index_select(x, 0, torch.tensor([], dtype=torch.int64))


for name, op, x_shape, g_shape in (
    ("trace", torch.trace, (1, 0, 0), (1,)),
    ("index_select", empty_index_select, (1, 1), (1, 0)),
):
    batched = forward_over_reverse_of(op)
    for dtype in (torch.complex64, torch.float32):
        x = torch.zeros(x_shape, dtype=dtype)
        g = torch.ones(g_shape, dtype=dtype)
        args = (x, g, torch.zeros_like(x), torch.ones_like(g))
        print(f"{name} {dtype} eager:", tuple(batched(*args).shape))
        torch._dynamo.reset()
        try:
            print(f"{name} {dtype} torch.compile:", tuple(torch.compile(batched, fullgraph=True)(*args).shape))
        except Exception as exc:  # noqa: BLE001 - what the compiler raises is the finding
            print(f"{name} {dtype} torch.compile raised {type(exc).__name__}: {str(exc).splitlines()[-1][:160]}")
