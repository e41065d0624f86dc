"""report.json against its schema, the HTML in headless Chromium, reproducers in a subprocess,
the regression view, and the pieces (histogram, shared parameters, the standalone oracle)."""

from __future__ import annotations

import copy
import json
import math
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from hypothesis import given

from conformance import repro_oracle
from conformance.case import Case, CaseData
from conformance.cli import main
from conformance.expected import expected
from conformance.report import (
    HIST_EDGES,
    SCHEMA_PATH,
    build_report,
    histogram,
    render_html,
    shared_parameters,
    validate,
)
from conformance.runner import read_results
from conformance.strategies import conv_cases

from .synthetic import embedded_data

pytestmark = pytest.mark.torch


# ---- report.json and its schema -----------------------------------------------------------------
def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text()))


def test_a_real_report_follows_the_schema_and_says_what_happened(report):
    validate(report)
    env = report["environment"]
    assert env["frameworks"]["torch"]["version"].startswith("2.") and env["seed"] == 0
    assert env["python"] == sys.version.split()[0] and env["blas"]
    cells = {c["id"]: c for c in report["cells"]}
    dropped = cells["cell-torch-dropped-group-conv-forward-float64"]
    assert dropped["verdict"] == "fail" and dropped["failing_cases"] == ["grouped-3x3"]
    assert dropped["worst"]["excess"] is None or dropped["worst"]["excess"] > 1  # the dropped group: far out
    clean = cells["cell-torch-conv-vjp-float64"]
    assert clean["verdict"] == "pass" and 0 <= clean["worst"]["excess"] <= 1
    assert sum(clean["histogram"]["counts"]) + clean["histogram"]["exact"] == clean["results"]
    # dropped group (forward, vjp), unflipped kernel (vjp, in two dtypes' cells), two error mismatches
    got = sorted((d["framework"], d["check"], d["dtype"]) for d in report["discrepancies"])
    assert got == [
        ("torch-dropped-group", "forward", "float64"),
        ("torch-dropped-group", "vjp", "float64"),
        ("torch-strict-and-lenient", "error", "float64"),
        ("torch-strict-and-lenient", "forward", "float64"),
        ("torch-unflipped-dgrad", "vjp", "float32"),
        ("torch-unflipped-dgrad", "vjp", "float64"),
    ]
    kinds = {d["kind"] for d in report["discrepancies"] if d["framework"] == "torch-strict-and-lenient"}
    assert kinds == {"error_mismatch:accepts", "error_mismatch:ValueError"}
    assert all(d["reproducer"] and d["reproducer_error"] is None for d in report["discrepancies"])
    [crash] = report["crashes"]
    assert crash["case_id"] == "abort-here" and "SIGABRT" in crash["reason"]
    reasons = {(u["framework"], u["reason"]) for u in report["unsupported"]}
    assert any(fw == "torch" and "channels-last" in reason for fw, reason in reasons)


