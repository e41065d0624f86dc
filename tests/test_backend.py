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


def _awkward(rng, shape):
    """Floats with ties, signed zeros, infinities and NaNs: where a max/min scan could differ."""
    pool = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 1.0, -0.0])
    return rng.choice(pool, size=shape)


@pytest.mark.parametrize("largest", [True, False])
def test_running_extreme_is_numpy_accumulate_bit_for_bit(largest):
    from reference.testing import strict_xp

    rng = np.random.default_rng(0)
    acc = np.maximum if largest else np.minimum
    for shape, axis in [((1,), 0), ((7,), 0), ((5, 9), 1), ((16, 3), 0), ((2, 33, 2), 1), ((4, 5), -1)]:
        for x in (_awkward(rng, shape), rng.integers(-5, 5, size=shape)):
            expected = acc.accumulate(x, axis=axis)
            got = backend.running_extreme(x, axis, largest)
            # (bit for bit: the signs of zeros and the NaNs' places too)
            assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes(), (shape, axis, x)
            on_strict = backend.running_extreme(strict_xp.asarray(x), axis, largest)
            assert on_strict.get().tobytes() == expected.tobytes()


def test_strict_namespace_refuses_what_cupy_lacks():
    """The strict namespace (CPU stand-in for CuPy) fails where CuPy 14 failed on the first GPU run
    (issue 35): errstate, ufunc.accumulate beyond add/multiply, ufunc where=, where() of a Python
    bool, ufuncs on lists, cupyx.scipy.special's polygamma with a Python int order."""
    from reference.testing import strict_xp as xp

    a = xp.asarray(np.array([1.0, -2.0, 3.0]))
    with pytest.raises(AttributeError, match="errstate"):
        _ = xp.errstate
    with pytest.raises(NotImplementedError, match="maximum.accumulate"):
        xp.maximum.accumulate(a)
    with pytest.raises(NotImplementedError, match="logaddexp.accumulate"):
        xp.logaddexp.accumulate(a)
    with pytest.raises(NotImplementedError, match="maximum.reduce"):
        xp.maximum.reduce(a)
    with pytest.raises(NotImplementedError, match="multiply.at"):
        xp.multiply.at(a, np.array([0]), 2.0)
    with pytest.raises(TypeError, match="Wrong arguments"):
        xp.divide(a, a, out=xp.zeros_like(a), where=a > 0)
    with pytest.raises(TypeError, match="list"):
        xp.power([a], 2)
    with pytest.raises(AttributeError, match="astype"):
        xp.where(True, a, a)
    with pytest.raises(AttributeError, match="astype"):
        xp.special.polygamma(1, a)
    with pytest.raises(AttributeError, match="cupyx.scipy.special"):
        _ = xp.special.owens_t
    # what CuPy has works, with NumPy's values
    assert xp.add.accumulate(a).get().tolist() == [1.0, -1.0, 2.0]
    assert xp.where(a > 0, a, 0.0).get().tolist() == [1.0, 0.0, 3.0]
    n = xp.asarray(1, dtype=np.int64)
    assert (
        xp.special.polygamma(n, a).get().tobytes()
        == __import__("scipy.special").special.polygamma(1, a.get()).tobytes()
    )


def test_a_product_scattered_in_rounds_is_numpy_multiply_at_bit_for_bit():
    """CuPy has no multiply.at (scatter_reduce 'prod'): the rounds give NumPy's products, in
    NumPy's order (a product of three rounds twice: the order shows in the last bit)."""
    from reference.testing import strict_xp

    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4)) * 1.1
    rows = rng.integers(0, 3, size=(5, 4))
    cols = np.broadcast_to(np.arange(4), (5, 4))
    values = rng.standard_normal((5, 4)) * 1.3
    expected = a.copy()
    np.multiply.at(expected, (rows, cols), values)
    on_strict = strict_xp.asarray(a)
    backend.ufunc_at(
        "multiply", on_strict, (strict_xp.asarray(rows), strict_xp.asarray(cols)), strict_xp.asarray(values)
    )
    assert on_strict.get().tobytes() == expected.tobytes()
    # the order matters: the same updates in reverse order differ somewhere
    reverse = a.copy()
    np.multiply.at(reverse, (rows[::-1], cols), values[::-1])
    assert reverse.tobytes() != expected.tobytes()
