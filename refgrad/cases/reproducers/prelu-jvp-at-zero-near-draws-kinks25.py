"""What `refgrad run --ops prelu --known builtin --domains whole --draws seeded --seed 2` (kinks25)
reached once prelu declared its kink x = 0: the 'near' kind (and the reach sweep's 'at' case) puts
elements exactly on 0, where PyTorch's forward-mode derivative of prelu takes the positive branch
(the tangent of x) while its backward gives the slope w, as the mathematics' left derivative and
the reference do: the JVP consistent with torch's own VJP is w tx + tw x = w tx at x = 0."""

import torch
import torch.nn.functional as F

for dtype in (torch.float16, torch.float64):
    x = torch.tensor([[0.0]], dtype=dtype)
    w = torch.tensor([-0.432861328125], dtype=dtype)
    tx = torch.tensor([[-1.537109375]], dtype=dtype)
    tw = torch.tensor([1.083984375], dtype=dtype)
    jvp = torch.func.jvp(F.prelu, (x, w), (tx, tw))[1]
    (vjp_x,) = torch.autograd.grad(F.prelu(x.requires_grad_(), w), x, torch.ones_like(x))
    exact = float(w) * float(tx) + float(tw) * 0.0
    print(
        f"torch prelu jvp at x = 0, w = -0.4329, tx = -1.537 ({str(dtype)[6:]}): {float(jvp):.4g}; "
        f"its vjp's slope {float(vjp_x):.4g}; w tx = {exact:.4g}"
    )
