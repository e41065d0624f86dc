"""Factories, dtypes and conversions against PyTorch: keywords (dtype=, device=, requires_grad=),
inferred dtypes, values, float16/bfloat16 and their promotion, Tensor.to and the conversion
methods, promotion queries, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import reference as T


def _name(dt):
    return str(dt).replace("torch.", "")


def _same(rt, rr, exact=True):
    assert tuple(rr.shape) == tuple(rt.shape)
    assert _name(rr.dtype) == _name(rt.dtype), f"{rr.dtype} vs {rt.dtype}"
    assert rr.requires_grad == rt.requires_grad
    a = rt.detach().float().numpy() if rt.dtype == torch.bfloat16 else rt.detach().numpy()
    b = rr.detach().numpy().astype(np.float32) if _name(rr.dtype) == "bfloat16" else rr.detach().numpy()
    if exact:
        np.testing.assert_array_equal(b, a)
    else:
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)


FACTORIES = {
    "tensor_float": lambda M: M.tensor([1.5, 2.0]),
    "tensor_int": lambda M: M.tensor([[1, 2], [3, 4]]),
    "tensor_bool": lambda M: M.tensor([True, False]),
    "tensor_dtype_rg": lambda M: M.tensor([1, 2], dtype=M.float64, device="cpu", requires_grad=True),
    "tensor_half": lambda M: M.tensor([1.5, 2.25], dtype=M.float16),
    "tensor_bf16": lambda M: M.tensor([1.5, 2.25, 3.0078125], dtype=M.bfloat16),
    "tensor_0d": lambda M: M.tensor(3.0),
    "zeros_varargs": lambda M: M.zeros(2, 3),
    "zeros_tuple": lambda M: M.zeros((2, 3), dtype=M.int64),
    "zeros_list": lambda M: M.zeros([2, 0]),
    "zeros_0d": lambda M: M.zeros(()),
    "zeros_rg": lambda M: M.zeros(2, requires_grad=True, device=M.device("cpu")),
    "ones_half": lambda M: M.ones((2,), dtype=M.half),
    "ones_rg": lambda M: M.ones(2, 2, dtype=M.float64, requires_grad=True),
    "full_int": lambda M: M.full((2,), 3),
    "full_float": lambda M: M.full((2, 2), 1.5),
    "full_bool": lambda M: M.full((2,), True),
    "full_dtype": lambda M: M.full([3], 2, dtype=M.float64, requires_grad=True),
    "empty_is_zeros_shape": lambda M: M.empty(2, 3).zero_(),
    "empty_like_shape": lambda M: M.empty_like(M.ones(2, dtype=M.int32)).zero_(),
    "zeros_like": lambda M: M.zeros_like(M.ones(2, 3), dtype=M.float64, requires_grad=True),
    "ones_like": lambda M: M.ones_like(M.ones(2, dtype=M.int64)),
    "full_like": lambda M: M.full_like(M.ones(2), 7, dtype=M.float16),
    "arange_int": lambda M: M.arange(5),
    "arange_start_end": lambda M: M.arange(2, 7, 2),
    "arange_float": lambda M: M.arange(0, 1, 0.25),
    "arange_float_start": lambda M: M.arange(1.0, 4),
    "arange_negative": lambda M: M.arange(5, 0, -2),
    "arange_dtype_rg": lambda M: M.arange(3, dtype=M.float64, requires_grad=True),
    "arange_empty": lambda M: M.arange(0),
    "linspace": lambda M: M.linspace(0, 1, 7),
    "linspace_64": lambda M: M.linspace(-2, 3, 11, dtype=M.float64, requires_grad=True),
    "linspace_one": lambda M: M.linspace(2, 5, 1),
    "linspace_zero": lambda M: M.linspace(2, 5, 0),
    "logspace": lambda M: M.logspace(0, 2, 5, dtype=M.float64),
    "logspace_base": lambda M: M.logspace(-1, 1, 3, base=2.0, dtype=M.float64),
    "eye": lambda M: M.eye(3),
    "eye_rect": lambda M: M.eye(2, 4, dtype=M.int64),
    "eye_rg": lambda M: M.eye(2, requires_grad=True, dtype=M.float64),
    "new_tensor": lambda M: M.ones(2, dtype=M.float64).new_tensor([1, 2]),
    "new_full": lambda M: M.ones(2).new_full((2, 2), 3),
    "new_zeros": lambda M: M.ones(2, dtype=M.int32).new_zeros(2, 3),
    "new_ones": lambda M: M.ones(2).new_ones((2,), dtype=M.float64, requires_grad=True),
    "new_empty_shape": lambda M: M.ones(2).new_empty((3,)).zero_(),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factory_as_torch(name):
    fn = FACTORIES[name]
    _same(fn(torch), fn(T), exact=not name.startswith(("linspace", "logspace")))


def test_empty_is_zero_filled():
    """The reference's torch.empty is zeros (documented): uninitialised memory would differ per run."""
    assert not T.empty(3, 4).numpy().any()
    assert not T.empty_like(T.ones(2)).numpy().any()


