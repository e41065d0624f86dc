"""torch.compile (Inductor) of torch.func's forward over forward of addcdiv on 0-d complex128 tensors
fails after the forward over forward of torch.sgn was compiled in the same process: 'aten::expand()
Expected a value of type 'Tensor' for argument 'self' but instead found type 'int''. Compiled in a
fresh process (or after the eager sgn check) addcdiv's gives its eager value; torch._dynamo.reset()
between the two does not clear the state the sgn compilation left (measured with torch 2.13.0)."""

import torch

F = torch.func
ONE = torch.ones((), dtype=torch.complex128)


def forward_over_forward(op, xs):
    t1, t2 = (ONE,) * len(xs), (ONE,) * len(xs)
    return F.jvp(lambda *qs: F.jvp(op, qs, t1)[1], xs, t2)[1]


def addcdiv(a, b, c):
    return torch.addcdiv(a, b, c, value=1.0)


xs = tuple(torch.tensor(v, dtype=torch.complex128) for v in (1 + 1j, 2 - 1j, 0.5 + 2j))
print("addcdiv eager:", forward_over_forward(addcdiv, xs).item())
z = (torch.tensor(0.5 + 0.25j, dtype=torch.complex128),)
print("sgn torch.compile:", torch.compile(forward_over_forward)(torch.sgn, z).item())
torch._dynamo.reset()
try:
    print("addcdiv torch.compile after sgn:", torch.compile(forward_over_forward)(addcdiv, xs).item())
except Exception as exc:  # noqa: BLE001 - what the compiler raises is the finding
    print("addcdiv torch.compile after sgn raised", type(exc).__name__, str(exc).splitlines()[0][:160])
