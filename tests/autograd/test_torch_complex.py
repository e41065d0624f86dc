"""Complex tensors: the reference against PyTorch 2.13 on the same program text, for values,
first- and second-order gradients (with complex cotangents, PyTorch's convention: the gradient of
a real loss is dL/d(re z) + i dL/d(im z), docs/complex.md), dtype promotion, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import reference

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.torch

RTOL, ATOL = 1e-10, 1e-12


def _np(t):
    return t.detach().numpy(force=True) if hasattr(t, "detach") else np.asarray(t)


def _dtype_name(dt):
    return str(dt).replace("torch.", "")


def _random_like(rng, shape, complex_):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


def evaluate(F, prog, arrays, order=2):
    """Values, the VJP with random (complex where the output is) cotangents, and the VJP of that."""
    xs = [
        F.tensor(a, dtype=F.complex128 if np.iscomplexobj(a) else F.float64, requires_grad=True)
        for a in arrays
    ]
    out = prog(F, *xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    values = [(_np(o), _dtype_name(o.dtype)) for o in outs]
    rng = np.random.default_rng(0)
    diff = [o for o in outs if o.requires_grad]
    if order < 1 or not diff:
        return values, None, None
    vs = [F.tensor(_random_like(rng, tuple(o.shape), o.is_complex()), dtype=o.dtype) for o in diff]
    gs = F.autograd.grad(diff, xs, vs, create_graph=order >= 2, allow_unused=True)
    grads = [None if g is None else _np(g) for g in gs]
    grads2 = None
    live = [(g, x) for g, x in zip(gs, xs) if g is not None and g.requires_grad]
    if order >= 2 and live:
        ws = [F.tensor(_random_like(rng, tuple(g.shape), g.is_complex()), dtype=g.dtype) for g, _ in live]
        g2 = F.autograd.grad([g for g, _ in live], xs, ws, allow_unused=True)
        grads2 = [None if g is None else _np(g) for g in g2]
    return values, grads, grads2


def _close(a, b, what):
    if a is None and b is None:
        return
    a = np.zeros_like(b) if a is None else a
    b = np.zeros_like(a) if b is None else b
    assert a.shape == b.shape, f"{what}: shape {a.shape} but PyTorch gives {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} but PyTorch gives {b.dtype}"
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=what)


def agree(prog, arrays, order=2, label=""):
    got = evaluate(reference, prog, arrays, order)
    want = evaluate(torch, prog, arrays, order)
    assert len(got[0]) == len(want[0])
    for k, ((a, da), (b, db)) in enumerate(zip(got[0], want[0])):
        assert da == db, f"{label} output {k}: dtype {da} but PyTorch gives {db}"
        _close(a, b, f"{label} output {k}")
    for name, ga, gb in (("grad", got[1], want[1]), ("grad of grad", got[2], want[2])):
        if ga is None and gb is None:
            continue
        ga = ga if ga is not None else [None] * len(gb)
        gb = gb if gb is not None else [None] * len(ga)
        for k, (a, b) in enumerate(zip(ga, gb)):
            _close(a, b, f"{label} {name} of input {k}")


_RNG = np.random.default_rng(7)
Z = _RNG.standard_normal((2, 3)) + 1j * _RNG.standard_normal((2, 3))  # complex, any
W = _RNG.standard_normal((3,)) + 1j * _RNG.standard_normal((3,))
Q = np.abs(_RNG.standard_normal((2, 3))) + 0.5 + 1j * _RNG.standard_normal((2, 3))  # re > 0.5
U = (np.abs(_RNG.standard_normal(4)) % 0.5 + 0.2) * np.exp(1j * _RNG.uniform(-3, 3, 4))  # in the unit disk
R = _RNG.standard_normal((2, 3))
ZERO = np.array([0j, 1 + 1j, -2 + 0j, 0.5j])

UNARY = {
    "exp": (lambda F, z: z.exp(), Z),
    "log": (lambda F, z: z.log(), Q),
    "sqrt": (lambda F, z: z.sqrt(), Q),
    "sin": (lambda F, z: z.sin(), Z),
    "cos": (lambda F, z: F.cos(z), Z),
    "tan": (lambda F, z: F.tan(z * 0.5), Z),
    "tanh": (lambda F, z: (z * 0.5).tanh(), Z),
    "sigmoid": (lambda F, z: (z * 0.5).sigmoid(), Z),
    "sinh": (lambda F, z: F.sinh(z), Z),
    "cosh": (lambda F, z: F.cosh(z), Z),
    "asin": (lambda F, z: F.asin(z), U),
    "acos": (lambda F, z: F.acos(z), U),
    "atan": (lambda F, z: F.atan(z), U),
    "asinh": (lambda F, z: F.asinh(z), U),
    "acosh": (lambda F, z: F.acosh(z), Q + 1.0),
    "atanh": (lambda F, z: F.atanh(z), U),
    "log2": (lambda F, z: F.log2(z), Q),
    "log10": (lambda F, z: F.log10(z), Q),
    "log1p": (lambda F, z: F.log1p(z), Q),
    "expm1": (lambda F, z: F.expm1(z), Z),
    "exp2": (lambda F, z: F.exp2(z), Z),
    "rsqrt": (lambda F, z: F.rsqrt(z), Q),
    "reciprocal": (lambda F, z: z.reciprocal(), Q),
    "neg": (lambda F, z: -z, Z),
    "square": (lambda F, z: z * z, Z),
    "abs": (lambda F, z: z.abs(), Z),
    "abs_at_zero": (lambda F, z: z.abs(), ZERO),
    "angle": (lambda F, z: z.angle(), Z),
    "angle_at_zero": (lambda F, z: F.angle(z), ZERO),
    "sgn": (lambda F, z: z.sgn(), Z),
    "sgn_at_zero": (lambda F, z: F.sgn(z), ZERO),
    "conj": (lambda F, z: z.conj() * z.sin(), Z),
    "conj_physical": (lambda F, z: F.conj_physical(z) * 2.0, Z),
    "resolve_conj": (lambda F, z: z.conj().resolve_conj().exp(), Z),
    "real": (lambda F, z: z.real * z.imag, Z),
    "real_of_real": (lambda F, x: F.real(x) * 2.0, R),
    "view_as_real": (lambda F, z: F.view_as_real(z).sin(), Z),
    "view_as_real_of_transpose": (lambda F, z: F.view_as_real(z.t()), Z),
    "view_as_complex": (lambda F, x: F.view_as_complex(x.reshape(3, 2)).exp(), R),
    "abs_squared": (lambda F, z: (z * z.conj()).real, Z),
    "sum": (lambda F, z: z.sum(), Z),
    "sum_dim": (lambda F, z: z.sum(1, keepdim=True) * z, Z),
    "mean": (lambda F, z: z.mean(0), Z),
    "prod": (lambda F, z: z.prod(), Z),
    "prod_with_zero": (lambda F, z: z.prod(), ZERO),
    "prod_dim": (lambda F, z: z.prod(1), Z),
    "cumsum": (lambda F, z: z.cumsum(1), Z),
    "cumprod": (lambda F, z: z.cumprod(1), Z),
    "pow_int": (lambda F, z: z**3, Z),
    "pow_frac": (lambda F, z: z**2.5, Q),
    "pow_complex_exponent": (lambda F, z: z ** (0.5 + 1j), Q),
    "number_pow": (lambda F, z: 2.0**z, Z),
    "complex_number_pow": (lambda F, z: (1 + 2j) ** z, Z),
    "rsub": (lambda F, z: (1 - 2j) - z, Z),
    "rdiv": (lambda F, z: (1 - 2j) / z, Q),
    "times_complex_number": (lambda F, z: z * (0.5 - 2j) + 1j, Z),
    "real_times_complex_number": (lambda F, x: x * (0.5 - 2j), R),
    "to_complex": (lambda F, x: x.to(F.complex128) * (1 + 1j), R),
    "cdouble": (lambda F, x: x.cdouble().exp(), R),
    "to_real": (lambda F, z: z.abs().to(F.complex128).real, Z),
    "index": (lambda F, z: z[1, ::2] * z[0, 1:], Z),
    "transpose_reshape": (lambda F, z: z.t().reshape(-1) * 1j, Z),
    "cat_stack": (lambda F, z: F.cat([z, F.stack([z[0], z[1]])], 0).exp(), Z),
    "where": (lambda F, z: F.where(z.abs() > 1, z, z * z), Z),
    "masked_fill": (lambda F, z: z.masked_fill(z.abs() > 1, 2 - 1j) * z, Z),
    "flip": (lambda F, z: F.flip(z, (1,)) * z, Z),
    "mH": (lambda F, z: z.mH @ z, Z),
    "H": (lambda F, z: z.H * 2.0, Z),
    "sinc": (lambda F, z: F.sinc(z), Z),
    "pad_reflect": (lambda F, z: F.nn.functional.pad(z.unsqueeze(0), (2, 1), mode="reflect") * 1j, Z),
    "conv1d": (lambda F, z: F.nn.functional.conv1d(z.unsqueeze(0), z[:, :2].reshape(1, 2, 2) * 1j), Z),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_agrees_with_torch(name):
    prog, data = UNARY[name]
    agree(prog, [data], label=name)


BINARY = {
    "add": (lambda F, a, b: a + b, Z, W),
    "add_alpha": (lambda F, a, b: F.add(a, b, alpha=2.5), Z, W),
    "sub": (lambda F, a, b: a - b, Z, W),
    "mul": (lambda F, a, b: a * b, Z, W),
    "div": (lambda F, a, b: a / b, Z, Q[0]),
    "pow": (lambda F, a, b: a**b, Q, W * 0.5),
    "mul_real_complex": (lambda F, a, b: a * b, R, W),
    "div_complex_real": (lambda F, a, b: a / (b * b + 0.5), Z, R),
    "add_real_complex": (lambda F, a, b: (a + b).exp(), R, Z),
    "complex": (lambda F, a, b: F.complex(a, b) * F.complex(b, a), R, R[::-1].copy()),
    "polar": (lambda F, a, b: F.polar(a.abs() + 0.1, b), R, R[::-1].copy()),
    "mm": (lambda F, a, b: a @ b.reshape(3, 1), Z, W),
    "matmul_vector": (lambda F, a, b: F.matmul(a, b), Z, W),
    "mv": (lambda F, a, b: F.mv(a, b), Z, W),
    "bmm": (lambda F, a, b: F.bmm(a.reshape(1, 2, 3), F.stack([b, b * 1j], 1).reshape(1, 3, 2)), Z, W),
    "addmm": (lambda F, a, b: F.addmm(a[:, :1], a, F.stack([b, b], 1)), Z, W),
    "lerp": (lambda F, a, b: F.lerp(a, b, 0.3), Z, W),
    "addcmul": (lambda F, a, b: F.addcmul(a, a, b, value=0.5), Z, W),
    "vdot": (lambda F, a, b: F.vdot(a[0], b), Z, W),
    "dot": (lambda F, a, b: F.dot(a[1], b), Z, W),
    "vecdot": (lambda F, a, b: F.linalg.vecdot(a, b), Z, W),
    "cross": (lambda F, a, b: F.linalg.cross(a, b.expand(2, 3)), Z, W),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_agrees_with_torch(name):
    prog, a, b = BINARY[name]
    agree(prog, [a, b], label=name)


def test_the_convention_on_a_known_case():
    """f(z) = |z|^2 = z conj(z): PyTorch's gradient of the real loss is 2z (dL/dx + i dL/dy = 2x + 2iy),
    the conjugate Wirtinger derivative times 2; for the holomorphic z^2 with cotangent 1 it is conj(2z)."""
    z = reference.tensor([1 + 2j, -0.5 + 0.25j], dtype=reference.complex128, requires_grad=True)
    (g,) = reference.autograd.grad((z * z.conj()).real.sum(), z)
    np.testing.assert_allclose(_np(g), 2 * _np(z))
    (g,) = reference.autograd.grad((z * z).sum(), z, reference.tensor(1 + 0j, dtype=reference.complex128))
    np.testing.assert_allclose(_np(g), np.conj(2 * _np(z)))


def test_leaf_grad_accumulates_complex():
    out = []
    for F in (reference, torch):
        z = F.tensor(Z, dtype=F.complex128, requires_grad=True)
        (z * z).abs().sum().backward()
        (z.exp()).real.sum().backward()
        out.append((_np(z.grad), _dtype_name(z.grad.dtype)))
    _close(out[0][0], out[1][0], "z.grad")
    assert out[0][1] == out[1][1] == "complex128"


def test_jvp_agrees_with_torch_func():
    """Forward mode: the JVP of a holomorphic op is f'(z) t (no conjugate); of abs Re(conj(t) sgn(z))."""
    progs = {
        "exp": lambda F, z: z.exp() * z,
        "abs": lambda F, z: z.abs(),
        "angle": lambda F, z: z.angle(),
        "sgn": lambda F, z: z.sgn(),
        "conj": lambda F, z: z.conj() * z,
        "view_as_real": lambda F, z: F.view_as_real(z),
        "real": lambda F, z: z.real * z.imag,
    }
    t = np.ones_like(W) * (0.3 - 0.7j)
    for name, prog in progs.items():
        got = reference.func.jvp(
            lambda z, p=prog: p(reference, z),
            (reference.tensor(W, dtype=reference.complex128),),
            (reference.tensor(t, dtype=reference.complex128),),
        )
        want = torch.func.jvp(
            lambda z, p=prog: p(torch, z),
            (torch.tensor(W, dtype=torch.complex128),),
            (torch.tensor(t, dtype=torch.complex128),),
        )
        for a, b in zip(got, want):
            _close(_np(a), _np(b), f"jvp {name}")


