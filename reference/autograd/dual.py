"""``T.autograd.forward_ad``'s public API (PyTorch's ``torch.autograd.forward_ad``): ``dual_level``,
``enter_dual_level``/``exit_dual_level``, ``make_dual``, ``unpack_dual``, ``UnpackedDualTensor``.

A dual level is one level of :mod:`reference.autograd.forward_ad` (the machinery under
``reference.func.jvp``); tangents live in ``tensor._tangents[level]``. As in PyTorch:

* only one dual level at a time (PyTorch numbers it 0);
* ``make_dual(x, t)`` returns a view of ``x`` (``ViewBackward0`` for reverse mode) carrying ``t``
  itself as its tangent (no copy, unless ``t``'s strides differ from ``x``'s: then a copy with
  ``x``'s layout); an in-place op on the dual, or on a view of it, updates that tangent in place
  (PyTorch's forward-grad view base is the dual, not ``x``);
* ``unpack_dual(d)`` returns ``(primal, tangent)``: a view of ``d`` without tangent, and the
  tangent tensor itself (None outside the level or for a tensor without one).
"""

from __future__ import annotations

import threading
from collections import namedtuple

from reference.autograd import levels
from reference.autograd.table import ops
from reference.backend import is_inexact

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]


class DualState(threading.local):
    """The running thread's dual level: ``dual_state.level``, a :mod:`reference.autograd.levels`
    level id, or None. Thread-local like the stack of levels it is entered in (PyTorch's forward-AD
    level is process-wide: there a second thread's ``enter_dual_level`` raises, here it opens that
    thread's own)."""

    def __init__(self):
        self.level = None


dual_state = DualState()

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


def enter_dual_level():
    """Enter the dual level (PyTorch's level 0) and return its number."""
    if dual_state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    dual_state.level = levels.enter()
    return 0


def exit_dual_level(*, level=None):
    if level is None:
        level = 0 if dual_state.level is not None else -1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != 0 or dual_state.level is None:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported."
        )
    levels.exit(dual_state.level)
    dual_state.level = None


class dual_level:
    """``with dual_level():`` make and unpack dual tensors inside; tangents are gone after."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _dtype_name(t):
    return f"torch.{t.dtype.name}"


def in_layout_of(tensor, tangent):
    """``tangent`` copied into ``tensor``'s layout (sizes and strides) where its strides differ: a
    tangent always has its primal's metadata in PyTorch (AutogradMeta::set_fw_grad copies a new
    forward grad whose metadata differs into a tensor with the primal's), so a view of the primal
    (reshape of a contiguous result) is a view of the tangent too."""
    if tangent.stride() == tensor.stride() or getattr(tangent, "_batched", None) or getattr(tensor, "_batched", None):
        return tangent  # (under vmap the strides are the logical placeholders of a batched value)
    if any(s == 0 and n > 1 for n, s in zip(tensor.shape, tensor.stride())):
        return tangent  # (an expanded primal: no layout one can copy into)
    extent = 1 + sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride())) if tensor.numel() else 0
    zeros = ops.zeros(extent, dtype=tangent.dtype, device=tangent.device)
    buf = ops.as_strided(zeros, tuple(tensor.shape), tensor.stride(), 0)
    buf.copy_(tangent)
    return buf


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` whose tangent at the dual level is ``tangent``."""
    if level is None:
        level = 0 if dual_state.level is not None else -1
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."
        )
    lid = dual_state.level
    if not is_inexact(tensor.dtype):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {_dtype_name(tensor)}")
    if not is_inexact(tangent.dtype):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {_dtype_name(tangent)}")
    if levels.tangent(tensor, lid) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level 0 is "
            "not supported."
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this "
            f"is not supported. Tensor is of size {list(tensor.shape)} while the given forward gradient is of "
            f"size {list(tangent.shape)}."
        )
    with levels.lowered(levels.state.stack.index(lid)):
        dual = ops.view(tensor, tuple(tensor.shape))
        tangent = in_layout_of(tensor, tangent)
    levels.set_tangent(dual, lid, tangent)
    dual._fw_base = dual
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at the dual level (tangent None outside it)."""
    lid = dual_state.level
    if lid is None:
        return UnpackedDualTensor(tensor, None)
    tan = levels.tangent(tensor, lid)
    if tan is None:
        return UnpackedDualTensor(tensor, None)
    with levels.lowered(levels.state.stack.index(lid)):
        primal = ops.alias(tensor)
    return UnpackedDualTensor(primal, tan)
