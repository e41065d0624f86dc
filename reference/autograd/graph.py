"""Graph nodes: the backward functions the engine runs, saved tensors, and the view/in-place nodes.

A node is created by every recorded operation. ``next_edges[i]`` is the edge ``(node, input_nr)``
along which the node sends the gradient for its ``i``-th forward input (``None``: that input
needs no gradient). A node with ``num_inputs`` gradient slots receives one gradient per forward
output. Names follow PyTorch's ``grad_fn`` names (``MulBackward0``, ``CopySlices``, ...).
"""

from __future__ import annotations

import itertools
import re
import weakref

import numpy as np

from reference.autograd import anomaly, graph_hooks, layout
from reference.autograd.grad_mode import grad_state, is_grad_enabled
from reference.autograd.graph_hooks import (  # torch.autograd.graph's public context managers
    disable_saved_tensors_hooks,  # noqa: F401
    save_on_cpu,  # noqa: F401
    saved_tensors_hooks,  # noqa: F401
)
from reference.autograd.table import ops, register
from reference.autograd.tensor import (
    DEFAULT,
    IN_CUSTOM_FUNCTION,
    MULTI_OUTPUT_NODE,
    NO_GRAD_MODE,
    Tensor,
    _alias,
    storage_like,
    storage_of,
    zeros_tensor,
)
from reference.scalar_types import tensor_type_name

_sequence = itertools.count()

BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward."
)


class AutogradError(RuntimeError):
    """An autograd rule was broken; the message is PyTorch's for the same situation."""


def short_name(node) -> str:
    """A node as PyTorch 2.13's error messages name it (:func:`short_node_name` of its name)."""
    return short_node_name(node.name())


def short_node_name(name: str) -> str:
    """A node's name as PyTorch 2.13's error messages write it: generated nodes without ``Backward``
    and without a ``0`` overload number (``ExpBackward0`` -> ``Exp``, ``FillBackward2`` -> ``Fill2``),
    hand-written ones by their C++ name (``torch::autograd::CopySlices``). The conformance harness
    reads other versions' messages (``TanhBackward0``) through it too (conformance/programs.py)."""
    match = re.fullmatch(r"(.+)Backward(\d*)", name)  # a custom Function's node: ``ExpBackward`` -> ``Exp``
    if match is None:
        return name
    return match.group(1) + ("" if match.group(2) in ("0", "") else match.group(2))


def describe(tensor) -> str:
    """``[torch.DoubleTensor [2, 3]]`` as PyTorch prints a tensor in autograd errors."""
    return f"[{tensor_type_name(tensor._data.dtype.name)} [{', '.join(str(s) for s in tensor.shape)}]]"


