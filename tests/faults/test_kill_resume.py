"""Kill the driver (SIGKILL, SIGTERM, SIGINT) and the workers at random points, resume until done,
and compare with an uninterrupted run result for result: nothing lost, nothing counted twice."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conformance import exitcodes
from conformance.runner import read_results, result_key
from tests.faults.conftest import ROOT, cli, env

pytestmark = pytest.mark.torch
pytest.importorskip("torch")

GEMM = ROOT / "refgrad" / "cases" / "gemm_paths.json"


def _cmd(out: Path, *extra, examples=4):
    return cli(
        "run",
        "--ops",
        "conv",
        "--frameworks",
        "torch",
        "--cases",
        GEMM,
        "--checks",
        "forward,error",
        "--dtypes",
        "float64,float32",
        "--max-examples",
        examples,
        "--seed",
        5,
        "--quiet",
        "--out",
        out,
        "--found-dir",
        out.parent / f"{out.name}-found",
        *extra,
    )


def _outcomes(out: Path) -> dict:
    records = read_results(out / "results.jsonl")
    keys = [result_key(r) for r in records]
    assert len(keys) == len(set(keys)), "a result was recorded twice"
    return {k: (r["verdict"], r["max_ratio"]) for k, r in zip(keys, records)}


def _lines(out: Path) -> int:
    p = out / "results.jsonl"
    return len(p.read_bytes().splitlines()) if p.exists() else 0


def _interrupt(out: Path, sig, after_lines: int, examples=4) -> int:
    proc = subprocess.Popen(
        _cmd(out, *(["--resume"] if (out / "results.jsonl").exists() else []), examples=examples),
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 400
    start = _lines(out)
    while time.monotonic() < deadline and proc.poll() is None and _lines(out) < start + after_lines:
        time.sleep(0.02)
    if proc.poll() is None:
        (os.killpg if sig == signal.SIGKILL else os.kill)(proc.pid, sig)
    proc.communicate(timeout=300)
    return proc.returncode


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole") / "out"
    proc = subprocess.run(_cmd(out), env=env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode in (exitcodes.OK, exitcodes.DEPARTURES), proc.stderr
    return _outcomes(out)


@pytest.mark.slow  # three CLI campaigns: about 2 minutes on a loaded 2-core machine
def test_sigterm_exits_130_and_resume_gives_the_uninterrupted_results(tmp_path, uninterrupted, tally):
    out = tmp_path / "out"
    code = _interrupt(out, signal.SIGTERM, after_lines=5)
    if code != exitcodes.INTERRUPTED:  # it finished before the signal landed
        assert code in (0, 1)
    partial = _outcomes(out)
    assert all(uninterrupted[k] == v for k, v in partial.items())
    proc = subprocess.run(_cmd(out, "--resume"), env=env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode in (exitcodes.OK, exitcodes.DEPARTURES), proc.stderr
    assert _outcomes(out) == uninterrupted
    tally["faults injected"] += 1
    tally["runs resumed"] += 1
    tally["results compared"] += len(uninterrupted)


@pytest.mark.slow
def test_random_kills_of_driver_and_workers_then_resume_until_done(tmp_path, uninterrupted, tally):
    rng = random.Random(21)
    out = tmp_path / "out"
    kills = 0
    for round_ in range(12):
        sig = rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
        code = _interrupt(out, sig, after_lines=rng.randint(1, 12))
        kills += 1
        tally["faults injected"] += 1
        if round_:
            tally["runs resumed"] += 1
        if code in (exitcodes.OK, exitcodes.DEPARTURES):
            break
        assert code in (exitcodes.INTERRUPTED, -signal.SIGKILL), code
        # a torn last line, as a kill mid-write leaves
        p = out / "results.jsonl"
        if rng.random() < 0.5 and p.exists() and p.stat().st_size:
            with open(p, "ab") as f:
                f.write(b'{"case_id": "torn')
    final = subprocess.run(_cmd(out, "--resume"), env=env(), capture_output=True, text=True, timeout=600)
    assert final.returncode in (exitcodes.OK, exitcodes.DEPARTURES), final.stderr
    tally["runs resumed"] += 1
    assert _outcomes(out) == uninterrupted
    tally["results compared"] += len(uninterrupted)


@pytest.mark.slow
def test_a_killed_worker_is_a_crash_verdict_and_nothing_else_changes(tmp_path, uninterrupted, tally):
    out = tmp_path / "out"
    proc = subprocess.Popen(_cmd(out), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    killed = 0
    deadline = time.monotonic() + 400
    while proc.poll() is None and time.monotonic() < deadline and killed < 2:
        if _lines(out) >= 4 + 8 * killed:
            kids = subprocess.run(
                ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True
            ).stdout.split()
            for pid in kids:
                os.kill(int(pid), signal.SIGKILL)
                killed += 1
        time.sleep(0.02)
    proc.communicate(timeout=600)
    got = _outcomes(out)
    assert set(got) == set(uninterrupted), "every result is recorded once, the killed ones as crash"
    changed = {k for k in got if got[k] != uninterrupted[k]}
    assert all(got[k][0] == "crash" for k in changed) and len(changed) <= killed
    tally["faults injected"] += killed
    tally["results compared"] += len(got)


def test_interrupted_message_names_resume(tmp_path):
    """SIGINT in-process is exit 130 with the --resume hint (the CLI's own handler)."""
    from conformance import cli as cli_module

    def interrupted(args):
        raise KeyboardInterrupt

    old = cli_module.cmd_report
    cli_module.cmd_report = interrupted
    try:
        assert cli_module.main(["report", str(tmp_path)]) == exitcodes.INTERRUPTED
    finally:
        cli_module.cmd_report = old
    assert json is not None


def test_a_report_rebuilt_after_an_interrupt_keeps_the_workers_settings(tmp_path):
    """An interrupted run writes no report.json; ``report DIR`` rebuilds one from results.jsonl. It
    must still know the device, precision and the workers' settings (the manifest keeps them from
    the start): known entries that name a setting (oneDNN, CPU capability, device) apply only with
    them, and the first GPU run's interrupted parts came out with none (issue 35)."""
    out = tmp_path / "out"
    code = _interrupt(out, signal.SIGINT, after_lines=3)
    assert code in (exitcodes.INTERRUPTED, exitcodes.OK, exitcodes.DEPARTURES)
    (out / "report.json").unlink(missing_ok=True)  # as after an interrupt, whenever the signal landed
    proc = subprocess.run(cli("report", out), env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (exitcodes.OK, exitcodes.DEPARTURES), proc.stderr
    report = json.loads((out / "report.json").read_text())
    settings = report["frameworks"]["torch"]["settings"]
    assert settings["device"] == "cpu" and "cpu_capability" in settings, settings
    assert report["environment"]["device"] == "cpu" and report["environment"]["precision"] == "highest"
    assert report["environment"]["seed"] == 5


def test_the_manifest_describes_every_worker_process_restarts_and_resumes_included(tmp_path):
    """A worker that dies is restarted: the manifest names each process that produced results (pid,
    start, version, settings, how it ended), and a resumed run adds its own
    to those of the run it continues (issue 38: it had kept the first process's alone)."""
    cases = tmp_path / "cases.json"
    case = {"op": "conv", "params": {"rank": 2, "padding": 1}, "checks": ["forward"]}
    case["shapes"] = {"input": [1, 2, 4, 4], "weight": [3, 2, 3, 3]}
    ids = ("first", "abort-here", "after-the-crash")
    cases.write_text(json.dumps([{**case, "id": i} for i in ids]))
    out = tmp_path / "out"
    run = cli(
        "run",
        "--adapter",
        "planted_adapters:AbortsOnCue",
        "--cases",
        cases,
        "--ops",
        "conv",
        "--max-examples",
        0,
        "--quiet",
        "--out",
        out,
    )
    for resumed in (False, True):
        proc = subprocess.run(
            run + (["--resume"] if resumed else []), env=env(), capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == exitcodes.DEPARTURES, proc.stderr  # the crash
        [worker] = json.loads((out / "manifest.json").read_text())["workers"].values()
        processes = worker["processes"]
        assert len(processes) == (3 if resumed else 2), processes
        assert len({p["pid"] for p in processes}) == len(processes)
        assert processes[0]["ended"] == "killed by SIGABRT" and "ended" not in processes[1]
        assert all(
            p["version"] == worker["version"] and p["settings"] == worker["settings"] for p in processes
        )
    verdicts = {r["case_id"]: r["verdict"] for r in read_results(out / "results.jsonl")}
    assert verdicts == {"first": "pass", "abort-here": "crash", "after-the-crash": "pass"}
