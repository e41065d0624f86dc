"""The engine: dependency counting and topological execution of the graph (PyTorch's Engine).

``run`` discovers every node reachable from the outputs, counts how many edges point at each,
and executes a node once all its gradients have arrived (highest sequence number first among the
ready ones, as PyTorch's CPU ready queue does). Gradients for the same node input are summed in
an input buffer. Before a node runs, the tensor hooks registered on its inputs run, then the
retain_grad hooks; gradients requested by ``autograd.grad`` are captured there. A node that no
requested input depends on is not run (PyTorch's ``exec_info``).
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from reference.autograd import anomaly, graph, layout
from reference.autograd.batched_grad import batched_run
from reference.autograd.grad_mode import grad_state
from reference.autograd.graph import gradient_edge
from reference.autograd.table import RULES, ops, register
from reference.autograd.tensor import Tensor, _make
from reference.backend import is_floating

_tasks: list = []  # (task id, checkpoint_valid) of the running backward passes, innermost last
_task_ids = itertools.count()


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads):
    if grads is None:
        grads = (None,) * len(outputs)
    grads = _as_tuple(grads) if not isinstance(grads, (list, tuple)) else tuple(grads)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} tensors and {len(outputs)} gradients")
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o.requires_grad:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not is_floating(o.dtype):
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got torch.{o.dtype.name}"
                    )
                g = ops.ones_like(o)
        elif not isinstance(g, Tensor):
            g = Tensor(g, dtype=o.dtype)
        elif g.device != o.device:
            raise RuntimeError(
                f"invalid gradient at index {i} - expected device {o.device} but got {g.device}"
            )
        elif g.shape != o.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {_size(g.shape)} and output[{i}] has a "
                f"shape of {_size(o.shape)}."
            )
        if isinstance(g, Tensor) and (g.dtype.kind == "c") != (o.dtype.kind == "c"):
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch "
                f"in dtype: grad_output[{i}] has a dtype of torch.{g.dtype.name} and output[{i}] has a dtype of "
                f"torch.{o.dtype.name}."
            )
        out.append(g)
    return out


def _size(shape):
    return f"torch.Size([{', '.join(str(s) for s in shape)}])"


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into the ``.grad`` of the leaves (or of ``inputs``)."""
    tensors = _as_tuple(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    run(tensors, grads, retain_graph, create_graph, inputs, accumulate=True)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs``, as a tuple; ``.grad`` is untouched.
    ``is_grads_batched``: dim 0 of every grad_output is a batch of cotangents; one backward pass
    runs under ``reference.func.vmap`` (hooks see per-sample gradients, as in PyTorch)."""
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        result = batched_run(run, _make_grads, outputs, grad_outputs, retain_graph, create_graph, inputs_t)
    else:
        grads = _make_grads(outputs, grad_outputs)
        result = run(outputs, grads, retain_graph, create_graph, inputs_t, accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs_t, result)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = ops.zeros_like(t)
        out.append(g)
    return tuple(out)


def _validate(g, producer, node, nr, index):
    shape, dtype = node.input_meta(nr)
    if shape is not None and g.shape != tuple(shape):
        if not _expandable(shape, g.shape):
            raise RuntimeError(
                f"Function {producer.name()} returned an invalid gradient at index {index} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}"
            )
        g = ops.sum_to(g, tuple(shape))
    if dtype is not None and g.dtype != dtype:
        g = ops.to(g, dtype)
    return g


def _expandable(shape, target):
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _call_pre_hooks(node, buf):
    hooks = node.variable._hooks if isinstance(node, graph.AccumulateGrad) else None
    if hooks:
        buf[0] = _run_hooks(hooks, buf[0])
    if node.pre_hooks:
        for nr, lst in node.pre_hooks.items():
            buf[nr] = _run_hooks(lst, buf[nr])
    if node.retains_grad:
        for nr, ref in list(node.retains_grad.items()):
            t = ref()
            g = buf[nr]
            if t is not None and g is not None:
                t.grad = ops.clone(g) if t.grad is None else t.grad + g
    return buf


def _run_hooks(hooks, g):
    if g is None:
        return g
    for _, hook in list(hooks):
        new = hook(g)
        if new is not None:
            if new.shape != g.shape:
                name = getattr(hook, "__name__", repr(hook))
                raise RuntimeError(f"hook '{name}' has changed the size of value")
            g = new
    return g


def run(roots, grads, retain_graph, create_graph, inputs, accumulate):
    """Execute the graph of ``roots`` seeded with ``grads``; return captured grads of ``inputs``."""
    root_edges = []
    for i, t in enumerate(roots):
        edge = gradient_edge(t)
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        root_edges.append(edge)
    root = graph.GraphRoot(root_edges, grads)

    targets = []
    if inputs is not None:
        for t in inputs:
            if accumulate and t.grad_fn is not None:
                t.retain_grad()  # backward(inputs=[non_leaf]) fills its .grad, as PyTorch does
            edge = gradient_edge(t)
            if edge is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.append(edge)

    deps = {}  # every node reachable from the root (a key once seen): how many edges lead to it
    stack = [root]
    while stack:
        for e in stack.pop().next_edges:
            if e is None:
                continue
            child = e[0]
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)

    needed = None
    captures = {}
    if inputs is not None:
        needed = {}
        exec_targets = {e[0] for e in targets if accumulate and isinstance(e[0], graph.AccumulateGrad)}
        if not accumulate:
            for k, (node, nr) in enumerate(targets):
                captures.setdefault(node, []).append((nr, k))
        for node in _postorder(root):
            needed[node] = node in exec_targets or any(
                e is not None and (needed.get(e[0], False) or e[0] in captures) for e in node.next_edges
            )
    captured = [None] * len(targets)

    buffers = {}
    heap = [(float("-inf"), 0, root)]
    counter = 1
    prev = grad_state.enabled
    grad_state.enabled = bool(create_graph)
    # the running graph task (read by reference.utils.checkpoint): an id, and whether a reentrant
    # checkpoint may run in it (not under autograd.grad / backward(inputs=), nor nested in such a task)
    _tasks.append((next(_task_ids), inputs is None and (not _tasks or _tasks[-1][1])))
    # (globals bound to locals: this loop's own cost is part of the per-op overhead)
    heappop, heappush, accumulate_grad, anomaly_on = (
        heapq.heappop,
        heapq.heappush,
        graph.AccumulateGrad,
        anomaly.state,
    )
    try:
        while heap:
            _, _, node = heappop(heap)
            buf = buffers.pop(node, None)
            if buf is None:
                buf = [None] * node.num_inputs
            if (
                node.pre_hooks
                or node.retains_grad
                or (isinstance(node, accumulate_grad) and node.variable._hooks)
            ):
                buf = _call_pre_hooks(node, buf)
            if captures and node in captures:
                for nr, k in captures[node]:
                    captured[k] = buf[nr]
            if needed is not None and not needed[node]:
                continue
            outs = node.apply(buf) if not anomaly_on.enabled else anomaly.run_node(node, buf)
            if not retain_graph:
                node.release()
            i = -1
            for e, g in zip(node.next_edges, outs):
                i += 1
                if e is None:
                    continue
                child, nr = e
                if needed is not None and not (needed.get(child) or child in captures):
                    continue
                if g is not None:
                    # _validate only when the shape or dtype differs from what the child expects
                    # (the common case, checked inline, costs two comparisons per edge)
                    shape, dtype = child.input_meta(nr)
                    data = g._data
                    if (shape is not None and data.shape != shape) or (
                        dtype is not None and data.dtype != dtype
                    ):
                        g = _validate(g, node, child, nr, i)
                        data = g._data  # (validated: summed to the input's shape, or cast)
                    cbuf = buffers.get(child)
                    if cbuf is None:
                        cbuf = buffers[child] = [None] * child.num_inputs
                    if cbuf[nr] is None:
                        cbuf[nr] = g
                    # (no local name for the held gradient: accumulated_strides counts its references)
                    elif (
                        cbuf[nr]._data.flags.c_contiguous and data.flags.c_contiguous and 1 not in data.shape
                    ):  # row-major and row-major with no size-1 dim: a row-major sum, in place or not
                        cbuf[nr] = _sum_row_major(cbuf[nr], g)
                    else:  # the strides of the sum when PyTorch adds in place
                        keep = layout.accumulated_strides(cbuf[nr])
                        cbuf[nr] = cbuf[nr] + g
                        if keep is not None:  # (PyTorch sums into the buffer in place)
                            layout.relayout_(cbuf[nr], keep)
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    heappush(heap, (-child.seq, counter, child))
                    counter += 1
    finally:
        grad_state.enabled = prev
        _tasks.pop()
    return captured


def _sum_row_major(old, new):
    """``old + new``, two gradients for one input (PyTorch's InputBuffer::accumulate), both
    row-major. Two plain NumPy-backed tensors of one shape and dtype, outside grad mode and with
    no transform's state (tangents, batched values: a transform leaves such tensors alone), the
    engine's common case, are summed by the add rule's kernel straight into a row-major result,
    which is what the Tensor op makes of them; anything else is the Tensor op."""
    a, b = old._data, new._data
    if (
        grad_state.enabled
        or old._tangents is not None
        or new._tangents is not None
        or old._batched is not None
        or new._batched is not None
        or type(old) is not Tensor
        or type(new) is not Tensor
        or type(a) is not np.ndarray
        or type(b) is not np.ndarray
        or a.shape != b.shape
        or a.dtype != b.dtype
    ):
        return old + new
    # (the rule's forward, not a + b: an error tracker wraps the rules' kernels)
    return _make(RULES["add"].forward(a, b))


def _postorder(root):
    """Nodes reachable from ``root``, children before parents."""
    out = []
    visited = {root}
    stack = [(root, iter(root.next_edges))]
    while stack:
        node, it = stack[-1]
        for e in it:
            if e is not None and e[0] not in visited:
                visited.add(e[0])
                stack.append((e[0], iter(e[0].next_edges)))
                break
        else:
            stack.pop()
            out.append(node)
    return out


# Tensor.backward runs the engine, which sits above the Tensor: reached through the core's table.
register(backward=backward)
