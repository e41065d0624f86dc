"""``reference.autograd.Function``: user-defined differentiable functions, with PyTorch's protocol.

A subclass gives ``forward`` and ``backward`` (or ``vjp``) as staticmethods, either
``forward(ctx, *args)`` or the newer ``forward(*args)`` + ``setup_context(ctx, inputs, output)``,
and is called with ``MyFn.apply(*args)``. As in PyTorch (``torch/autograd/function.py``,
``python_function.cpp``, ``custom_function.cpp``), the ctx *is* the backward node: an instance of
``MyFnBackward``, the class the metaclass makes for every Function, so ``y.grad_fn`` prints as
``<MyFnBackward>`` and its ``saved_tensors`` can be read from it.

What ``apply`` does, in PyTorch's order:

1. The node is made, with an edge to each tensor input's history (none when grad mode is off
   or no input requires grad); ``ctx.needs_input_grad`` says which arguments need a gradient.
2. ``forward`` (and ``setup_context``) run under ``no_grad``.
3. Outputs are wrapped: a differentiable output gets the node as its ``grad_fn``; an input
   returned as-is comes back as a new view of it; a view output (of an input or not) is marked
   as made in a custom Function, so an in-place write on it raises PyTorch's error; an input
   passed to ``ctx.mark_dirty`` has its version bumped and its history rebased onto the node
   (through ``CopySlices`` when it is a view); ``ctx.mark_non_differentiable`` outputs and
   integer outputs do not require grad.
4. ``ctx.save_for_backward`` tensors are saved with their versions (after step 3); reading
   ``ctx.saved_tensors`` in backward checks them and raises PyTorch's "modified by an inplace
   operation" error naming the version.

In backward, gradients of unused outputs are zeros unless ``ctx.set_materialize_grads(False)``;
the result must have one entry per forward argument (extra trailing ``None`` allowed), ``None``
for non-tensor arguments; the engine then checks shapes and casts dtypes as for any node.

Under :mod:`reference.func` transforms (which, as in torch.func, require the ``setup_context``
form): ``jvp``/``jacfwd`` call the ``jvp`` staticmethod (tangents of inputs without one are
zeros, ``ctx.saved_tensors`` are those given to ``ctx.save_for_forward``); ``vmap`` calls the
``vmap`` staticmethod ``vmap(info, in_dims, *args) -> (outputs, out_dims)`` on the unbatched
values, or with ``generate_vmap_rule = True`` runs the Function as torch.func's
``vmapify_autograd_function`` does: forward, setup_context, backward and jvp each under a vmap.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from reference.autograd import batching, graph, levels
from reference.autograd.grad_mode import grad_state, no_grad, set_grad_enabled
from reference.autograd.graph import check_view_rebase, gradient_edge, rebase_history
from reference.autograd.table import ops
from reference.autograd.tensor import (
    IN_CUSTOM_FUNCTION,
    Tensor,
    _alias,
    is_floating_dtype,
    make_view,
    zeros_tensor,
)

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "FunctionMeta", "once_differentiable"]

_FUNCTORCH_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it "
    "must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html"
)
_DIRTY_VIEW_MULTI = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
    "return more than one Tensor. This is not supported by the current autograd engine. You should either "
    "make sure the input is not a view (using .clone() for example) or make your Function only return one "
    "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single "
    "Tensor and a second one that does the other operations). You can ask on the forum "
    "https://discuss.pytorch.org/ if you need help to do this change."
)


class FunctionCtx:
    """What ``forward``/``setup_context`` use to talk to ``backward`` (PyTorch's FunctionCtx)."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}"
                )
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError(  # PyTorch's type and message
                    "save_for_forward expects all arguments to be tensors; you should save non-tensors as "
                    "attributes on ctx."
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class BackwardCFunction(graph.Node, FunctionCtx):
    """The node (and ctx) of one call of a Function; ``MyFnBackward`` subclasses it."""

    _forward_cls = None

    def __init__(self, next_edges=(), num_inputs=0):
        graph.Node.__init__(self, list(next_edges), num_inputs)
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None  # [SavedTensor | None] once the outputs are wrapped
        self._released = False
        self._in_jvp = False
        self._is_tensor_arg = ()
        self._out_meta = ()  # per forward output: (shape, dtype) for tensors, None otherwise

    def name(self):
        return type(self).__name__

    def input_meta(self, nr):
        meta = self._out_meta[nr] if nr < len(self._out_meta) else None
        return meta if meta is not None else (None, None)

    @property
    def saved_tensors(self):
        if self._in_jvp:
            return tuple(getattr(self, "saved_for_forward", ()))
        if self._released:
            raise graph.AutogradError(graph.BACKWARD_TWICE)
        if self._saved is None:
            return ()
        return tuple(None if s is None else s.unpack() for s in self._saved)

    def release(self):
        self._released = True
        if self._saved is not None:
            for s in self._saved:
                if s is not None:
                    s.release()

    def _user_backward(self):
        cls = self._forward_cls
        backward_fn, vjp_fn = _class_dict_get(cls, "backward"), _class_dict_get(cls, "vjp")
        if backward_fn is not None and vjp_fn is not None:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
                "only implement one of them."
            )
        return cls.vjp if vjp_fn is not None else cls.backward

    def apply(self, grads):
        user_fn = self._user_backward()
        args = []
        for g, meta in zip(grads, self._out_meta):
            if g is None and meta is not None and self.materialize_grads:
                like = next((gi for gi in grads if gi is not None), None)  # on the others' device
                g = zeros_tensor(*meta, like)
            args.append(g)
        result = user_fn(self, *args)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._is_tensor_arg)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected {n}, got "
                f"{len(result)})"
            )
        out = []
        for i, (r, is_tensor) in enumerate(zip(result, self._is_tensor_arg)):
            if not is_tensor:
                if r is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at position {i + 1}, "
                        "but the corresponding forward input was not a Variable"
                    )
                continue
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            out.append(r)
        return out