def test_vmap_agrees_with_torch_func():
    for name in ("exp", "abs", "view_as_real", "mul_real_complex"):
        prog, *data = UNARY.get(name) or BINARY[name]
        data = [np.stack([d, d * 0.5]) for d in data]
        got = reference.func.vmap(lambda *xs, p=prog: p(reference, *xs))(
            *[
                reference.tensor(d, dtype=reference.complex128 if np.iscomplexobj(d) else reference.float64)
                for d in data
            ]
        )
        want = torch.func.vmap(lambda *xs, p=prog: p(torch, *xs))(
            *[torch.tensor(d, dtype=torch.complex128 if np.iscomplexobj(d) else torch.float64) for d in data]
        )
        _close(_np(got), _np(want), f"vmap {name}")


# ---- dtypes and promotion ----------------------------------------------------------------------------

PROMOTION = {
    "float32_times_1j": lambda F: F.ones(2) * 1j,
    "float64_times_1j": lambda F: F.ones(2, dtype=F.float64) * 1j,
    "int_times_1j": lambda F: F.ones(2, dtype=F.int64) * 1j,
    "bool_times_1j": lambda F: F.ones(2, dtype=F.bool) * 1j,
    "float64_times_complex64": lambda F: F.ones(2, dtype=F.float64) * F.ones(2, dtype=F.complex64),
    "float64_times_0d_complex64": lambda F: F.ones(2, dtype=F.float64) * F.tensor(1j, dtype=F.complex64),
    "float32_times_0d_complex128": lambda F: F.ones(2) * F.tensor(1j, dtype=F.complex128),
    "int_times_complex64": lambda F: F.ones(2, dtype=F.int64) * F.ones(2, dtype=F.complex64),
    "complex64_plus_float64_0d": lambda F: F.ones(2, dtype=F.complex64) + F.tensor(1.0, dtype=F.float64),
    "complex64_div_int": lambda F: F.ones(2, dtype=F.complex64) / 2,
    "tensor_of_complex": lambda F: F.tensor(1 + 2j),
    "tensor_of_mixed_list": lambda F: F.tensor([1, 2.5, 3j]),
    "abs_of_complex64": lambda F: F.ones(2, dtype=F.complex64).abs(),
    "angle_of_int": lambda F: F.tensor([1, -2, 0]).angle(),
    "angle_of_float": lambda F: F.tensor([1.0, -2.0, 0.0, float("nan")]).angle(),
    "sgn_of_int": lambda F: F.tensor([3, -2, 0]).sgn(),
    "real_of_complex64": lambda F: F.tensor([1 + 2j]).real,
    "view_as_real_of_complex64": lambda F: F.view_as_real(F.tensor([1 + 2j, 3j])),
    "exp_of_complex64": lambda F: F.tensor([1 + 2j]).exp(),
    "complex_of_float32": lambda F: F.complex(F.ones(2), F.zeros(2)),
    "mean_of_complex": lambda F: F.tensor([1 + 2j, 3j]).mean(),
    "sum_of_complex": lambda F: F.tensor([[1 + 2j, 3j]]).sum(0),
    "eq_complex": lambda F: F.tensor([1 + 2j, 3j]) == F.tensor([1 + 2j, 3.0]),
    "eq_complex_number": lambda F: F.tensor([1 + 2j, 3j]) == 3j,
    "cfloat": lambda F: F.ones(2, dtype=F.float64).cfloat(),
    "is_complex": lambda F: F.tensor([F.ones(2, dtype=F.complex64).is_complex(), F.is_complex(F.ones(2))]),
}


