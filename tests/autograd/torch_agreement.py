"""Run one function on ``torch`` and on ``reference`` from the same arrays and compare forward
values, first-order gradients and gradients of gradients (of a fixed random cotangent), and errors.

A case is ``(id, fn, arrays, grad_mask[, options])``: ``fn(lib, *tensors)`` is program text for
both libraries (``lib.nn.functional`` as ``lib.nn.functional``), ``arrays`` NumPy arrays (float ones
may need gradients: ``grad_mask[i]``), ``options``: ``second=False`` where PyTorch has no double
backward (e.g. ``_cdist_backward``), ``rtol``/``atol``.
"""

from __future__ import annotations

import warnings

import numpy as np

import reference


def _tensors(lib, arrays, mask):
    out = []
    for a, m in zip(arrays, mask):
        if lib is reference:
            t = reference.tensor(np.array(a), dtype=np.asarray(a).dtype)
        else:
            import torch

            t = torch.tensor(np.array(a))
        if m:
            t.requires_grad_(True)
        out.append(t)
    return out


def _np(t):
    if t is None:
        return None
    return np.asarray(t.detach().numpy(force=True))


def run(lib, fn, arrays, mask, second=True, seed=0):
    ins = _tensors(lib, arrays, mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *ins)
    res = {"out": _np(out), "dtype": str(out.dtype).replace("torch.", "")}
    diff = [t for t, m in zip(ins, mask) if m]
    if not diff or not out.requires_grad:
        return res
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(out.shape)
    wt = _tensors(lib, [w], [False])[0]
    gs = lib.autograd.grad(out, diff, wt, create_graph=second, allow_unused=True)
    res["grads"] = [_np(g) for g in gs]
    if second:
        terms = [
            (g * _tensors(lib, [rng.standard_normal(g.shape)], [False])[0]).sum()
            for g in gs
            if g is not None and g.requires_grad
        ]
        if terms:
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            ggs = lib.autograd.grad(total, diff, allow_unused=True)
            res["grads2"] = [_np(g) for g in ggs]
    return res


def _close(a, b, rtol, atol, what):
    if a is None or b is None:
        a = np.zeros_like(b) if a is None and b is not None else a
        b = np.zeros_like(a) if b is None and a is not None else b
        if a is None:
            return
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def assert_agree(fn, arrays, mask, second=True, rtol=1e-7, atol=1e-9):
    import torch

    exp = run(torch, fn, arrays, mask, second)
    got = run(reference, fn, arrays, mask, second)
    assert got["out"].shape == exp["out"].shape, (got["out"].shape, exp["out"].shape)
    assert got["dtype"] == exp["dtype"], (got["dtype"], exp["dtype"])
    _close(got["out"], exp["out"], rtol, atol, "forward")
    assert ("grads" in got) == ("grads" in exp), "which outputs need gradients"
    n = len(got.get("grads", []))
    for key in ("grads", "grads2"):
        # no second-order graph on one side reads as zero gradients (both must then be zero)
        for i, (a, b) in enumerate(zip(got.get(key, [None] * n), exp.get(key, [None] * n))):
            _close(a, b, rtol, atol, f"{key}[{i}]")


def assert_same_error(fn, arrays):
    import torch

    outcomes = []
    for lib in (torch, reference):
        ins = _tensors(lib, arrays, [False] * len(arrays))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(lib, *ins)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            outcomes.append((type(e), str(e)))
        else:
            outcomes.append(None)
    exp, got = outcomes
    assert exp is not None, "PyTorch did not raise"
    assert got is not None, f"the reference did not raise; PyTorch raised {exp}"
    assert got[0] is exp[0] or issubclass(exp[0], got[0]) or issubclass(got[0], exp[0]), (got, exp)
    assert got[1] == exp[1], (got[1], exp[1])