class Node:
    """A backward function: ``apply(grads)`` maps output gradients to input gradients."""

    __slots__ = ("next_edges", "seq", "num_inputs", "pre_hooks", "retains_grad", "__weakref__")

    def __init__(self, next_edges, num_inputs=1):
        self.next_edges = next_edges
        self.num_inputs = num_inputs
        self.seq = next(_sequence)
        self.pre_hooks = None  # {output_nr: [(key, hook), ...]} registered by Tensor.register_hook
        self.retains_grad = None  # {output_nr: weakref to the tensor} set by Tensor.retain_grad
        if anomaly.state.enabled:  # anomaly mode: remember the forward call's stack
            anomaly.store(self)

    def name(self) -> str:
        """PyTorch's name: generated nodes ``ExpBackward0``, hand-written ones ``torch::autograd::X``."""
        return f"torch::autograd::{type(self).__name__}"

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    def apply(self, grads):
        raise NotImplementedError(f"{self.name()} does not define apply")

    def input_meta(self, nr):
        """(shape, dtype) the gradient arriving at slot ``nr`` must have (None: not checked)."""
        return None, None

    def release(self):
        """Free saved state after a backward pass that does not retain the graph."""

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved (PyTorch's SavedVariable)."""

    __slots__ = ("tensor", "version", "is_output", "node", "output_nr", "hooked", "view_node", "output")

    def __init__(self, tensor, is_output=False, node=None, view_node=None, cycle_free=False):
        self.tensor = tensor
        self.version = tensor._vc[0]
        self.is_output = is_output
        self.node = node
        self.output_nr = tensor._output_nr
        self.hooked = None
        self.output = None
        # an in-place op's result on a view: PyTorch keeps a *weak* pointer to the view's grad_fn
        # at save time and names it in the stale-tensor error while it lives (the view still holds
        # it), else the op's own node (the view's grad_fn was regenerated and the old one freed)
        self.view_node = None if view_node is None else weakref.ref(view_node)
        if cycle_free:  # an output kept as a SavedOutput (see there), ``node`` not held either
            self.output = SavedOutput(tensor)
            self.tensor = None
            return
        # saved_tensors_hooks active: keep only what pack returns (never for a wrapped number)
        if graph_hooks._stack and not tensor._wrapped:
            self.hooked = pack_saved(self, tensor)
            self.tensor = None

    def unpack(self, node=None):
        """The saved tensor, checked against in-place changes since it was saved. ``node``: the
        node the tensor was saved by, which a :class:`SavedOutput` needs to rebuild its output."""
        if self.hooked is not None:
            return unpack_saved(self)
        t = self.tensor
        if t is None and self.output is not None:
            t = self.output.tensor(node)
        if t is None:
            raise AutogradError(BACKWARD_TWICE)
        if t._vc[0] != self.version:
            # PyTorch names the node that saved an output, and an input's *current* grad_fn (for a
            # view that access may itself raise the multi-output / no_grad view error).
            alive = self.view_node() if self.view_node is not None else None
            owner = (alive or self.node or node) if self.is_output else t.grad_fn
            which = f", which is output {self.output_nr} of {short_name(owner)}," if owner is not None else ""
            raise AutogradError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: {describe(t)}{which} is at version {t._vc[0]}; expected version "
                f"{self.version} instead. "
                + (
                    "Hint: the backtrace further above shows the operation that failed to compute its gradient. "
                    "The variable in question was changed in there or anywhere later. Good luck!"
                    if anomaly.state.enabled
                    else "Hint: enable anomaly detection to find the operation that failed to compute its "
                    "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
                )
            )
        return t

    def release(self):
        self.tensor = None
        self.hooked = None
        self.output = None


class SavedOutput:
    """An op's own output saved for its backward without a reference cycle (PyTorch's SavedVariable
    keeps an output's data and version counter, not the output with its grad_fn).

    The output holds its node (``_grad_fn``) and the node holds what it saved: saving the output
    itself would make every such node a cycle that only Python's cycle collector frees, so a graph
    dropped by the user (or run without ``retain_graph``) would linger, and the collector's passes
    over the growing graph would be part of every op's cost. What is kept instead: a weak reference
    to the output (unpacked as itself while anyone holds it) and its array, storage and
    version counter, from which an output nobody holds any more is rebuilt on unpack as PyTorch
    rebuilds one: the same data and version counter, with ``grad_fn`` the node that saved it.

    Only for a plain root tensor made while no forward-mode or vmap level exists: nothing but its
    data, version counter and history can matter to a formula then (a transform's tangents or
    batched values live on the tensor object, given to it after the op that saved it returns, and
    a view has a base and view meta).
    """

    __slots__ = ("ref", "cls", "data", "storage", "vc", "output_nr")

    def __init__(self, tensor):
        self.ref = weakref.ref(tensor)
        self.cls = type(tensor)
        self.data = tensor._data
        self.storage = tensor._storage
        self.vc = tensor._vc
        # which output of the node it is; None for an output with no history (an integer output)
        self.output_nr = tensor._output_nr if tensor._grad_fn is not None else None

    def tensor(self, node):
        t = self.ref()
        # the output itself while it lives and is still this node's output; rebuilt otherwise, as
        # PyTorch unpacks an output: with the saving node as grad_fn even after ``y.detach_()`` or
        # a custom Function made ``y`` its own output
        if t is not None and (
            self.output_nr is None or (t._grad_fn is node and t._output_nr == self.output_nr)
        ):
            return t
        t = self.cls.__new__(self.cls)
        t._data = self.data
        t._vc = self.vc
        if self.storage is not None:
            t._storage = self.storage
        if self.output_nr is not None:
            if node is None:
                raise AssertionError("a SavedOutput is unpacked by the node that saved it")
            t._grad_fn = node
            t._output_nr = self.output_nr
        return t