def _class_dict_get(cls, name):
    """The attribute ``name`` as defined by a user subclass of Function (None: PyTorch's default)."""
    for klass in cls.__mro__:
        if klass in (Function, _SingleLevelFunction):
            return None
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


class FunctionMeta(type):
    """Makes ``<Name>Backward``, the node class of every Function subclass."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(FunctionCtx, metaclass=FunctionMeta):
    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to "
            "use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )


class Function(_SingleLevelFunction):
    """Base class of user-defined differentiable functions (``torch.autograd.Function``)."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so "
            "you should invoke them on the class itself. Instantiating an autograd function will raise an "
            "error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod or set "
            "generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        has_setup = _has_setup_context(cls)
        if has_setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if not _transforms_active():
            return _apply(cls, args, kwargs)
        if not has_setup:
            raise RuntimeError(_FUNCTORCH_SETUP_CONTEXT)
        return _dispatch(cls, args)


def _has_setup_context(cls):
    return _class_dict_get(cls, "setup_context") is not None


def _has_vmap(cls):
    return _class_dict_get(cls, "vmap") is not None


def _transforms_active():
    return levels.state.visible > 0 or ops.transforms_running()


# ---- one call on the engine ---------------------------------------------------------------------


def _call_forward(cls, ctx, args, kwargs):
    if _has_setup_context(cls):
        out = cls.forward(*args, **kwargs)
        cls.setup_context(ctx, args, out)
        return out
    return cls.forward(ctx, *args, **kwargs)


def _apply(cls, args, kwargs=None, forward=None):
    """``cls.apply(*args)`` recorded on the engine; ``forward(ctx, args)`` computes the outputs
    (default: the Function's own forward under no_grad)."""
    kwargs = kwargs or {}
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    executable = grad_state.enabled and any(t.requires_grad for t in tensors)
    ctx = cls._backward_cls(
        [gradient_edge(t) if executable else None for t in tensors],
    )
    ctx._is_tensor_arg = is_tensor
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    if forward is None:
        with no_grad():
            raw = _call_forward(cls, ctx, args, kwargs)
    else:
        raw = forward(ctx, args)
    return _wrap_outputs(cls, ctx, args, raw, executable)


