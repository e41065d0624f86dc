"""Running a table rule on Tensors: compute, then record the node when a gradient is needed.

Three entry points, one per kind of primitive:

* :func:`apply`: a function of its inputs with fresh outputs;
* :func:`apply_view`: a view op, whose outputs alias the input's storage (``_base``, shared
  version counter, creation meta for the view + in-place checks);
* :func:`apply_inplace`: ``self.op_(...)``, which writes into ``self``'s storage, bumps the
  version and rebases the history of ``self`` (or of its base, through ``CopySlices``).

Under a transform (:mod:`reference.autograd.levels`) the innermost level holding an input runs the
primitive: a jvp level through forward mode's steps (``jvp_apply``, ``jvp_view``, ``jvp_inplace``
of :mod:`reference.autograd.forward_ad`), a vmap level through batching's (``batch_apply``, ...
of :mod:`reference.autograd.batching`). Both sit above the dispatcher (their rules run primitives
through it, one level down), so they register those steps in the core's table
(:mod:`reference.autograd.table`) and the dispatcher calls them there, as JAX's ``core.bind`` hands
a primitive to the trace that ``ad`` or ``batching`` defines.
"""

from __future__ import annotations

import numpy as np

from reference.autograd import graph, graph_hooks, layout, levels
from reference.autograd.grad_mode import grad_state
from reference.autograd.graph import check_inplace, gradient_edge, rebase_history
from reference.autograd.table import BATCH_ELEMENTWISE, ops, register
from reference.autograd.tensor import (
    DEFAULT,
    MULTI_OUTPUT_NODE,
    NO_GRAD_MODE,
    Tensor,
    _make,
    make_view,
    result_tensor,
    storage_of,
    write_data,
)
from reference.backend import device_of, is_floating, is_inexact, to_device
from reference.scalar_types import scalar_type_name

_NO_PARAMS: dict = {}  # (never written to: shared by every call without parameters, here and in ops.api)
_OVERLAP_OK = ("fill", "zero")  # fill_(number) and zero_ may write an expanded tensor; fill_(tensor) may not


def _requires_grad(rule, inputs):
    """PyTorch's compute_requires_grad: record a node when a differentiable input requires grad."""
    # A plain loop (no generator), and Tensor.requires_grad's first two tests inlined: this runs
    # on every op (benchmarks/autograd.py measures the per-op overhead).
    for t, nondiff in zip(inputs, rule.nondiff_mask):
        if t is None or nondiff:
            continue
        if t._requires_grad or t._grad_fn is not None or (t._base is not None and t.requires_grad):
            return True
    return False


def _node(rule, inputs, params, saved_overrides=None):
    """The node of an op about to run: edges to the inputs' histories and the saved inputs.

    Made *before* the forward computes, as in PyTorch, so that an input's history is looked up
    (and a stale view's error raised) before any shape error of the kernel. An input "needs" a
    gradient when it has a valid edge (PyTorch's should_compute_output): a view made under
    no_grad of a leaf requires grad but has none.
    """
    edges, needs, shapes, dtypes = [], [], [], []  # one pass over the inputs (this runs on every op)
    for t, nondiff in zip(inputs, rule.nondiff_mask):
        if t is None:
            edges.append(None)
            needs.append(False)
            shapes.append(None)
            dtypes.append(None)
            continue
        if nondiff:
            edge = None
        elif t._view is None and t._grad_fn is not None:  # gradient_edge's common case, inlined
            edge = (t._grad_fn, t._output_nr)
        else:
            edge = gradient_edge(t)
        edges.append(edge)
        needs.append(edge is not None)
        shapes.append(t._data.shape)
        dtypes.append(t._data.dtype)
    needs = tuple(needs)
    node = graph.RuleNode(rule, edges, params, tuple(shapes), tuple(dtypes), needs)
    for name, index in rule.saved_inputs(needs):
        t = inputs[index]
        if saved_overrides and name in saved_overrides:
            t = saved_overrides[name]
        if t is not None:
            node.saved[name] = graph.SavedTensor(t)
    if rule.reads:  # (Rule.reads: a reference and its version, not a saved tensor)
        node.reads = tuple(
            (name, t, t._vc[0])
            for name, t in zip(rule.inputs, inputs)
            if name in rule.reads and t is not None
        )
    return node


