"""The run-integrity contract on report, replay, matrix and --known (issue #36, part A): every output
path is checked before any work (never an input, never a run's own file, writable), a baseline is
never lost or compared with itself, --known entries that could never match are errors at load, and
matrix counts each result once and exits as report does."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conformance import exitcodes
from conformance.cli import main
from conformance.known import SHIPPED, KnownFileError, load_known

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "refgrad" / "cases" / "gemm_paths.json"
TINY = ["--frameworks", "torch", "--ops", "conv", "--max-examples", "0", "--cases", str(GEMM)]
TINY += ["--checks", "forward", "--dtypes", "float64", "--quiet"]


def _code(argv) -> int:
    """main's exit status, also when argparse's parser.error exits."""
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return exc.code


def _rec(verdict="pass", case_id="c1", framework="torch", version="2.13.0+cpu", check="forward"):
    return {
        "schema": 1,
        "case_id": case_id,
        "framework": framework,
        "version": version,
        "check": check,
        "verdict": verdict,
        "dtype": "float64",
        "case": None,
        "reason": "",
    }


def _results(directory: Path, *records) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return directory


@pytest.fixture
def reported(tmp_path):
    """A results directory with its report.json (as `conformance report` leaves it)."""
    d = _results(tmp_path / "run", _rec(), _rec("fail", "c2"))
    assert main(["report", str(d)]) == exitcodes.DEPARTURES
    return d


# ---- 1. output paths ------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["results.jsonl", "report.json", "index.html", "manifest.json"])
def test_report_junit_xml_may_not_overwrite_an_input_or_a_file_the_run_owns(reported, target, capsys):
    before = {p.name: p.read_bytes() for p in reported.iterdir() if p.is_file()}
    assert _code(["report", reported, "--junit-xml", reported / target]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert "--junit-xml" in err and str(reported / target) in err and "Traceback" not in err
    after = {p.name: p.read_bytes() for p in reported.iterdir() if p.is_file()}
    assert after == before, "nothing may be written when an output path is refused"


def test_an_output_may_not_name_the_known_file_or_the_baseline(reported, tmp_path, capsys):
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"schema": 1, "departures": []}))
    assert _code(["report", reported, "--known", known, "--junit-xml", known]) == exitcodes.USAGE
    assert "the --known file" in capsys.readouterr().err
    assert json.loads(known.read_text()) == {"schema": 1, "departures": []}
    old = tmp_path / "old.json"
    shutil.copy(reported / "report.json", old)
    assert _code(["report", reported, "--baseline", old, "--junit-xml", old]) == exitcodes.USAGE
    assert "the --baseline report" in capsys.readouterr().err


def test_report_out_may_not_replace_another_runs_report(reported, tmp_path, capsys):
    other = _results(tmp_path / "other", _rec("pass", "x9"))
    assert main(["report", str(other)]) == exitcodes.OK
    theirs = (other / "report.json").read_bytes()
    assert _code(["report", reported, "--out", other]) == exitcodes.USAGE
    assert "--out" in capsys.readouterr().err
    assert (other / "report.json").read_bytes() == theirs
    assert _code(["report", reported, "--out", reported / "reproducers"]) == exitcodes.USAGE


def test_run_output_paths_are_refused_before_any_work(reported, tmp_path, capsys):
    out = tmp_path / "out"
    for argv, flag in [
        (["--out", out, "--junit-xml", out / "report.json"], "--junit-xml"),
        (["--out", out, "--junit-xml", out / "results.jsonl"], "--junit-xml"),
        (["--out", out, "--junit-xml", GEMM], "--junit-xml"),  # the cases it runs
        (["--out", out, "--found-dir", reported / "reproducers"], "--found-dir"),
        (["--out", reported / "previous" / "x"], "--out"),
    ]:
        assert _code(["run", *TINY, *argv]) == exitcodes.USAGE, argv
        err = capsys.readouterr().err
        assert flag in err and "Traceback" not in err
        assert not (out / "results.jsonl").exists() and not (out / "manifest.json").exists()
    assert json.loads(GEMM.read_text())  # the input is untouched


def test_replay_out_may_not_be_inside_the_cases_it_replays(tmp_path, capsys):
    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copy(GEMM, cases / "gemm.json")
    assert _code(["replay", cases, "--frameworks", "torch", "--out", cases / "out"]) == exitcodes.USAGE
    assert "the replayed cases" in capsys.readouterr().err
    assert not (cases / "out" / "report.json").exists()


@pytest.mark.parametrize("where", ["unwritable", "under-a-file", "a-directory", "an-input"])
def test_matrix_json_bad_path_exits_2_before_printing_anything(reported, tmp_path, where, capsys):
    (tmp_path / "file.txt").write_text("x")
    path = {
        "unwritable": Path("/proc/refgrad-matrix.json"),
        "under-a-file": tmp_path / "file.txt" / "m.json",
        "a-directory": tmp_path,
        "an-input": reported / "results.jsonl",
    }[where]
    results = (reported / "results.jsonl").read_bytes()
    assert _code(["matrix", reported, "--json", path]) == exitcodes.USAGE
    captured = capsys.readouterr()
    assert captured.out == "", "the table is not printed when its output path is refused"
    assert "--json" in captured.err and "Traceback" not in captured.err
    assert (reported / "results.jsonl").read_bytes() == results


# ---- 2. run --overwrite --baseline OUT/report.json ------------------------------------------------
def test_overwrite_with_a_baseline_inside_out_compares_with_the_moved_report(tmp_path, capsys):
    out = tmp_path / "out"
    first = main(["run", *TINY, "--out", str(out)])
    assert first == exitcodes.OK
    old = json.loads((out / "report.json").read_text())
    code = main(
        [
            "run",
            *TINY,
            "--out",
            str(out),
            "--overwrite",
            "--baseline",
            str(out / "report.json"),
            "--fail-on",
            "new",
        ]
    )
    assert code == exitcodes.OK
    [moved] = (out / "previous").iterdir()
    assert json.loads((moved / "report.json").read_text()) == old, "the baseline run's report is kept"
    report = json.loads((out / "report.json").read_text())
    assert report["regression"]["baseline"] == str(moved / "report.json")
    assert report["regression"]["new_failures"] == 0
    assert report["environment"]["run_id"] != old["environment"]["run_id"]


# ---- 3. a report compared with itself; a baseline missing a field ---------------------------------
def test_a_report_is_not_its_own_baseline(reported, tmp_path, capsys):
    argv = ["report", reported, "--fail-on", "new", "--baseline"]
    assert _code([*argv, reported / "report.json"]) == exitcodes.USAGE
    assert "compared with itself" in capsys.readouterr().err
    ours = tmp_path / "copy.json"
    shutil.copy(reported / "report.json", ours)
    # a copy of it is the same run only by its run id: a report without one is taken at its word
    (reported / "manifest.json").write_text(json.dumps({"kind": "refgrad-run", "run_id": "r-1"}))
    assert main(["report", str(reported)]) == exitcodes.DEPARTURES
    shutil.copy(reported / "report.json", ours)
    assert _code([*argv, ours]) == exitcodes.USAGE
    assert "same run (run id r-1" in capsys.readouterr().err
    other = _results(tmp_path / "earlier", _rec("fail", "c2"))
    assert main(["report", str(other)]) == exitcodes.DEPARTURES
    assert _code([*argv, other / "report.json"]) == exitcodes.OK  # c2 failed before: nothing new


@pytest.mark.parametrize("field", ["failing_cases", "passing_cases", "verdict"])
def test_a_baseline_missing_a_field_is_a_typed_error(reported, tmp_path, field, capsys):
    base = json.loads((reported / "report.json").read_text())
    del base["cells"][0][field]
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    assert _code(["report", reported, "--baseline", path]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert str(path) in err and repr(field) in err and "cells[0]" in err
    assert "Traceback" not in err and "internal error" not in err


# ---- 4. --known: entries that could never match are errors at load --------------------------------
ENTRY = {
    "id": "e",
    "framework": "torch",
    "versions": ">=2.0",
    "verdict": "fail",
    "reason": "a departure described at length",
    "match": {"op": "conv", "check": "vjp", "where": [{"path": "shapes.input.0", "op": "==", "value": 0}]},
}


@pytest.mark.parametrize(
    "change, says",
    [
        ({"versions": ">=2.5,<2.4"}, "versions '>=2.5,<2.4' is an empty range"),
        ({"versions": "<2.0,>2.0"}, "is an empty range"),
        ({"framework": "pytorch"}, "framework 'pytorch' is not a framework refgrad knows"),
        ({"framework": "torch:compiel"}, "'compiel' is not an execution mode of torch"),
        ({"match": {"check": "vjpp"}}, "match.check 'vjpp' is not one of"),
        ({"match": {"dtype": "float46"}}, "match.dtype 'float46' is not one of"),
        ({"match": {"op": "convv"}}, "match.op 'convv' is not an op refgrad records"),
        ({"match": {"op": "conv", "check": "program"}}, "is no check of op conv"),
        ({"match": {"where": [{"path": "shape.input.0", "op": "==", "value": 0}]}}, "'shape' is not a field"),
        (
            {"match": {"op": "conv", "where": [{"path": "shapes.inputs.0", "op": "==", "value": 0}]}},
            "have no input 'inputs'",
        ),
        (
            {"match": {"where": [{"path": "shapes.input.0", "op": "==", "value": "{param.groups}"}]}},
            "match.where[0].value '{param.groups}'",
        ),
    ],
)
def test_a_known_entry_that_could_never_match_is_an_error_at_load(tmp_path, change, says, capsys):
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"schema": 1, "departures": [{**ENTRY, **change}]}))
    with pytest.raises(KnownFileError) as err:
        load_known(path)
    assert says in str(err.value) and "entry 0 ('e')" in str(err.value) and str(path) in str(err.value)
    results = _results(tmp_path / "r", _rec())
    assert _code(["report", results, "--known", path]) == exitcodes.USAGE
    assert says in capsys.readouterr().err


def test_a_default_mode_is_its_frameworks_plain_name_and_the_shipped_file_loads(tmp_path):
    path = tmp_path / "known.json"
    path.write_text(
        json.dumps({"schema": 1, "departures": [{**ENTRY, "framework": "torch:eager", "match": {}}]})
    )
    known = load_known(path)
    out, _ = known.classify([_rec("fail")])  # results of torch's default mode are named "torch"
    assert out[0]["verdict"] == "known"
    shipped = load_known(SHIPPED)
    assert len(shipped.entries) >= 100
    # an --adapter's own framework name is no misspelling when the caller names it
    other = tmp_path / "mine.json"
    other.write_text(json.dumps({"schema": 1, "departures": [{**ENTRY, "framework": "myfw"}]}))
    with pytest.raises(KnownFileError, match="'myfw' is not a framework"):
        load_known(other)
    assert load_known(other, ["myfw"]).entries[0].framework == "myfw"


# ---- 5. matrix: each result once, inputs listed, exit as report --------------------------------------
def test_matrix_counts_a_directory_given_twice_or_copied_once(reported, tmp_path, capsys):
    (reported / "manifest.json").write_text(json.dumps({"kind": "refgrad-run", "run_id": "r-1"}))
    copy = tmp_path / "copy"
    shutil.copytree(reported, copy)
    link = tmp_path / "link"
    os.symlink(reported, link)
    dirs = [reported, f"{reported}/", reported / "results.jsonl", link, copy]
    assert _code(["matrix", *dirs]) == exitcodes.DEPARTURES
    out = capsys.readouterr().out
    [row] = [line.split() for line in out.splitlines() if line.startswith("torch")]
    assert row[3:] == ["2", "1", "1"], "results pass 1, fail 1: each counted once"
    assert out.count("is the same results file as") == 3
    assert f"{copy} is the same run (run id r-1) as {reported}: counted once" in out
    assert f"read: {reported} (2 results)" in out


def test_matrix_reports_an_empty_input_and_exits_like_report(tmp_path, capsys):
    good = _results(tmp_path / "good", _rec())
    empty = _results(tmp_path / "empty")
    assert _code(["matrix", good]) == exitcodes.OK
    assert _code(["matrix", good, empty]) == exitcodes.NOTHING_JUDGED
    assert f"empty: {empty} holds no result" in capsys.readouterr().out
    unsupported = _results(tmp_path / "unsupported", _rec("unsupported"))
    assert _code(["matrix", unsupported]) == exitcodes.NOTHING_JUDGED
    assert main(["report", str(unsupported)]) == exitcodes.NOTHING_JUDGED
    failing = _results(tmp_path / "failing", _rec("crash"))
    assert _code(["matrix", good, failing]) == exitcodes.DEPARTURES
    # a run directory that recorded nothing at all (its manifest, no results.jsonl) is listed too
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "manifest.json").write_text(json.dumps({"kind": "refgrad-run"}))
    assert _code(["matrix", good, bare]) == exitcodes.NOTHING_JUDGED
    assert f"empty: {bare} holds no result" in capsys.readouterr().out


# ---- 6. a result whose embedded case is not a case ------------------------------------------------
@pytest.mark.parametrize("case", [[{"op": "conv"}], "conv", 3, {"op": "conv", "params": [1], "shapes": {}}])
def test_a_results_file_whose_embedded_case_is_the_wrong_type_is_a_typed_error(tmp_path, case, capsys):
    d = _results(tmp_path / "r", {**_rec("fail"), "case": case})
    assert _code(["report", d]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert str(d / "results.jsonl") in err and "'case'" in err
    assert "Traceback" not in err and "internal error" not in err