def _wrap_outputs(cls, ctx, args, raw, executable):
    is_tuple = isinstance(raw, tuple)
    outs = list(raw) if is_tuple else [raw]
    dirty = [t for t in getattr(ctx, "dirty_tensors", ()) if t is not None]
    dirty_ids = {id(t) for t in dirty}
    non_diff_ids = {id(t) for t in getattr(ctx, "non_differentiable", ()) if t is not None}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    edge_position = {id(a): k for k, a in enumerate(a for a in args if isinstance(a, Tensor))}
    to_save = getattr(ctx, "to_save", ())
    saved_ids = {id(t) for t in to_save if t is not None}
    setup_form = _has_setup_context(cls)

    for t in dirty:
        t._vc[0] += 1  # PyTorch bumps the version of every tensor given to mark_dirty
    out_ids = {id(o) for o in outs}
    if any(id(t) not in out_ids for t in dirty):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as output. The "
            "inputs that are modified inplace must all be outputs of the Function."
        )
    num_outputs = len(outs)
    ctx.num_inputs = num_outputs
    ctx._out_meta = tuple((o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outs)

    for i, var in enumerate(outs):
        if not isinstance(var, Tensor):
            continue
        is_input = id(var) in input_ids
        is_modified = id(var) in dirty_ids
        differentiable = executable and id(var) not in non_diff_ids and is_floating_dtype(var.dtype)
        if not differentiable:
            if not var.requires_grad:
                if is_input and not is_modified:
                    var = _view_as_self(var)
            elif is_input:
                var = _alias(var)
            elif var._view is None:
                var._grad_fn = None
        elif is_modified:
            if var._grad_fn is None and var.requires_grad:  # C++ is_leaf: a no_grad view of a leaf is one
                raise graph.AutogradError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            if not is_input:
                msg = (
                    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                    "mutated should be passed to ctx.mark_dirty()."
                )
                if var._view is not None:  # a view of an intermediate: an error since PyTorch 2.8
                    raise RuntimeError(msg)
                warnings.warn(msg, UserWarning, stacklevel=4)
            if var._view is not None and num_outputs > 1:
                raise RuntimeError(_DIRTY_VIEW_MULTI)
            if var._view is not None:  # PyTorch's check_inplace order: the view's creation meta first
                check_view_rebase(var, indirect=False)
            if var._view is not None and var._base._grad_fn is None and var._base.requires_grad:
                raise graph.AutogradError(
                    "a view of a leaf Variable that requires grad is being used in an in-place operation."
                )
            var.grad = None
            var._hooks = None
            if var._view is not None:
                _rebase_view(var, ctx, edge_position[id(var)])
            else:
                rebase_history(var, ctx)
            if var._view is None:
                var._output_nr = i
        elif is_input:
            if setup_form and id(var) in saved_ids:
                raise RuntimeError(
                    "An input that has been returned as-is as output is being saved for backward. This is not "
                    "supported if you override setup_context. You should return and save a view of the input "
                    "instead, e.g. with x.view_as(x) or setup ctx inside the forward function itself."
                )
            var = _view_as_self(var)
            var._grad_fn, var._output_nr = ctx, i
        else:
            var._grad_fn, var._output_nr = ctx, i
        if not (is_input and is_modified) and var._view is not None:
            var._view.creation_meta = IN_CUSTOM_FUNCTION
            var._view.attr_version = var._vc[0]
        outs[i] = var

    if executable:
        out_ids = {id(o) for o in outs}
        ctx._saved = [
            None if t is None else graph.SavedTensor(t, is_output=id(t) in out_ids, node=ctx) for t in to_save
        ]
    ctx.to_save = None
    return tuple(outs) if is_tuple else outs[0]


class _CopySlices(graph.CopySlices):
    """CopySlices for a custom Function that modified in place an input view at edge ``pos``.

    PyTorch's CopySlices assumes the view is the node's *first* input (true of every in-place
    ATen op, ``self``); for a Function whose dirty view is another argument, PyTorch 2.13 sends the
    view's gradient to the base and the first input's gradient into the view's region (a wrong
    gradient; see tests/autograd/test_custom_function.py). Here the view's slot is ``pos``.
    """

    __slots__ = ("pos",)

    def __init__(self, base, view, fn, pos):
        graph.Node.__init__(self, list(fn.next_edges), 1)
        self.next_edges[pos] = gradient_edge(base)
        self.fn, self.pos = fn, pos
        self.base_shape, self.base_dtype = base.shape, base.dtype
        self.index = graph.index_in_base(base, view.shape, view.stride(), view._offset)

    def name(self):
        return "torch::autograd::CopySlices"

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return [None] * len(self.next_edges)
        if self.fn is None:
            raise graph.AutogradError(graph.BACKWARD_TWICE)
        res = list(self.fn.apply([ops.take(g, self.index)]))
        mine = res[self.pos]
        res[self.pos] = ops.put(g, self.index, mine if mine is not None else 0.0)
        return res


def _rebase_view(view, fn, pos):
    """``rebase_history`` for a dirty input view at edge ``pos`` of ``fn``: the base's new history
    is a CopySlices around ``fn``; the view's grad_fn is regenerated from it (AsStridedBackward0)."""
    if pos == 0:
        rebase_history(view, fn)
        return
    base = view._base
    old_fn, old_nr = base._grad_fn, base._output_nr
    base._grad_fn, base._output_nr = _CopySlices(base, view, fn, pos), 0
    graph.move_retains_grad(base, old_fn, old_nr)
    _ = view.grad_fn


def _view_as_self(t):
    """A new view with ``t``'s geometry (PyTorch never returns an input object as an output)."""
    out = make_view(t, t.shape, t.stride(), t._offset, IN_CUSTOM_FUNCTION)
    if t._batched is not None:
        out._batched = dict(t._batched)
    if t._tangents is not None:
        out._tangents = dict(t._tangents)
    return out


# ---- once_differentiable ----------------------------------------------------------------------------


class DelayedError(graph.Node):
    """The grad_fn of a once_differentiable backward's outputs: differentiating it raises."""

    __slots__ = ("msg",)

    def __init__(self, msg, edges):
        super().__init__(edges, len(edges))
        self.msg = msg

    def name(self):
        return "torch::autograd::Error"

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Run ``backward`` under no_grad; if a gradient of it is ever asked for, raise (PyTorch's)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not grad_state.enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        fakes = []
        for o in outs:
            if o is not None:
                o = o.detach()
                o.requires_grad = True
            fakes.append(o)
        err = DelayedError(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            [None if f is None else gradient_edge(f) for f in fakes],
        )
        wrapped = []
        for i, f in enumerate(fakes):
            if f is None:
                wrapped.append(None)
                continue
            w = _alias(f)
            w._grad_fn, w._output_nr = err, i
            wrapped.append(w)
        return tuple(wrapped) if isinstance(outputs, tuple) else wrapped[0]

    return wrapper


# ---- under reference.func transforms ----------------------------------------------------------------


def _dispatch(cls, args):
    """The innermost transform level holding a tensor argument runs the call (torch.func's
    custom_function_call); with none, the engine records it."""
    index = levels.owner([a for a in args if isinstance(a, Tensor)]) if levels.state.visible else None
    if index is None:
        return _apply(cls, args)
    if levels.vmap_level(index) is None:
        return _apply_jvp(index, cls, args)
    return _apply_vmap(index, cls, args)


def _apply_jvp(index, cls, args):
    """A jvp level: the primal one level down, the tangents from the ``jvp`` staticmethod."""
    level = levels.state.stack[index]
    with levels.lowered(index):
        out = _dispatch(cls, args)
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        cls.setup_context(ctx, args, out)
        tangents = []
        for a in args:
            if not isinstance(a, Tensor):
                tangents.append(None)
                continue
            t = levels.tangent(a, level)
            tangents.append(t if t is not None else ops.zeros_like(a))
        ctx._in_jvp = True
        got = cls.jvp(ctx, *tangents)
        ctx._in_jvp = False
    outs = out if isinstance(out, tuple) else (out,)
    got = got if isinstance(got, tuple) else (got,)
    for o, t in zip(outs, got):
        if isinstance(o, Tensor) and isinstance(t, Tensor) and is_floating_dtype(o.dtype):
            if t.shape != o.shape:
                t = ops.expand(t, o.shape)
            levels.set_tangent(o, level, t if t.dtype == o.dtype else ops.to(t, o.dtype))
    return out


class VmapInfo:
    """What the ``vmap`` staticmethod is told about the level (torch.func's VmapInfo)."""

    def __init__(self, batch_size, randomness="error"):
        self.batch_size = batch_size
        self.randomness = randomness


def _unwrap_batched(args, level):
    values, dims = [], []
    for a in args:
        p = batching.physical(a, level) if isinstance(a, Tensor) else None
        values.append(a if p is None else p[0])
        dims.append(None if p is None else p[1])
    return values, tuple(dims)


def _apply_vmap(index, cls, args):
    """A vmap level: the node (if the logical tensors need one) is recorded here; the values come
    from the ``vmap`` staticmethod, or the generated rule, one level down."""

    level = levels.state.stack[index]
    info = levels.vmap_level(index)
    if cls.generate_vmap_rule:
        if _has_vmap(cls):
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an "
                "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the overridden "
                "vmap staticmethod to avoid ambiguity. For more details, please see "
                "https://pytorch.org/docs/main/notes/extending.func.html"
            )
    elif not _has_vmap(cls):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and "
            "implement the vmap staticmethod or set generate_vmap_rule=True. For more details, please see "
            "https://pytorch.org/docs/main/notes/extending.func.html"
        )
    grad_mode = grad_state.enabled

    def forward(ctx, args):
        with set_grad_enabled(grad_mode):
            out = _vmap_values(index, level, info, cls, args)
        with no_grad():
            cls.setup_context(ctx, args, out)
        return out

    return _apply(cls, args, forward=forward)


