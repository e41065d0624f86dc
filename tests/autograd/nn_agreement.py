"""Helpers of the ``nn.functional`` agreement tests: run one program text on torch and on the
reference and compare forward values, first- and second-order gradients, and errors."""

from __future__ import annotations

import numpy as np
import torch

import reference as T


def _np(t):
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t._data if hasattr(t, "_data") else t.detach().numpy())


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def agree(prog, arrays, second_order=True, rtol=1e-7, atol=1e-9, grad=None, seed=0):
    """``prog(F, lib, *tensors)`` on torch (float64) and on the reference: outputs agree; the
    gradients of a random linear functional of the floating outputs agree; with ``second_order``
    the gradients of the sum of squared first gradients (taken with create_graph) agree too.
    ``grad`` masks which inputs require grad (default: the floating ones)."""
    rng = np.random.default_rng(seed)
    grad = grad or [np.asarray(a).dtype.kind == "f" for a in arrays]
    results = {}
    cot = None
    for lib, F in ((torch, torch.nn.functional), (T, T.nn.functional)):
        ins = [lib.tensor(np.asarray(a), requires_grad=bool(r)) for a, r in zip(arrays, grad)]
        outs = _flat(prog(F, lib, *ins))
        vals = [_np(o) for o in outs]
        diff = [o for o in outs if o is not None and o.requires_grad]
        if cot is None:
            cot = [rng.standard_normal(tuple(o.shape)) for o in diff]
        wrt = [t for t, r in zip(ins, grad) if r]
        g1 = g2 = None
        if diff and wrt:
            loss = sum((o * lib.tensor(c)).sum() for o, c in zip(diff, cot))
            g1 = lib.autograd.grad(loss, wrt, create_graph=second_order, allow_unused=True)
            if second_order:
                live = [g for g in g1 if g is not None and g.requires_grad]
                if live:
                    s = sum((g * g).sum() for g in live)
                    g2 = lib.autograd.grad(s, wrt, allow_unused=True)
        results[lib.__name__] = (vals, g1, g2)
    (tv, tg1, tg2), (rv, rg1, rg2) = results["torch"], results["reference"]
    assert len(tv) == len(rv)
    for i, (a, b) in enumerate(zip(tv, rv)):
        if a is None:
            assert b is None
            continue
        assert a.shape == b.shape, f"output {i}: shape {b.shape} != torch {a.shape}"
        assert a.dtype == b.dtype, f"output {i}: dtype {b.dtype} != torch {a.dtype}"
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=f"output {i}")
    for order, (tg, rg) in enumerate(((tg1, rg1), (tg2, rg2)), 1):
        if tg is None or rg is None:
            for g in (tg or ()) + (rg or ()):
                assert g is None or not np.any(_np(g)), f"order {order}: one side has no gradient"
            continue
        for i, (a, b) in enumerate(zip(tg, rg)):
            if a is None:
                assert b is None or not np.any(_np(b)), f"order {order} grad {i}: torch gives None"
                continue
            assert b is not None, f"order {order} grad {i}: reference gives None, torch {_np(a)}"
            np.testing.assert_allclose(
                _np(b), _np(a), rtol=rtol, atol=atol, err_msg=f"order {order} grad {i}"
            )


def errors_agree(call, *arrays, match_message=True):
    """``call(F, lib, *tensors)`` raises the same exception type (and message) on both."""
    errs = []
    for lib, F in ((torch, torch.nn.functional), (T, T.nn.functional)):
        ins = [lib.tensor(np.asarray(a)) for a in arrays]
        try:
            call(F, lib, *ins)
        except Exception as e:  # noqa: BLE001 (compared below)
            errs.append(e)
        else:
            errs.append(None)
    te, re_ = errs
    assert te is not None, "torch does not raise"
    assert re_ is not None, f"reference does not raise; torch raises {type(te).__name__}: {te}"
    assert isinstance(re_, type(te)) or type(te).__name__ == type(re_).__name__, (
        f"reference raises {type(re_).__name__}: {re_}; torch {type(te).__name__}: {te}"
    )
    if match_message:
        assert str(te).strip().split("\n")[0] in str(re_) or str(re_) in str(te), (
            f"messages differ:\n torch: {te}\n reference: {re_}"
        )
