"""``conformance run --ops programs`` end to end, and planted engine bugs caught with shrunk programs.

The planted bugs live in copies of the reference engine (:mod:`conformance.testing.mutants`); a
campaign judges each copy against the real reference exactly as it judges PyTorch, must find a
failing program, shrink it, report it, and write a reproducer that is the program's own text and
exits 1 on the buggy engine and 0 on the real one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.case import load_cases
from conformance.programs import DEFINITIONS
from conformance.report import build_report
from conformance.runner import Campaign
from conformance.strategies import program_cases
from conformance.testing import mutants

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = {
    "view_no_version_bump": "ViewNoVersionBump",
    "copyslices_keeps_base_grad": "CopySlicesKeepsBaseGrad",
    "leaf_grad_overwritten": "LeafGradOverwritten",
    "checkpoint_stale_inputs": "CheckpointStaleInputs",
    "mark_dirty_no_bump": "MarkDirtyNoBump",
    "custom_backward_not_summed": "CustomBackwardNotSummed",
}
# The bugs of custom Functions and checkpoint show in about 1 to 3 random programs in 100 (the
# program needs the feature and the interaction: a saved input written in place, a write through
# .data after a save, a shared input), so their campaigns need a larger budget: slow tests. The
# fast check of each is tests/conformance/test_program_templates.py (its shrunk program, fixed).
BUDGET = {"checkpoint_stale_inputs": 800, "mark_dirty_no_bump": 800, "custom_backward_not_summed": 800}
BUGS = [pytest.param(bug, marks=pytest.mark.slow) if bug in BUDGET else bug for bug in sorted(ADAPTERS)]


@pytest.mark.torch
def test_run_ops_programs_on_torch(tmp_path):
    pytest.importorskip("torch")
    from conformance.cli import main

    out, curated = tmp_path / "run", tmp_path / "no_curated_cases"
    curated.mkdir()  # fuzzing only: refgrad/cases/programs holds a known reference discrepancy
    argv = [
        "run",
        "--ops",
        "programs",
        "--frameworks",
        "torch",
        "--max-examples",
        "15",
        "--dtypes",
        "float64",
        "--cases",
        str(curated),
    ]
    assert main(argv + ["--out", str(out), "--found-dir", str(tmp_path / "found"), "--quiet"]) == 0
    report = json.loads((out / "report.json").read_text())
    cells = [c for c in report["cells"] if c["framework"] == "torch"]
    assert [(c["op"], c["check"], c["verdict"]) for c in cells] == [("program", "program", "pass")]
    assert cells[0]["results"] >= 10
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["case"]["op"] == "program" and r["bound"]["u"] == 2.0**-53 for r in records)
    assert any(r["reason"].startswith("both raise at line") for r in records if r.get("reason"))


@pytest.mark.parametrize("bug", BUGS)
def test_planted_engine_bug_is_caught_with_a_shrunk_program(bug, tmp_path):
    spec = f"conformance.testing.mutants:{ADAPTERS[bug]}"
    name = f"mutant_{bug}"
    with Campaign(tmp_path / "run", {name: spec}, found_dir=tmp_path / "found") as campaign:
        campaign.start()
        shrunk = campaign.fuzz([name], "program", program_cases(), max_examples=BUDGET.get(bug, 120), seed=0)
        info = campaign.frameworks_info()
    assert shrunk, f"the planted bug {bug} ({mutants.BUGS[bug][3]}) went unnoticed"
    rec = shrunk[0]
    assert rec["verdict"] in ("fail", "error_mismatch") and rec["phase"] == "shrunk"
    (found,) = [c for c in load_cases(rec["found"])]
    assert found.op == "program" and found.source == rec["case"]["source"]
    texts = [textwrap.dedent(d).strip() for d in DEFINITIONS.values()]  # (the templates the program defines)
    definitions = sum(t.count("\n") + 1 for t in texts if t.splitlines()[0] in found.source)
    assert found.source.count("\n") <= 16 + definitions, f"not shrunk:\n{found.source}"

    report = build_report(tmp_path / "run", info, "test", run={"device": "cpu", "precision": "highest"})
    (entry,) = [d for d in report["discrepancies"] if d["case_id"] == rec["case_id"]][:1]
    assert found.source in entry["reproducer"], "the reproducer is not the program's own text"
    script = tmp_path / "repro.py"
    script.write_text(entry["reproducer"])
    root = tmp_path / "engines"
    mutants.build(bug, root)
    env = {**os.environ, "PYTHONPATH": str(root)}
    buggy = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    fixed_script = tmp_path / "repro_reference.py"
    fixed_script.write_text(
        entry["reproducer"].replace(f"FRAMEWORK = 'refgrad_mutant_{bug}'", "FRAMEWORK = 'reference'")
    )
    fixed = subprocess.run(
        [sys.executable, str(fixed_script)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "agrees with the reference" in fixed.stdout


def test_a_moved_anchor_is_an_error_not_a_silent_non_bug(tmp_path, monkeypatch):
    monkeypatch.setitem(mutants.BUGS, "gone", ("autograd/graph.py", "no such text", "x", "nothing"))
    with pytest.raises(mutants.MutantError, match="anchor 'no such text' occurs 0 times"):
        mutants.build("gone", tmp_path)


@pytest.mark.torch
@pytest.mark.parametrize(
    "adapter, dtypes, budget",
    [  # each mode's default budget (docs/conformance.md, Budgets): torch 40, torch:aot_eager 10
        ("BFloat16GradUlps", ("bfloat16",), 40),
        ("AutocastGradUlps", ("mixed_bfloat16",), 40),  # the same under torch.autocast (conformance.amp)
        pytest.param("AotEagerBackwardScaled", ("float32", "bfloat16"), 10, marks=pytest.mark.slow),
    ],
)
def test_planted_framework_bugs_are_caught_by_a_default_budget_campaign(adapter, dtypes, budget, tmp_path):
    """A 16-ulp error in one element of one gradient of bfloat16 programs, and a compiled backward that
    scales its first gradient (conformance.testing.planted): a campaign finds and shrinks a failure."""
    pytest.importorskip("torch")
    spec = f"conformance.testing.planted:{adapter}"
    with Campaign(tmp_path / "run", {"planted": spec}, found_dir=tmp_path / "found") as campaign:
        campaign.start()
        shrunk = campaign.fuzz(
            ["planted"], "program", program_cases(dtypes=dtypes), max_examples=budget, seed=0
        )
    assert shrunk, f"the planted bug of {adapter} went unnoticed"
    rec = shrunk[0]
    assert rec["verdict"] == "fail" and rec["phase"] == "shrunk", rec
    if adapter in ("BFloat16GradUlps", "AutocastGradUlps"):
        assert rec["dtype"] == dtypes[0] and rec["worst"]["output"] == "grad[v0]", rec
        assert rec["worst"]["index"] == [0] * len(rec["worst"]["index"]), rec
