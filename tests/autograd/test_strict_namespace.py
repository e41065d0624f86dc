"""Every op record sample run on the ``strict`` device against the same program on the CPU.

The strict namespace (:mod:`reference.testing.strict_xp`) computes with NumPy behind CuPy's walls:
``np.asarray`` of its arrays, NumPy functions on them (``np.exp``, ``np.add.at``,
``np.lib.stride_tricks``), SciPy on them, and mixing them with NumPy arrays all raise
``TypeError``. A rule, kernel, engine path or transform that takes NumPy instead of its data's
namespace therefore fails here, on CPU, as it would fail (or silently copy to the host) on CuPy.

For each sample of :data:`tests.autograd.op_records.OP_RECORDS` (grouped by primitive), with the
default device set to ``strict`` so that constants made inside the sample land there too:

* forward values, and that the outputs stay on the strict device;
* reverse mode: ``autograd.grad`` of the outputs against a random cotangent (the VJP rules, and the
  engine's accumulation, zeros, casts);
* forward mode: ``reference.func.jvp`` with random tangents (the JVP rules);
* vmap over a batch of two on dim 0 (the batch rules), for the samples vmap supports as drawn;

each compared with the NumPy run **bit for bit** (the strict namespace runs the same NumPy calls,
so any difference means the device run took another path). Primitives not yet converted are
listed in :data:`tests.autograd.strict_xfail.STRICT_XFAIL`, strict xfails that accept only the
namespace errors (so a wrong value still fails, and a fixed rule must leave the list).
"""

from __future__ import annotations

import contextlib
import types

import numpy as np
import pytest

import reference as T
from reference import errors
from reference.backend import BackendError
from reference.func import jvp, vmap
from tests.autograd.op_records import OP_RECORDS
from tests.autograd.strict_xfail import STRICT_XFAIL, STRICT_XFAIL_BOUNDS, STRICT_XFAIL_VMAP
from tests.autograd.test_gradcheck import _draw
from tests.func.test_vmap import DIFFERENTIATE_INSIDE, NEEDS_FIRST_BATCHED, OVERRIDES


@pytest.fixture(autouse=True)
def _host_runs_the_device_path(monkeypatch):
    """The exact float64 repairs of sums, products, norms and softmax (issue 38,
    reference/ops/kernels.py HOST_REPAIRS) run on NumPy arrays only; the device keeps the plain array path.
    Comparing the two bit for bit asks whether they take the same path, so the host runs the plain
    one here (test_reduction_accuracy.py tests the repairs)."""
    from reference.ops import kernels

    monkeypatch.setattr(kernels, "HOST_REPAIRS", False)


STRICT = T.device("strict")
NAMESPACE_ERRORS = (TypeError, BackendError, RuntimeError)
# Factories a sample's program text may call to make tensors of its own (index tensors, masks,
# running stats, T.eye to make a matrix well conditioned); the ``*_like`` ones follow their input.
FACTORIES = frozenset(
    {"tensor", "as_tensor", "zeros", "ones", "eye", "arange", "full", "empty", "linspace", "logspace"}
)


def makes_tensors(fn, _seen=None):
    """Whether ``fn``'s code (or a module-level helper it calls) names a factory."""
    seen = set() if _seen is None else _seen
    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    codes = [code] + [c for c in code.co_consts if hasattr(c, "co_names")]
    for c in codes:
        if FACTORIES & set(c.co_names):
            return True
        for name in c.co_names:
            helper = getattr(fn, "__globals__", {}).get(name)
            if (
                callable(helper)
                and getattr(helper, "__module__", "").startswith("tests.")
                and makes_tensors(helper, seen)
            ):
                return True
    return False


@contextlib.contextmanager
def default_device(dev):
    old = T.get_default_device()
    T.set_default_device(dev)
    try:
        yield
    finally:
        T.set_default_device(old)


def _host(t):
    t = t.detach().resolve_conj()  # (a conjugate view, such as an fft gradient's in PyTorch too)
    return (t if t.device.type == "cpu" else t.cpu()).numpy()


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _randn(rng, t, device=None):
    a = rng.standard_normal(t.shape)
    if t.dtype.kind == "c":
        a = a + 1j * rng.standard_normal(t.shape)
    return T.tensor(a, dtype=t.dtype, device=device)