class Context:
    """What a VJP formula sees: unpacked saved tensors, the op's parameters, input metadata."""

    def __init__(self, params, shapes, dtypes, needs, aux):
        if params:
            self.__dict__.update(params)
        self.params = params
        self.shapes = shapes
        self.dtypes = dtypes
        self.needs = needs
        self.aux = aux


class RuleNode(Node):
    """The node of one table rule (``reference.ops.rules``): runs the rule's VJP."""

    __slots__ = (
        "rule",
        "params",
        "saved",
        "reads",
        "shapes",
        "dtypes",
        "needs",
        "aux",
        "out_meta",
        "released",
        "complex_meta",
    )

    def __init__(self, rule, next_edges, params, shapes, dtypes, needs, aux=None, out_meta=()):
        # Node.__init__ written out (one node per recorded op: the call is part of the per-op cost)
        self.next_edges = next_edges
        self.num_inputs = len(out_meta)
        self.seq = next(_sequence)
        self.pre_hooks = None
        self.retains_grad = None
        if anomaly.state.enabled:
            anomaly.store(self)
        self.rule = rule
        self.params = params
        self.saved = {}
        self.reads = None  # Rule.reads: ((name, tensor, version), ...)
        self.shapes = shapes
        self.dtypes = dtypes
        self.needs = needs
        self.aux = aux
        self.out_meta = out_meta  # [(shape, dtype)] per forward output
        self.released = False
        # a complex dtype among the inputs and outputs: known when the forward records it (None:
        # not known, _complex looks)
        self.complex_meta = None

    def set_outputs(self, outs, aux):
        """Known once the forward has run (the node is made before it, as PyTorch does)."""
        self.out_meta = [(o._data.shape, o._data.dtype) for o in outs]
        self.num_inputs = len(outs)
        self.aux = aux

    def name(self) -> str:
        return self.rule.node

    @property
    def next_functions(self):
        hidden = self.rule.hidden  # (Rule.hidden: inputs PyTorch's node does not have)
        if not hidden:
            return super().next_functions
        edges = zip(self.next_edges, self.rule.inputs)
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e, name in edges if name not in hidden)

    def input_meta(self, nr):
        return self.out_meta[nr]

    def apply(self, grads):
        rule = self.rule
        ctx = Context(self.params, self.shapes, self.dtypes, self.needs, self.aux)
        attrs = ctx.__dict__  # (plain attributes: writing the dict is setattr without the call)
        for name in rule.saves:  # a tensor not saved (an absent optional input) reads as None
            attrs[name] = None
        for name, saved in self.saved.items():  # unpacked (and checked) even if no gradient arrived
            t = saved.tensor  # (unpack's common case, tested inline: a tensor of the saved version)
            attrs[name] = t if t is not None and t._vc[0] == saved.version else saved.unpack(self)
        if rule.reads:  # an input read unsaved: None once modified in place (Rule.reads)
            for name in rule.reads:
                attrs[name] = None
            for name, t, version in self.reads or ():
                if t._vc[0] == version:
                    attrs[name] = t
        for g in grads:
            if g is not None:
                break
        else:  # no gradient arrived
            return [None] * len(self.next_edges)
        if rule.outputs == 1:
            g = grads[0]
        elif rule.undefined_grads:  # the VJP handles outputs nobody used (None) itself
            g = tuple(grads)
        else:  # multi-output ops: an output nobody used contributes a zero gradient
            like = next(gi for gi in grads if gi is not None)  # (zeros on the device of the others)
            g = tuple(
                gi if gi is not None else zeros_tensor(shape, dtype, like)
                for gi, (shape, dtype) in zip(grads, self.out_meta)
            )
        # (a view's formulas move elements, which commutes with conj: run as they are, as PyTorch
        # does, so a conjugate gradient stays a conjugate view through them)
        # (_complex's common case inlined: a real node and a real gradient)
        if self.complex_meta is False and type(g) is not tuple and (g is None or g._data.dtype.kind != "c"):
            conj = False
        else:
            conj = rule.complex_grads == "conjugate" and rule.view is None and self._complex(g)
        if conj:  # PyTorch's convention from the plain formulas: conj(formula(conj(grad))) (rule.py)
            g = _conj_grads(g)
        if rule.vjp is not None:
            out = list(rule.vjp(ctx, g))
        else:
            out = [f(ctx, g) if need else None for f, need in zip(rule.grads, self.needs)]
        return _conj_grads(out) if conj else out

    def _complex(self, g):
        """A complex tensor among the node's inputs, outputs or incoming gradients."""
        # plain loops: this runs for every node in every backward pass
        if self.complex_meta:
            return True
        if self.complex_meta is None:
            for dt in self.dtypes:
                if dt is not None and dt.kind == "c":
                    return True
            for _, dt in self.out_meta:
                if dt.kind == "c":
                    return True
        for x in g if isinstance(g, tuple) else (g,):
            if x is not None and x._data.dtype.kind == "c":
                return True
        return False

    def release(self):
        self.released = True
        self.reads = None
        for saved in self.saved.values():
            saved.release()


