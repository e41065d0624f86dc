"""The known departures of CUDA kernels reproduce on a CUDA device (marker ``gpu``).

Their entries name ``device == "cuda"`` in ``match.settings``; on a machine without CUDA the
shipped-reproducer test of test_known.py leaves them out, and this test runs them where they apply
(scripts/gpu_check.sh runs the ``gpu`` tests on a lent device)."""

from __future__ import annotations

import pytest

from conformance import stale
from conformance.known import load_known
from conformance.shipped import known_file


def _cuda_entries():
    entries = load_known(known_file()).entries
    return [
        e for e in entries
        if e.reproducer and e.reproducer.endswith(".py")
        and any(c.path == "device" and c.value == "cuda" for c in e.settings)
    ]  # fmt: skip


def test_there_are_cuda_entries_to_reproduce():
    assert _cuda_entries(), "no shipped entry names device == cuda: this file would test nothing"


@pytest.mark.gpu
@pytest.mark.torch
def test_each_cuda_entry_reproduces_on_this_device():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device here")
    entries = [e for e in _cuda_entries() if e.applies_to(e.framework, torch.__version__)]
    said = stale.run_reproducers(entries)
    missed = [f"{e.id}: printed {said[e.id]['printed']!r}" for e in entries if not said[e.id]["reproduces"]]
    assert not missed, "\n".join(missed)
