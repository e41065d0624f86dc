"""The known entries the seeded campaign (`refgrad run --draws seeded`) needed: their reproducer
prints each departure, every entry's pattern matches what it prints, and each entry's region is
written on case fields (op, check, dtype, values kind), not on the case ids one run drew."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.known import load_known

#: the reproducer scripts of the seeded campaign's entries, with how many entries each has at least:
#: seedsA's (elementwise, pointwise and activations at seed 0), seedsC's (the whole pointwise family
#: at seed 0), seedsG's (fft and linalg_decomp at seed 0) and seedsI's (the families first run at seed 1:
#: linalg_solve, sampling, ...) and seedsN's (seed 3)
SCRIPTS = {
    "reproducers/seeded-draws-special-values.py": 10,
    "reproducers/seeded-draws-pointwise-seed0.py": 10,
    "reproducers/seeded-draws-fft.py": 1,
    "reproducers/seeded-draws-linalg.py": 1,
    "reproducers/seeded-draws-seed1-families.py": 1,
    "reproducers/seeded-draws-seed3-seedsN.py": 1,
}


def _entries(script):
    return [e for e in load_known("builtin").entries if e.reproducer == script]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_seeded_entries_describe_regions_not_drawn_cases(script):
    entries = _entries(script)
    assert len(entries) >= SCRIPTS[script]
    for e in entries:
        assert e.case_ids is None, e.id
        assert e.ops, e.id
        assert e.reproduces is not None, e.id


@pytest.mark.slow  # imports PyTorch, JAX and TensorFlow: about half a minute
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_reproducer_prints_every_seeded_departure(script):
    pytest.importorskip("tensorflow")
    pytest.importorskip("jax")
    pytest.importorskip("mpmath")
    entries = _entries(script)
    script = Path(entries[0].reproducer_path)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    missed = [e.id for e in entries if not e.reproduces.search(done.stdout)]
    assert not missed, done.stdout