def _kernel(rule, arrays, numpy_only, params):
    """``rule.forward`` on ``arrays``: with NumPy operands only, one_device has nothing to do and
    an xp_fn kernel's NumPy function is called without its namespace search."""
    forward = rule.forward
    if numpy_only:
        forward = getattr(forward, "numpy_function", forward)
    else:
        arrays = one_device(arrays)
    return forward(*arrays, **params)


def _arrays(rule, inputs, cast):
    if cast is None:
        return one_device([t._data if t is not None else None for t in inputs])
    return one_device(
        [
            None if t is None else t._data if t._data.dtype == cast or nondiff else _promoted(t._data, cast)
            for t, nondiff in zip(inputs, rule.nondiff_mask)
        ]
    )


def _promoted(arr, cast):
    """``arr`` in the dtype the kernel computes in (type promotion: a real operand of a complex op);
    under an error tracker the copy keeps ``arr``'s bound (it finds bounds by memory: the copy had
    none, so ``cat`` of a complex tensor and a real one with an error dropped that error)."""
    out = arr.astype(cast)
    layout._carry_error(arr, out)
    return out


def one_device(arrays):
    """PyTorch's device check of a kernel's operands: one device for all, except that a CPU 0-d
    array (a wrapped Python number, a CPU scalar tensor) joins the others on theirs, as a CPU
    scalar does in a CUDA kernel; any other mix is PyTorch's RuntimeError. (One type test per
    operand when nothing is mixed: this runs on every op.)"""
    first = None
    for a in arrays:
        if a is not None:
            if first is None:
                first = type(a)
            elif type(a) is not first:
                return _join_device(arrays)
    return arrays


def _join_device(arrays):
    target = None
    for a in arrays:
        if a is None:
            continue
        dev = device_of(a)
        if dev[0] == "cpu" and a.ndim == 0:
            continue
        if target is None:
            target = dev
        elif dev != target:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{_device_name(target)} and {_device_name(dev)}!"
            )
    return [None if a is None else to_device(a, *target) if device_of(a) != target else a for a in arrays]


def _device_name(dev):
    return dev[0] if dev[1] is None else f"{dev[0]}:{dev[1]}"


def apply(rule, inputs, params=_NO_PARAMS, cast=None, check=None):
    """Run ``rule`` out of place on ``inputs`` (Tensors or None) with keyword ``params``.

    ``cast``: the dtype the forward computes in (type promotion); gradients are cast back to
    each input's dtype by the engine. ``check``: argument checks PyTorch's kernel makes (they
    come after the autograd node is made).

    The steps, in PyTorch's order: a transform level holding an input takes the op (a jvp level
    runs it, a vmap level batches its kernel); the complex check; the node (made before the
    kernel, see _node); the argument check; the kernel; the outputs and what the backward saves
    of them. A step that does not apply is skipped by its own condition: in the common case (every
    eager op and every formula of a backward pass: no transform, no type promotion, one output)
    this is one pass over the inputs, the kernel and, when a gradient is needed, the node.
    """
    # One path for every case (issue #31). It replaced a fast path for the common case that repeated
    # these steps in a second function: the one path costs what the fast path did, measured in one
    # process by swapping apply's code between the two versions on benchmarks/autograd.py's 50-op
    # chain, interleaved, both orders: forward + backward 1.00-1.03x, the forward alone (recording
    # the graph) 1.02-1.05x, under no_grad 1.01x (2026-11-29, 2-core shared machine, CPU time); the
    # fast path had saved 1.07-1.15x over the general path it duplicated.
    vmap_at = None
    if levels.state.visible:  # a transform is active: the innermost level holding an input runs it
        level = levels.owner(inputs)
        if level is not None:
            if levels.vmap_level(level) is None:  # jvp: primal and tangent, one level down
                return _jvp_apply(level, rule, inputs, params, cast, check)
            vmap_at = level  # vmap: the node is recorded here on the logical tensors
    # One pass over the inputs (this runs on every op; benchmarks/autograd.py measures the per-op
    # cost): their arrays, whether one is complex, whether all are NumPy arrays (see _kernel).
    complex_inputs = False
    numpy_only = True
    arrays = []
    for t in inputs:
        if t is None:
            arrays.append(None)
            continue
        a = t._data
        if a.dtype.kind == "c":
            complex_inputs = True
        if type(a) is not np.ndarray:
            numpy_only = False
        arrays.append(a)
    if cast is not None or complex_inputs:
        _check_complex(rule, inputs, cast)
    node = None
    if grad_state.enabled and rule.differentiable and _requires_grad(rule, inputs):
        node = _node(rule, inputs, params)
    if check is not None:
        check()
    if vmap_at is not None:
        outs, aux = ops.batch_apply(vmap_at, rule, inputs, params, cast)
    else:
        if cast is None:
            res = _kernel(rule, arrays, numpy_only, params)
        else:
            res = rule.forward(*_arrays(rule, inputs, cast), **params)
        aux = None
        if rule.has_aux:
            res, aux = res
        outs = [_result(rule, inputs, res)] if rule.outputs == 1 else [_make(r) for r in res]
    if node is not None:
        _record_outputs(node, rule, outs, aux, complex_inputs)
    return outs[0] if rule.outputs == 1 else tuple(outs)


