"""``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` (reverse mode, on the engine), ``jvp``,
``jacfwd`` (forward mode, on :mod:`reference.autograd.forward_ad`) and ``hessian``.

Names, signatures and return structures are ``torch.func``'s. Reverse mode differentiates a
fresh copy of each primal (``clone``: connected to whatever the primal is part of, so an outer
``grad`` or ``jvp`` sees through it) with ``create_graph=True``, so every result can be
differentiated again; results whose graph reaches nothing but those copies (no outer
transform or tensor requiring grad) are returned detached, as torch.func's are. Forward mode opens a level, attaches the tangents, and reads the outputs'
tangents at that level; levels nest, and mix with reverse mode in either order.
"""

from __future__ import annotations

import threading
import weakref

from reference.autograd import graph, levels, table
from reference.autograd.engine import grad as autograd_grad
from reference.autograd.grad_mode import enable_grad
from reference.autograd.tensor import Tensor
from reference.backend import is_inexact
from reference.func.pytree import TransformError, flatten, tensor_leaves, unflatten
from reference.ops import api


def _argnums(argnums, nargs):
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not isinstance(nums, tuple) or not nums or not all(isinstance(n, int) for n in nums):
        raise TransformError(f"argnums={argnums!r}: must be an int or a non-empty tuple of ints")
    out = []
    for n in nums:
        if not -nargs <= n < nargs:
            raise TransformError(
                f"argnums={argnums!r}: {n} is out of range for a function called with {nargs} positional arguments"
            )
        out.append(n % nargs)
    return tuple(out)


def _partial(func, args, kwargs, nums):
    """``func`` as a function of the arguments at ``nums`` only."""

    def inner(*diff):
        full = list(args)
        for n, v in zip(nums, diff):
            full[n] = v
        return func(*full, **kwargs)

    return inner


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TransformError(
            f"{name}(has_aux=True): func must return a pair (output, aux), got {type(out).__name__}"
        )
    return out[0], out[1]


def _check_like(leaves, spec, ref_leaves, ref_spec, name, ref_name):
    if spec != ref_spec:
        raise TransformError(f"{name}: its tree structure must match {ref_name}'s")
    for i, (a, b) in enumerate(zip(leaves, ref_leaves)):
        if a.shape != b.shape:
            raise TransformError(
                f"{name}: leaf {i} has shape {tuple(a.shape)}, but {ref_name}'s has shape {tuple(b.shape)} "
                "(they must match)"
            )


# ---- reverse mode -----------------------------------------------------------------------------------


_private = weakref.WeakValueDictionary()  # id -> the primal copies vjp differentiates


class VjpCalls(threading.local):
    """``vjp_calls.running``: how many ``vjp`` calls of the running thread are inside their func
    (thread-local like the transform levels)."""

    def __init__(self):
        self.running = 0


vjp_calls = VjpCalls()


