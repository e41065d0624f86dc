"""Backend selection: NumPy by default, CuPy only when asked for and usable, errors that say why."""

from __future__ import annotations

import numpy as np
import pytest

from reference import backend


def test_default_is_numpy(monkeypatch):
    monkeypatch.delenv("REFGRAD_BACKEND", raising=False)
    assert backend.default_namespace() is np
    assert isinstance(backend.asarray([1.0, 2.0]), np.ndarray)


def test_unknown_backend_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("REFGRAD_BACKEND", "jaxnumpy")
    with pytest.raises(backend.BackendError, match=r"backend='jaxnumpy' is not one of"):
        backend.default_namespace()
    with pytest.raises(backend.BackendError, match=r"device='tpu'"):
        backend.asarray([1.0], device="tpu")


@pytest.mark.skipif(
    backend.cupy_available(), reason="this machine has CuPy and a GPU; the error path cannot be shown"
)
def test_cupy_requested_without_gpu_says_why(monkeypatch):
    monkeypatch.setenv("REFGRAD_BACKEND", "cupy")
    with pytest.raises(backend.BackendError, match="cupy"):
        backend.default_namespace()
    with pytest.raises(backend.BackendError, match="cupy"):
        backend.asarray([1.0], device="cuda")


def test_namespace_of_ignores_none_and_rejects_non_arrays():
    assert backend.namespace_of(None, np.zeros(2)) is np
    with pytest.raises(backend.BackendError, match="expected a NumPy or CuPy array"):
        backend.namespace_of(object())
