"""conformance matrix: one table of framework version x op family x verdict counts over several runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.matrix import collect, rows, short_version

ROOT = Path(__file__).resolve().parents[2]


def result(framework, version, op, verdict, check="vjp", case_id=None, reason="", **case):
    rec = {
        "schema": 1,
        "case_id": case_id or f"{op}-{verdict}",
        "framework": framework,
        "check": check,
        "verdict": verdict,
        "phase": "curated",
        "dtype": "float32",
        "case": {"op": op, "dtype": "float32", "checks": [check], **case},
        "reason": reason,
    }
    if version is not None:
        rec["version"] = version
    return rec


def write_run(directory: Path, records, env_versions=None) -> Path:
    directory.mkdir(parents=True)
    (directory / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if env_versions is not None:
        report = {
            "schema_version": 1,
            "cells": [],
            "environment": {"frameworks": {fw: {"version": v} for fw, v in env_versions.items()}},
        }
        (directory / "report.json").write_text(json.dumps(report))
    return directory


@pytest.fixture
def runs(tmp_path):
    old = write_run(
        tmp_path / "jax-0.4.30",
        [
            result("jax", "jax 0.4.30, jaxlib 0.4.30", "conv", "pass", case_id="c1"),
            result("jax", "jax 0.4.30, jaxlib 0.4.30", "conv", "pass", case_id="c2"),
            result("jax", "jax 0.4.30, jaxlib 0.4.30", "linalg_det", "error_mismatch", case_id="d1"),
            result("jax", "jax 0.4.30, jaxlib 0.4.30", "abs", "fail", case_id="a1"),
            result("jax", "jax 0.4.30, jaxlib 0.4.30", "program", "unsupported", case_id="p1"),
        ],
    )
    new = write_run(
        tmp_path / "jax-0.10.2",
        [
            result("jax", "jax 0.10.2, jaxlib 0.10.2", "conv", "pass", case_id="c1"),
            result("jax", "jax 0.10.2, jaxlib 0.10.2", "conv", "error_mismatch", case_id="c2"),
            result("jax", "jax 0.10.2, jaxlib 0.10.2", "linalg_det", "pass", case_id="d1"),
            result("jax", "jax 0.10.2, jaxlib 0.10.2", "abs", "pass", case_id="a1"),
        ],
    )
    # an older record format without a per-result version: the run's report.json environment says it
    tf = write_run(
        tmp_path / "tf",
        [
            result("tensorflow", None, "conv", "pass"),
            result("tensorflow", None, "sort", "error_mismatch"),
            result("torch", "2.13.0+cpu", "conv", "pass"),
        ],
        env_versions={"tensorflow": "2.16.2", "torch": "2.13.0+cpu"},
    )
    return old, new, tf


def test_short_version():
    assert short_version("jax 0.10.2, jaxlib 0.10.2") == "0.10.2"
    assert short_version("2.13.0+cpu") == "2.13.0+cpu"
    assert short_version("2.16.2") == "2.16.2"
    assert short_version(None) == "?"


def test_one_row_per_framework_version_and_family(runs):
    table, warnings = collect([str(r) for r in runs])
    assert not warnings
    assert table[("jax", "0.4.30", "conv")] == {"pass": 2}
    assert table[("jax", "0.10.2", "conv")] == {"pass": 1, "error_mismatch": 1}
    # families are the op records' (linalg_det is in linalg_solve, abs in elementwise)
    assert table[("jax", "0.4.30", "linalg_solve")] == {"error_mismatch": 1}
    assert table[("jax", "0.4.30", "elementwise")] == {"fail": 1}
    assert table[("jax", "0.4.30", "programs")] == {"unsupported": 1}
    assert table[("tensorflow", "2.16.2", "sorting")] == {"error_mismatch": 1}  # from report.json
    assert table[("torch", "2.13.0+cpu", "conv")] == {"pass": 1}
    header, body = rows(table)
    assert header[:4] == ["framework", "version", "family", "results"]
    assert header[4:] == ["pass", "fail", "error_mismatch", "unsupported"]
    order = [(r[0], r[1]) for r in body]
    # versions in release order, not string order (0.4.30 before 0.10.2)
    assert order.index(("jax", "0.4.30")) < order.index(("jax", "0.10.2"))
    row = next(r for r in body if r[:3] == ["jax", "0.10.2", "conv"])
    assert row[3:] == [2, 1, 0, 1, 0]


def test_the_same_version_in_two_directories_adds_up(tmp_path, runs):
    again = write_run(
        tmp_path / "again", [result("jax", "jax 0.4.30, jaxlib 0.4.30", "conv", "fail", case_id="c9")]
    )
    table, _ = collect([str(runs[0]), str(again / "results.jsonl")])
    assert table[("jax", "0.4.30", "conv")] == {"pass": 2, "fail": 1}


def test_matrix_command_prints_one_table(runs, capsys):
    code = main(["matrix", *map(str, runs)])
    out = capsys.readouterr().out
    assert code == 1  # the runs hold departures: matrix exits as report does
    lines = out.splitlines()
    assert lines[0].split() == [
        "framework",
        "version",
        "family",
        "results",
        "pass",
        "fail",
        "error_mismatch",
        "unsupported",
    ]
    assert set(lines[1]) <= {"-", " "}
    assert any(line.split() == ["jax", "0.4.30", "linalg_solve", "1", "0", "0", "1", "0"] for line in lines)
    assert any(line.split() == ["tensorflow", "2.16.2", "sorting", "1", "0", "0", "1", "0"] for line in lines)


def test_matrix_with_known_departures(tmp_path, capsys):
    reason = "the reference rejects this configuration (...: the dilated kernel (5) is larger than the padded input (3) in spatial dim 0) but jax accepted it"
    run = write_run(
        tmp_path / "r",
        [result("jax", "jax 0.4.30, jaxlib 0.4.30", "conv", "error_mismatch", check="error", reason=reason)],
    )
    code = main(
        [
            "matrix",
            str(run),
            "--known",
            str(ROOT / "refgrad" / "cases" / "known_departures.toml"),
            "--json",
            str(tmp_path / "m.json"),
        ]
    )
    assert code == 0
    assert capsys.readouterr().out.splitlines()[2].split() == ["jax", "0.4.30", "conv", "1", "1"]
    assert json.loads((tmp_path / "m.json").read_text()) == [
        {"framework": "jax", "version": "0.4.30", "family": "conv", "results": 1, "known": 1}
    ]


def test_matrix_bad_input_exits_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exc:
        main(["matrix", str(tmp_path / "empty")])
    assert exc.value.code == 2
    assert "holds no results.jsonl" in capsys.readouterr().err
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "results.jsonl").write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(SystemExit) as exc:
        main(["matrix", str(tmp_path / "bin")])
    assert exc.value.code == 2


def test_matrix_nothing_recorded_exits_4(tmp_path, capsys):
    run = write_run(tmp_path / "r", [])
    assert main(["matrix", str(run)]) == 4
    assert f"empty: {run} holds no result" in capsys.readouterr().out


def test_the_nox_version_matrix_covers_two_versions_of_jax_and_tensorflow():
    import importlib.util

    pytest.importorskip("nox")
    from packaging.version import Version

    spec = importlib.util.spec_from_file_location("refgrad_noxfile", ROOT / "noxfile.py")
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)
    versions = noxfile.FRAMEWORK_VERSIONS
    for framework in ("jax", "tensorflow"):
        assert len(versions[framework]) >= 2, framework
        assert [Version(v) for v in versions[framework]] == sorted(Version(v) for v in versions[framework])
    assert versions["torch"] == ["2.13.0"]
    assert noxfile.PIP_NAME["tensorflow"] == "tensorflow-cpu"
    assert callable(noxfile.matrix)
