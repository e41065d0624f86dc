"""``T.autograd.grad(..., is_grads_batched=True)``: one backward pass under ``vmap`` over dim 0 of
the grad_outputs (PyTorch runs the engine under its legacy ``_vmap`` the same way)."""

from __future__ import annotations

from reference.autograd.table import ops
from reference.autograd.tensor import Tensor


def _size(shape):
    return f"torch.Size([{', '.join(str(s) for s in shape)}])"


def batched_run(run, make_grads, outputs, grad_outputs, retain_graph, create_graph, inputs):
    """The batched gradients of ``outputs`` w.r.t. ``inputs`` (None where an input is unused).
    ``run`` and ``make_grads`` are the engine's (passed in: the engine imports this module)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    grad_outputs = tuple(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(grad_outputs)} tensors and {len(outputs)} gradients")
    sizes = []
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(g, Tensor):
            if tuple(g.shape[1:]) != tuple(o.shape):
                # PyTorch compares grad[0] with the output and prints grad[0].shape[1:]
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
                    "batch dimension. The sizes of the remaining dimensions are expected to match the shape of "
                    f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
                    f"{_size(g.shape[2:])} and output[{i}] has a shape of {_size(o.shape)}. If you only want "
                    "some tensors in `grad_output` to be considered batched, consider using vmap."
                )
            sizes.append(g.shape[0])
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    make_grads(outputs, [g[0] if isinstance(g, Tensor) else g for g in grad_outputs])  # None checks
    batched = [i for i, g in enumerate(grad_outputs) if isinstance(g, Tensor)]
    unused = []

    def vjp(*gs):
        full = list(grad_outputs)
        for i, g in zip(batched, gs):
            full[i] = g
        res = run(outputs, make_grads(outputs, full), retain_graph, create_graph, inputs, accumulate=False)
        unused[:] = [r is None for r in res]
        return tuple(r for r in res if r is not None)

    got = list(ops.vmap(vjp)(*[grad_outputs[i] for i in batched])) if batched else []
    return [None if u else got.pop(0) for u in unused]
