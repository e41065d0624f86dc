"""The eigenvectors' phase check of linalg_eig's and linalg_eigh's backward, relative to its scale.

A loss of eigenvectors is well defined only if it does not depend on their phases
``V -> V diag(e^{i phi})``; along ``phi_k`` it changes by ``Im diag(V^H gV)_k``. PyTorch compares that
with an absolute 1e-2, so the rounding noise of a large cotangent (the campaign's second-order seeds
of 1e9) fails a phase-invariant loss and a phase-dependent loss of small scale passes. The reference
judges it relative to ``sum_j |V_jk| |gV_jk|`` (reference.ops.rules.linalg_decomp.phase_dependent).
"""

from __future__ import annotations

import numpy as np
import pytest

import reference as T

PHASE_ERROR = "The eigenvectors in the complex case are specified up to multiplication by e^{i phi}"


def _matrix(hermitian):
    rng = np.random.default_rng(34)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    return a + a.conj().T if hermitian else a


def _decompose(x, hermitian):
    return T.linalg.eigh(x) if hermitian else T.linalg.eig(x)


def _gradient(hermitian, scale, loss):
    x = T.tensor(_matrix(hermitian), requires_grad=True)
    _, V = _decompose(x, hermitian)
    (g,) = T.autograd.grad(loss(V) * scale, [x])
    return g.detach().numpy()


def _modulus(V):  # |V|^2 weighted: does not depend on the phases
    w = T.tensor(np.random.default_rng(7).standard_normal((3, 3)))
    return ((V * V.conj()).real * w).sum()


@pytest.mark.parametrize("hermitian", [False, True], ids=["eig", "eigh"])
def test_phase_invariant_loss_at_a_large_scale_is_differentiated(hermitian):
    """|V|^2 of 1e17 (V^H gV about 1e18, its imaginary diagonal rounding noise of about 100, over
    PyTorch's absolute 1e-2): the gradient is the scale times that of the unscaled loss."""
    small = _gradient(hermitian, 1.0, _modulus)
    large = _gradient(hermitian, 1e17, _modulus)
    np.testing.assert_allclose(large, 1e17 * small, rtol=1e-9, atol=1e-9 * 1e17 * np.abs(small).max())


@pytest.mark.parametrize("hermitian", [False, True], ids=["eig", "eigh"])
@pytest.mark.parametrize("scale", [1.0, 1e-6])
def test_phase_dependent_loss_raises_at_any_scale(hermitian, scale):
    """Re sum V depends on the phases: at a scale of 1e-6 its Im diag(V^H gV) is below PyTorch's
    absolute 1e-2 (PyTorch returns a gradient), the reference still raises."""
    with pytest.raises(RuntimeError, match=PHASE_ERROR.replace("^", r"\^").replace("{", r"\{")):
        _gradient(hermitian, scale, lambda V: V.real.sum())
