"""Finite-difference checks of the reference's own gradients (float64 only).

``gradcheck(fn, inputs)`` compares the Jacobian that backward computes (one VJP per output
element) with central differences; ``gradgradcheck`` does the same for the function
``(inputs, v) -> d<fn(inputs), v>/d inputs`` built with ``create_graph=True``, i.e. it checks
second derivatives. Both raise :class:`GradcheckError` naming the output, the input and the
worst element.
"""

from __future__ import annotations

import numpy as np

from reference.autograd.engine import grad
from reference.autograd.tensor import Tensor


class GradcheckError(AssertionError):
    """Analytical and numerical derivatives disagree."""


def _outputs(value):
    items = value if isinstance(value, (tuple, list)) else (value,)
    return [o for o in items if isinstance(o, Tensor) and o.dtype.kind == "f"]


def _perturbed(inputs, i, flat_index, delta):
    out = []
    for j, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            out.append(t)
            continue
        data = t._data.copy()
        if j == i:
            data.reshape(-1)[flat_index] += delta
        out.append(Tensor(data, dtype=t.dtype, requires_grad=t.requires_grad))
    return out


def numerical_jacobian(fn, inputs, eps=1e-6):
    """J[i][k, m]: d(output m, flattened over all outputs)/d(input i element k), central differences."""
    jac = []
    for i, t in enumerate(inputs):
        if not (isinstance(t, Tensor) and t.requires_grad):
            jac.append(None)
            continue
        cols = []
        for k in range(t.numel()):
            plus = _outputs(fn(*_perturbed(inputs, i, k, eps)))
            minus = _outputs(fn(*_perturbed(inputs, i, k, -eps)))
            cols.append(
                np.concatenate([((p._data - m._data) / (2 * eps)).ravel() for p, m in zip(plus, minus)])
                if plus
                else np.zeros(0)
            )
        jac.append(np.array(cols).reshape(t.numel(), -1))
    return jac


def analytical_jacobian(fn, inputs):
    diff = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    outs = _outputs(fn(*inputs))
    rows = {id(t): [] for t in diff}
    for o in outs:
        for m in range(o.numel()):
            v = np.zeros(o.shape, dtype=o.dtype)
            v.reshape(-1)[m] = 1.0
            if o.requires_grad:
                gs = grad(o, diff, Tensor(v, dtype=v.dtype), retain_graph=True, allow_unused=True)
            else:
                gs = [None] * len(diff)
            for t, g in zip(diff, gs):
                rows[id(t)].append(np.zeros(t.numel()) if g is None else g._data.ravel().astype(np.float64))
    out = []
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad:
            r = rows[id(t)]
            out.append(np.array(r).T.reshape(t.numel(), -1) if r else np.zeros((t.numel(), 0)))
        else:
            out.append(None)
    return out


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, name="fn"):
    """True when backward's Jacobian matches central differences; raises GradcheckError otherwise."""
    inputs = tuple(inputs)
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad and t.dtype != np.float64:
            raise ValueError(f"gradcheck: inputs must be float64, got {t.dtype} (finite differences need it)")
    numerical = numerical_jacobian(fn, inputs, eps)
    analytical = analytical_jacobian(fn, inputs)
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        if n is None:
            continue
        if n.shape != a.shape:
            raise GradcheckError(
                f"{name}: Jacobian shapes differ for input {i}: numerical {n.shape}, analytical {a.shape}"
            )
        bad = np.abs(a - n) > atol + rtol * np.abs(n)
        if bad.any():
            k, m = np.argwhere(bad)[0]
            raise GradcheckError(
                f"{name}: Jacobian mismatch for input {i} at (input element {k}, output element {m}): "
                f"analytical {a[k, m]!r} but numerical {n[k, m]!r} (max |diff| {np.abs(a - n).max():.3g})"
            )
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, name="fn"):
    """Check second derivatives: gradcheck of ``(inputs, v) -> grad(fn(inputs), inputs, v, create_graph)``."""
    inputs = tuple(inputs)
    outs = _outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [
            Tensor(rng.standard_normal(o.shape), dtype=np.float64, requires_grad=True) for o in outs
        ]
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def first_order(*args):
        xs, vs = args[:n_in], args[n_in:]
        ys = _outputs(fn(*xs))
        pairs = [(y, v) for y, v in zip(ys, vs) if y.requires_grad]
        if not pairs:
            return ()
        diff = [xs[i] for i in diff_idx]
        gs = grad([y for y, _ in pairs], diff, [v for _, v in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_order, inputs + tuple(grad_outputs), eps, atol, rtol, name=f"{name} (second order)"
    )