def _detached_if_private(results):
    """``results`` detached when no transform that differentiates is running (an outer ``grad``/
    ``vjp``, or a ``jvp`` level; ``vmap`` levels do not differentiate) and their graphs reach no
    leaf but the private copies vjp made (so nothing outside could differentiate them), as
    torch.func's are."""
    if vjp_calls.running or any(levels.vmap_level(i) is None for i in range(levels.state.visible)):
        return results
    seen, stack = set(), [r.grad_fn for r in results if isinstance(r, Tensor) and r.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, graph.AccumulateGrad) and _private.get(id(node.variable)) is not node.variable:
            return results
        stack.extend(e[0] for e in node.next_edges if e is not None)
    return [r.detach() if isinstance(r, Tensor) and r.requires_grad else r for r in results]


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with has_aux); ``vjp_fn(cotangents)``
    returns a tuple shaped like ``primals``."""
    leaves, spec = tensor_leaves(primals, "vjp: primals")
    with enable_grad():
        inner = [api.clone(x) for x in leaves]
        for x in inner:
            if not x.requires_grad:
                x.requires_grad_()
                _private[id(x)] = x
        vjp_calls.running += 1
        try:
            out, aux = _split_aux(func(*unflatten(spec, inner)), has_aux, "vjp")
        finally:
            vjp_calls.running -= 1
    out_leaves, out_spec = tensor_leaves(out, "vjp: output of func")

    def vjp_fn(cotangents):
        ct_leaves, ct_spec = tensor_leaves(cotangents, "vjp_fn: cotangents")
        _check_like(ct_leaves, ct_spec, out_leaves, out_spec, "vjp_fn: cotangents", "the output")
        pairs = [(o, c) for o, c in zip(out_leaves, ct_leaves) if o.requires_grad]
        if not pairs:
            grads = [api.zeros_like(x) for x in inner]
        else:
            with enable_grad():
                grads = autograd_grad(
                    [o for o, _ in pairs],
                    inner,
                    [c for _, c in pairs],
                    create_graph=True,
                    allow_unused=True,
                    materialize_grads=True,
                )
        return unflatten(spec, _detached_if_private(list(grads)))

    out = unflatten(out_spec, _detached_if_private(out_leaves))
    return (out, vjp_fn) if not has_aux else (out, vjp_fn, aux)


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)``, or ``(gradient, (value, aux))``; func must return a one-element tensor."""

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        res = vjp(_partial(func, args, kwargs, nums), *(args[n] for n in nums), has_aux=has_aux)
        out, fn = res[0], res[1]
        if not isinstance(out, Tensor) or out.numel() != 1:
            what = (
                type(out).__name__ if not isinstance(out, Tensor) else f"a tensor of shape {tuple(out.shape)}"
            )
            raise TransformError(f"grad: func must return a one-element Tensor, got {what}")
        g = fn(api.ones_like(out))
        g = g[0] if isinstance(argnums, int) else g
        return (g, (out, res[2])) if has_aux else (g, out)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function (``(gradient, aux)`` with has_aux), shaped like args[argnums]."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def jacrev(func, argnums=0, *, has_aux=False):
    """The Jacobian by reverse mode: one VJP per output element."""

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        res = vjp(_partial(func, args, kwargs, nums), *(args[n] for n in nums), has_aux=has_aux)
        out, fn = res[0], res[1]
        out_leaves, out_spec = tensor_leaves(out, "jacrev: output of func")
        in_leaves, in_spec = flatten(tuple(args[n] for n in nums))
        blocks = []  # blocks[k][j]: d out_leaves[k] / d in_leaves[j]
        for k, o in enumerate(out_leaves):
            rows = []
            for e in range(o.numel()):
                cts = [api.zeros_like(x) for x in out_leaves]
                cts[k] = api.reshape(api.zeros_like(o), (-1,))
                cts[k][e] = 1.0
                cts[k] = api.reshape(cts[k], o.shape)
                rows.append(flatten(fn(unflatten(out_spec, cts)))[0])
            blocks.append(
                [
                    _assemble([r[j] for r in rows], o.shape, x.shape, x, rows_first=True)
                    for j, x in enumerate(in_leaves)
                ]
            )
        jac = _structure(blocks, out_spec, in_spec, isinstance(argnums, int))
        return (jac, res[2]) if has_aux else jac

    return wrapper


# ---- forward mode -----------------------------------------------------------------------------------