def _conj_grads(g):
    """Conjugate the complex tensors of a gradient or a tuple/list of them (others unchanged)."""
    if isinstance(g, (tuple, list)):
        return type(g)(_conj_grads(x) for x in g)
    if g is None or g.dtype.kind != "c":
        return g
    return ops.conj_physical(g)


class AccumulateGrad(Node):
    """The sink of a leaf: adds the incoming gradient into ``leaf.grad`` (never overwrites)."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__([], 1)
        self.variable = variable
        self.seq = float("inf")  # PyTorch gives AccumulateGrad UINT64_MAX: it runs as soon as it is ready

    def input_meta(self, nr):
        return self.variable.shape, self.variable.dtype

    def apply(self, grads):
        new = grads[0]
        var = self.variable
        if new is None:
            return []
        tracker = ops.error_tracker()  # the error model follows the gradient into .grad (reference.errors)
        before = tracker.grad_errors(var.grad, new) if tracker is not None else None
        if var.grad is None:
            # PyTorch never lets .grad alias a tensor the user can see: it steals or clones.
            stolen = not is_grad_enabled()
            strides = layout.grad_strides(new, var, stolen=stolen)
            if stolen and new._lazy and tuple(strides) == new.stride():
                var.grad = new._copy()  # stolen as it is: detach() keeps a conjugate gradient's bit
            else:
                grad = new.clone() if not stolen else Tensor._copy(new.detach())  # (the values resolved)
                var.grad = layout.relayout_(grad, strides)
        elif not is_grad_enabled():
            var.grad._accumulate_inplace(new)  # .grad keeps its identity, as in PyTorch
        else:
            var.grad = var.grad + new
        if tracker is not None:
            tracker.accumulated(var.grad, *before)
        post_hooks = getattr(var, "_post_acc_hooks", None)  # register_post_accumulate_grad_hook
        for _, hook in list(post_hooks or ()):
            res = hook(var)
            if res is not None:
                raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}'")
        return []


class GraphRoot(Node):
    """The start of a backward pass: hands the output gradients to the outputs' edges."""

    __slots__ = ("grads",)

    def __init__(self, edges, grads):
        super().__init__(edges, 0)
        self.grads = grads
        self.seq = float("inf")

    def apply(self, grads):
        return list(self.grads)


