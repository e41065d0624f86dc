"""Running one program on PyTorch and on the reference and comparing what they give: forward
values (integer outputs exactly), first- and second-order gradients, and errors (type and message)."""

from __future__ import annotations

import numpy as np

import reference


def _leaves(F, arrays):
    return [F.tensor(a, dtype=F.float64, requires_grad=True) for a in arrays]


def _np(t):
    return t.detach().numpy(force=True) if hasattr(t, "detach") else np.asarray(t)


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _outputs(x)]
    return [out]


def evaluate(F, prog, arrays, order):
    xs = _leaves(F, arrays)
    outs = _outputs(prog(F, *xs))
    values = [_np(o) for o in outs]
    rng = np.random.default_rng(0)
    floats = [o for o in outs if o.dtype in (F.float64, F.float32) and o.requires_grad]
    grads = grads2 = None
    if order >= 1 and floats:
        obj = sum((o * F.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)).sum() for o in floats)
        gs = F.autograd.grad(obj, xs, create_graph=order >= 2, allow_unused=True)
        grads = [None if g is None else _np(g) for g in gs]
        if order >= 2:
            live = [g for g in gs if g is not None and g.requires_grad]
            if live:
                obj2 = sum(
                    (g * F.tensor(rng.standard_normal(tuple(g.shape)), dtype=g.dtype)).sum() for g in live
                )
                g2 = F.autograd.grad(obj2, xs, allow_unused=True)
                grads2 = [None if g is None else _np(g) for g in g2]
    return values, grads, grads2


def _same(a, b, what, rtol, atol):
    if a is None or b is None:
        a = np.zeros_like(b) if a is None and b is not None else a
        b = np.zeros_like(a) if b is None and a is not None else b
        if a is None:
            return
    assert a.shape == b.shape, f"{what}: shape {a.shape} but PyTorch gives {b.shape}"
    if a.dtype.kind in "biu" or b.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def agree(prog, arrays, order=2, rtol=1e-9, atol=1e-11, label=""):
    """The reference and PyTorch give the same values and gradients (to ``order``)."""
    import torch

    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    got = evaluate(reference, prog, arrays, order)
    want = evaluate(torch, prog, arrays, order)
    for k, (a, b) in enumerate(zip(got[0], want[0])):
        _same(a, b, f"{label} output {k}", rtol, atol)
    assert len(got[0]) == len(want[0])
    for name, ga, gb in (("grad", got[1], want[1]), ("grad of grad", got[2], want[2])):
        if ga is None and gb is None:
            continue
        if ga is None or gb is None:  # no graph on one side: the other's must be zero
            ga = ga if ga is not None else [None] * len(gb)
            gb = gb if gb is not None else [None] * len(ga)
        for k, (a, b) in enumerate(zip(ga, gb)):
            _same(a, b, f"{label} {name} of input {k}", rtol, atol)


def same_error(prog, arrays=(), match_message=True):
    """Both raise, the same exception type, and (by default) the same message."""
    import torch

    outcomes = []
    for F in (reference, torch):
        try:
            prog(F, *_leaves(F, [np.asarray(a, dtype=np.float64) for a in arrays]))
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            outcomes.append(exc)
        else:
            outcomes.append(None)
    got, want = outcomes
    assert want is not None, "PyTorch did not raise"
    assert got is not None, f"the reference did not raise; PyTorch raised {type(want).__name__}: {want}"
    assert isinstance(got, type(want)) or type(want) in type(got).__mro__, (
        f"{type(got).__name__}: {got}  but PyTorch raised {type(want).__name__}: {want}"
    )
    if match_message:
        assert str(got).split("\n")[0] == str(want).split("\n")[0], f"message {got!s} but PyTorch: {want!s}"
