"""A run's inputs: the shipped cases and known departures (package data), --known builtin and a
user's own list merged, found cases beside the report, and the report naming what it read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import refgrad
from conformance import exitcodes, shipped
from conformance.cli import DEFAULT_CASES, main
from conformance.known import SHIPPED, load_known
from conformance.report import validate

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "refgrad" / "cases"

PLANTED = {
    "id": "planted-dropped-group",
    "framework": "torch-dropped-group",
    "match": {"op": "conv", "check": "vjp_vjp"},
    "verdict": "fail",
    "reason": "the planted adapter drops a group in the double backward",
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A run whose departures no shipped entry names: a planted adapter's double backward."""
    pytest.importorskip("torch")
    base = tmp_path_factory.mktemp("planted")
    cases = base / "groups.json"  # two curated double-backward cases with groups 2
    cases.write_text(json.dumps(json.loads((CASES / "double_backward_groups.json").read_text())[:2]))
    out = base / "run"
    argv = ["replay", str(cases), "--adapter", "planted_adapters:DroppedGroup", "--checks", "vjp_vjp"]
    assert main([*argv, "--out", str(out), "--quiet"]) == exitcodes.DEPARTURES
    return out


def _ours(tmp_path, *entries) -> Path:
    path = tmp_path / "ours.json"
    path.write_text(json.dumps({"schema": 1, "departures": list(entries)}))
    return path


def test_the_shipped_data_is_the_checkouts_refgrad_cases():
    assert shipped.cases_dir() == CASES == DEFAULT_CASES
    assert SHIPPED == CASES / "known_departures.toml" and SHIPPED.is_file()
    assert (CASES / "found").is_dir() and (CASES / "programs").is_dir()
    assert not (ROOT / "cases").exists()  # one copy: the package data


def test_builtin_and_a_users_file_merge_and_the_report_names_each_with_its_digest(planted, tmp_path):
    out, ours = planted, _ours(tmp_path, PLANTED)
    assert main(["report", str(out), "--known", "builtin", "--known", str(ours)]) == exitcodes.OK
    report = json.loads((out / "report.json").read_text())
    validate(report)
    builtin, mine = report["known"]["files"]
    n_shipped = len(load_known(SHIPPED).entries)
    assert builtin == {
        "file": "builtin",
        "path": str(SHIPPED),
        "digest": "sha256:" + hashlib.sha256(SHIPPED.read_bytes()).hexdigest()[:16],
        "refgrad": refgrad.__version__,
        "entries": n_shipped,
    }
    assert mine["file"] == mine["path"] == str(ours) and mine["entries"] == 1 and "refgrad" not in mine
    assert mine["digest"] == "sha256:" + hashlib.sha256(ours.read_bytes()).hexdigest()[:16]
    entries = {e["id"]: e for e in report["known"]["entries"]}
    assert len(entries) == n_shipped + 1 and entries["planted-dropped-group"]["file"] == str(ours)
    assert entries["planted-dropped-group"]["matched"] == report["totals"]["known"] > 0
    html = (out / "index.html").read_text()
    assert builtin["digest"] in html and mine["digest"] in html and f"refgrad {refgrad.__version__}" in html


def test_a_bare_known_is_the_shipped_list(planted):
    out = planted
    assert main(["report", str(out), "--known"]) == exitcodes.DEPARTURES  # the planted fail is not in it
    (only,) = json.loads((out / "report.json").read_text())["known"]["files"]
    assert only["file"] == "builtin" and only["path"] == str(SHIPPED)


def test_an_id_in_two_files_and_a_directory_are_errors_naming_them(planted, tmp_path, capsys):
    out = planted
    taken = load_known(SHIPPED).entries[0].id
    ours = _ours(tmp_path, {**PLANTED, "id": taken})
    assert main(["report", str(out), "--known", "builtin", "--known", str(ours)]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert f"entry {taken!r} of {ours} is already defined by builtin" in err and "Traceback" not in err
    assert main(["report", str(out), "--known", str(tmp_path)]) == exitcodes.USAGE
    assert f"--known: {str(tmp_path)!r} is a directory" in capsys.readouterr().err


@pytest.mark.torch
def test_found_cases_go_beside_the_report_and_the_report_lists_the_case_files_read(tmp_path):
    before = sorted(CASES.rglob("*"))
    out = tmp_path / "out"
    argv = ["run", "--ops", "conv", "--adapter", "planted_adapters:RoundsToTF32", "--checks", "forward"]
    argv += ["--dtypes", "float32", "--cases", str(CASES / "gemm_paths.json"), "--max-examples", "4"]
    assert main([*argv, "--seed", "1", "--out", str(out), "--quiet"]) == exitcodes.DEPARTURES
    found = sorted((out / "found").glob("*.json"))
    assert found and sorted(CASES.rglob("*")) == before  # the shipped corpus is an input, never an output
    report = json.loads((out / "report.json").read_text())
    validate(report)
    inputs = report["environment"]["inputs"]
    assert inputs == {
        "cases": str(CASES / "gemm_paths.json"),
        "path": str(CASES / "gemm_paths.json"),
        "case_files": ["gemm_paths.json"],
        "found_dir": str(out / "found"),
    }
    html = (out / "index.html").read_text()
    assert "case files read" in html and "gemm_paths.json" in html
