"""Agreement with PyTorch for the normalisation functions of ``nn.functional``: values, first and
second derivatives, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import reference as T
from tests.autograd.nn_agreement import agree

TF = torch.nn.functional
RF = T.nn.functional


def test_batch_norm_training_double_backward_through_dependent_grad_out():
    """The defect of issue 11: grad_out depends on the input (y**3), the second backward of the
    training-mode batch norm raised 'Trying to backward through the graph a second time'."""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)

    def prog(F, lib, x, w, b):
        y = F.batch_norm(x, None, None, w, b, training=True)
        gx, gw = lib.autograd.grad((y**3).sum(), (x, w), create_graph=True)
        return (gx * gx).sum() + (gw**2).sum()

    # second order (the program takes the first gradient); torch's third derivative here is not
    # exact (finite differences agree with the reference's), so the test stops at the second
    agree(prog, [x, w, b], second_order=False)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 3, 2, 2), (2, 2, 2, 1, 3)])
def test_batch_norm(training, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    w, b = rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    rm0, rv0 = rng.standard_normal(shape[1]), rng.random(shape[1]) + 0.5

    def prog(F, lib, x, w, b):
        rm, rv = lib.tensor(rm0), lib.tensor(rv0)
        y = F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3)
        return y * y, rm, rv

    agree(prog, [x, w, b], second_order=True)
