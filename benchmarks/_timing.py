"""Shared by the benchmarks: thread pinning and paired timing (not a benchmark itself).

Every benchmark reports *ratios* against a peer measured in the same run, never bare times as
the result. Both sides run on one thread, and the clock is the **process's CPU time**
(``time.process_time``): on a shared machine a process is descheduled for whole scheduler ticks
(4 ms on a 250 Hz kernel), which wall-clock timings would count and CPU time does not. On a quiet
machine the two agree for single-threaded work; ``REFGRAD_BENCH_CLOCK=wall`` switches to the wall
clock (``time.perf_counter``). The peers are timed *interleaved* (round by round: ours, theirs,
ours, theirs, ...), so that a slow spell (another process thrashing the caches) hits both, and
two figures are reported:

* the median over rounds of the per-round ratio (the figure compared with the targets);
* the ratio of the best samples.
"""

from __future__ import annotations

import os
import statistics
import time

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
CLOCK_NAME = os.environ.get("REFGRAD_BENCH_CLOCK", "cpu")
clock = time.perf_counter if CLOCK_NAME == "wall" else time.process_time


def pin_threads(n: int) -> None:
    """Pin NumPy's BLAS (and OpenMP) to ``n`` threads; effective only before NumPy is imported."""
    for var in THREAD_VARS:
        os.environ[var] = str(n)


def pin_torch_threads(torch, n: int) -> None:
    torch.set_num_threads(n)


def blas_threads() -> str:
    return os.environ.get("OPENBLAS_NUM_THREADS", "default")


def _calibrate(fn, min_seconds: float) -> int:
    """How many calls make one timed sample last at least ``min_seconds`` (after a warm-up call)."""
    fn()
    inner = 1
    while True:
        t0 = clock()
        for _ in range(inner):
            fn()
        if clock() - t0 >= min_seconds or inner >= 1 << 16:
            return inner
        inner *= 4


class Paired:
    """Per-call seconds of several callables, sampled round-robin (see the module docstring)."""

    def __init__(self, fns: dict, repeat: int, min_seconds: float = 0.02):
        loops = {name: _calibrate(fn, min_seconds) for name, fn in fns.items()}
        self.samples: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(max(repeat, 1)):
            for name, fn in fns.items():
                inner = loops[name]
                t0 = clock()
                for _ in range(inner):
                    fn()
                self.samples[name].append((clock() - t0) / inner)

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def best(self, name: str) -> float:
        return min(self.samples[name])

    def ratio(self, ours: str, theirs: str) -> float:
        """Median over rounds of ours/theirs, each round's pair measured back to back."""
        return statistics.median(a / b for a, b in zip(self.samples[ours], self.samples[theirs]))

    def best_ratio(self, ours: str, theirs: str) -> float:
        return self.best(ours) / self.best(theirs)


def verdict(ratio: float, target: float) -> str:
    return "ok" if ratio <= target else "OVER"
