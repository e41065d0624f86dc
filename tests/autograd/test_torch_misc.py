"""fill, zero_, sum_to_size, __rdiv__/__rmod__, ldexp, frexp, renorm against PyTorch: values,
grad_fn names, first- and second-order gradients, in-place variants, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import reference as T
from tests.autograd._complex_agree import complex_agree
from tests.autograd._torch_agree import agree, same_error

R = np.random.default_rng(5)
A = R.standard_normal((3, 4))
V = np.array(1.7)
S = R.standard_normal((3, 4, 2))
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -3.0, 5e-320, 1e308])

CASES = [
    ("fill_number", lambda F, x: F.fill(x, 2.5) * x, [A]),
    ("fill_tensor", lambda F, x, v: F.fill(x, v) * x, [A, V]),
    ("fill_int_input", lambda F, x: F.fill(F.ones(3, dtype=F.int64), 2.7) * x.sum(), [A]),
    ("fill_bool_value", lambda F, x: F.fill(x, True) * x, [A]),
    ("fill_inplace", lambda F, x, v: (x * 1).fill_(v) * x, [A, V]),
    ("zero_", lambda F, x: F.zero_(x * 1) + x, [A]),
    ("sum_to_size", lambda F, x: x.sum_to_size(3, 1) ** 2, [A]),
    ("sum_to_size_lead", lambda F, x: x.sum_to_size((1, 4)) * 2, [A]),
    ("sum_to_size_same", lambda F, x: x.sum_to_size(3, 4) * 2, [A]),
    ("sum_to_size_fewer", lambda F, x: x.sum_to_size(4) ** 2, [A]),
    ("rdiv", lambda F, x: x.__rdiv__(2.0), [A]),
    ("rdiv_int", lambda F, x: F.tensor([1, 2, 4]).__rdiv__(3) * x.sum(), [A]),
    ("rmod", lambda F, x: x.__rmod__(2.5), [A]),
    ("ldexp_float", lambda F, x, e: F.ldexp(x, e), [A, A[0]]),
    ("ldexp_int", lambda F, x: F.ldexp(x, F.tensor([1, -2, 0, 3])), [A]),
    ("ldexp_int_int", lambda F, x: F.ldexp(F.tensor([1, 2]), F.tensor([3, -1])) * x.sum(), [A]),
    ("ldexp_method_inplace", lambda F, x, e: (x * 1).ldexp_(e) * x, [A, A[1]]),
    ("frexp", lambda F, x: F.frexp(x * 5.0), [A]),
    ("frexp_special", lambda F, x: F.frexp(x), [SPECIAL]),
    ("frexp_method", lambda F, x: x.frexp().mantissa, [A]),
    ("renorm", lambda F, x: F.renorm(x, 2, 1, 0.5), [S]),
    ("renorm_p1_neg_dim", lambda F, x: F.renorm(x, 1, -1, 0.7), [S]),
    ("renorm_inf", lambda F, x: F.renorm(x, float("inf"), 0, 0.5), [S]),
    ("renorm_below", lambda F, x: F.renorm(x, 2, 0, 100.0), [S]),
    ("renorm_inplace", lambda F, x: (x * 1).renorm_(3, 2, 0.5) * x, [S]),
]


@pytest.mark.parametrize("name,prog,arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, order=0 if name == "rmod" else 2, label=name)


NODES = [
    ("fill_number", lambda F, x: F.fill(x, 2.5)),
    ("fill_tensor", lambda F, x: F.fill(x, x.sum())),
    ("ldexp", lambda F, x: F.ldexp(x, x)),
    ("frexp", lambda F, x: F.frexp(x).mantissa),
    ("zero_", lambda F, x: F.zero_(x * 1)),
    ("sum_to_size", lambda F, x: x.sum_to_size(3, 1)),
    ("rdiv", lambda F, x: x.__rdiv__(2.0)),
]


@pytest.mark.parametrize("name,prog", NODES, ids=[n[0] for n in NODES])
def test_grad_fn_names(name, prog):
    names = []
    for F in (torch, T):
        x = F.tensor(A, dtype=F.float64, requires_grad=True)
        names.append(prog(F, x).grad_fn.name())
    assert names[0] == names[1]


def test_frexp_exponent_dtype_and_no_grad():
    for F in (torch, T):
        m, e = F.frexp(F.tensor(A, dtype=F.float64, requires_grad=True))
        assert str(e.dtype).endswith("int32") and not e.requires_grad


def test_rmod_backward_not_implemented():
    for F in (torch, T):
        x = F.tensor(A, dtype=F.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
            x.__rmod__(2.0).sum().backward()


ERRORS = [
    ("fill_value_1d", lambda F, x: F.fill(x, x[0]), [A]),
    ("sum_to_size_bad", lambda F, x: x.sum_to_size(2, 4), [A]),
    ("sum_to_size_more_dims", lambda F, x: x.sum_to_size(1, 3, 4), [A]),
    ("ldexp_number", lambda F, x: F.ldexp(x, 2), [A]),
    ("ldexp_shape", lambda F, x: F.ldexp(x, x[:2, :3]), [A]),
    ("ldexp_inplace_int", lambda F, x: F.tensor([1, 2]).ldexp_(F.tensor([1, 2])), [A]),
    ("frexp_int", lambda F, x: F.frexp(F.tensor([1, 2])), [A]),
    ("renorm_p", lambda F, x: F.renorm(x, -1, 0, 1.0), [A]),
    ("renorm_p0", lambda F, x: F.renorm(x, 0, 0, 1.0), [A]),
    ("renorm_maxnorm", lambda F, x: F.renorm(x, 2, 0, -1.5), [A]),
    ("renorm_1d", lambda F, x: F.renorm(x[0], 2, 0, 1.0), [A]),
    ("renorm_dim", lambda F, x: F.renorm(x, 2, 2, 1.0), [A]),
]


@pytest.mark.parametrize("name,prog,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, arrays):
    same_error(prog, arrays)


P = R.standard_normal((2, 2, 5, 4))
GP = R.standard_normal((2, 2, 2, 2))


def _pool_bwd(F, x, g):
    _, idx = F.nn.functional.max_pool2d(x, 2, return_indices=True)
    return F.ops.aten.max_pool2d_with_indices_backward.default(
        g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx
    )


def test_max_pool2d_with_indices_backward_agrees():
    agree(lambda F, x, g: _pool_bwd(F, x, g) * x, [P, GP], order=2, label="max_pool2d_with_indices_backward")


def test_max_pool2d_with_indices_backward_node():
    names = []
    for F in (torch, T):
        x = F.tensor(P, dtype=F.float64, requires_grad=True)
        names.append(_pool_bwd(F, x, F.tensor(GP, dtype=F.float64, requires_grad=True)).grad_fn.name())
    assert names[0] == names[1]


# ---- complex128 input (issue 13): values, dtypes, first- and second-order gradients with complex
# cotangents, JVPs against torch.func.jvp, and the reference's gradcheck/gradgradcheck ----------------

_CRNG = np.random.default_rng(13)


def _cz(*shape):
    return _CRNG.standard_normal(shape) + 1j * _CRNG.standard_normal(shape)


COMPLEX = {
    "fill_number": (lambda F, z: F.fill(z, 1.5 - 2j) * z, [_cz(2, 3)]),
    "fill_bool": (lambda F, z: F.fill(z, True) * z, [_cz(2, 3)]),
    "fill_tensor": (lambda F, z, v: F.fill(z, v * v) * z, [_cz(2, 3), _cz()]),
    "fill_real_tensor_value": (lambda F, z, v: F.fill(z, v * v) * z, [_cz(2, 3), _CRNG.standard_normal(())]),
    "fill_real_with_real_complex_number": (lambda F, x: F.fill(x, 2.5 + 0j) * x, [_CRNG.standard_normal(3)]),
    "ldexp": (lambda F, z, e: F.ldexp(z, e), [_cz(2, 3), _cz(3)]),
    "ldexp_real_exponent": (lambda F, z, e: F.ldexp(z, e), [_cz(2, 3), _CRNG.standard_normal(3)]),
    "ldexp_real_input": (lambda F, x, e: F.ldexp(x, e), [_CRNG.standard_normal(3), _cz(3)]),
    "ldexp_int_exponent": (lambda F, z: F.ldexp(z, F.tensor([3, 0, 2])), [_cz(3)]),
}


# a real input needing a gradient beside a complex one: derivatives.yaml has no handle_r_to_c for
# these ops, so PyTorch's engine check refuses the backward (rules.pointwise.without_r_to_c); values
# and JVPs are compared here, the refused backward in test_complex_mixed_backward_is_refused_like_torch
_MIXED = {"ldexp_real_exponent", "ldexp_real_input", "fill_real_tensor_value"}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_agrees_with_torch(name):
    prog, arrays = COMPLEX[name]
    mixed = name in _MIXED
    complex_agree(prog, arrays, order=0 if mixed else 2, label=name, check_grads=not mixed)
    if mixed:
        _same_backward_error(prog, arrays)


@pytest.mark.parametrize(
    "dtype", ["float64", "float32", "float16", "int64", "int32", "uint8", "int8", "int16"]
)
def test_fill_of_real_with_complex_number_raises_like_torch(dtype):
    same_error(lambda F: F.fill(F.ones(2, dtype=getattr(F, dtype)), 1j))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
@pytest.mark.parametrize("value", [1j, 2 + 3j])
def test_in_place_fill_of_real_with_complex_number_raises_like_torch(dtype, value):
    same_error(lambda F: F.ones(2, dtype=getattr(F, dtype)).fill_(value))


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_in_place_fill_converts_a_scalar_as_torch_does(dtype):
    for value in (2 + 0j, 2.7, True):
        got = T.zeros(2, dtype=getattr(T, dtype)).fill_(value).tolist()
        assert got == torch.zeros(2, dtype=getattr(torch, dtype)).fill_(value).tolist(), value


def test_fill_of_bool_with_complex_number_agrees():
    assert (
        T.fill(T.zeros(2, dtype=T.bool), 1j).tolist()
        == torch.fill(torch.zeros(2, dtype=torch.bool), 1j).tolist()
    )


def _same_backward_error(prog, arrays):
    """The backward of ``prog`` with every input requiring grad raises the same error in both."""
    outcomes = []
    for F in (T, torch):
        xs = [
            F.tensor(a, dtype=F.complex128 if np.iscomplexobj(a) else F.float64, requires_grad=True)
            for a in arrays
        ]
        out = prog(F, *xs)
        try:
            F.autograd.grad(out, xs, F.ones_like(out))
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            outcomes.append((type(exc).__name__, str(exc).split("\n")[0]))
        else:
            outcomes.append(None)
    assert outcomes[1] is not None and outcomes[0] == outcomes[1], outcomes
