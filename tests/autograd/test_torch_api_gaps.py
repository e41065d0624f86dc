"""Agreement with PyTorch on small API gaps found in review: ``Tensor.chalf`` (refused: the
reference has no complex32), top-level comparison / logical / predicate functions PyTorch exports
(``T.isnan``, ``T.logical_xor``, ...), PyTorch's error for non-broadcastable shapes in ``where`` and
the comparison ops, and ``permute``'s errors. Every case runs the same program text on ``torch``
and on ``reference``."""

from __future__ import annotations

import pytest

import reference as T
from reference.ops.functions._low_precision import DtypeNotSupported

torch = pytest.importorskip("torch")


def test_chalf_refused_with_the_dtype_and_the_reason():
    """torch's x.chalf() is complex32 (ComplexHalf); NumPy has no such dtype, so the reference
    refuses with a typed error (a TypeError) naming the dtype and the reason."""
    t = torch.tensor([1.0, -2.0], dtype=torch.float64).chalf()
    assert t.dtype == torch.complex32  # what torch gives
    x = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)
    with pytest.raises(DtypeNotSupported) as info:
        x.chalf()
    assert isinstance(info.value, TypeError)
    assert info.value.dtype == "complex32"
    assert "complex32" in str(info.value) and "NumPy" in str(info.value)
    with pytest.raises(DtypeNotSupported):
        x.chalf(memory_format=T.preserve_format)
