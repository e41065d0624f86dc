"""The Tensor layer on CuPy: every op record sample's forward values and VJP on ``cuda``
against the NumPy run, within the bound the error model derives (:mod:`reference.errors`).

Both runs compute in float64 and each is within the derived bound ``b`` of the exact result
(CuPy's kernels are other kernels: cuBLAS sums in another order, CUDA's libm rounds
differently), so they may differ by up to ``2 b`` element by element; a view or a move is exact
(``b = 0``) and must agree exactly. Complex samples are outside the tracker's float64 inputs and
are compared in the strict CPU tests only. Marker ``gpu``: skipped with the reason where CuPy or
a CUDA device is missing (tests/conftest.py). It has never run on a GPU yet (docs/autograd.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference import errors
from tests.autograd.op_records import OP_RECORDS
from tests.autograd.test_gradcheck import _draw
from tests.autograd.test_strict_namespace import (
    BOUND_BUGS,
    REAL_OPS,
    _default_for,
    _outputs,
    default_device,
    on_device,
    program,
)

pytestmark = pytest.mark.gpu

CUDA = T.device("cuda", 0)


@pytest.mark.parametrize("op", REAL_OPS)
def test_cupy_matches_numpy_within_the_derived_bound(op):
    pytest.importorskip("cupy", reason="CuPy is not installed")
    if op in BOUND_BUGS:
        pytest.xfail(BOUND_BUGS[op])
    unbounded = []
    for label, fn, shapes, kinds, *_ in OP_RECORDS[op]:
        if set(kinds) & set("cqu"):
            continue
        xs = _draw(shapes, kinds, 0)
        outs = [o for o in _outputs(fn(*xs)) if o is not None and o.requires_grad]
        rng = np.random.default_rng(1)
        cts = [rng.standard_normal(o.shape) for o in outs]
        run = program(fn, cts)
        try:
            values, bounds, _ = errors.bound_of(
                run, [x.detach().numpy() for x in xs], errors.Precision("float64")
            )
        except (NotImplementedError, RuntimeError) as exc:  # no bound (or no derivative): nothing to judge by
            unbounded.append(f"{label}: {exc}")
            continue
        with default_device("cuda" if _default_for(op) else "cpu"):
            got = program(on_device(fn, CUDA), cts)(
                *[T.tensor(x.detach(), device="cuda", requires_grad=True) for x in xs]
            )
        assert len(got) == len(values), f"{op}[{label}]"
        for k, (g, v, b) in enumerate(zip(got, values, bounds)):
            if v is None:
                assert g is None, f"{op}[{label}] result {k}: defined on cuda only"
                continue
            assert g.device.type == "cuda", f"{op}[{label}] result {k} left the GPU"
            host = np.asarray(g.detach().cpu().numpy(), dtype=np.float64)
            assert host.shape == v.shape, f"{op}[{label}] result {k}"
            gap = np.abs(host - v)
            ok = (gap <= 2 * b) | (host == v)  # (equal infinities and nans are not gaps)
            ok |= np.isnan(host) & np.isnan(v)
            assert ok.all(), (
                f"{op}[{label}] result {k}: cuda differs from NumPy by {gap[~ok].max():.3g}, "
                f"beyond twice the derived bound {b[~ok].max():.3g}"
            )
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
