"""Finite-difference checks of the reference's own gradients (float64 and complex128).

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
from reference.backend import device_of, is_inexact, to_device, to_numpy


class GradcheckError(AssertionError):
    """Analytical and numerical derivatives disagree."""


def _outputs(value):
    items = value if isinstance(value, (tuple, list)) else (value,)
    return [o for o in items if isinstance(o, Tensor) and is_inexact(o.dtype)]


def _real_coords(arr):
    """The real coordinates of an array: itself, or for a complex array (re, im) per element
    (``view_as_real`` order), as torch.autograd.gradcheck perturbs real and imaginary parts apart."""
    arr = to_numpy(arr)  # (host-side: the Jacobians are compared on the host)
    if arr.dtype.kind == "c":
        return np.stack([arr.real, arr.imag], -1).ravel().astype(np.float64)
    return arr.ravel().astype(np.float64)


def _on_device_of(t, arr, requires_grad=False):
    """A tensor of the host array ``arr`` on ``t``'s device."""
    return Tensor(to_device(arr, *device_of(t._data)), dtype=arr.dtype, requires_grad=requires_grad)


def _perturbed(inputs, i, flat_index, delta):
    out = []
    for j, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            out.append(t)
            continue
        data = t._data.copy()
        if j == i:
            if data.dtype.kind == "c":  # real coordinate k: the real (k even) or imaginary part
                data.reshape(-1)[flat_index // 2] += delta if flat_index % 2 == 0 else delta * 1j
            else:
                data.reshape(-1)[flat_index] += delta
        out.append(Tensor(data, dtype=t.dtype, requires_grad=t.requires_grad))
    return out


def _n_coords(t):
    return t.numel() * (2 if t.dtype.kind == "c" else 1)


def numerical_jacobian(fn, inputs, eps=1e-6):
    """J[i][k, m]: d(output coordinate m, flattened over all outputs)/d(input i coordinate k), central
    differences; a complex tensor has two real coordinates per element (real and imaginary part)."""
    jac = []
    for i, t in enumerate(inputs):
        if not (isinstance(t, Tensor) and t.requires_grad):
            jac.append(None)
            continue
        cols = []
        for k in range(_n_coords(t)):
            plus = _outputs(fn(*_perturbed(inputs, i, k, eps)))
            minus = _outputs(fn(*_perturbed(inputs, i, k, -eps)))
            cols.append(
                np.concatenate(
                    [(_real_coords(p._data) - _real_coords(m._data)) / (2 * eps) for p, m in zip(plus, minus)]
                )
                if plus
                else np.zeros(0)
            )
        if not cols:  # an empty input: no columns, but the Jacobian still has every output coordinate
            n_out = sum(_n_coords(o) for o in _outputs(fn(*inputs)))
            cols = np.zeros((0, n_out))
        jac.append(np.asarray(cols, dtype=np.float64))
    return jac


def analytical_jacobian(fn, inputs):
    """Rows from backward with unit cotangents: for a complex output coordinate, 1 (its real part) or
    1j (its imaginary part); PyTorch's convention makes the gradient of a complex input the pair
    (d/d re, d/d im) as its real and imaginary parts, i.e. its real coordinates."""
    diff = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    outs = _outputs(fn(*inputs))
    rows = {id(t): [] for t in diff}
    for o in outs:
        units = (1.0, 1j) if o.dtype.kind == "c" else (1.0,)
        for m in range(o.numel()):
            for unit in units:
                v = np.zeros(o.shape, dtype=o.dtype)
                v.reshape(-1)[m] = unit
                if o.requires_grad:
                    gs = grad(o, diff, _on_device_of(o, v), retain_graph=True, allow_unused=True)
                else:
                    gs = [None] * len(diff)
                for t, g in zip(diff, gs):
                    rows[id(t)].append(np.zeros(_n_coords(t)) if g is None else _real_coords(g._data))
    out = []
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad:
            r = rows[id(t)]
            out.append(np.array(r, dtype=np.float64).reshape(len(r), _n_coords(t)).T)
        else:
            out.append(None)
    return out


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, name="fn"):
    """True when backward's Jacobian matches central differences; raises GradcheckError otherwise."""
    inputs = tuple(inputs)
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad and t.dtype not in (np.float64, np.complex128):
            raise ValueError(
                f"gradcheck: inputs must be float64 or complex128, got {t.dtype} (finite differences need it)"
            )
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
            _on_device_of(
                o,
                (
                    rng.standard_normal(o.shape)
                    + (1j * rng.standard_normal(o.shape) if o.dtype.kind == "c" else 0)
                ).astype(np.complex128 if o.dtype.kind == "c" else np.float64),
                requires_grad=True,
            )
            for o in outs
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
