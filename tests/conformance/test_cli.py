"""The ``conformance`` command: usage errors, replay, exit status, reports, the documented
example adapter, and resuming a killed campaign."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.cli import _say_reproducers, main
from conformance.runner import read_results, result_key

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "conformance.md"
GEMM = ROOT / "refgrad" / "cases" / "gemm_paths.json"

pytestmark = pytest.mark.torch
pytest.importorskip("torch")


@pytest.mark.parametrize(
    "argv, words",
    [
        (["run", "--frameworks", "pytorch"], "--frameworks: 'pytorch' is not one of"),
        (["run", "--frameworks", "torch", "--dtypes", "float8"], "--dtypes: 'float8' is not one of"),
        (["run", "--frameworks", "torch", "--checks", "grad"], "--checks: 'grad' is not one of"),
        (["run", "--frameworks", "torch", "--ops", "nosuchop"], "--ops: 'nosuchop' is not one of"),
        (
            ["run", "--adapter", "nosuchmodule:Backend"],
            "--adapter: adapter spec 'nosuchmodule:Backend': cannot import",
        ),
        (["run", "--adapter", "no-colon"], "--adapter: adapter spec 'no-colon' must have the form"),
        (["run", "--frameworks", "torch", "--max-examples", "-1"], "--max-examples: must be >= 0"),
        (["run", "--precision", "fast"], "argument --precision: invalid choice: 'fast'"),
        (
            ["replay", "/no/such/case.json", "--frameworks", "torch"],
            "replay: '/no/such/case.json' does not exist",
        ),
    ],
)
def test_bad_usage_exits_2_naming_the_flag_and_value(argv, words, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert words in capsys.readouterr().err


def test_a_malformed_case_file_exits_2_with_the_case_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "op": "conv",
                "params": {"rank": 2, "padding": "full"},
                "shapes": {"input": [1, 1, 3, 3], "weight": [1, 1, 2, 2]},
            }
        )
    )
    assert main(["replay", str(bad), "--frameworks", "torch", "--out", str(tmp_path / "out")]) == 2
    assert f"{bad}: field 'params.padding'" in capsys.readouterr().err


def test_replay_writes_results_report_and_html_and_exits_0(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["replay", str(GEMM), "--frameworks", "torch", "--out", str(out), "--quiet"]) == 0
    records = read_results(out / "results.jsonl")
    assert len(records) == 7 * 6
    assert {r["verdict"] for r in records} <= {"pass", "unsupported"}
    report = json.loads((out / "report.json").read_text())
    assert report["totals"]["results"] == len(records) and report["failed"] is False
    assert report["frameworks"]["torch"]["version"].startswith("2.")
    assert "no effect" in report["frameworks"]["torch"]["settings"]["note"]
    html = (out / "index.html").read_text()
    assert "torch" in html and "no failures" in html
    assert "42 results" in capsys.readouterr().out


def test_a_failure_exits_1_and_is_in_the_report(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    out = tmp_path / "out"
    code = main(
        [
            "replay",
            str(ROOT / "refgrad" / "cases" / "double_backward_groups.json"),
            "--adapter",
            "planted_adapters:DroppedGroup",
            "--checks",
            "vjp_vjp",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 1
    report = json.loads((out / "report.json").read_text())
    assert report["failed"] and report["failures"][0]["framework"] == "torch-dropped-group"
    assert "FAILURES FOUND" in (out / "index.html").read_text()


def _documented_example() -> str:
    text = DOCS.read_text()
    block = text.split("<!-- example-adapter -->", 1)[1].split("<!-- /example-adapter -->", 1)[0]
    return re.search(r"```python\n(.*?)```", block, re.S).group(1)


def test_the_documented_example_adapter_runs(tmp_path, monkeypatch):
    (tmp_path / "my_backend.py").write_text(_documented_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--ops",
            "conv",
            "--adapter",
            "my_backend:TorchWithoutOneDNN",
            "--cases",
            str(GEMM),
            "--checks",
            "forward,vjp,jvp",
            "--dtypes",
            "float64,float32",
            "--max-examples",
            "8",
            "--out",
            str(out),
            "--found-dir",
            str(tmp_path / "found"),
            "--quiet",
        ]
    )
    records = read_results(out / "results.jsonl")
    by_verdict = {}
    for r in records:
        by_verdict.setdefault((r["check"], r["verdict"]), []).append(r)
    assert code == 0, [
        r.get("reason") for r in records if r["verdict"] != "pass" and r["verdict"] != "unsupported"
    ]
    assert by_verdict[("forward", "pass")] and by_verdict[("vjp", "pass")]
    assert all("does not implement the jvp check" in r["reason"] for r in by_verdict[("jvp", "unsupported")])
    assert any("conv2d only" in r["reason"] for r in records if r["verdict"] == "unsupported")


def _campaign_cmd(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "conformance",
        "run",
        "--ops",
        "conv",
        "--frameworks",
        "torch",
        "--cases",
        str(GEMM),
        "--checks",
        "forward,vjp,error",
        "--max-examples",
        "6",
        "--seed",
        "3",
        "--out",
        str(out),
        "--found-dir",
        str(out / "found"),
        "--quiet",
        *extra,
    ]


def _outcomes(out: Path) -> dict:
    records = read_results(out / "results.jsonl")
    keys = [result_key(r) for r in records]
    assert len(keys) == len(set(keys)), "a resumed campaign must not record a result twice"
    return {result_key(r): (r["verdict"], r["max_ratio"]) for r in records}


def test_killing_a_campaign_and_resuming_gives_the_uninterrupted_results(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    whole = tmp_path / "whole"
    subprocess.run(_campaign_cmd(whole), env=env, check=False, capture_output=True, timeout=300)
    expected = _outcomes(whole)
    assert len(expected) >= 7 * 3

    broken = tmp_path / "broken"
    proc = subprocess.Popen(
        _campaign_cmd(broken),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        path = broken / "results.jsonl"
        if path.exists() and len(path.read_text().splitlines()) >= 20:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the campaign and its worker, mid-run
    proc.wait()
    path = broken / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    if len(lines) >= len(expected):  # it finished before the kill landed: cut it back as a kill would
        lines = lines[:20]
    path.write_text("".join(lines) + lines[-1][: len(lines[-1]) // 2])  # and tear the last write
    interrupted = _outcomes(broken)
    assert 20 <= len(interrupted) < len(expected)  # killed inside the fuzz phase

    subprocess.run(_campaign_cmd(broken, "--resume"), env=env, check=False, capture_output=True, timeout=300)
    assert _outcomes(broken) == expected


def test_a_device_no_framework_can_use_is_a_usage_error(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(SystemExit) as info:
        main(
            [
                "run",
                "--frameworks",
                "torch",
                "--device",
                "cuda",
                "--max-examples",
                "0",
                "--out",
                str(tmp_path),
            ]
        )
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert (
        "torch could not start on --device cuda" in err and "--device cuda: no framework could start" in err
    )


def test_an_entry_point_adapter_is_a_framework_name(monkeypatch):
    import importlib.metadata

    from conformance import adapters
    from conformance.cli import _frameworks, _parser

    point = importlib.metadata.EntryPoint(
        "torch-dropped-group", "planted_adapters:DroppedGroup", adapters.ENTRY_POINT_GROUP
    )
    real = importlib.metadata.entry_points
    monkeypatch.setattr(
        importlib.metadata,
        "entry_points",
        lambda **kw: [point] if kw.get("group") == adapters.ENTRY_POINT_GROUP else real(**kw),
    )
    assert adapters.installed()["torch-dropped-group"] == "planted_adapters:DroppedGroup"
    args = _parser().parse_args(["run", "--frameworks", "torch-dropped-group"])
    assert _frameworks(args) == {"torch-dropped-group": "planted_adapters:DroppedGroup"}


def test_frameworks_lists_versions_devices_and_precision(capsys):
    assert main(["frameworks"]) == 0
    out = capsys.readouterr().out
    import torch

    assert f"torch: {torch.__version__}; devices: cpu" in out
    assert "--precision has no effect" in out
    for name in ("tensorflow", "jax"):
        assert f"{name}:" in out  # installed with its version, or "not installed (pip install ...)"


def test_the_summary_counts_only_the_reproducers_written(capsys, tmp_path):
    """A discrepancy whose script could not be written is named with the reason, not counted as
    having one (the CLI used to say every discrepancy had a reproducer in reproducers/)."""
    discrepancies = [
        {"id": "a", "reproducer_file": "reproducers/a.py", "reproducer_error": None},
        {"id": "b", "reproducer_file": None, "reproducer_error": "CannotReproduce: the spelling is a builtin"},
    ]
    _say_reproducers(discrepancies, tmp_path / "reproducers")
    out = capsys.readouterr().out
    assert "2 discrepancies, 1 with a standalone reproducer" in out
    assert "no reproducer for b: CannotReproduce: the spelling is a builtin" in out