def storage_indices(size, stride, offset):
    """Flat storage index of every element of a strided geometry (an int64 array of ``size``)."""
    idx = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return idx


def index_in_base(base, size, stride, offset):
    """Row-major position, within ``base``, of each element of the view (size, stride, offset).

    For the usual base (a contiguous root at offset 0) this is the storage index itself; a base
    made by ``detach()`` of a view has its own strides, so storage positions are mapped back.
    """
    pos = storage_indices(size, stride, offset)
    if base._offset == 0 and base._data.flags.c_contiguous:
        return pos
    base_pos = storage_indices(base.shape, base.stride(), base._offset).ravel()
    inverse = np.full(int(base_pos.max(initial=0)) + 1, -1, dtype=np.int64)
    inverse[base_pos] = np.arange(base_pos.size)
    return inverse[pos]


class CopySlices(Node):
    """The new history of a base after an in-place op on one of its views.

    Gradient for the base: the incoming gradient, with the view's region replaced by what the
    in-place op's node ``fn`` returns for its ``self``; the other inputs of ``fn`` get its other
    gradients. The view's old history is dropped: its value was part of the base.
    """

    __slots__ = ("fn", "index", "base_shape", "base_dtype", "replay", "base")

    def __init__(self, base, base_edge, view_size, view_stride, view_offset, fn, replay=None):
        super().__init__([base_edge] + list(fn.next_edges[1:]), 1)
        self.fn = fn
        self.base_shape = base.shape
        self.base_dtype = base.dtype
        self.replay = replay
        if replay is None:
            self.index = index_in_base(base, view_size, view_stride, view_offset)
        else:  # the view is no region of the base's values (conjugate, negative, view_as_real):
            # it is remade from the gradient by its replay steps (PyTorch's view_fn), so only the
            # base's geometry is kept (PyTorch's TensorGeometry: no reference to its storage)
            self.index = None
            self.base = (base.shape, base.stride(), base._offset, storage_of(base).size)

    def input_meta(self, nr):
        return self.base_shape, self.base_dtype

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return [None] * len(self.next_edges)
        if self.fn is None:
            raise AutogradError(BACKWARD_TWICE)
        if self.replay is not None:
            return self._apply_replayed(g)
        res = self.fn.apply([ops.take(g, self.index)])
        out = [None] * len(self.next_edges)
        out[0] = ops.put(g, self.index, res[0]) if res[0] is not None else ops.put(g, self.index, 0.0)
        out[1:] = res[1:]
        return out

    def _apply_replayed(self, g):
        """PyTorch's CopySlices with a view_fn: the gradient in the base's layout, the view remade on
        it, the in-place op's gradient for ``self`` written back through that view."""
        result = storage_like(*self.base, g)
        grad_slice = ops.replay_view(result, self.replay)
        res = self.fn.apply([ops.clone(grad_slice)])
        if res[0] is not None:
            ops.copy_(grad_slice, res[0])
        else:
            ops.zero_(grad_slice)
        return [result] + list(res[1:])

    def release(self):
        if self.fn is not None:
            self.fn.release()
        self.fn = None


def move_retains_grad(tensor, old_fn, old_nr):
    """After ``tensor`` got a new grad_fn, its retain_grad hook moves along (PyTorch 2.x)."""
    if old_fn is None or not old_fn.retains_grad:
        return
    ref = old_fn.retains_grad.get(old_nr)
    if ref is not None and ref() is tensor:
        del old_fn.retains_grad[old_nr]
        new_fn = tensor._grad_fn
        if new_fn.retains_grad is None:
            new_fn.retains_grad = {}
        new_fn.retains_grad[tensor._output_nr] = weakref.ref(tensor)