def _record_outputs(node, rule, outs, aux, complex_inputs):
    """The outputs' history (``node``) and what its backward saves of them."""
    if rule.outputs == 1:
        _set_output(node, outs[0], aux, complex_inputs)
    else:
        node.set_outputs(outs, aux)
        for i, o in enumerate(outs):
            if is_inexact(o._data.dtype):
                o._grad_fn = node
                o._output_nr = i
    if not rule.saves:
        return
    saved = rule.saved_for(node.needs)
    if "result" in saved:
        node.saved["result"] = _save_output(outs[0], node)
    for i in range(1, len(outs)):  # further outputs a formula reads: result1, result2, ...
        if f"result{i}" in saved:
            node.saved[f"result{i}"] = _save_output(outs[i], node)


def _jvp_apply(level, rule, inputs, params, cast, check):
    """Forward mode's step at ``level``, given the op one level down (its own function: a closure
    in apply would make apply's arguments cell variables, slower to read on every op)."""
    return ops.jvp_apply(level, rule, inputs, params, lambda: apply(rule, inputs, params, cast, check))


def _set_output(node, out, aux, complex_inputs):
    """node.set_outputs and the history of its output, for the common one output."""
    data = out._data
    node.out_meta = [(data.shape, data.dtype)]
    node.num_inputs = 1
    node.aux = aux
    node.complex_meta = complex_inputs or data.dtype.kind == "c"  # (read by its backward)
    if is_inexact(data.dtype):
        out._grad_fn = node
        out._output_nr = 0


def _save_output(out, node):
    """``out``, an output of ``node``'s op, saved for ``node``'s backward: without a reference
    cycle (graph.SavedOutput) when ``out`` is a plain root tensor and no transform level (visible
    or not: a jvp level gives ``out`` its tangent after this inner computation returns) and no
    saved-tensor hook is active, else as a SavedTensor holding it."""
    cycle_free = (
        type(out) is Tensor
        and out._base is None
        and out._tangents is None
        and out._batched is None
        and not levels.state.stack
        and not graph_hooks._stack
    )
    return graph.SavedTensor(out, is_output=True, node=None if cycle_free else node, cycle_free=cycle_free)


def _result(rule, inputs, arr):
    """The result tensor holding ``arr``, with the strides PyTorch gives it (reference.autograd.layout)."""
    if rule.layout == layout.CONTIGUOUS:
        return _make(arr)
    # The common case, decided here without layout's general rule (this runs on every op): a result
    # of at most one dimension is always row-major, and so is one with no dimension of size 1 (no
    # ambiguous stride) computed from row-major inputs (layout.result_strides makes the same test).
    shape = getattr(arr, "shape", None)
    if shape is not None and len(shape) <= 1:
        return _make(arr)
    if shape is not None and 1 not in shape:
        for t in inputs:
            if t is not None and not t._data.flags.c_contiguous:
                break
        else:
            return _make(arr)
    if rule.operands is not None:
        inputs = [inputs[i] for i in rule.operands]
    return result_tensor(rule.layout, inputs, arr)


def apply_view(rule, src, params=_NO_PARAMS):
    """Run the view op ``rule``: outputs share ``src``'s storage and version counter."""
    if levels.state.visible:
        level = levels.owner((src,))
        if level is not None:
            if levels.vmap_level(level) is None:
                return ops.jvp_view(level, rule, src, params, lambda: apply_view(rule, src, params))
            return ops.batch_view(level, rule, src, params, lambda: _apply_view(rule, src, params))
    return _apply_view(rule, src, params)


