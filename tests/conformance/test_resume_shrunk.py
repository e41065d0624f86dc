"""A resumed campaign re-records a shrunk failure with its case's fields.

Under ``--resume`` the generation's examples are answered from the driver's index, whose records are
compact (no dtype, config or case); when Hypothesis's smallest failing case is one of them, the
shrunk result was recorded from that compact record, and the report filed it under op ``conv``,
dtype ``-`` (seen for ``maximum-283e9bc36c39`` in the session-4 seed-1 campaign), so no known entry
matched it."""

from __future__ import annotations

import json

from conformance.coverage import record_strategy
from conformance.report import _cell_key
from conformance.runner import Campaign, read_results

FRAMEWORKS = {"torch-scaled-ops": "planted_spellings:TorchScaledOps"}  # tanh off by 1.6 %


def _fuzz(out, found, resume):
    strategy = record_strategy("tanh", ("float64",), ("forward",))
    manifest = {"kind": "refgrad-run", "seed": 0, "frameworks": FRAMEWORKS}
    with Campaign(out, FRAMEWORKS, found_dir=found, resume=resume, manifest=manifest) as camp:
        camp.start()
        return camp.fuzz(list(FRAMEWORKS), "forward", strategy, max_examples=3, seed=0, max_shrinks=1)


def test_a_shrunk_failure_re_recorded_on_resume_keeps_its_case(tmp_path):
    out, found = tmp_path / "out", tmp_path / "found"
    assert _fuzz(out, found, resume=False)
    path = out / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    whole = [json.loads(x) for x in lines if json.loads(x).get("phase") == "shrunk"]
    assert whole and whole[0]["case"]["op"] == "tanh"
    # interrupted after generation, before the shrunk result was written: resume re-shrinks
    path.write_text("".join(x for x in lines if json.loads(x).get("phase") != "shrunk"))
    assert _fuzz(out, found, resume=True)
    shrunk = [r for r in read_results(path) if r.get("phase") == "shrunk"]
    assert len(shrunk) == 1
    rec = shrunk[0]
    for key in ("dtype", "config", "case", "case_hash", "version"):
        assert rec.get(key) == whole[0][key], key
    # the report's cell (framework, op, check, dtype), which known entries are matched in
    assert _cell_key(rec) == ("torch-scaled-ops", "tanh", "forward", "float64")


def test_a_resumed_fuzz_run_does_not_shrink_again_what_it_shrank(tmp_path, monkeypatch):
    """Shrinking asks the framework again for every step (nothing of it is recorded), so a resumed
    campaign that re-shrank every failure it had already shrunk spent most of its time there (the
    seed-2 campaign's resume: 3 new results in 8 minutes); the recorded shrunk result stands."""
    out, found = tmp_path / "out", tmp_path / "found"
    first = _fuzz(out, found, resume=False)
    assert len(first) == 1
    before = (out / "results.jsonl").read_text()

    def no_shrinking(*args, **kwargs):
        raise AssertionError("a resumed run shrank a failure whose shrunk result is recorded")

    monkeypatch.setattr(Campaign, "_shrink", staticmethod(no_shrinking))
    again = _fuzz(out, found, resume=True)
    assert [r["case_id"] for r in again] == [r["case_id"] for r in first]
    assert (out / "results.jsonl").read_text() == before