def _to(xs, device, requires_grad):
    return [T.tensor(x.detach(), device=device, requires_grad=requires_grad) for x in xs]


def on_device(fn, device, _seen=None):
    """``fn`` with the tensors its module defines and it reads (an index tensor, a mask, class
    weights made at import) on ``device``, as a program written for that device has them; the
    helpers it calls from the test modules likewise."""
    seen = {} if _seen is None else _seen
    if fn in seen:
        return seen[fn]
    seen[fn] = fn
    names = set()
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        names |= set(code.co_names)
        stack += [c for c in code.co_consts if hasattr(c, "co_names")]
    moved = {}
    for name in names:
        value = fn.__globals__.get(name)
        if isinstance(value, T.Tensor) and value.device != device:
            moved[name] = T.tensor(value.detach(), device=device)
        elif isinstance(value, types.FunctionType) and value.__module__.startswith("tests."):
            new = on_device(value, device, seen)
            if new is not value:
                moved[name] = new
    if not moved:
        return fn
    out = types.FunctionType(
        fn.__code__, {**fn.__globals__, **moved}, fn.__name__, fn.__defaults__, fn.__closure__
    )
    seen[fn] = out
    return out


def _run(fn, xs, device, seed, default=None):
    """Forward, VJP, JVP of ``fn`` at ``xs`` on ``device``: host arrays of each, and the devices
    the results were on. ``default``: the default device meanwhile (the CPU unless told)."""
    rng = np.random.default_rng(seed)
    res, devices = {}, []
    fn = on_device(fn, device)
    with default_device(default or T.device("cpu")):
        leaves = _to(xs, device, True)
        outs = _outputs(fn(*leaves))
        res["forward"] = [_host(o) for o in outs]
        devices += [o.device for o in outs]
        diff = [o for o in outs if o.requires_grad]
        if diff:
            cts = [_randn(rng, o, device) for o in diff]
            grads = T.autograd.grad(diff, leaves, cts, allow_unused=True)
            res["vjp"] = [None if g is None else _host(g) for g in grads]
            devices += [g.device for g in grads if g is not None]
        ts = tuple(_randn(rng, x, device) for x in xs)
        _, tan = jvp(fn, tuple(_to(xs, device, True)), ts)
        res["jvp"] = [_host(t) for t in _outputs(tan)]
        devices += [t.device for t in _outputs(tan)]
    return res, devices


def _vmap_run(op, fn, xs, device, default=None):
    if op in DIFFERENTIATE_INSIDE:
        inner = fn
        fn = lambda *a: inner(*[x.clone().requires_grad_() for x in a])  # noqa: E731
    fn = on_device(fn, device)
    with default_device(default or T.device("cpu")):
        batched = [T.stack([x.detach(), x.detach() * 1.01]) for x in _to(xs, device, False)]
        out = vmap(fn, in_dims=0)(*batched)
        return [_host(o) for o in _outputs(out)], [o.device for o in _outputs(out)]


def _default_for(op):
    """The strict device as the default device for the samples whose program text makes tensors
    (``T.zeros(2, 3)``, a dropout mask): a program run on a GPU sets it so
    (``torch.set_default_device("cuda")``). Every other sample runs with the CPU as the default,
    so that a rule making its constants with a factory but no ``device=`` fails here."""
    return STRICT if any(makes_tensors(sample[1]) for sample in OP_RECORDS[op]) else None


def _assert_same(name, got, expected):
    assert len(got) == len(expected), name
    for i, (g, e) in enumerate(zip(got, expected)):
        if e is None or g is None:
            assert g is None and e is None, f"{name}[{i}]: defined on one device only"
            continue
        assert g.dtype == e.dtype and g.shape == e.shape, (
            f"{name}[{i}]: {g.dtype}{g.shape} vs {e.dtype}{e.shape}"
        )
        np.testing.assert_array_equal(g, e, err_msg=f"{name}[{i}]: strict differs from NumPy (bit for bit)")


def check_sample(op, label, fn, shapes, kinds, seed=0):
    xs = _draw(shapes, kinds, seed)
    expected, _ = _run(fn, xs, T.device("cpu"), seed + 1)
    got, devices = _run(fn, xs, STRICT, seed + 1, _default_for(op))
    assert all(d == STRICT for d in devices), f"{op}[{label}]: results left the strict device: {devices}"
    for key in expected:
        _assert_same(f"{op}[{label}] {key}", got.get(key, []), expected[key])


