"""Activation checkpointing: ``T.utils.checkpoint.checkpoint`` and ``checkpoint_sequential``
(PyTorch's ``torch.utils.checkpoint``), reentrant and non-reentrant.

**Non-reentrant** (``use_reentrant=False``, PyTorch's recommended variant) is built on
saved-tensor hooks, as in PyTorch: the inputs are saved (with their versions, so an input modified
in place before backward raises PyTorch's version error), ``function`` runs normally under a pack
hook that keeps a placeholder instead of each saved tensor, and the first unpack in a backward pass
runs ``function`` again on the saved inputs (grad mode on) under a hook that fills the placeholders
in the same order. Recomputed tensors are handed out once per backward pass (a second backward
with ``retain_graph=True`` recomputes again); the number of saved tensors must match
(``CheckpointError`` otherwise); with ``early_stop`` (the default) the recomputation stops as soon
as every placeholder is filled. Works with ``autograd.grad``, ``backward(inputs=...)`` and double
backward.

**Reentrant** (``use_reentrant=True``, PyTorch's default when not passed, with its warning): the
forward runs under ``no_grad``; the outputs get one ``CheckpointFunctionBackward`` node whose
backward re-runs ``function`` on detached copies of the saved inputs under grad mode and calls
``backward`` inside the backward pass. As in PyTorch, it refuses ``autograd.grad`` and
``backward(inputs=...)``, and warns when no input requires grad.

**Randomness.** PyTorch stashes and restores the global RNG state around recomputation when
``preserve_rng_state=True`` so that e.g. dropout draws the same mask twice. The reference has no
global RNG state at all: its random ops take their randomness explicitly (``dropout(x, p,
mask=m)``), so the recomputation sees the same masks by construction. ``preserve_rng_state`` is
accepted and has nothing to restore; ``False`` does not reproduce PyTorch's behaviour of drawing
a *different* mask on recomputation (a gradient inconsistent with the forward, which no
deterministic oracle should state).
"""

from __future__ import annotations

import warnings
import weakref

from reference.autograd import graph, graph_hooks
from reference.autograd.engine import _tasks, backward
from reference.autograd.grad_mode import enable_grad, grad_state, no_grad
from reference.autograd.graph import gradient_edge
from reference.autograd.tensor import Tensor, _alias, zeros_tensor
from reference.backend import is_floating

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential"]


class CheckpointError(RuntimeError):
    """PyTorch's ``torch.utils.checkpoint.CheckpointError``."""


_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""

