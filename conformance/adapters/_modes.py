"""What the execution-mode adapters share: one compiled function per shape signature, and compile
time measured apart from run time.

A mode adapter (``torch:compile``, ``jax:jit``, ``tensorflow:xla``, ...) compiles the function of
a check once per *shape signature* (the case without its values: op, parameters, shapes, dtype,
layout, and the check) and keeps it, as a user's program keeps its compiled step. The first
request of a signature is a cache miss: the check runs twice, and the compile time is the first
call's time less the second's (the second runs the cached compiled code); the result returned is
the second call's, the steady state users meet. Later requests of the signature are cache hits
and run once. :meth:`ModeCache.timing` is what the worker adds to the reply (``compile_seconds``,
``cache``); the worker's ``seconds`` stays the whole of the framework's own work (compile
included), the runner's fair deadline counts it, plus the mode's ``compile_allowance`` on a miss.
"""

from __future__ import annotations

import json
import time


def signature(case, check: str) -> str:
    """The shape signature of (case, check): everything but the values and the case's name."""
    if hasattr(case, "to_dict"):
        body = case.to_dict()
        for key in ("seed", "checks", "data", "description", "id"):
            body.pop(key, None)
    else:  # a standalone reproducer's minimal case (conformance.reproducer)
        body = {
            "op": case.op,
            "params": dict(vars(case.params)),
            "shapes": {k: list(v) for k, v in case.shapes.items()},
            "dtype": case.dtype,
            "vmap": [getattr(case, "vmap_size", None), list(getattr(case, "vmap_over", ()))],
        }
    return json.dumps({"check": check, **body}, sort_keys=True, default=str)


class ModeCache:
    """Mixin: ``self._compiled(case, check, make, run)`` with per-signature caching and timing."""

    #: the execution mode's name (``eager``, ``compile``, ``jit``, ``function``, ``xla``, ...)
    mode = "eager"
    #: seconds added to the per-check time limit on a cache miss (a first compile); documented in
    #: docs/conformance.md ("Execution modes")
    compile_allowance = 0.0
    #: whether this mode compiles at all (eager modes neither cache nor time a compile)
    compiles = False

    def _mode_state(self):
        if not hasattr(self, "_mode_cache"):
            self._mode_cache, self._last_timing = {}, {}
            self._hits = self._misses = 0
        return self._mode_cache

    def will_compile(self, case, check: str) -> bool:
        """Whether running (case, check) compiles first (a miss): the runner allows for it."""
        return self.compiles and signature(case, check) not in self._mode_state()

    def _compiled(self, case, check, make, run):
        """``run(compiled)`` with ``compiled = make()`` kept per signature (see the module docstring)."""
        cache = self._mode_state()
        if not self.compiles:
            self._last_timing = {}
            return run(make())
        key = signature(case, check)
        entry = cache.get(key)
        if entry is not None:
            self._hits += 1
            self._last_timing = {"cache": "hit", "compile_seconds": 0.0}
            return run(entry)
        entry = cache[key] = make()
        self._misses += 1
        t0 = time.perf_counter()
        try:
            run(entry)
        except BaseException:
            del cache[key]  # a compile that failed is not kept: the next request tries again
            raise
        t1 = time.perf_counter()
        out = run(entry)
        t2 = time.perf_counter()
        self._last_timing = {"cache": "miss", "compile_seconds": max((t1 - t0) - (t2 - t1), 0.0)}
        return out

    def start_request(self) -> None:
        self._mode_state()
        self._last_timing = {}

    def timing(self) -> dict:
        """The last request's compile timing and cache state (empty when it compiled nothing)."""
        self._mode_state()
        if not self._last_timing:
            return {}
        return dict(self._last_timing, cache_size=len(self._mode_cache))

    def mode_settings(self) -> dict:
        return {
            "mode": self.mode,
            "compile_allowance_s": self.compile_allowance,
            "cache": "one compiled function per shape signature (op, parameters, shapes, dtype, check), "
            "empty at start"
            if self.compiles
            else "none (runs op by op)",
        }
