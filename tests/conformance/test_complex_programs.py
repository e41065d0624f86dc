"""Programs with complex tensors (issue 34): the curated cases refgrad/cases/programs/complex_*.json
(view_as_real / view_as_complex as views, view_as_real written in place, the lazy conjugate view
written through, .real / .imag views differentiated twice) are judged like every program: PyTorch
against the reference within the tracker's bounds, and JAX and TensorFlow ``unsupported`` with the
reason (their functional translation has no complex-real storage views and no lazy conjugate)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conformance.cli import main
from conformance.functional import COMPLEX_STORAGE_REASON
from conformance.programs import execute

pytest.importorskip("torch")

CASES = sorted((Path(__file__).parents[2] / "refgrad" / "cases" / "programs").glob("complex_*.json"))


def test_the_conjugate_view_written_in_place_conjugates_the_write_into_its_base():
    """v3 = v2.conj(); v3.mul_(2 + 1j) stores conj((2 + 1j) conj(v2)) = (2 - 1j) v2 into v2's storage:
    view_as_real(v2) reads it (the reference and torch alike)."""
    import torch

    import reference

    case = json.loads(next(p for p in CASES if "conj_view" in p.name).read_text())
    v0, v1 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), np.array([[1.0, 0.5, -2.0], [0.0, -1.5, 0.3]])
    want = (2 - 1j) * (v0 + 1j * v1)
    for T in (reference, torch):
        out = execute(case["source"], T, {"v0": v0, "v1": v1})
        np.testing.assert_allclose(out["result[2]"], np.stack([want.real, want.imag], -1), rtol=1e-15)


@pytest.mark.skipif(not CASES, reason="no curated complex programs")
def test_complex_programs_pass_on_torch_and_are_unsupported_with_the_reason_on_jax(tmp_path, capsys):
    """Before the complex programs had a declared reason, JAX's translation raised AttributeError on
    T.complex / T.view_as_complex: an error_mismatch, not a statement of what it cannot express."""
    pytest.importorskip("jax")
    cases = tmp_path / "cases"
    cases.mkdir()
    for p in CASES:
        shutil.copy(p, cases / p.name)
    main(["replay", str(cases), "--frameworks", "torch,jax", "--out", str(tmp_path / "out"), "--quiet"])
    capsys.readouterr()
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * len(CASES)
    for r in rows:
        if r["framework"] == "torch":
            assert r["verdict"] == "pass", r
        else:
            assert r["verdict"] == "unsupported" and r["reason"] == COMPLEX_STORAGE_REASON, r
