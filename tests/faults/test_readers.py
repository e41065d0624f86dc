"""Every file the CLI reads goes through one validated reader: torn and garbage lines are skipped with
their line numbers and counted, foreign and binary files are a clear error naming the file."""

from __future__ import annotations

import json

import pytest

from conformance import exitcodes
from conformance.cli import main
from conformance.resultsio import InputFileError, read_report_file, read_results_file


def _rec(i, verdict="pass"):
    return {
        "schema": 1,
        "case_id": f"c{i}",
        "framework": "torch",
        "check": "forward",
        "verdict": verdict,
        "dtype": "float64",
        "case": None,
    }


def test_torn_and_garbage_lines_are_skipped_by_line_number(tmp_path, tally):
    p = tmp_path / "results.jsonl"
    lines = [
        json.dumps(_rec(0)),
        "{not json",
        json.dumps([1, 2]),
        json.dumps({"case_id": 3}),
        json.dumps(_rec(4)),
        "\udcff".encode("utf-8", "surrogateescape").decode("latin-1"),
        json.dumps(_rec(5))[:30],
    ]
    p.write_bytes(("\n".join(lines[:-1]) + "\n").encode("utf-8", "surrogateescape") + lines[-1].encode())
    read = read_results_file(p)
    assert [r["case_id"] for r in read.records] == ["c0", "c4"]
    assert [n for n, _ in read.skipped] == [2, 3, 4, 6, 7]
    assert "torn" in read.skipped[-1][1]
    tally["faults injected"] += 5


def test_report_skips_bad_lines_with_a_warning_and_counts_them(tmp_path, capsys):
    p = tmp_path / "results.jsonl"
    p.write_text(json.dumps(_rec(0)) + "\n" + "garbage\n" + json.dumps(_rec(1, "fail")) + "\n")
    assert main(["report", str(tmp_path)]) == exitcodes.DEPARTURES
    err = capsys.readouterr().err
    assert f"{p}:2: skipped" in err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["skipped_lines"] == [{"line": 2, "why": report["skipped_lines"][0]["why"]}]
    assert report["totals"]["results"] == 2


@pytest.mark.parametrize(
    "content, words",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        (b'{"name": "left-pad", "version": "1.0"}\n{"x": 1}\n', "not a refgrad results file"),
        (b"col1,col2\n1,2\n", "not a refgrad results file"),
    ],
)
def test_report_on_a_foreign_file_names_it_and_exits_2(tmp_path, content, words, capsys):
    p = tmp_path / "results.jsonl"
    p.write_bytes(content)
    assert main(["report", str(p)]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert str(p) in err and words in err and "Traceback" not in err


def test_report_regenerates_from_results_alone_beside_a_torn_report(tmp_path, capsys):
    (tmp_path / "results.jsonl").write_text(json.dumps(_rec(0)) + "\n")
    (tmp_path / "report.json").write_text('{"schema_version": 1, "cells": [{"id": "c')  # torn
    assert main(["report", str(tmp_path)]) == exitcodes.OK
    assert "regenerating from results.jsonl alone" in capsys.readouterr().err
    assert json.loads((tmp_path / "report.json").read_text())["totals"]["results"] == 1


@pytest.mark.parametrize(
    "baseline, words",
    [
        ('{"cells": 3}', "no 'cells' list"),
        ("[1, 2]", "no 'cells' list"),
        ('{"cells": [1]}', "cells[0]"),
        ("\x00\x01", "binary"),
        ('{"cells": [', "not valid JSON"),
    ],
)
def test_a_bad_baseline_is_named(tmp_path, baseline, words, capsys):
    (tmp_path / "results.jsonl").write_text(json.dumps(_rec(0)) + "\n")
    b = tmp_path / "old.json"
    b.write_text(baseline)
    assert main(["report", str(tmp_path), "--baseline", str(b)]) == exitcodes.USAGE
    err = capsys.readouterr().err
    assert "--baseline" in err and str(b) in err and words in err


def test_unknown_verdicts_from_a_newer_version_are_shown(tmp_path):
    (tmp_path / "results.jsonl").write_text(
        json.dumps({**_rec(0), "schema": 9, "verdict": "quantum_flake"}) + "\n" + json.dumps(_rec(1)) + "\n"
    )
    read = read_results_file(tmp_path / "results.jsonl")
    assert read.newer_schema == 9 and any("newer refgrad" in w for w in read.warnings("r"))
    assert main(["report", str(tmp_path)]) == exitcodes.OK
    html = (tmp_path / "index.html").read_text()
    assert "quantum_flake" in html
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["totals"]["quantum_flake"] == 1


def test_read_report_file_rejects_garbage(tmp_path):
    p = tmp_path / "r.json"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputFileError, match="binary"):
        read_report_file(p)
