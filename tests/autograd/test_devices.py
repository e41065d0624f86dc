"""Devices and array namespaces: the strict namespace's walls, the Tensor layer's device
semantics (PyTorch's), and planted bugs that the strict run must catch."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import reference as T
from reference import backend
from reference.autograd.tensor import _make
from reference.ops import RULES, kernels
from reference.testing import strict_xp as xp
from tests.autograd.op_records import OP_RECORDS
from tests.autograd.test_strict_namespace import check_sample, check_vmap_sample

STRICT = T.device("strict")


# ---- the strict namespace behaves toward NumPy as a CuPy array does ---------------------------------------


def test_implicit_conversion_refused_with_cupys_message():
    a = xp.asarray(np.arange(6.0).reshape(2, 3))
    for convert in (np.asarray, np.array, lambda v: v.__array__()):
        with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
            convert(a)
    host = a.get()
    assert type(host) is np.ndarray and np.array_equal(host, np.arange(6.0).reshape(2, 3))
    assert type(xp.asnumpy(a)) is np.ndarray


@pytest.mark.parametrize(
    "mix",
    [
        lambda a, h: a + h,
        lambda a, h: h + a,
        lambda a, h: a * np.array(2.0),  # even a 0-d NumPy array: CuPy takes NumPy scalars only
        lambda a, h: xp.add(a, h),
        lambda a, h: xp.concatenate([a, h]),
        lambda a, h: xp.where(a > 0, a, h),
    ],
)
def test_mixing_with_numpy_arrays_refused(mix):
    a, h = xp.asarray(np.ones(3)), np.ones(3)
    with pytest.raises(TypeError, match="Unsupported type"):
        mix(a, h)


@pytest.mark.parametrize(
    "call",
    [
        np.exp,
        lambda a: np.add(a, 1.0),
        lambda a: np.concatenate([a, a]),
        lambda a: np.add.at(a, np.array([0, 0]), 1.0),
        lambda a: np.lib.stride_tricks.as_strided(a, (2,), (8,)),
        scipy.special.erf,
        lambda a: scipy.linalg.solve(xp.eye(3), a),
    ],
)
def test_numpy_and_scipy_functions_refused(call):
    import scipy.linalg  # noqa: F401  (used by the last case)

    with pytest.raises(TypeError):
        call(xp.asarray(np.linspace(0.1, 0.9, 3)))


def test_the_namespace_computes_like_numpy_and_returns_strict_arrays():
    h = np.linspace(-1, 1, 6).reshape(2, 3)
    a = xp.asarray(h)
    assert type(a.sum()) is xp.StrictArray and a.sum().shape == ()  # reductions: 0-d arrays, as CuPy's
    assert np.array_equal(xp.exp(a).get(), np.exp(h))
    assert np.array_equal((np.float64(2.0) * a + 1).get(), 2.0 * h + 1)  # NumPy scalars mix, as in CuPy
    assert np.array_equal(a[np.array([1, 0])].get(), h[[1, 0]])  # NumPy index arrays convert, as in CuPy
    b = xp.zeros(4)
    backend.add_at(b, np.array([0, 0, 3]), xp.asarray(np.array([1.0, 2.0, 3.0])))
    assert np.array_equal(b.get(), [3.0, 0, 0, 3.0])
    v = xp.lib.stride_tricks.as_strided(a.reshape(-1), shape=(2, 2), strides=(8, 8))
    assert np.array_equal(v.get(), [[h.flat[0], h.flat[1]], [h.flat[1], h.flat[2]]])
    assert np.array_equal(backend.special_of(xp).erf(a).get(), scipy.special.erf(h))
    assert backend.special_of(np) is scipy.special
    assert backend.namespace_of(a, 2.0, None) is xp and backend.device_of(a) == ("strict", None)
    with pytest.raises(backend.BackendError, match="different backends"):
        backend.namespace_of(a, h)
    assert not hasattr(a.flags, "writeable")  # CuPy's flags have none


# ---- the Tensor layer's devices ---------------------------------------------------------------------------


def test_device_objects_and_repr():
    assert repr(T.device("cpu")) == "device(type='cpu')"
    assert repr(T.device("cuda", 0)) == "device(type='cuda', index=0)" and str(T.device("cuda:0")) == "cuda:0"
    x = T.tensor([1.0, 2.0], dtype=T.float64, device="strict", requires_grad=True)
    assert x.device == STRICT and not x.is_cpu and not x.is_cuda
    assert repr(x) == "tensor([1., 2.], dtype=float64, device='strict', requires_grad=True)"
    assert T.tensor([1.0]).device == T.device("cpu") and T.tensor([1.0]).is_cpu


def test_mixing_devices_is_pytorchs_error():
    x = T.tensor([1.0, 2.0], device="strict")
    y = T.tensor([3.0, 4.0])
    with pytest.raises(
        RuntimeError,
        match="Expected all tensors to be on the same device, but found at least two devices, strict and cpu!",
    ):
        x + y
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        T.cat([x, y])


def test_cpu_scalars_join_the_device_as_in_pytorch():
    x = T.tensor([1.0, 2.0], device="strict")
    for out in (x + T.tensor(2.0), T.tensor(2.0) * x, x + 2.0, 2.0 - x):
        assert out.device == STRICT


def test_transfers_are_differentiable_and_explicit():
    x = T.tensor([0.5, -1.0], dtype=T.float64, device="strict", requires_grad=True)
    y = x.cpu()
    assert y.device == T.device("cpu") and y.grad_fn.name() == "ToCopyBackward0"
    (y.exp() * 3).sum().backward()
    assert x.grad.device == STRICT
    np.testing.assert_array_equal(x.grad.cpu().numpy(), 3 * np.exp([0.5, -1.0]))
    z = y.to("strict")
    assert z.device == STRICT and z.to(STRICT) is z and x.cpu().cpu() is not None
    with pytest.raises(TypeError, match="can't convert strict device type tensor to numpy"):
        x.detach().numpy()
    assert type(x.detach().numpy(force=True)) is np.ndarray


def test_factories_take_device_and_the_default_device():
    assert T.zeros(2, 3, device="strict").device == STRICT
    assert T.arange(3, device=STRICT).device == STRICT
    assert T.eye(2, device="strict").device == STRICT
    x = T.ones(2, device="strict")
    assert T.zeros_like(x).device == STRICT and T.full_like(x, 2.0).device == STRICT
    assert T.tensor(x).device == STRICT and x.new_zeros(3).device == STRICT  # new_*: self's device, as torch
    old = T.get_default_device()
    try:
        T.set_default_device("strict")
        assert T.tensor([1.0]).device == STRICT and T.zeros(2).device == STRICT
    finally:
        T.set_default_device(old)
    assert T.zeros(2).device == T.device("cpu")


# ---- planted bugs: a rule that computes with NumPy, or makes a CPU constant, is caught ----------------------


def _exp_sample():
    return OP_RECORDS["exp"][0]


def test_a_forward_calling_numpy_on_data_is_caught(monkeypatch):
    check_sample("exp", *_exp_sample()[:4])  # as converted: passes
    monkeypatch.setattr(RULES["exp"], "forward", np.exp)
    with pytest.raises(TypeError, match="does not support ufuncs"):
        check_sample("exp", *_exp_sample()[:4])


def test_a_vjp_calling_numpy_on_data_is_caught(monkeypatch):
    monkeypatch.setattr(RULES["exp"], "grads", (lambda c, g: g * _make(np.exp(c.result._data)),))
    with pytest.raises(TypeError):
        check_sample("exp", *_exp_sample()[:4])


def test_a_rule_making_a_cpu_constant_is_caught(monkeypatch):
    monkeypatch.setattr(RULES["exp"], "grads", (lambda c, g: g * c.result * T.ones(c.result.shape),))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        check_sample("exp", *_exp_sample()[:4])


def test_a_batch_rule_calling_numpy_is_caught(monkeypatch):
    from reference.ops.rule import BATCH_ELEMENTWISE

    assert RULES["exp"].batch == BATCH_ELEMENTWISE
    check_vmap_sample("exp", *_exp_sample()[:4])
    monkeypatch.setattr(RULES["exp"], "forward", lambda a: np.asarray(a) * 0 + np.exp(np.asarray(a)))
    with pytest.raises(TypeError, match="Implicit conversion"):
        check_vmap_sample("exp", *_exp_sample()[:4])


def test_copy_across_devices_and_save_on_cpu():
    """copy_ crosses devices (PyTorch's one cross-device op) and stays differentiable; save_on_cpu
    packs a device tensor as a CPU copy and unpacks it onto its device again."""
    x = T.tensor([0.5, -1.0], dtype=T.float64, device="strict", requires_grad=True)
    z = T.zeros(2, dtype=T.float64)
    z.copy_(x * 2)
    assert z.device == T.device("cpu")
    z.sum().backward()
    assert x.grad.device == STRICT and x.grad.cpu().tolist() == [2.0, 2.0]
    x.grad = None
    for pin in (False, True):
        with T.autograd.graph.save_on_cpu(pin_memory=pin):
            y = (x * x).sum()
        y.backward()
        assert x.grad.device == STRICT and x.grad.cpu().tolist() == [1.0, -2.0]
        x.grad = None


@pytest.mark.parametrize("op", ["exp", "mm", "softmax", "cumsum"])
def test_gradcheck_and_gradgradcheck_on_the_device(op):
    """gradcheck perturbs device inputs on their device and compares the Jacobians on the host."""
    from reference.autograd import gradcheck, gradgradcheck
    from tests.autograd.test_gradcheck import _draw

    label, fn, shapes, kinds = OP_RECORDS[op][0][:4]
    xs = [T.tensor(x.detach(), device="strict", requires_grad=True) for x in _draw(shapes, kinds, 0)]
    assert gradcheck(fn, xs, name=op) and gradgradcheck(fn, xs, name=op)


def test_a_gradient_on_another_device_is_refused():
    x = T.tensor([1.0, 2.0], device="strict", requires_grad=True)
    with pytest.raises(
        RuntimeError, match="invalid gradient at index 0 - expected device strict but got cpu"
    ):
        (x * 2).backward(T.ones(2))


@pytest.fixture
def host_plain_path(monkeypatch):
    """The host without its exact float64 repairs (kernels.HOST_REPAIRS: softmax, sums, norms; the
    device keeps the plain array path), so a host run and a device run compare bit for bit."""
    monkeypatch.setattr(kernels, "HOST_REPAIRS", False)


def _both(fn, *arrays):
    """fn on CPU tensors and on strict ones: values and gradients, host arrays."""
    out = []
    for dev in ("cpu", "strict"):
        xs = [T.tensor(a, device=dev, requires_grad=a.dtype.kind == "f") for a in arrays]
        y = fn(dev, *xs)
        diff = [x for x in xs if x.requires_grad]
        gs = T.autograd.grad(y.sum(), diff)
        assert y.device == T.device(dev) and all(g.device == T.device(dev) for g in gs)
        out.append([y.detach().cpu().numpy()] + [g.cpu().numpy() for g in gs])
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_paths_beyond_the_records_attention_masks_and_embedding_bag(host_plain_path):
    """Branches the op records do not reach, which build host-side tables from masks and offsets."""
    F = T.nn.functional
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 3, 4))
    mask = np.tril(np.ones((3, 3), dtype=bool))
    bias = np.where(mask, 0.0, -np.inf)
    _both(lambda d, x: F.scaled_dot_product_attention(x, x, x, attn_mask=T.tensor(mask, device=d)), q)
    _both(lambda d, x: F.scaled_dot_product_attention(x, x, x, attn_mask=T.tensor(bias, device=d)), q)
    _both(lambda d, x: F.scaled_dot_product_attention(x, x, x, is_causal=True), q)
    w = rng.standard_normal((5, 2))
    for mode in ("sum", "mean", "max"):
        _both(
            lambda d, w_, mode=mode: F.embedding_bag(
                T.tensor([1, 2, 4, 3], device=d), w_, T.tensor([0, 2, 4], device=d), mode=mode
            ),
            w,
        )
