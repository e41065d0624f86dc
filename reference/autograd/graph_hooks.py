"""Saved-tensor hooks: ``T.autograd.graph.saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks`` (PyTorch's ``torch.autograd.graph``).

While a ``saved_tensors_hooks(pack, unpack)`` context is active, every tensor a recorded op saves
for backward (:class:`reference.autograd.graph.SavedTensor`) is handed to ``pack`` (under
``no_grad``, as PyTorch does) and only what ``pack`` returns is kept; backward calls ``unpack`` on
it. As in PyTorch's SavedVariable:

* only the innermost active pair is used (contexts nest, the inner one wins);
* a wrapped Python number (``x * 2`` saves the 2) is never shown to ``pack``;
* ``pack`` may not modify its input in place (RuntimeError after it returns);
* ``unpack`` must return a Tensor (TypeError naming the type otherwise); its shape and dtype are
  *not* checked (PyTorch does not either);
* no version check is made on a tensor saved through hooks (the hooks own the value);
* the unpacked tensor gets the saved tensor's history (its grad_fn, or the leaf's gradient
  accumulator) and version counter, so double backward flows to the original inputs even when
  ``pack`` returned a detached copy;
* after a backward without ``retain_graph`` the packed value is dropped and a second access
  raises the "backward through the graph a second time" error.

This module holds the contexts and their stack; :mod:`reference.autograd.graph` packs and unpacks
a saved tensor through them (``pack_saved``, ``unpack_saved``, beside ``SavedTensor``).
"""

from __future__ import annotations

from reference.autograd.table import ops
from reference.autograd.tensor import RemovableHandle

_stack: list = []  # active (pack, unpack) pairs, outermost first
_disabled: list = []  # error messages of active disable_saved_tensors_hooks contexts

def current():
    """The innermost (pack, unpack) pair, or None."""
    return _stack[-1] if _stack else None


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through ``pack_hook`` and come back
    through ``unpack_hook`` (``pack_hook(tensor) -> Any``, ``unpack_hook(Any) -> Tensor``)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled:
            raise RuntimeError(_disabled[-1])
        _stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """PyTorch's ``save_on_cpu``: pack is ``(tensor.device, tensor.cpu())``, unpack is
    ``tensor.to(device)``. For a CPU tensor ``cpu()`` returns the tensor itself, exactly as PyTorch's
    does: the saved value is the tensor (an in-place change made after saving is seen by backward,
    unchecked, as in PyTorch); a device tensor is packed as a CPU copy. ``pin_memory=True`` copies
    into a fresh (CPU) tensor, as PyTorch's pinned path does."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            packed = ops.zeros(tuple(tensor.shape), dtype=tensor.dtype)
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Inside it, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``; entering it
    while hooks are active raises the same (PyTorch's ``disable_saved_tensors_hooks``)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if _stack:
            raise RuntimeError(self.error_message)
        _disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _disabled.pop()


def register_post_accumulate_grad_hook(self, hook):
    """``leaf.register_post_accumulate_grad_hook(hook)``: ``hook(leaf)`` runs after a backward pass
    has accumulated into ``leaf.grad`` (not for ``autograd.grad``, which accumulates nothing); it
    must return None. Returns a handle with ``remove()``."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = self.__dict__.setdefault("_post_acc_hooks", [])
    key = object()
    hooks.append((key, hook))
    return RemovableHandle(hooks, key)