BREAKAGES = {
    "no cells": lambda r: r.pop("cells"),
    "unknown verdict": lambda r: r["cells"][0].update(verdict="maybe"),
    "negative histogram count": lambda r: r["cells"][0]["histogram"]["counts"].__setitem__(0, -1),
    "ratio as text": lambda r: r["discrepancies"][0]["worst"].update(ratio="3.1e4"),
    "reproducer missing without a reason": lambda r: r["discrepancies"][0].update(
        reproducer=None, reproducer_error=None
    ),
    "totals without results": lambda r: r["totals"].pop("results"),
    "crash with a pass verdict": lambda r: r["crashes"][0].update(verdict="pass"),
    "unexpected top-level key": lambda r: r.update(extra=1),
    "environment without seed": lambda r: r["environment"].pop("seed"),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_the_schema_rejects_a_broken_report(report, breakage):
    broken = copy.deepcopy(report)
    BREAKAGES[breakage](broken)
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


# ---- reproducers ----------------------------------------------------------------------------------
def _run_script(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run a reproducer where importing refgrad (conformance, reference) fails: NumPy + torch only."""
    blocker = tmp_path / "no-refgrad"
    for name in ("conformance", "reference", "planted_adapters"):
        (blocker / name).mkdir(parents=True, exist_ok=True)
        (blocker / name / "__init__.py").write_text(f"raise ImportError('the reproducer imported {name}')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(blocker)
    return subprocess.run(
        [sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


def test_reproducers_of_planted_discrepancies_reproduce_them(campaign_dir, report, tmp_path):
    for d in report["discrepancies"]:
        script = campaign_dir / d["reproducer_file"]
        assert script.read_text() == d["reproducer"]
        proc = _run_script(script, tmp_path)
        out = proc.stdout
        assert proc.returncode == 1, (
            f"{d['reproducer_file']}: exit {proc.returncode}\n{out}\n{proc.stderr[-3000:]}"
        )
        assert "DEPARTURE" in out, out
        if d["verdict"] == "fail":  # the worst element the script prints is the one the harness recorded
            w = d["worst"]
            assert f"worst: {w['output']}[{','.join(map(str, w['index']))}]" in out, (out, w)
        elif d["kind"] == "error_mismatch:accepts":
            assert "accepted a configuration that breaks a rule: groups" in out, out
        else:
            assert "raised ValueError on a valid configuration: strided" in out, out


def test_the_reproducer_of_a_passing_case_exits_0(campaign_dir, tmp_path, planted_path):
    from conformance.reproducer import write_reproducer

    records = read_results(campaign_dir / "results.jsonl")
    passing = [
        r for r in records if r["framework"] == "torch" and r["verdict"] == "pass" and r["check"] == "vjp"
    ]
    assert passing
    path = write_reproducer(passing[0], "conformance.adapters.torch_adapter:TorchAdapter", tmp_path)
    proc = _run_script(path, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "within the bound" in proc.stdout and "worst: grad_" in proc.stdout


@given(conv_cases(dtypes=("float64",)))
def test_the_reproducers_numpy_oracle_agrees_with_the_reference(case):
    """The standalone oracle copied into every script computes what refgrad's reference computes."""
    data = CaseData(case)
    for check in ("forward", "vjp", "vjp_vjp", "jvp", "vmap", "vmap_vjp"):
        want = expected(case, check, data)
        got = repro_oracle.check_values(case, check, data)
        assert set(got) == set(want), check
        for name, e in want.items():
            np.testing.assert_allclose(got[name], e.value, rtol=1e-12, atol=1e-12, err_msg=f"{check} {name}")


# ---- the HTML in headless Chromium ----------------------------------------------------------------
class _Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.classes = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        self.classes += [(tag, c) for c in (a.get("class") or "").split()]

    def count(self, tag, cls):
        return sum(1 for t, c in self.classes if t == tag and c == cls)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium binary on PATH (Debian: apt-get install chromium); the HTML is not rendered")


def test_the_html_opens_in_headless_chromium_with_matrix_and_discrepancies(campaign_dir, report, tmp_path):
    chromium = _chromium()
    html = campaign_dir / "index.html"
    text = html.read_text()
    # self-contained: its one script is inline and reaches nothing outside the page
    assert "<script src" not in text and 'src="http' not in text and 'href="http' not in text
    assert "fetch(" not in text and "XMLHttpRequest" not in text
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,2000"]
    shot = tmp_path / "report.png"
    subprocess.run(
        [chromium, *flags, f"--screenshot={shot}", html.as_uri()],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    dom = subprocess.run(
        [chromium, *flags, "--dump-dom", html.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    parsed = _Dom()
    parsed.feed(dom)
    assert {"summary-matrix", "discrepancies", "crashes", "unsupported", "environment"} <= parsed.ids
    assert parsed.count("td", "cell") == len(report["cells"])
    assert parsed.count("section", "discrepancy") == len(report["discrepancies"]) == 6
    assert parsed.count("tr", "crash-row") == 1 and parsed.count("tr", "unsupported-row") >= 1
    assert parsed.count("svg", "hist") >= 1
    assert all(c["id"] in parsed.ids for c in report["cells"])
    if os.environ.get("REFGRAD_REPORT_SCREENSHOT"):  # keep the screenshot for a person to look at
        shutil.copy(shot, os.environ["REFGRAD_REPORT_SCREENSHOT"])


# ---- the report command and the regression view ---------------------------------------------------
def test_report_command_renders_from_results_with_a_baseline(campaign_dir, tmp_path, capsys):
    records = read_results(campaign_dir / "results.jsonl")
    # a later run: the torch forward of grouped-3x3 now fails, the dropped group's forward is fixed
    later = []
    for r in records:
        r = dict(r)
        if (r["framework"], r["check"], r["case_id"]) == ("torch", "forward", "grouped-3x3"):
            r.update(verdict="fail", reason="planted for the test")
        if (r["framework"], r["check"]) == ("torch-dropped-group", "forward"):
            r.update(verdict="pass")
            r.pop("reason", None)
        later.append(r)
    results = tmp_path / "later" / "results.jsonl"
    results.parent.mkdir()
    results.write_text("".join(json.dumps(r) + "\n" for r in later))
    out = tmp_path / "rendered"
    status = main(
        ["report", str(results), "--baseline", str(campaign_dir / "report.json"), "--out", str(out)]
    )
    assert status == 1  # still failing (the crash, the unflipped kernel)
    new = json.loads((out / "report.json").read_text())
    validate(new)
    reg = {c["cell"]: c for c in new["regression"]["cells"]}
    assert reg["cell-torch-conv-forward-float64"]["new_failures"] == ["grouped-3x3"]
    assert reg["cell-torch-dropped-group-conv-forward-float64"]["fixed"] == ["grouped-3x3"]
    assert new["regression"]["new_failures"] == 1 and new["regression"]["fixed"] == 1
    assert "1 new failing case(s), 1 fixed" in capsys.readouterr().out
    html = (out / "index.html").read_text()
    assert 'id="regression-table"' in html and html.count('class="regression-row"') == len(reg)
    # a results directory works too, and a missing one is a usage error naming the path
    assert main(["report", str(results.parent), "--out", str(tmp_path / "again")]) == 1
    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path / "nowhere")])
    assert exc.value.code == 2 and "nowhere" in capsys.readouterr().err


# ---- the pieces -----------------------------------------------------------------------------------
def test_histogram_bins_are_fixed_decades_of_ratio_over_bound():
    h = histogram([0.0, 1e-9, 0.5, 0.7, 2.0, float("inf")])
    assert h["edges"] == HIST_EDGES and h["exact"] == 1 and h["infinite"] == 1
    assert h["counts"][0] == 1  # below 1e-6
    at_bound = HIST_EDGES.index(0) + 1  # the bin [1e0, 1e1)
    assert h["counts"][at_bound - 1] == 2 and h["counts"][at_bound] == 1 and sum(h["counts"]) == 4


def _rec(verdict, groups, stride, bias=True, i=0):
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 2, "padding": 0, "groups": groups, "stride": stride, "bias": bias},
            "shapes": {"input": [1, 2 * groups, 6 + i, 6], "weight": [2 * groups, 2, 2, 2]},
        }
    )
    return {"verdict": verdict, "case": case.to_dict(), "case_id": case.id}


