"""PyTorch's conversion to bfloat16 gives a quiet NaN with its sign bit set: from float32 always,
from float64 in vectorised loops (16 elements or more); float16 keeps the sign. copysign reads
that sign (IEEE 754 copySign takes the sign bit of a NaN too), so copysign(x, +nan) is -|x|."""

import numpy as np
import torch

positive_nan = np.full(16, np.nan)  # sign bit clear
assert not np.signbit(positive_nan).any()
sources = {
    "float64 x16": torch.from_numpy(positive_nan),
    "float64 x1": torch.from_numpy(positive_nan[:1]),
    "float32 x1": torch.from_numpy(positive_nan[:1]).float(),
}
for label, source in sources.items():
    b = source.to(torch.bfloat16)
    print(f"torch {label} +nan to bfloat16: signbit {torch.signbit(b)[0].item()};",
          f"copysign(-inf, it) = {torch.copysign(torch.full_like(b, -float('inf')), b)[0].item()} (exact: inf)")