def check_vmap_sample(op, label, fn, shapes, kinds, seed=0):
    xs = _draw(shapes, kinds, seed)
    expected, _ = _vmap_run(op, fn, xs, T.device("cpu"))
    got, devices = _vmap_run(op, fn, xs, STRICT, _default_for(op))
    assert all(d == STRICT for d in devices), f"{op}[{label}] vmap: results left the strict device"
    _assert_same(f"{op}[{label}] vmap", got, expected)


# Primitives whose device run takes another algorithm on purpose, so bit-for-bit equality cannot hold.
OTHER_ALGORITHM = {
    "linalg_lstsq": (
        "reference/ops/rules/linalg_decomp.py lstsq_kernel: LAPACK's gelsy (scipy, the default driver) "
        "runs only on NumPy arrays; on any other namespace the SVD solution is used, which agrees only "
        "to rounding"
    ),
}


def _param(op, xfails):
    marks = ()
    if op in OTHER_ALGORITHM:
        marks = pytest.mark.xfail(strict=True, raises=AssertionError, reason=OTHER_ALGORITHM[op])
    elif op in xfails:
        marks = pytest.mark.xfail(strict=True, raises=NAMESPACE_ERRORS, reason=xfails[op])
    return pytest.param(op, marks=marks, id=op)


OPS = sorted(OP_RECORDS)


@pytest.mark.parametrize("op", [_param(op, STRICT_XFAIL) for op in OPS])
def test_strict_matches_numpy(op):
    """Forward, VJP and JVP of every sample of ``op`` on the strict device, bit for bit."""
    for sample in OP_RECORDS[op]:
        check_sample(op, *sample[:4])


VMAP_OPS = sorted(op for op in OP_RECORDS if op not in NEEDS_FIRST_BATCHED)


@pytest.mark.parametrize("op", [_param(op, STRICT_XFAIL_VMAP) for op in VMAP_OPS])
def test_strict_vmap_matches_numpy(op):
    for sample in OVERRIDES.get(op, OP_RECORDS[op]):
        check_vmap_sample(op, *sample[:4])


# ---- the error tracker on the device ------------------------------------------------------------------------


def program(fn, cts):
    """The sample's outputs and its inputs' gradients for the cotangents ``cts`` (host arrays)."""

    def run(*xs):
        outs = _outputs(fn(*xs))
        diff = [o for o in outs if o is not None and o.requires_grad]
        grads = ()
        if diff:
            ct = [T.tensor(c, dtype=o.dtype, device=o.device) for c, o in zip(cts, diff)]
            grads = T.autograd.grad(diff, xs, ct, allow_unused=True)
        return list(outs) + list(grads)

    return run


REAL_OPS = sorted(
    op for op, samples in OP_RECORDS.items() if any(not set(s[3]) & set("cqu") for s in samples)
)


def check_bounds(op, label, fn, shapes, kinds):
    """reference.errors.bound_of on the strict device gives NumPy's values and bounds, bit for bit
    (the tracker computes bounds on the host, keyed by the device arrays' addresses)."""
    xs = _draw(shapes, kinds, 0)
    outs = [o for o in _outputs(fn(*xs)) if o is not None and o.requires_grad]
    rng = np.random.default_rng(1)
    cts = [rng.standard_normal(o.shape) for o in outs]
    run = program(fn, cts)
    arrays = [x.detach().numpy() for x in xs]
    try:
        expected = errors.bound_of(run, arrays, errors.Precision("float64"))
    except (NotImplementedError, RuntimeError):  # no error model (or no derivative) for it on NumPy either
        return
    with default_device(_default_for(op) or T.device("cpu")):
        run = program(on_device(fn, STRICT), cts)
        got = errors.bound_of(run, arrays, errors.Precision("float64"), device=STRICT)
    for name, g, e in (("values", got[0], expected[0]), ("bounds", got[1], expected[1])):
        _assert_same(f"{op}[{label}] {name}", g, e)
    for k, (v, b) in enumerate(zip(*expected[:2])):
        # a finite value with an infinite or nan bound is a check that cannot fail: seven samples
        # had one (logcumsumexp's backward, logit's, slogdet's, pow_scalar_base's at a zero base,
        # segment_reduce's product with zeros) until a non-finite input stopped carrying an error
        # term (reference.errors: where(c, x, -inf)'s blend term of |-inf|, inf·0 through exp)
        if v is None or b is None:
            continue
        v = np.asarray(v)
        with np.errstate(invalid="ignore"):
            vacuous = np.isfinite(v) & ~np.isfinite(np.broadcast_to(np.asarray(b, dtype=np.float64), v.shape))
        assert not vacuous.any(), (
            f"{op}[{label}] result {k}: {int(vacuous.sum())} of {v.size} finite values have a "
            "non-finite bound"
        )