def test_shared_parameters_name_what_all_failures_share_and_the_passes_rarely_do():
    failing = [_rec("fail", 2, 1, i=i) for i in range(3)] + [_rec("fail", 3, 3)]
    passing = [_rec("pass", 1, s, i=i) for i, s in enumerate((1, 3, 1, 1))]
    found = {s["predicate"]: s for s in shared_parameters(failing, passing, "forward")}
    assert found["groups > 1"] == {
        "predicate": "groups > 1",
        "failing": 4,
        "failing_total": 4,
        "passing": 0,
        "passing_total": 4,
    }
    assert "bias" not in found and "rank 2" not in found  # true of the passes too
    assert "stride > 1" not in found  # only one failure has it
    # "most": three of four failures, none of the passes
    found = {
        s["predicate"] for s in shared_parameters(failing[:3] + [_rec("fail", 1, 1)], passing, "forward")
    }
    assert "groups > 1" in found


def test_the_html_is_rendered_from_report_json_alone(campaign_dir, report):
    """Re-rendering the stored report.json reproduces the written index.html (nothing else is read)."""
    html = render_html(report)
    assert html == (campaign_dir / "index.html").read_text()
    data = embedded_data(html)
    assert [d["id"] for d in data["discrepancies"]] == [d["id"] for d in report["discrepancies"]]
    assert [c[0] for c in data["cells"]] == [c["id"] for c in report["cells"]]
    assert "How to read this report" in html and 'id="summary-matrix"' in html