def _vmap_values(index, level, info, cls, args):
    values, in_dims = _unwrap_batched(args, level)
    with levels.lowered(index):
        if cls.generate_vmap_rule:
            vmapped = _vmapify(cls, in_dims, info.size)
            result = vmapped.apply(*values)
            result = result if isinstance(result, tuple) else (result,)
            out_dims = result[-1]
            outputs = result[:-1] if isinstance(out_dims, tuple) else result[0]
        else:
            result = cls.vmap(VmapInfo(info.size), in_dims, *values)
            base = (
                "Expected the vmap staticmethod to have two returns, an output and out_dims with pytree "
                "structure compatible with the output. "
            )
            if not isinstance(result, tuple):
                kind = "<class 'torch.Tensor'>" if isinstance(result, Tensor) else str(type(result))
                raise RuntimeError(base + f"Got a {kind} instead")  # PyTorch's name for the Tensor class
            if len(result) != 2:
                raise RuntimeError(base + f"Got {len(result)} returns instead")
            outputs, out_dims = result
    # an output that is an unwrapped input comes back as that input (mark_dirty's identity check)
    originals = {id(v): a for v, a, d in zip(values, args, in_dims) if d is not None}
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    dims = (out_dims,) * len(outs) if not isinstance(out_dims, tuple) else out_dims
    if len(dims) != len(outs):
        raise RuntimeError(
            "The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) tuple. "
            f"Expected out_dims={out_dims} to be compatible with the structure of `output`."
        )
    wrapped = []
    for o, d in zip(outs, dims):
        if isinstance(o, Tensor) and id(o) in originals:
            wrapped.append(originals[id(o)])
        elif isinstance(o, Tensor) and d is not None:
            wrapped.append(batching.placeholder(o, d % o.ndim, level))
        else:
            wrapped.append(o)
    return wrapped[0] if single else tuple(wrapped)