REENTRANT_INVALID = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
    "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
    ".backward() without passing the `inputs` argument."
)


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=None,
    determinism_check="default",
    debug=False,
    early_stop=True,
    **kwargs,
):
    """``function(*args, **kwargs)`` whose intermediate results are recomputed in backward."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
            "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
            "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
            "two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _reentrant(function, preserve, args)
    if context_fn is not None or debug:
        raise NotImplementedError(
            "reference.utils.checkpoint: context_fn (selective checkpointing) and debug=True are not "
            "implemented"
        )
    return _non_reentrant(function, early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` in sequence, all segments but the last checkpointed (PyTorch's split:
    ``len(functions) // segments`` functions per checkpointed segment)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
            "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
            "two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    functions = list(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---- non-reentrant ------------------------------------------------------------------------------


class _Holder:
    """What the checkpoint's pack hook keeps for one saved tensor: per backward pass (graph task),
    the recomputed tensor until it is unpacked (then None)."""

    __slots__ = ("values", "__weakref__")

    def __init__(self):
        self.values = {}


class _StopRecomputation(Exception):
    pass


class _Frame:
    def __init__(self, function, early_stop, args, kwargs):
        self.function = function
        self.early_stop = early_stop
        self.kwargs = kwargs
        self.args = list(args)
        self.tensor_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        # the inputs are saved like any saved tensor: version-checked, packed by outer hooks
        self.saved_inputs = [graph.SavedTensor(args[i]) for i in self.tensor_idx]
        self.holders = []  # weak references, in save order
        self.recomputed = {}  # graph task -> True once recomputed
        self.counter = {}  # graph task -> tensors saved so far during its recomputation
        self.forward_completed = False

    def inputs(self):
        args = list(self.args)
        for i, s in zip(self.tensor_idx, self.saved_inputs):
            args[i] = s.unpack()
        return args

    def pack(self, x):
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        return holder

    def unpack(self, holder):
        gid = _tasks[-1][0] if _tasks else object()
        if gid not in self.recomputed:
            self.counter[gid] = 0
            hooks = _RecomputeHooks(self, gid)
            try:
                with hooks, enable_grad():
                    self.function(*self.inputs(), **self.kwargs)
            except _StopRecomputation:
                pass
            self.recomputed[gid] = True
            if self.counter[gid] != len(self.holders):
                raise CheckpointError(
                    "torch.utils.checkpoint: A different number of tensors was saved during the original "
                    "forward and recomputation.\n"
                    f"Number of tensors saved during forward: {len(self.holders)}\n"
                    f"Number of tensors saved during recomputation: {self.counter[gid]}.\n{_DEBUG_TIP}"
                )
        value = holder.values.get(gid)
        if value is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                "If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise "
                "please open an issue with details on your use case."
            )
        holder.values[gid] = None
        return value


class _RecomputeHooks(graph_hooks.saved_tensors_hooks):
    """During recomputation: the k-th tensor saved fills the k-th placeholder of the forward."""

    def __init__(self, frame, gid):
        def pack(x):
            x = x.detach() if x.requires_grad else x
            k = frame.counter[gid]
            frame.counter[gid] += 1
            if k >= len(frame.holders):
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation than during "
                    f"the original forward pass.\n{_DEBUG_TIP}"
                )
            holder = frame.holders[k]()
            if holder is not None:
                holder.values[gid] = x
            if frame.early_stop and frame.counter[gid] == len(frame.holders):
                raise _StopRecomputation
            return x

        super().__init__(pack, lambda x: x)


def _non_reentrant(function, early_stop, args, kwargs):
    if not grad_state.enabled:
        return function(*args, **kwargs)
    frame = _Frame(function, early_stop, args, kwargs)
    with graph_hooks.saved_tensors_hooks(frame.pack, frame.unpack):
        out = function(*args, **kwargs)
    frame.forward_completed = True
    return out


# ---- reentrant ----------------------------------------------------------------------------------


class CheckpointFunctionBackward(graph.Node):
    """The node of a reentrant checkpoint: recompute, then backward inside backward."""

    __slots__ = ("function", "args", "tensor_idx", "saved", "out_meta", "released")

    def __init__(self, function, args, tensor_idx):
        tensors = [args[i] for i in tensor_idx]
        super().__init__([gradient_edge(t) if t.requires_grad else None for t in tensors], 0)
        self.function = function
        self.args = list(args)
        self.tensor_idx = tensor_idx
        self.saved = []  # ctx.save_for_backward(*tensor_inputs): saved once the forward has run
        self.out_meta = []
        self.released = False

    def name(self):
        return "CheckpointFunctionBackward"

    def input_meta(self, nr):
        return self.out_meta[nr]

    def apply(self, grads):
        if _tasks and not _tasks[-1][1]:
            raise RuntimeError(REENTRANT_INVALID)
        if self.released:
            raise graph.AutogradError(graph.BACKWARD_TWICE)
        inputs = list(self.args)
        for i, s in zip(self.tensor_idx, self.saved):
            inputs[i] = s.unpack()
        detached = []
        for x in inputs:
            if isinstance(x, Tensor):
                d = x.detach()
                d.requires_grad_(x.requires_grad)
                detached.append(d)
            else:
                detached.append(x)
        with enable_grad():
            outputs = self.function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs_with_grad, grads_with = [], []
        for o, g, (shape, dtype) in zip(outputs, grads, self.out_meta):
            if isinstance(o, Tensor) and o.requires_grad:
                outs_with_grad.append(o)
                grads_with.append(g if g is not None else zeros_tensor(shape, dtype))  # materialized
        if not outs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward(outs_with_grad, grads_with)
        return [detached[i].grad for i in self.tensor_idx]

    def release(self):
        self.released = True
        for s in self.saved:
            s.release()


def _reentrant(function, preserve, args):
    tensor_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    requires = grad_state.enabled and any(args[i].requires_grad for i in tensor_idx)
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)
    node = CheckpointFunctionBackward(function, args, tensor_idx) if requires else None
    with no_grad():
        outputs = function(*args)
    if node is None:
        return outputs
    # PyTorch's Function saves what save_for_backward named after forward returns: an input the
    # block modified in place is saved at its new version
    node.saved = [graph.SavedTensor(args[i]) for i in tensor_idx]
    if not isinstance(outputs, (Tensor, tuple)):  # e.g. a list: one non-tensor output, returned as is
        return outputs
    single = isinstance(outputs, Tensor)
    outs = list((outputs,) if single else outputs)
    for i, o in enumerate(outs):
        if isinstance(o, Tensor):
            if o._base is not None or any(o is a for a in args):
                # an input or a view returned as is: a fresh alias (same storage and version counter)
                # carries the node; PyTorch makes it a view with custom-Function creation meta instead
                o = outs[i] = _alias(o)
            node.out_meta.append((o.shape, o.dtype))
            if is_floating(o._data.dtype):
                o._grad_fn = node
                o._output_nr = i
        else:
            node.out_meta.append((None, None))
    node.num_inputs = len(outs)
    return outs[0] if single else tuple(outs)