def test_an_empty_results_file_still_makes_a_valid_report(tmp_path):
    (tmp_path / "results.jsonl").write_text("")
    rep = build_report(tmp_path, {}, "x")
    validate(rep)
    assert rep["cells"] == [] and not rep["failed"] and (tmp_path / "index.html").exists()


def test_nan_results_and_a_caseless_crash_make_strict_json(tmp_path):
    """A NaN element (infinite ratio) and a crash of the fuzz loop itself (no case) are reported, in strict JSON."""
    case = Case.from_dict(
        {"op": "conv", "params": {"rank": 1}, "shapes": {"input": [1, 1, 3], "weight": [1, 1, 2]}}
    ).to_dict()
    bound = {"formula": "f", "compute_dtype": "float64", "u": 2.0**-53, "K": {"output": 3}}
    worst = {"output": "output", "index": [0, 0, 1], "observed": float("nan"), "expected": 0.5}
    records = [
        {
            "case_id": "nan-case",
            "framework": "fw",
            "check": "forward",
            "verdict": "fail",
            "phase": "curated",
            "dtype": "float64",
            "config": "conv1d",
            "max_ratio": float("inf"),
            "bound": bound,
            "case": case,
            "reason": "output[0,0,1]=nan but reference says 0.5",
            "worst": {**worst, "ratio": float("inf"), "limit": 3.5},
        },
        {
            "case_id": "fuzz-fw-vjp",
            "framework": "fw",
            "check": "vjp",
            "verdict": "crash",
            "phase": "fuzz",
            "dtype": None,
            "config": "",
            "max_ratio": None,
            "bound": {"formula": "f"},
            "case": None,
            "reason": "the fuzz loop stopped: boom",
        },
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    rep = build_report(tmp_path, {}, "x")

    def no_constants(name):
        raise ValueError(f"report.json holds {name}, which is not JSON")

    strict = json.loads((tmp_path / "report.json").read_text(), parse_constant=no_constants)
    validate(strict)
    cell = {c["id"]: c for c in rep["cells"]}["cell-fw-conv-forward-float64"]
    assert cell["worst"]["infinite"] and cell["worst"]["ratio"] is None and cell["histogram"]["infinite"] == 1
    assert [c["case_id"] for c in rep["crashes"]] == ["fuzz-fw-vjp"]
    [d] = rep["discrepancies"]
    assert d["reproducer"] is None and "fw" in d["reproducer_error"]  # no adapter named fw: said, not hidden
    assert "inf" in (tmp_path / "index.html").read_text()


def test_a_nonfinite_case_parameter_does_not_stop_the_html(report):
    """A discrepancy whose case has ord = inf (linalg_vector_norm) is embedded with the parameter
    named "Infinity" (JSON has no infinity): rendering raised ValueError before."""
    rep = copy.deepcopy(report)
    assert rep["discrepancies"], "the fixture campaign has a discrepancy"
    rep["discrepancies"][0].setdefault("case", {}).setdefault("params", {})["ord"] = math.inf
    data = embedded_data(render_html(rep))
    assert data["discrepancies"][0]["case"]["params"]["ord"] == "Infinity"
