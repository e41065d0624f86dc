"""torch.tensor of an empty NumPy array has all strides 0, and torch.view_as_complex of it raises
'Tensor must have a last dimension with stride 1' where the same empty tensor made by torch.zeros
(strides (2, 1)) is viewed as complex. An empty (..., 2) array has no element to misread."""

import numpy as np
import torch

for make in (lambda: torch.tensor(np.zeros((0, 2)), dtype=torch.float32), lambda: torch.zeros((0, 2))):
    t = make()
    try:
        print("strides", t.stride(), "view_as_complex shape", tuple(torch.view_as_complex(t).shape))
    except RuntimeError as exc:
        print("strides", t.stride(), "view_as_complex raises", exc)