def _restore_vmap(func, in_dims, size):
    """``vmap(func, in_dims)`` that also returns the out_dims (None for an unbatched output) instead
    of moving them: torch.func's restore_vmap. The level is opened just inside the visible ones."""

    def wrapper(*args):
        leaves, spec = ops.flatten(args)
        dims = ops.dims_per_leaf(in_dims, args, "in_dims")
        saved_stack, saved_visible = list(levels.state.stack), levels.state.visible
        del levels.state.stack[saved_visible:]
        level = levels.enter(batching.VmapLevel(size, True))
        try:
            wrapped = [
                batching.placeholder(x, d % x.ndim, level) if d is not None and isinstance(x, Tensor) else x
                for x, d in zip(leaves, dims)
            ]
            out = func(*ops.unflatten(spec, wrapped))
            out_leaves, out_spec = ops.flatten(out)
            values, odims = [], []
            for o in out_leaves:
                p = batching.physical(o, level) if isinstance(o, Tensor) else None
                values.append(o if p is None else p[0])
                odims.append(None if p is None else p[1])
        finally:
            levels.exit(level)
            levels.state.stack[:] = saved_stack
            levels.state.visible = saved_visible
        return ops.unflatten(out_spec, values), ops.unflatten(out_spec, odims)

    return wrapper


class _CtxWrapper:
    """Forwards attribute reads and writes to the real ctx, except its own fields."""

    _own = ("_inner",)

    def __init__(self, ctx):
        object.__setattr__(self, "_inner", ctx)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __setattr__(self, name, value):
        if name in type(self)._own:
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)


class _CtxWithSaved(_CtxWrapper):
    _own = ("_inner", "saved_tensors")

    def __init__(self, ctx, saved):
        super().__init__(ctx)
        object.__setattr__(self, "saved_tensors", tuple(saved))


