"""log_ndtr's bound follows PyTorch's formula (calc_log_ndtr): log1p(-erfc(x/sqrt 2)/2) rounds
x/sqrt 2 and so moves erfc by a relative 2t²u, which torch's results carry (the reference's own
kernel avoids it, tests/autograd/test_special_accuracy.py). Once the reference was accurate, a
0.5-ulp declaration flagged torch's correct-to-its-formula results (ratio 2.4-3.0)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.errors import Precision, bound_of

torch = pytest.importorskip("torch", reason="compares with PyTorch's log_ndtr")
X = np.linspace(-30.0, 9.0, 4001)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_torch_log_ndtr_within_the_bound_and_a_planted_error_is_caught(dtype):
    x = torch.tensor(X, dtype=getattr(torch, dtype)).double().numpy()
    (value,), (bound,), _ = bound_of(lambda t: T.special.log_ndtr(t), [x], Precision(dtype=dtype))
    observed = torch.special.log_ndtr(torch.tensor(x, dtype=getattr(torch, dtype))).double().numpy()
    assert np.all(np.abs(observed - value) <= bound), np.max(np.abs(observed - value) / bound)
    planted = value * (1 + 64 * np.finfo(dtype).eps)
    assert np.any(np.abs(planted - value) > bound)
