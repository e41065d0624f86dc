"""The campaign driver's own BLAS pool runs with the workers' thread count while a campaign is open
(conformance.runner._limit_driver_blas), and gets its previous setting back when it closes."""

from __future__ import annotations

import pytest

from conformance.runner import Campaign

threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is a refgrad dependency")


def _blas_threads():
    import numpy  # noqa: F401 - loads NumPy's BLAS, the pool threadpoolctl reports

    pools = threadpoolctl.threadpool_info()
    return [p["num_threads"] for p in pools if p["user_api"] == "blas"]


def test_driver_blas_limited_while_open_and_restored(tmp_path):
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        if not before:
            pytest.skip("NumPy reports no BLAS pool here (threadpoolctl found none to limit)")
        with Campaign(tmp_path / "out", {}, threads=1):
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before


def test_threads_zero_leaves_blas_alone(tmp_path):
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with Campaign(tmp_path / "out", {}, threads=0):
            assert _blas_threads() == before
