"""A per-element cache of the exact host kernels (the mpmath functions of the special-function
rules) that tells -0.0 from 0.0.

``functools.lru_cache`` keys by equality and hash, and 0.0 == -0.0 with equal hashes: a plain
cache answers the first zero's value at the other, which is wrong wherever a function is odd at 0
or its branch depends on the zero's sign (Ei'(+0) = +inf but Ei'(-0) = -inf; Dawson's D(-0) = -0;
B(-0, b) = -inf where B(+0, b) = +inf). :func:`sign_aware_cache` keys each float argument by its
value and its sign bit, and is otherwise ``functools.lru_cache(maxsize=1 << 16)``.

A leaf module: it imports nothing from the project."""

from __future__ import annotations

import functools
import math

#: entries kept per cached function (the least recently used are dropped)
MAXSIZE = 1 << 16


def _signed(v):
    """``v`` with its sign bit beside it when it is a float (ints, strings, bools: as they are)."""
    return (v, math.copysign(1.0, v) < 0) if isinstance(v, float) else (v, None)


def sign_aware_cache(fn):
    """``fn(*args, **kwargs)`` cached per call, each float argument keyed by its value and its sign
    bit (so f(-0.0) never answers f(0.0)'s value); ``cache_info``/``cache_clear`` as lru_cache's."""

    @functools.lru_cache(maxsize=MAXSIZE)
    def cached(args, kwargs):
        return fn(*(v for v, _ in args), **{k: v for k, (v, _) in kwargs})

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return cached(tuple(map(_signed, args)), tuple((k, _signed(v)) for k, v in sorted(kwargs.items())))

    wrapper.cache_info = cached.cache_info
    wrapper.cache_clear = cached.cache_clear
    return wrapper