@pytest.mark.parametrize("name", sorted(PROMOTION))
def test_dtype_and_value_agree_with_torch(name):
    got, want = PROMOTION[name](reference), PROMOTION[name](torch)
    assert _dtype_name(got.dtype) == _dtype_name(want.dtype), name
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6, equal_nan=True, err_msg=name)


def test_default_complex_dtype_follows_the_default_float_dtype():
    for F in (reference, torch):
        old = F.get_default_dtype()
        try:
            F.set_default_dtype(F.float64)
            assert _dtype_name(F.tensor(1j).dtype) == "complex128"
            assert _dtype_name((F.ones(2, dtype=F.int64) * 1j).dtype) == "complex128"
        finally:
            F.set_default_dtype(old)
        assert _dtype_name(F.tensor(1j).dtype) == "complex64"


def test_conj_and_views():
    z = reference.tensor(Z, dtype=reference.complex128)
    assert z.conj().is_conj() and z.conj()._base is z  # a lazy conjugate view, as in PyTorch
    assert not z.conj().resolve_conj().is_conj()  # (tests/autograd/test_torch_conj_view.py: the rest)
    r = reference.view_as_real(z)
    assert r._is_view() and r._base is z and r.shape == (2, 3, 2) and r.stride() == (6, 2, 1)
    r[0, 0, 1] = 5.0  # a write through the view is seen by the complex tensor
    assert z[0, 0].item() == complex(Z[0, 0].real, 5.0)
    z.imag[1, 2] = -1.0  # x.imag is a view too
    assert z[1, 2].item().imag == -1.0
    c = reference.view_as_complex(r)
    assert c._base is z and c.shape == z.shape
    x = reference.ones(2, dtype=reference.float64)
    assert reference.real(x) is x and x.conj() is x