# ---- the history of a tensor: its edge, in-place checks, rebase, a view's regenerated grad_fn ----


def gradient_edge(t):
    """The edge a gradient for ``t`` flows along: its grad_fn, or its AccumulateGrad for a leaf."""
    fn = t._grad_fn if t._view is None else t.grad_fn  # (a view's grad_fn may need regenerating)
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        acc = t._accumulator() if t._accumulator is not None else None
        if acc is None:
            acc = AccumulateGrad(t)
            t._accumulator = weakref.ref(acc)
        return (acc, 0)
    return None


def check_view_rebase(view, indirect):
    """PyTorch's handle_view_on_rebase: views from multi-output ops or no_grad may not be rebased."""
    meta = view._view.creation_meta
    if meta == DEFAULT:
        return
    fn = view._grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    if meta == NO_GRAD_MODE or fn is None:
        prefix = (
            f"Output {view._output_nr} of {short_name(fn)} is a view of a view which was created in"
            if fn is not None
            else "A view was created in"
        )
        msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {view._output_nr} of {short_name(fn)} is a view and {modified} modified inplace."
    if meta == IN_CUSTOM_FUNCTION:
        msg += (
            " This view was created inside a custom Function (or because an input was returned as-is) and the "
            "autograd logic to handle view+inplace would override the custom backward associated with the "
            "custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
            "cloning the output of the custom Function."
        )
    elif meta == MULTI_OUTPUT_NODE:
        msg += (
            " This view is the output of a function that returns multiple views. Such functions do not "
            "allow the output views to be modified inplace. You should replace the inplace operation by an "
            "out-of-place one."
        )
    else:
        msg += (
            " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
            "code by moving both the view and the inplace either both inside the no_grad block (if you "
            "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
        )
    raise AutogradError(msg)


def check_inplace(t, requires_grad):
    """PyTorch's check_inplace: what an in-place op on ``t`` may not do when it records a"""
    if requires_grad and grad_state.enabled:
        if t._view is not None:
            check_view_rebase(t, indirect=False)
            if t.requires_grad and t._base._grad_fn is None:
                raise AutogradError(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation."
                )
        if t.requires_grad and t._grad_fn is None:  # C++ is_leaf: no grad_fn regeneration here
            raise AutogradError("a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_history(t, fn):
    """After an in-place op recorded as ``fn``: ``t`` (or, for a view, its base) gets the new history."""
    if t._view is not None:
        base = t._base
        copy_slices = CopySlices(
            base, gradient_edge(base), t.shape, t.stride(), t._offset, fn, t._view.replay
        )
        old_fn, old_nr = base._grad_fn, base._output_nr
        base._grad_fn = copy_slices
        base._output_nr = 0
        move_retains_grad(base, old_fn, old_nr)
        _ = t.grad_fn  # regenerate the view's own grad_fn from the base (AsStridedBackward0)
        return
    old_fn, old_nr = t._grad_fn, t._output_nr
    t._grad_fn = fn
    t._output_nr = 0
    move_retains_grad(t, old_fn, old_nr)


def regenerate_grad_fn(view):
    """Give ``view`` a new grad_fn after an in-place write elsewhere in its storage: its history
    is regenerated from its base's (an indirect rebase, PyTorch's NOTE [ View + Inplace
    detection ]). Called by ``Tensor.grad_fn`` through the core's table (the Tensor sits below the
    graph)."""
    vm = view._view
    check_view_rebase(view, indirect=True)
    old_fn, old_nr = view._grad_fn, view._output_nr
    base = view._base
    vm.attr_version = view._vc[0]
    if vm.replay is not None:  # remade from the base by its steps (PyTorch's view_fn)
        remade = ops.replay_view(base, vm.replay, record=True)
        view._grad_fn, view._output_nr = remade._grad_fn, remade._output_nr
    else:
        view._grad_fn = AsStridedNode(base, view.shape, view.stride(), view._offset)
        view._output_nr = 0
    move_retains_grad(view, old_fn, old_nr)


class AsStridedNode(Node):
    """The regenerated grad_fn of a view whose storage was written in place (AsStridedBackward0)."""

    __slots__ = ("base_shape", "index", "dtype")

    def __init__(self, base, size, stride, offset):
        super().__init__([gradient_edge(base)], 1)
        self.base_shape = base.shape
        self.dtype = base.dtype
        self.index = index_in_base(base, size, stride, offset)

    def name(self):
        return "AsStridedBackward0"

    def input_meta(self, nr):
        return self.index.shape, self.dtype

    def apply(self, grads):
        g = grads[0]
        return [None if g is None else ops.scatter_add(g, self.index, self.base_shape)]


# ---- saved tensors under saved_tensors_hooks (reference.autograd.graph_hooks) ---------------------

PACK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
    "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please open "
    "an issue if you need to perform in-place operations on the input to a pack hook."
)


