"""The per-element cache of the exact host kernels (reference/ops/rules/_sign_cache.py): -0.0 and
0.0 are different arguments (a plain functools.lru_cache answers the first zero's value at the
other), and otherwise it caches like lru_cache."""

from __future__ import annotations

import functools
import math

import pytest

from reference.ops.rules._sign_cache import sign_aware_cache


def _zero_signs_kept(cache):
    """Whether ``cache``-wrapped kernels tell -0.0 from 0.0 in each argument position, in either
    order of first use, and with keyword arguments."""
    sign = cache(lambda x, order: math.copysign(1.0, x) * order)
    second = cache(lambda a, b, order: math.copysign(1.0, b))
    keyword = cache(lambda x, n=1: math.copysign(1.0, x) * n)
    return (
        sign(0.0, 1) == 1.0
        and sign(-0.0, 1) == -1.0
        and sign(-0.0, 2) == -2.0
        and second(1.0, -0.0, 0) == -1.0
        and second(1.0, 0.0, 0) == 1.0
        and keyword(0.0, n=3) == 3.0
        and keyword(-0.0, n=3) == -3.0
    )


def test_minus_zero_after_zero_is_its_own_entry():
    assert _zero_signs_kept(sign_aware_cache)


def test_a_plain_lru_cache_fails_the_same_check():
    # the latent bug the helper removes: 0.0 == -0.0 and hash alike, so f(-0.0) answers f(0.0)
    assert not _zero_signs_kept(functools.lru_cache(maxsize=None))


def test_caches_each_call_once_and_keeps_the_function_name():
    calls = []

    @sign_aware_cache
    def exact(x, order, n=0):
        """doc"""
        calls.append((x, order, n))
        return x + order + n

    assert [exact(0.5, 1), exact(0.5, 1), exact(0.5, 1, n=2), exact(0.5, 1, n=2), exact(-0.0, 1)] == [
        1.5,
        1.5,
        3.5,
        3.5,
        1.0,
    ]
    assert calls == [(0.5, 1, 0), (0.5, 1, 2), (-0.0, 1, 0)]
    assert exact.__name__ == "exact" and exact.__doc__ == "doc"
    assert exact.cache_info().hits == 2
    exact.cache_clear()
    exact(0.5, 1)
    assert len(calls) == 4


def test_the_special_kernels_answer_each_zero_by_its_sign():
    pytest.importorskip("mpmath", reason="the exact kernels")
    import reference as T
    from reference.ops.rules.special_expint import expi_derivative
    from reference.ops.rules.special_gamma_ratio import beta_exact

    # B(±0, b) = Γ(±0)Γ(b)/Γ(b) = ±inf, Ei'(±0) = e^x/x = ±inf: whichever zero is asked first
    assert beta_exact(0.0, 2.0, 0, 0) == math.inf and beta_exact(-0.0, 2.0, 0, 0) == -math.inf
    for zeros in ([-0.0, 0.0], [0.0, -0.0]):
        got = expi_derivative(T.tensor(zeros, dtype=T.float64), 1).numpy().tolist()
        assert got == [math.copysign(math.inf, z) for z in zeros]
