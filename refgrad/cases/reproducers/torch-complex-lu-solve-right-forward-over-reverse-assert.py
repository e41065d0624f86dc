"""PyTorch's forward mode over reverse mode of torch.linalg.lu_solve(LU, pivots, B, left=False) for
complex input fails an internal assertion: the tangent of a forward-differentiable view (the
conjugate transposes X^H that the left=False path takes, X A = B as A^H X^H = B^H) does not have
its primal's layout. Real input and the other three (left, adjoint) combinations run; the
mathematics is defined everywhere here (A well conditioned), and the reference differentiates it."""

import torch

torch.manual_seed(0)
for dtype in (torch.float64, torch.complex64, torch.complex128):
    for left in (True, False):
        for adjoint in (False, True):
            a = torch.randn(3, 3, dtype=dtype) + 3 * torch.eye(3, dtype=dtype)
            b, g, ta, tb = (torch.randn(3, 3, dtype=dtype) for _ in range(4))

            def f(a, b):
                return torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=left, adjoint=adjoint)

            try:  # forward over reverse: the JVP of the VJP
                torch.func.jvp(lambda a, b: torch.func.vjp(f, a, b)[1](g), (a, b), (ta, tb))
                outcome = "runs"
            except RuntimeError as e:
                outcome = "RuntimeError: " + str(e).split(" at ")[0]
            print(f"{str(dtype)[6:]} left={left} adjoint={adjoint}: {outcome}")
print("torch", torch.__version__)