# Error-model bugs the NumPy run itself hits (not device ones), reported rather than hidden.
BOUND_BUGS: dict = {}  # none left (linalg_lu's rectangular bound now says it is not derived)


def _bounds_param(op):
    if op in BOUND_BUGS:
        return pytest.param(
            op, marks=pytest.mark.xfail(strict=True, raises=ValueError, reason=BOUND_BUGS[op])
        )
    return _param(op, STRICT_XFAIL_BOUNDS)


@pytest.mark.parametrize("op", [_bounds_param(op) for op in REAL_OPS])
def test_strict_error_bounds_match_numpy(op):
    for label, fn, shapes, kinds, *_ in OP_RECORDS[op]:
        if not set(kinds) & set("cqu"):
            check_bounds(op, label, fn, shapes, kinds)


def check_within_bound(op, device):
    """Every real-input sample of ``op`` run on ``device`` against the NumPy run: each result
    element within twice the derived bound, compared in the result's own dtype (a complex result
    cast to float64 would drop its imaginary part and compare only the real ones). Returns the
    samples without a derived bound."""
    unbounded = []
    for label, fn, shapes, kinds, *_ in OP_RECORDS[op]:
        if set(kinds) & set("cqu"):
            continue
        xs = _draw(shapes, kinds, 0)
        outs = [o for o in _outputs(fn(*xs)) if o is not None and o.requires_grad]
        rng = np.random.default_rng(1)
        cts = [rng.standard_normal(o.shape) for o in outs]
        run = program(fn, cts)
        try:
            values, bounds, _ = errors.bound_of(
                run, [x.detach().numpy() for x in xs], errors.Precision("float64")
            )
        except (NotImplementedError, RuntimeError) as exc:  # no bound (or no derivative): nothing to judge by
            unbounded.append(f"{label}: {exc}")
            continue
        with default_device(device if _default_for(op) else T.device("cpu")):
            got = program(on_device(fn, device), cts)(
                *[T.tensor(x.detach(), device=device, requires_grad=True) for x in xs]
            )
        assert len(got) == len(values), f"{op}[{label}]"
        for k, (g, v, b) in enumerate(zip(got, values, bounds)):
            if v is None:
                assert g is None, f"{op}[{label}] result {k}: defined on {device} only"
                continue
            assert g.device == device, f"{op}[{label}] result {k} left {device}"
            host = g.detach().resolve_conj().cpu().numpy()
            assert host.shape == v.shape and host.dtype == v.dtype, (
                f"{op}[{label}] result {k}: {host.dtype}{host.shape} vs {v.dtype}{v.shape}"
            )
            gap = np.abs(host - v)
            ok = (gap <= 2 * b) | (host == v)  # (equal infinities and nans are not gaps)
            ok |= np.isnan(host) & np.isnan(v)
            assert ok.all(), (
                f"{op}[{label}] result {k}: {device} differs from NumPy by {gap[~ok].max():.3g}, "
                f"beyond twice the derived bound {b[~ok].max():.3g}"
            )
    return unbounded


# Ops whose real inputs give complex results: the first GPU run (issue 35) cast those to float64,
# dropping the imaginary parts (complex[parts] 1.72, fft_r2c[rfft] 3.41 "beyond the bound"); the
# comparison of tests/autograd/test_gpu_tensor.py runs here on the strict device, where the device
# and NumPy agree bit for bit, so any reported gap is the comparison's own.
COMPLEX_RESULTS = ("complex", "fft_c2c", "fft_r2c", "linalg_eig", "polar", "view_as_complex")


@pytest.mark.parametrize("op", [op for op in COMPLEX_RESULTS if op in REAL_OPS])
def test_gpu_comparison_on_the_strict_device(op):
    check_within_bound(op, STRICT)
