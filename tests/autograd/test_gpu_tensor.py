"""The Tensor layer on CuPy: every op record sample's forward values and VJP on ``cuda``
against the NumPy run, within the bound the error model derives (:mod:`reference.errors`).

Both runs compute in float64 and each is within the derived bound ``b`` of the exact result
(CuPy's kernels are other kernels: cuBLAS sums in another order, CUDA's libm rounds
differently), so they may differ by up to ``2 b`` element by element; a view or a move is exact
(``b = 0``) and must agree exactly. Complex samples are outside the tracker's float64 inputs and
are compared in the strict CPU tests only; complex results of real inputs are compared as complex
(the comparison, ``check_within_bound``, also runs on the strict device in
tests/autograd/test_strict_namespace.py). Marker ``gpu``: skipped with the reason where CuPy or
a CUDA device is missing (tests/conftest.py). First run on a GPU in session 25 (issue 35:
H200, CuPy 14.2.0; its failures are modelled on the strict device since).
"""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from tests.autograd.test_strict_namespace import BOUND_BUGS, REAL_OPS, check_within_bound

pytestmark = pytest.mark.gpu

CUDA = T.device("cuda", 0)


@pytest.mark.parametrize("op", REAL_OPS)
def test_cupy_matches_numpy_within_the_derived_bound(op):
    pytest.importorskip("cupy", reason="CuPy is not installed")
    if op in BOUND_BUGS:
        pytest.xfail(BOUND_BUGS[op])
    unbounded = check_within_bound(op, CUDA)
    if unbounded:
        pytest.skip("no derived bound for " + "; ".join(unbounded))


def test_tensors_on_cuda_report_the_device_as_pytorch_does():
    pytest.importorskip("cupy", reason="CuPy is not installed")
    x = T.tensor([1.0, 2.0], dtype=T.float64, device="cuda", requires_grad=True)
    assert x.device == T.device("cuda", 0) and x.is_cuda and not x.is_cpu
    assert repr(x) == "tensor([1., 2.], dtype=float64, device='cuda:0', requires_grad=True)"
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        x + T.ones(2, dtype=T.float64)
    y = (x.cpu() * 2).cuda()
    y.sum().backward()
    assert x.grad.device == T.device("cuda", 0)
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [2.0, 2.0])