def jvp(func, primals, tangents, *, has_aux=False):
    """``(output, jvp_out)`` (``(output, jvp_out, aux)`` with has_aux): forward mode, one level."""
    if not isinstance(primals, tuple):
        raise TransformError(f"jvp: primals must be a tuple, got {type(primals).__name__}")
    if not isinstance(tangents, tuple):
        raise TransformError(f"jvp: tangents must be a tuple, got {type(tangents).__name__}")
    p_leaves, p_spec = tensor_leaves(primals, "jvp: primals")
    t_leaves, t_spec = tensor_leaves(tangents, "jvp: tangents")
    _check_like(t_leaves, t_spec, p_leaves, p_spec, "jvp: tangents", "primals")
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
        if not is_inexact(p.dtype) or t.dtype != p.dtype:
            raise TransformError(
                f"jvp: primal {i} has dtype {p.dtype} and tangent {i} dtype {t.dtype}; both must be the same "
                "floating or complex dtype"
            )
    level = levels.enter()
    try:
        duals = []
        for p, t in zip(p_leaves, t_leaves):
            d = api.clone(p)
            levels.set_tangent(d, level, api.clone(t))
            duals.append(d)
        out, aux = _split_aux(func(*unflatten(p_spec, duals)), has_aux, "jvp")
        out_leaves, out_spec = tensor_leaves(out, "jvp: output of func")
        tans = []
        for o in out_leaves:
            t = levels.tangent(o, level)
            tans.append(api.zeros_like(o) if t is None else t)
        # cleared only once every tangent is read: one tensor may be several outputs (add's VJP
        # returns its cotangent as both inputs' gradients), each with the same tangent
        for o in out_leaves:
            levels.set_tangent(o, level, None)
    finally:
        levels.exit(level)
    out = unflatten(out_spec, _detached_if_private(out_leaves))
    jvp_out = unflatten(out_spec, _detached_if_private(tans))
    return (out, jvp_out) if not has_aux else (out, jvp_out, aux)


def jacfwd(func, argnums=0, *, has_aux=False):
    """The Jacobian by forward mode: one JVP per input element."""

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        inner = _partial(func, args, kwargs, nums)
        primals = tuple(args[n] for n in nums)
        in_leaves, in_spec = tensor_leaves(primals, "jacfwd: primals")
        cols = [[] for _ in in_leaves]  # cols[j][e]: output leaves' tangents along element e of input j
        out = aux = None
        for j, x in enumerate(in_leaves):
            for e in range(x.numel()):
                ts = [api.zeros_like(y) for y in in_leaves]
                flat = api.reshape(ts[j], (-1,))
                flat[e] = 1.0
                res = jvp(inner, primals, unflatten(in_spec, ts), has_aux=has_aux)
                out, aux = res[0], (res[2] if has_aux else None)
                cols[j].append(flatten(res[1])[0])
        if out is None:  # no input elements: evaluate once for the output's structure
            out, aux = _split_aux(inner(*primals), has_aux, "jacfwd")
        out_leaves, out_spec = tensor_leaves(out, "jacfwd: output of func")
        blocks = [
            [
                _assemble([c[k] for c in cols[j]], o.shape, x.shape, o, rows_first=False)
                for j, x in enumerate(in_leaves)
            ]
            for k, o in enumerate(out_leaves)
        ]
        jac = _structure(blocks, out_spec, in_spec, isinstance(argnums, int))
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func, argnums), argnums)``: forward over reverse, as torch.func does."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- assembling Jacobians ---------------------------------------------------------------------------


def _assemble(pieces, out_shape, in_shape, like, rows_first):
    """Stack per-element pieces into a block of shape ``out_shape + in_shape``: rows (one per output
    element, each shaped like the input) for reverse mode, columns (one per input element, each
    shaped like the output) for forward mode."""
    shape = tuple(out_shape) + tuple(in_shape)
    if not pieces:
        return api.zeros(*shape, dtype=like.dtype)
    if rows_first:
        return api.reshape(api.stack(pieces, 0), shape)
    return api.reshape(api.stack(pieces, -1), shape)


def _structure(blocks, out_spec, in_spec, single):
    """The output's tree, each leaf the tree of its derivatives w.r.t. the differentiated arguments
    (torch.func's layout: one argnum -> that argument's tree, a tuple of argnums -> a tuple)."""
    per_out = []
    for row in blocks:
        by_arg = unflatten(in_spec, row)
        per_out.append(by_arg[0] if single else by_arg)
    return unflatten(out_spec, per_out)


def _vjp_running():
    """Whether a vjp's func is running (a custom Function then takes the transforms' path)."""
    return vjp_calls.running > 0


table.register(transforms_running=_vjp_running)