def _apply_view(rule, src, params):
    geometries = rule.view(src.shape, src.stride(), src._offset, **params)
    multi = rule.outputs != 1
    if not grad_state.enabled:
        meta = NO_GRAD_MODE
    else:
        meta = MULTI_OUTPUT_NODE if multi else DEFAULT
    if not multi:
        geometries = (geometries,)
    outs = [make_view(src, *geometry[:3], meta, *geometry[3:]) for geometry in geometries]
    replay = src._view.replay if src._view is not None else None
    if replay is not None or rule.name in REPLAYED_VIEWS:
        _set_replay(rule, src, params, outs, replay)
    if grad_state.enabled and src.requires_grad:
        node = _node(rule, (src,), params)
        node.set_outputs(outs, None)
        for i, o in enumerate(outs):
            o._grad_fn = node
            o._output_nr = i
    return tuple(outs) if multi else outs[0]


# PyTorch's VIEW_FUNCTIONS_WITH_METADATA_CHANGE: views that no geometry (as_strided) remakes
REPLAYED_VIEWS = frozenset(("conj", "_neg_view", "view_as_real", "view_as_complex"))


def _set_replay(rule, src, params, outs, replay):
    """The steps that remake each view from its base (PyTorch's ViewInfo::chain): this op itself
    for a metadata-changing view (after the geometry of ``src`` when ``src`` is a plain view),
    else the output's geometry after ``src``'s steps."""
    if rule.name in REPLAYED_VIEWS:
        if replay is None:
            replay = () if src._base is None else (("as_strided", src.shape, src.stride(), src._offset),)
        for o in outs:
            o._view.replay = replay + ((rule, params),)
        return
    for o in outs:
        o._view.replay = replay + (("as_strided", o.shape, o.stride(), o._offset),)


def apply_inplace(rule, self, others, params=_NO_PARAMS, cast=None):
    """``self.<op>_(*others)``: compute ``rule`` on (self, *others), write it into ``self``."""

    if levels.state.visible:
        level = levels.owner((self,) + tuple(others))
        if level is not None:
            if levels.vmap_level(level) is None:
                return ops.jvp_inplace(
                    level, rule, self, others, params, lambda: apply_inplace(rule, self, others, params, cast)
                )
            return ops.batch_inplace(
                level,
                rule,
                self,
                others,
                params,
                cast,
                lambda: _apply_inplace(rule, self, others, params, cast),
            )
    return _apply_inplace(rule, self, others, params, cast)


def _apply_inplace(rule, self, others, params, cast):
    inputs = (self,) + tuple(others)
    _check_complex(rule, inputs, cast)
    requires = grad_state.enabled and any(t is not None and t.requires_grad for t in inputs)
    check_inplace(self, requires)
    node = None
    if requires:
        needs = tuple(
            t is not None and not rule.nondiff(i) and gradient_edge(t) is not None
            for i, t in enumerate(inputs)
        )
        overrides = None
        if "self" in rule.saved_for(needs):
            overrides = {"self": ops.clone(self)}  # the formula needs self as it was before the write
        node = _node(rule, inputs, params, overrides)
        node.reads = None  # the op overwrites self: formulas fall back to what is saved (Rule.reads)
    shape, stride = self._data.shape, self.stride()
    if not (rule.name == "copy" and _same_data(self, others[0])):  # copy_ onto itself returns at once
        _check_write(rule, self, others, shape, stride)
    res = rule.forward(*_arrays(rule, inputs, cast), **params)
    aux = None
    if rule.has_aux:
        res, aux = res
    if res.shape != shape:
        if rule.batch == BATCH_ELEMENTWISE:
            raise RuntimeError(
                f"output with shape {list(shape)} doesn't match the broadcast shape {list(res.shape)}"
            )
        raise RuntimeError(  # a structured kernel's check_inplace
            f"Bad in-place call: input tensor size {list(shape)} and output tensor size {list(res.shape)} "
            "should match"
        )
    if is_floating(res.dtype) and self._data.dtype.kind in "iub":
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {scalar_type_name(self.dtype)}"
        )
    if res.dtype.kind == "c" and self._data.dtype.kind != "c":
        raise RuntimeError(
            f"result type {scalar_type_name(res.dtype)} can't be cast to the desired output type "
            f"{scalar_type_name(self.dtype)}"
        )
    if node is not None:
        node.set_outputs([self], aux)
    if self._lazy:  # a conjugate / negative view: its storage gets the inverse transform
        write_data(self, res)
    else:
        self._data[...] = res
    # an error tracker's bound of the storage: the written region's is the result's (a view's region)
    layout._carry_error(res, self._raw if self._lazy else self._data, write=True, storage=storage_of(self))
    self._vc[0] += 1
    if node is not None:
        rebase_history(self, node)
        if "result" in rule.saved_for(node.needs):
            # on a view, the stale-tensor error names the view's regenerated grad_fn (AsStrided)
            # while that node lives, else this node (graph.SavedTensor.view_node)
            view_node = self._grad_fn if self._view is not None else None
            node.saved["result"] = graph.SavedTensor(self, is_output=True, node=node, view_node=view_node)
    return self