# ---- errors ------------------------------------------------------------------------------------------


def _error(prog):
    try:
        prog()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    return None


def _c(F, dtype="complex128"):
    return F.tensor(Z, dtype=getattr(F, dtype), requires_grad=True)


ERRORS = {
    "backward_of_complex_scalar": lambda F: (_c(F).sum()).backward(),
    "grad_of_complex_scalar": lambda F: (lambda z: F.autograd.grad(z.sum(), z))(_c(F)),
    "complex_grad_for_real_output": lambda F: F.autograd.grad(
        _c(F).abs().sum(), _c(F), F.tensor(1j, dtype=F.complex128)
    ),
    "real_grad_for_complex_output": lambda F: (_c(F) * 2).backward(F.ones(2, 3, dtype=F.float64)),
    "lt": lambda F: _c(F) < _c(F),
    "gt_number": lambda F: _c(F) > 0,
    "ge_complex64": lambda F: _c(F, "complex64") >= 1,
    "maximum": lambda F: F.maximum(_c(F), _c(F)),
    "minimum": lambda F: F.minimum(_c(F), _c(F)),
    "clamp": lambda F: _c(F).clamp(0, 1),
    "relu": lambda F: F.relu(_c(F)),
    "sign": lambda F: F.sign(_c(F)),
    "floor": lambda F: F.floor(_c(F)),
    "argmax": lambda F: F.argmax(_c(F)),
    "sort": lambda F: F.sort(_c(F)),
    "topk": lambda F: F.topk(_c(F), 1),
    "amax": lambda F: F.amax(_c(F)),
    "imag_of_real": lambda F: F.ones(2).imag,
    "view_as_real_of_real": lambda F: F.view_as_real(F.ones(2)),
    "view_as_complex_last_dim": lambda F: F.view_as_complex(F.ones(2, 3, dtype=F.float64)),
    "view_as_complex_stride": lambda F: F.view_as_complex(F.ones(2, 2, dtype=F.float64).t()),
    "view_as_complex_0d": lambda F: F.view_as_complex(F.ones((), dtype=F.float64)),
    "view_as_complex_offset": lambda F: F.view_as_complex(F.ones(5, dtype=F.float64)[1:3]),
    "view_as_complex_int": lambda F: F.view_as_complex(F.ones(2, 2, dtype=F.int64)),
    "complex_of_ints": lambda F: F.complex(F.ones(2, dtype=F.int64), F.ones(2, dtype=F.int64)),
    "complex_of_mixed": lambda F: F.complex(F.ones(2), F.ones(2, dtype=F.float64)),
    "complex_of_complex": lambda F: F.complex(_c(F), _c(F)),
    "polar_of_ints": lambda F: F.polar(F.ones(2, dtype=F.int64), F.ones(2, dtype=F.int64)),
    "inplace_complex_into_float": lambda F: F.ones(3, dtype=F.float64).mul_(F.ones(3, dtype=F.complex128)),
    "mm_mixed_dtypes": lambda F: F.mm(F.ones(2, 2, dtype=F.float64), F.ones(2, 2, dtype=F.complex128)),
    "requires_grad_in_tensor_int": lambda F: F.tensor([1, 2], requires_grad=True),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_agrees_with_torch(name):
    want = _error(lambda: ERRORS[name](torch))
    got = _error(lambda: ERRORS[name](reference))
    assert want is not None, f"{name}: torch does not raise"
    assert got is not None, f"{name}: reference does not raise; torch raises {want}"
    assert got[0] == want[0], f"{name}: {got} but torch raises {want}"
    assert got[1] == want[1], f"{name}: {got} but torch raises {want}"


def test_vmap_view_as_complex_with_the_batch_dim_last_raises_like_torch():
    x = np.random.default_rng(0).standard_normal((3, 2, 4))
    want = _error(lambda: torch.func.vmap(torch.view_as_complex, in_dims=2)(torch.tensor(x)))
    got = _error(lambda: reference.func.vmap(reference.view_as_complex, in_dims=2)(reference.tensor(x)))
    assert got == want == ("RuntimeError", "Tensor must have a last dimension with stride 1")


def test_view_as_complex_leaves_the_stride_of_a_size_one_dim_unchecked_like_torch():
    """PyTorch checks that every stride but the last is even only along dims of size > 1 (an odd
    stride there raises), and halves it, rounding down, on a dim of size 1 (torch 2.13.0)."""
    data = np.arange(40.0)
    geometries = (((1, 2, 2), (3, 2, 1)), ((1, 2, 2), (5, 4, 1)), ((3, 1, 2), (6, 7, 1)), ((2, 2, 2), (3, 2, 1)))
    for size, stride in geometries:
        want = torch.as_strided(torch.tensor(data), size, stride)
        got = reference.as_strided(reference.tensor(data), size, stride)
        assert _error(lambda: reference.view_as_complex(got)) == _error(lambda: torch.view_as_complex(want))
        if size[0] == 1 or size[1] == 1:
            w, g = torch.view_as_complex(want), reference.view_as_complex(got)
            assert g.stride() == w.stride() and np.array_equal(np.asarray(g.tolist()), w.numpy())
    # under vmap a batch of 1 with its dim last: the physical batch dim moved to the front has stride 1
    x = np.random.default_rng(0).standard_normal((3, 4, 2, 1))
    want = torch.func.vmap(torch.view_as_complex, in_dims=-1)(torch.tensor(x))
    got = reference.func.vmap(reference.view_as_complex, in_dims=-1)(reference.tensor(x))
    assert got.shape == want.shape == (1, 3, 4)
    assert np.array_equal(np.asarray(got.tolist()), want.numpy())


def test_gradcheck_perturbs_real_and_imaginary_parts():
    """The reference's gradcheck on complex inputs, and that it catches a gradient missing its conjugate."""
    from reference.autograd import GradcheckError, gradcheck, gradgradcheck
    from reference.ops import RULES

    z = reference.tensor(Q, dtype=reference.complex128, requires_grad=True)
    assert gradcheck(lambda a: a.log() * a.conj(), [z])
    assert gradgradcheck(lambda a: a.log() * a.conj(), [z])
    rule = RULES["log"]
    old = rule.complex_grads
    try:
        rule.complex_grads = "explicit"  # the plain formula g / z used as it is: conj missing
        with pytest.raises(GradcheckError):
            gradcheck(lambda a: a.log(), [z])
    finally:
        rule.complex_grads = old