class _CtxCustomSave(_CtxWrapper):
    """setup_context's ctx under the generated rule: saved tensors are stored unbatched, with
    their batch dims."""

    _own = ("_inner", "bdims", "level")

    def __init__(self, ctx, level):
        super().__init__(ctx)
        object.__setattr__(self, "bdims", ())
        object.__setattr__(self, "level", level)

    def _unwrap(self, tensors):
        values, dims = [], []
        for t in tensors:
            p = batching.physical(t, self.level) if isinstance(t, Tensor) else None
            values.append(t if p is None else p[0])
            dims.append(None if p is None else p[1])
        object.__setattr__(self, "bdims", tuple(dims))
        return values

    def save_for_backward(self, *tensors):
        self._inner.save_for_backward(*self._unwrap(tensors))

    def save_for_forward(self, *tensors):
        self._inner.save_for_forward(*self._unwrap(tensors))


def _reductify(grads, grad_dims, in_dims, size, shapes=None):
    single = not isinstance(grads, tuple)
    grads = (grads,) if single else grads
    grad_dims = grad_dims if isinstance(grad_dims, tuple) else (grad_dims,)
    shapes = shapes if shapes is not None else (None,) * len(grads)
    return tuple(_reductify_leaf(g, gd, d, size, s) for g, gd, d, s in zip(grads, grad_dims, in_dims, shapes))


def _reductify_leaf(g, gdim, idim, size, shape):
    if g is None or (gdim is None and idim is None):
        return g
    if idim is None:
        return ops.sum(g, gdim)
    if gdim is None:
        g = ops.unsqueeze(g, idim)
        target = list(g.shape)
        target[idim] = size
        g = ops.expand(g, tuple(target))
        gdim = idim
    if shape is not None:
        return ops.vmap(lambda x: ops.sum_to(x, tuple(shape)), in_dims=gdim, out_dims=idim)(g)
    if gdim != idim:
        g = g.movedim(gdim, idim)
    return g


def _vmapify(cls, in_dims, size):
    """torch.func's vmapify_autograd_function: a Function whose forward, setup_context, backward
    and jvp are ``cls``'s under a vmap over ``in_dims``; its outputs end with their out_dims."""

    def forward(*operands):
        outputs, out_dims = _restore_vmap(cls.forward, in_dims, size)(*operands)
        if isinstance(outputs, Tensor) or not isinstance(outputs, tuple):
            return outputs, out_dims
        return (*outputs, out_dims)

    def setup_context(ctx, inputs, outputs):
        out_dims = outputs[-1]
        outputs = outputs[:-1] if isinstance(out_dims, tuple) else outputs[0]

        def inner(inputs, outputs):
            level = levels.state.stack[-1]
            wrapped = _CtxCustomSave(ctx, level)
            cls.setup_context(wrapped, inputs, outputs)
            ctx._pt_input_shapes = tuple(x.shape if isinstance(x, Tensor) else None for x in inputs)
            ctx._pt_saved_bdims = wrapped.bdims

        _restore_vmap(inner, (in_dims, out_dims), size)(inputs, outputs)
        ctx._pt_out_dims = out_dims

    def jvp(ctx, *tangents):
        def jvp_no_context(saved, tangents):
            return cls.jvp(_CtxWithSaved(ctx, saved), *tangents)

        t_dims = tuple(None if t is None else d for t, d in zip(tangents, in_dims))
        out_t, out_t_dims = _restore_vmap(jvp_no_context, (ctx._pt_saved_bdims, t_dims), size)(
            ctx.saved_tensors, tangents
        )
        result = _reductify(out_t, out_t_dims, _as_tuple(ctx._pt_out_dims), size)
        return (*result, None)

    def backward(ctx, *grad_outputs):
        grads = grad_outputs[:-1]
        g_dims = _as_tuple(ctx._pt_out_dims)
        g_dims = tuple(d if g is not None else None for g, d in zip(grads, g_dims))

        def backward_no_context(inputs):
            saved, grads = inputs
            return cls.backward(_CtxWithSaved(ctx, saved), *grads)

        grad_ins, grad_ins_dims = _restore_vmap(backward_no_context, ((ctx._pt_saved_bdims, g_dims),), size)(
            (ctx.saved_tensors, grads)
        )
        return _reductify(grad_ins, grad_ins_dims, in_dims, size, ctx._pt_input_shapes)

    return type(
        f"Vmapped{cls.__name__}",
        (Function,),
        {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
            "jvp": staticmethod(jvp),
            "generate_vmap_rule": True,
        },
    )


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)
