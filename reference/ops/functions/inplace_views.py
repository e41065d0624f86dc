"""In-place view ops: ``squeeze_``, ``unsqueeze_``, ``transpose_``, ``t_``, ``swapdims_``/
``swapaxes_``, ``as_strided_``.

PyTorch's in-place view ops change the tensor's metadata (sizes, strides, offset) in place, over
the same storage, and record the view op as its new history: ``x.t_()`` on a non-leaf gets
``grad_fn=TBackward1`` with an edge to the old history, a tensor that is a view stays a view of
its base, and the version counter is bumped. They obey check_inplace: a leaf that requires grad
may not be modified (nor a view of one), nor a view made under no_grad with grad mode enabled.

Here the out-of-place view is made (its node, its view metadata, its forward tangents and vmap
physical values) and then becomes ``self``: same object, new geometry and history.
"""

from __future__ import annotations

import dataclasses

from reference.autograd.grad_mode import grad_state
from reference.autograd.graph import RuleNode, check_inplace
from reference.ops import api as A
from reference.ops.rules import RULES

__all__: list = []

# PyTorch's grad_fn of the in-place overloads (derivatives.yaml lists them after the out-of-place
# ones): the same rule, the in-place node's name.
_INPLACE_NODE = {
    "squeeze": "SqueezeBackward3",
    "squeeze_dim": "SqueezeBackward4",
    "squeeze_dims": "SqueezeBackward5",
    "unsqueeze": "UnsqueezeBackward1",
    "transpose": "TransposeBackward1",
    "t": "TBackward1",
    "as_strided": "AsStridedBackward1",
}
_INPLACE_RULES = {name: dataclasses.replace(RULES[name], node=node) for name, node in _INPLACE_NODE.items()}


def _become(self, out):
    """``self`` takes ``out``'s geometry and history (``out`` is a view of ``self``)."""
    self._vc[0] += 1  # an in-place op: saved copies of self are stale from here on
    self._data = out._raw if out._lazy else out._data  # (a conjugate view: its storage's array)
    self._storage = out._storage
    self._offset = out._offset
    fn = out._grad_fn
    if isinstance(fn, RuleNode) and fn.rule.name in _INPLACE_RULES:
        fn.rule = _INPLACE_RULES[fn.rule.name]
    self._grad_fn = fn
    self._output_nr = out._output_nr
    self._tangents = out._tangents
    self._batched = out._batched
    self._vmap_copied = out._vmap_copied
    if self._view is not None:  # a view stays a view of its base, with the new geometry
        out._view.attr_version = self._vc[0]
        self._view = out._view
    return self


def _inplace_view(fn):
    def op_(self, *args, **kwargs):
        check_inplace(self, grad_state.enabled and self.requires_grad)
        return _become(self, fn(self, *args, **kwargs))

    op_.__name__ = fn.__name__ + "_"
    return op_


def _swapaxes(input, axis0, axis1):
    return A.transpose(input, axis0, axis1)


_swapaxes.__name__ = "swapaxes"


def _t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return A.t(input)


_t.__name__ = "t"


def _swapdims(input, dim0, dim1):
    return A.transpose(input, dim0, dim1)


_swapdims.__name__ = "swapdims"

METHODS = {
    "squeeze_": _inplace_view(A.squeeze),
    "unsqueeze_": _inplace_view(A.unsqueeze),
    "transpose_": _inplace_view(A.transpose),
    "t_": _inplace_view(_t),
    "swapaxes_": _inplace_view(_swapaxes),
    "swapdims_": _inplace_view(_swapdims),
    "as_strided_": _inplace_view(A.as_strided),
}
