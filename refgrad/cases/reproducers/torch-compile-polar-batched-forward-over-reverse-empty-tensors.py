"""torch.compile (Inductor) of the batched forward over reverse of torch.polar on empty tensors:
torch.func.vmap of torch.func.jvp of polar's VJP, with a modulus of shape (31, 15, 0) and an angle of
shape (0,) (each batched 2 times), raises BackendCompilerFailed 'self.stride(0) must be divisible by 2
to view Double as ComplexDouble' where eager returns the empty result; a non-empty case compiles."""

import torch


def vjp_of(r, t, g):
    _, pullback = torch.func.vjp(torch.polar, r, t)
    return pullback(g)


def forward_over_reverse(r, t, g, tr, tt, tg):
    return torch.func.jvp(vjp_of, (r, t, g), (tr, tt, tg))[1]


batched = torch.func.vmap(forward_over_reverse, in_dims=(0, 1, 0, 0, 0, 0))
for shape_r, shape_t in (((31, 15, 2), (2,)), ((31, 15, 0), (0,))):  # (a failed compile of a jvp leaves its forward-AD level entered: the empty case last)
    r = torch.ones((2, *shape_r), dtype=torch.float64)
    t = torch.ones((*shape_t, 2), dtype=torch.float64)
    g = torch.ones((2, *shape_r), dtype=torch.complex128)
    args = (r, t, g, torch.ones_like(r), torch.ones((2, *shape_t), dtype=torch.float64), torch.ones_like(g))
    print(f"polar abs {shape_r} angle {shape_t} eager:", [tuple(x.shape) for x in batched(*args)])
    torch._dynamo.reset()
    try:
        out = torch.compile(batched)(*args)
        print(f"polar abs {shape_r} angle {shape_t} torch.compile:", [tuple(x.shape) for x in out])
    except Exception as exc:  # noqa: BLE001 - what the compiler raises is the finding
        print(f"polar abs {shape_r} angle {shape_t} torch.compile raised {type(exc).__name__}: "
              f"{[l for l in str(exc).splitlines() if 'stride' in l][:1] or str(exc).splitlines()[:1]}")
