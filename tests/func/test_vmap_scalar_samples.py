"""Batch rules on 0-d samples: ops along a ``dim`` accept a 0-d tensor with dim 0 or -1 (each
sample is one element); under vmap the physical value is ``(B,)`` and the rule must not shift the
dim past it. Compared with ``torch.func.vmap`` (values and the vmap of the VJP), with
``allow_fallback=False`` so a per-sample loop cannot stand in for the batch rule."""

from __future__ import annotations

import numpy as np
import pytest

import reference

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

B = 3

# (name, f(F, x, other) -> tensor or tuple); ``other`` is a second batched 0-d float tensor
CASES = [
    ("sort", lambda F, x, o: F.sort(x, 0)[0]),
    ("sort_desc_stable", lambda F, x, o: F.sort(x, dim=-1, descending=True, stable=True)[0]),
    ("argsort", lambda F, x, o: x * F.argsort(x, 0)),
    ("topk", lambda F, x, o: F.topk(x, 1, 0)[0]),
    ("kthvalue", lambda F, x, o: F.kthvalue(x, 1, 0)[0]),
    ("kthvalue_keepdim", lambda F, x, o: F.kthvalue(x, 1, -1, keepdim=True)[0]),
    ("median", lambda F, x, o: F.median(x, 0, keepdim=True)[0]),
    ("nanmedian", lambda F, x, o: F.nanmedian(x, -1)[0]),
    ("mode", lambda F, x, o: F.mode(x)[0]),
    ("max_dim", lambda F, x, o: F.max(x, 0)[0]),
    ("min_dim_keepdim", lambda F, x, o: F.min(x, 0, keepdim=True)[0]),
    ("cumsum", lambda F, x, o: F.cumsum(x, 0)),
    ("cumprod", lambda F, x, o: F.cumprod(x, -1)),
    ("cummax", lambda F, x, o: F.cummax(x, 0)[0]),
    ("cummin", lambda F, x, o: F.cummin(x, 0)[0]),
    ("logcumsumexp", lambda F, x, o: F.logcumsumexp(x, 0)),
    ("scatter", lambda F, x, o: F.scatter(x, 0, F.zeros((), dtype=F.int64), o)),
    ("scatter_add", lambda F, x, o: F.scatter_add(x, 0, F.zeros((), dtype=F.int64), o)),
    ("scatter_reduce_amax", lambda F, x, o: F.scatter_reduce(x, 0, F.zeros((), dtype=F.int64), o, "amax")),
    (
        "scatter_reduce_mean",
        lambda F, x, o: F.scatter_reduce(x, 0, F.zeros((), dtype=F.int64), o, "mean", include_self=False),
    ),
    ("gather", lambda F, x, o: F.gather(x, 0, F.zeros((), dtype=F.int64))),
]


def _first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_vmap_over_scalar_samples(name, f):
    rng = np.random.default_rng(0)
    xs, os_, cts = (rng.standard_normal(B) for _ in range(3))
    results = {}
    for F, vmap, vjp, kw in (
        (torch, torch.func.vmap, torch.func.vjp, {}),
        (reference, reference.func.vmap, reference.func.vjp, {"allow_fallback": False}),
    ):
        x, o, ct = (F.tensor(a, dtype=F.float64) for a in (xs, os_, cts))

        def g(x, o, F=F):
            return _first(f(F, x, o))

        def pulled(x, o, ct, F=F, vjp=vjp, g=g):
            out, fn = vjp(g, x, o)
            return out, *fn(ct)

        fwd = vmap(g, **kw)(x, o)
        back = vmap(pulled, **kw)(x, o, ct)
        results[F] = [fwd, *back]
    for t, r in zip(results[torch], results[reference]):
        assert tuple(t.shape) == tuple(r.shape), name
        np.testing.assert_allclose(r.numpy(), t.detach().numpy(), rtol=1e-14, atol=1e-15, err_msg=name)