class _Packed:
    """What a SavedTensor keeps when hooks are active: the packed value and the saved tensor's
    metadata (PyTorch's SavedVariable::save_metadata), never the tensor itself."""

    __slots__ = ("value", "unpack_hook", "grad_fn", "output_nr", "accumulator", "requires_grad", "vc")

    def __init__(self, value, unpack_hook, grad_fn, output_nr, accumulator, requires_grad, vc):
        self.value = value
        self.unpack_hook = unpack_hook
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.accumulator = accumulator
        self.requires_grad = requires_grad
        self.vc = vc


def pack_saved(saved, tensor):
    """Run the innermost pack hook on ``tensor`` (being saved as ``saved``), under no_grad."""
    pack_hook, unpack_hook = graph_hooks._stack[-1]
    grad_fn = accumulator = None
    output_nr = saved.output_nr
    if tensor.requires_grad:
        if saved.is_output:
            grad_fn = saved.node  # PyTorch: the node that saved its own output (weakly held there)
        else:
            grad_fn = tensor.grad_fn
            output_nr = tensor._output_nr
            if grad_fn is None:  # a leaf: the unpacked tensor feeds the same AccumulateGrad
                edge = gradient_edge(tensor)  # None for a no_grad view of a leaf: no gradient flows
                accumulator = None if edge is None else edge[0]
    version = tensor._vc[0]
    prev = grad_state.enabled
    grad_state.enabled = False
    try:
        value = pack_hook(tensor)
    finally:
        grad_state.enabled = prev
    if tensor._vc[0] != version:
        raise RuntimeError(PACK_INPLACE)
    return _Packed(value, unpack_hook, grad_fn, output_nr, accumulator, tensor.requires_grad, tensor._vc)


def unpack_saved(saved):
    """Run the unpack hook; the result gets the saved tensor's history and version counter."""
    p = saved.hooked
    data = p.unpack_hook(p.value)
    if not isinstance(data, Tensor):
        raise TypeError(
            f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type(data).__name__}"
        )
    var = _alias(data)
    var._vc = p.vc
    if p.grad_fn is not None:
        var._grad_fn = p.grad_fn
        var._output_nr = p.output_nr
    elif p.requires_grad:
        # PyTorch's SavedVariable::unpack makes a leaf that requires grad whenever the saved tensor
        # did, even with no AccumulateGrad to feed (a no_grad view of a non-leaf): a reentrant
        # checkpoint that saved such an input recomputes outputs that require grad.
        var._requires_grad = True
        if p.accumulator is not None:
            var._accumulator = weakref.ref(p.accumulator)
    return var


# Tensor.grad_fn reads a stale view's regenerated grad_fn: the Tensor sits below the graph, so it
# reaches it through the core's table.
register(regenerate_grad_fn=regenerate_grad_fn)
