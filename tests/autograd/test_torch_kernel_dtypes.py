"""Kernel dtype refusals and empty-dimension messages against PyTorch: softmax/log_softmax/softmin on
integer and bool tensors (the CPU kernels exist for floating dtypes only), negation of bool tensors,
vector_norm's inf/negative norms over empty dims, nanmedian over an empty dim."""

from __future__ import annotations

import math

import pytest

import reference
from tests.autograd._torch_agree import same_error

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize(
    "data, dim, dtype",
    [
        ([[1, 2], [3, 4]], 0, "int64"),  # not the last dim: softmax_kernel_impl
        ([[1, 2], [3, 4]], 1, "int64"),  # the last dim: softmax_lastdim_kernel_impl
        ([[1, 2], [3, 4]], -1, "int32"),
        (3, 0, "int64"),  # 0-d
        ([True, False], 0, "bool"),  # softmin negates first: the bool negation error
        ([1, 2], 0, "uint8"),
    ],
)
def test_softmax_family_refuses_integer_inputs(fn, data, dim, dtype):
    def run(T):
        x = T.tensor(data, dtype=getattr(T, dtype))
        f = getattr(T.nn.functional, fn)
        return f(x, dim)

    same_error(run)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_integer_dtype_argument_is_refused(fn):
    same_error(lambda T: getattr(T, fn)(T.tensor([1.0, 2.0]), 0, dtype=T.int32))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_empty_integer_tensor_keeps_its_dtype(fn):
    for T in (reference, torch):
        out = getattr(T, fn)(T.zeros(0, 2, dtype=T.int64), 0)
        assert tuple(out.shape) == (0, 2) and str(out.dtype).endswith("int64"), (T.__name__, out)


@pytest.mark.parametrize("spell", [lambda x: -x, lambda x: x.neg(), lambda x: x.__neg__()])
def test_bool_negation_is_refused(spell):
    same_error(lambda T: spell(T.tensor([True, False])))


@pytest.mark.parametrize(
    "shape, ord, dim",
    [
        ((2, 0), math.inf, None),
        ((2, 0), math.inf, 1),
        ((2, 0), math.inf, -1),  # named as written
        ((2, 0), -math.inf, (0, 1)),
        ((0, 3), -2.0, (1, 0)),
        ((2, 0), -1.5, [-1]),
    ],
)
def test_vector_norm_without_identity_on_empty_dims(shape, ord, dim):
    same_error(lambda T: T.linalg.vector_norm(T.zeros(*shape), ord, dim))


def test_vector_norm_inf_over_a_nonempty_dim_of_an_empty_tensor():
    for T in (reference, torch):
        assert tuple(T.linalg.vector_norm(T.zeros(2, 0), math.inf, 0).shape) == (0,)


@pytest.mark.parametrize("dim", [1, -1])
def test_nanmedian_empty_dim_message_is_medians(dim):
    same_error(lambda T: T.nanmedian(T.zeros(2, 0), dim))