def test_linspace_float32_as_torch():
    """PyTorch counts the first half up from start and the second down from end (the endpoints
    exact); its vectorised float32 kernel may round interior points 1 ulp differently."""
    for args in ((0, 1, 7), (-3.5, 10.25, 20), (1, 0, 6)):
        r, t = T.linspace(*args).numpy(), torch.linspace(*args).numpy()
        assert r[0] == t[0] and r[-1] == t[-1]
        np.testing.assert_allclose(r, t, rtol=3e-7, atol=3e-7)


CONVERSIONS = {
    "double": lambda M, x: x.double(),
    "float": lambda M, x: x.double().float(),
    "half": lambda M, x: x.half(),
    "bfloat16": lambda M, x: x.bfloat16(),
    "long": lambda M, x: (x * 3).long(),
    "int": lambda M, x: (x * 3).int(),
    "short": lambda M, x: (x * 3).short(),
    "bool": lambda M, x: x.bool(),
    "type_dtype": lambda M, x: x.type(M.float64),
    "type_string": lambda M, x: x.type("torch.DoubleTensor"),
    "type_as": lambda M, x: x.type_as(M.ones(1, dtype=M.int64)),
    "to_dtype": lambda M, x: x.to(M.float16),
    "to_dtype_kw": lambda M, x: x.to(dtype=M.float64),
    "to_other": lambda M, x: x.to(M.ones(1, dtype=M.float64)),
    "to_device_dtype": lambda M, x: x.to("cpu", M.float64),
    "to_device_kw": lambda M, x: x.to(device="cpu", dtype=M.int64),
    "to_device_object": lambda M, x: x.to(M.device("cpu")),
    "to_copy": lambda M, x: x.to(M.float32, copy=True),
    "cpu": lambda M, x: x.cpu(),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversion_as_torch(name):
    fn = CONVERSIONS[name]
    a = np.array([[0.5, -1.25, 2.0], [0.0, 3.75, -0.5]], dtype=np.float32)
    _same(fn(torch, torch.tensor(a)), fn(T, T.tensor(a)))


def test_to_same_dtype_is_the_tensor_and_copy_is_not():
    for M in (torch, T):
        x = M.ones(2)
        assert x.to(M.float32) is x and x.to("cpu") is x
        y = x.to(M.float32, copy=True)
        assert y is not x and not y._is_view()


def test_conversion_gradients_as_torch():
    """ToCopyBackward0 casts the gradient back; float16 in the middle rounds as torch rounds."""
    a = np.array([0.1, -1.3, 2.7])
    outs = []
    for M in (torch, T):
        x = M.tensor(a, dtype=M.float64, requires_grad=True)
        y = (x.half() * 3).float().double() * x
        (g,) = M.autograd.grad(y.sum(), x)
        outs.append((y.grad_fn.name(), y.detach().numpy(), g.numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_array_equal(outs[1][1], outs[0][1])
    np.testing.assert_array_equal(outs[1][2], outs[0][2])


def test_type_strings():
    for M in (torch, T):
        assert M.ones(1).type() == "torch.FloatTensor"
        assert M.ones(1, dtype=M.int64).type() == "torch.LongTensor"
        assert M.ones(1, dtype=M.bfloat16).type() == "torch.BFloat16Tensor"


DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_and_can_cast(a):
    for b in DTYPES:
        ta, tb = getattr(torch, a), getattr(torch, b)
        ra, rb = getattr(T, a if a != "bool" else "bool_"), getattr(T, b if b != "bool" else "bool_")
        assert _name(T.promote_types(ra, rb)) == _name(torch.promote_types(ta, tb)), (a, b)
        assert T.can_cast(ra, rb) == torch.can_cast(ta, tb), (a, b)


@pytest.mark.parametrize("a", DTYPES)
def test_binary_promotion_with_half_types(a):
    """Tensor-tensor, tensor-0d and tensor-number promotion involving float16/bfloat16, as torch."""
    for b in ("float16", "bfloat16"):
        for make in (
            lambda M, x, y: M.ones(2, dtype=x) + M.ones(2, dtype=y),
            lambda M, x, y: M.ones(2, dtype=x) * M.ones((), dtype=y),
            lambda M, x, y: M.ones((), dtype=x) * M.ones(2, dtype=y),
            lambda M, x, y: M.ones(2, dtype=y) * 2.5,
            lambda M, x, y: M.ones(2, dtype=y) * 2,
        ):
            ta, tb = getattr(torch, a), getattr(torch, b)
            ra, rb = getattr(T, a if a != "bool" else "bool_"), getattr(T, b)
            assert _name(make(T, ra, rb).dtype) == _name(make(torch, ta, tb).dtype), (a, b)
            assert _name(T.result_type(T.ones(2, dtype=ra), T.ones(2, dtype=rb))) == _name(
                torch.result_type(torch.ones(2, dtype=ta), torch.ones(2, dtype=tb))
            )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_ops_keep_half_dtypes(dtype):
    """Existing ops on float16/bfloat16 tensors keep the dtype and agree with torch's values
    (torch computes half types in float32 internally and rounds once; so does NumPy for these ops)."""
    a = np.array([[0.5, -1.25, 2.0], [0.0, 3.75, -0.5]], dtype=np.float32)
    for fn in (
        lambda M, x: x + x,
        lambda M, x: x * 3,
        lambda M, x: -x,
        lambda M, x: x.relu(),
        lambda M, x: x.abs(),
        lambda M, x: x.t(),
        lambda M, x: x.reshape(3, 2),
        lambda M, x: M.cat([x, x]),
        lambda M, x: M.flip(x, (0,)),
        lambda M, x: x.roll(1),
        lambda M, x: M.tril(x),
        lambda M, x: x.repeat(2, 1),
        lambda M, x: M.diag(x),
    ):
        rt = fn(torch, torch.tensor(a, dtype=getattr(torch, dtype)))
        rr = fn(T, T.tensor(a, dtype=getattr(T, dtype)))
        _same(rt, rr)


def test_float16_gradients_as_torch():
    """float16 leaves differentiate (the gradient is float16, as in torch)."""
    a = np.array([0.5, -1.25, 2.0], dtype=np.float16)
    outs = []
    for M in (torch, T):
        x = M.tensor(a, requires_grad=True)
        (g,) = M.autograd.grad((x * x + x.flip(0)).sum(), x)
        outs.append(g)
    _same(outs[0], outs[1])


def test_bfloat16_gradients_as_torch():
    """bfloat16 leaves differentiate (the gradient is bfloat16, as in torch); more ops in
    tests/autograd/test_lowp_autograd.py."""
    a = np.array([0.5, -1.25, 2.0], dtype=np.float32)
    outs = []
    for M in (torch, T):
        x = M.tensor(a, dtype=M.bfloat16, requires_grad=True)
        (g,) = M.autograd.grad((x * x + x.flip(0)).sum(), x)
        outs.append(g)
    _same(outs[0], outs[1])


def test_finfo_iinfo():
    for name in ("float16", "bfloat16", "float32", "float64"):
        ft, fr = torch.finfo(getattr(torch, name)), T.finfo(getattr(T, name))
        for attr in ("eps", "max", "min", "tiny", "smallest_normal", "resolution", "bits"):
            assert float(getattr(fr, attr)) == float(getattr(ft, attr)), (name, attr)
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        it, ir = torch.iinfo(getattr(torch, name)), T.iinfo(getattr(T, name))
        assert (ir.min, ir.max, ir.bits) == (it.min, it.max, it.bits)


def test_device():
    for M in (torch, T):
        x = M.ones(2)
        assert str(x.device) == "cpu" and x.device.type == "cpu" and not x.is_cuda
        assert M.zeros(2, device=x.device).shape == (2,)
        assert M.zeros(2, device=torch.device("cpu")).shape == (2,)


@pytest.mark.parametrize(
    "fn",
    [
        lambda: T.zeros(2, device="cuda"),
        lambda: T.tensor([1.0], device="cuda:0"),
        lambda: T.ones(2).to("cuda"),
        lambda: T.ones(2).cuda(),
    ],
)
def test_cuda_without_cupy_says_why(fn):
    """CUDA tensors are CuPy arrays: without CuPy and a GPU the backend's error names the reason
    (never a silent CPU tensor)."""
    from reference.backend import BackendError, cupy_available

    if cupy_available():
        pytest.skip("CuPy and a GPU are present")
    with pytest.raises(BackendError, match="cupy"):
        fn()


def test_unknown_device_types_refused():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, strict device type"):
        T.arange(3, device=torch.device("meta"))
    assert repr(T.device("cuda")) == "device(type='cuda')"
    assert repr(T.device("cuda:1")) == "device(type='cuda', index=1)" and str(T.device("cuda:1")) == "cuda:1"


ERRORS = {
    "arange_int_rg": lambda M: M.arange(3, requires_grad=True),
    "zeros_int_rg": lambda M: M.zeros(2, dtype=M.int64, requires_grad=True),
    "linspace_negative": lambda M: M.linspace(0, 1, -1),
    "arange_step0": lambda M: M.arange(0, 5, 0),
    "arange_sign": lambda M: M.arange(5, 0, 1),
    "eye_negative": lambda M: M.eye(-1),
    "zeros_negative": lambda M: M.zeros(-1),
    "ones_negative": lambda M: M.ones(2, -3),
    "empty_negative": lambda M: M.empty(-1),
    "full_negative": lambda M: M.full((2, -1), 1.0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as et:
        fn(torch)
    with pytest.raises(Exception) as er:
        fn(T)
    assert type(er.value).__name__ == type(et.value).__name__
    assert str(er.value) == str(et.value)