def _check_complex(rule, inputs, cast):
    """A complex input to a primitive PyTorch does not define on complex numbers raises its error."""
    if rule.complex_inputs:
        return None
    if cast is not None and cast.kind == "c":
        return ops.refuse_complex(rule, cast)
    for t in inputs:
        if t is not None and t._data.dtype.kind == "c":
            return ops.refuse_complex(rule, t._data.dtype)
    return None


def _check_write(rule, self, others, shape, stride):
    """The kernel's checks before writing, in TensorIterator's order: memory overlap, then shapes.

    Only an elementwise (TensorIterator) op broadcasts its other operands against ``self``; any
    other op (addmm_, cumprod_, scatter_reduce_: operands of their own shapes) is checked after
    its kernel, whose result must have ``self``'s shape (PyTorch's structured ``check_inplace``)."""
    if rule.name not in _OVERLAP_OK and any(n > 1 and s == 0 for n, s in zip(shape, stride)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location. Please clone() the tensor before performing the operation."
        )
    for other in others:
        if other is not None and overlap_status(self, other) == "partial":
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
                "a single memory location. Please clone() the tensor before performing the operation."
            )
    if rule.batch != BATCH_ELEMENTWISE:
        return
    for other in others:
        if other is not None and other.shape != shape:
            ops.check_broadcast(self, other)
            out = tuple(np.broadcast_shapes(shape, other.shape))
            if out != shape:
                raise RuntimeError(
                    f"output with shape {list(shape)} doesn't match the broadcast shape {list(out)}"
                )


def _same_data(a, b):
    """``a`` and ``b`` are the same elements of the same storage (PyTorch's copy_ early exit)."""
    return a is b or (
        storage_of(a) is storage_of(b)
        and a._offset == b._offset
        and a.shape == b.shape
        and a.stride() == b.stride()
        and a.dtype == b.dtype
    )


def _dense(t):
    """PyTorch's is_non_overlapping_and_dense: the elements tile a block of storage exactly."""
    required = 1
    for n, s in sorted(zip(t.shape, t.stride()), key=lambda p: p[1]):
        if n == 1:
            continue
        if s != required:
            return False
        required *= n
    return True


def overlap_status(a, b):
    """PyTorch's get_overlap_status: "full", "partial", "no" or "too_hard" (not checked)."""
    if a is b:
        return "full"
    if a.numel() == 0 or b.numel() == 0:
        return "no"
    if not _dense(a) or not _dense(b):
        return "too_hard"
    if storage_of(a) is not storage_of(b):
        return "no"
    a0, a1 = a._offset, a._offset + a.numel()
    b0, b1 = b._offset, b._offset + b.numel()
    if (a0, a1) == (b0, b1):
        return "full" if a.stride() == b.stride() else "partial"
    return "partial" if a0 < b1 and b0 < a1 else "no"


def replay_view(base, steps, record=False):
    """Remake a view of ``base`` by its ``ViewMeta.replay`` steps (PyTorch's view_fn replay), with
    the public view ops, so that transforms (vmap, jvp) see them too. ``record``: with grad mode
    on whatever the current mode (the regeneration of a view's grad_fn, as PyTorch's
    VariableHooks::grad_fn does)."""
    saved = grad_state.enabled
    if record:
        grad_state.enabled = True
    try:
        v = base
        for step in steps:
            if step[0] == "as_strided":
                v = ops.as_strided(v, *step[1:])
            else:
                v = apply_view(step[0], v, step[1])
    finally:
        grad_state.enabled = saved
    return v


# The graph (a conjugate view's CopySlices) and the Tensor (a stale view's regenerated grad_fn) replay
# views; both sit below the dispatcher, so they reach it through the core's table.
register(replay_view=replay_view)
