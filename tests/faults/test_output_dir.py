"""A run owns its output directory: one run at a time, earlier results never deleted or mixed,
writes that fail stop the run (never a green report), and reports are written atomically."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conformance import exitcodes
from conformance.outdir import OutputDir, OutputError, OutputLost, ResultsWriter, atomic_write
from tests.faults.conftest import cli, env


def _manifest(**kw):
    return {
        "kind": "refgrad-run",
        "seed": 0,
        "frameworks": {"torch": "x"},
        "checks": None,
        "dtypes": None,
        "ops": "conv",
        "device": "cpu",
        "precision": "highest",
        "cases": "/c",
        **kw,
    }


def test_a_second_owner_is_refused_naming_the_holder(tmp_path, tally):
    first = OutputDir(tmp_path, manifest=_manifest())
    try:
        with pytest.raises(OutputError, match=rf"in use by another run \(pid {os.getpid()} on host"):
            OutputDir(tmp_path, resume=True, manifest=_manifest())
    finally:
        first.release()
    OutputDir(tmp_path, manifest=_manifest()).release()  # released: usable again
    tally["faults injected"] += 1


def test_a_lock_held_by_a_killed_process_is_not_stale(tmp_path, tally):
    code = (
        "import sys, time; from conformance.outdir import OutputDir; "
        f"d = OutputDir({str(tmp_path)!r}); print('held', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env())
    assert proc.stdout.readline().strip() == b"held"
    with pytest.raises(OutputError, match=f"pid {proc.pid}"):
        OutputDir(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    OutputDir(tmp_path).release()  # the kernel dropped the dead holder's lock
    tally["faults injected"] += 1


def test_results_need_resume_or_overwrite_and_overwrite_moves_them_aside(tmp_path):
    (tmp_path / "results.jsonl").write_text(
        '{"case_id": "a", "framework": "f", "check": "c", "verdict": "pass"}\n'
    )
    (tmp_path / "reproducers").mkdir()
    (tmp_path / "reproducers" / "old.py").write_text("stale")
    with pytest.raises(OutputError, match="--resume .* or --overwrite"):
        OutputDir(tmp_path, manifest=_manifest())
    with pytest.raises(OutputError, match="no readable manifest.json"):
        OutputDir(tmp_path, resume=True, manifest=_manifest())
    d = OutputDir(tmp_path, overwrite=True, manifest=_manifest())
    d.release()
    assert not (tmp_path / "results.jsonl").exists() and not (tmp_path / "reproducers").exists()
    [old] = (tmp_path / "previous").iterdir()
    assert (old / "results.jsonl").read_text().startswith('{"case_id": "a"')
    assert (old / "reproducers" / "old.py").read_text() == "stale"  # stale reproducers went with them


def test_resume_refuses_a_different_campaign_saying_what_differs(tmp_path):
    OutputDir(tmp_path, manifest=_manifest()).release()
    (tmp_path / "results.jsonl").write_text(
        '{"case_id": "a", "framework": "f", "check": "c", "verdict": "pass"}\n'
    )
    with pytest.raises(OutputError, match=r"seed: recorded 0, now 7.*dtypes: recorded None, now 'float32'"):
        OutputDir(tmp_path, resume=True, manifest=_manifest(seed=7, dtypes="float32"))
    d = OutputDir(tmp_path, resume=True, manifest=_manifest())
    d.check_versions({"torch": "2.13.0"})
    with pytest.raises(OutputError, match="versions: recorded"):
        d.check_versions({"torch": "2.14.0"})
    d.release()


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EIO])
def test_a_failing_write_stops_the_run_and_keeps_what_was_recorded(tmp_path, err, monkeypatch, tally):
    w = ResultsWriter(tmp_path / "results.jsonl")
    w.write({"n": 1})
    real = w._write
    calls = []

    def failing(text):
        calls.append(text)
        if len(calls) == 2:
            real(text[:5])  # a partial write, then the error
            raise OSError(err, os.strerror(err))
        real(text)

    monkeypatch.setattr(w, "_write", failing)
    w.write({"n": 2})
    with pytest.raises(OutputLost, match=os.strerror(err)):
        w.write({"n": 3})
    w.close()
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert [json.loads(x)["n"] for x in lines[:2]] == [1, 2]  # nothing recorded is lost
    tally["faults injected"] += 1


def test_the_directory_deleted_mid_run_stops_the_run(tmp_path, tally):
    import shutil

    d = tmp_path / "out"
    d.mkdir()
    w = ResultsWriter(d / "results.jsonl")
    w.write({"n": 1})
    shutil.rmtree(d)
    with pytest.raises(OutputLost, match="disappeared"):
        w.write({"n": 2})
    d.mkdir()  # re-created by someone else: still not ours
    (d / "results.jsonl").write_text("")
    with pytest.raises(OutputLost, match="replaced"):
        w.write({"n": 3})
    tally["faults injected"] += 2


def test_a_file_size_limit_is_an_output_error_not_a_crash(tmp_path, tally):
    """RLIMIT_FSIZE makes write() fail with EFBIG (SIGXFSZ ignored): the writer reports it."""
    code = (
        "import json, resource, signal, sys\n"
        "from conformance.outdir import ResultsWriter, OutputLost\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))\n"
        f"w = ResultsWriter({str(tmp_path / 'results.jsonl')!r})\n"
        "try:\n"
        "    for i in range(100): w.write({'n': i, 'pad': 'x' * 40})\n"
        "except OutputLost as e:\n"
        "    print('lost', e); sys.exit(5)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60)
    assert proc.returncode == 5, proc.stderr
    assert "File too large" in proc.stdout
    good = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines() if x.endswith("}")]
    assert [r["n"] for r in good] == list(range(len(good))) and good
    tally["faults injected"] += 1


def test_atomic_write_leaves_the_old_file_when_interrupted(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old")

    def boom(fd):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary left behind


def test_out_naming_a_file_or_an_unwritable_place_is_a_usage_error(tmp_path, capsys):
    from conformance.cli import main

    f = tmp_path / "a-file"
    f.write_text("x")
    for argv in (
        ["replay", "refgrad/cases/gemm_paths.json", "--frameworks", "torch", "--out", str(f)],
        ["replay", "refgrad/cases/gemm_paths.json", "--frameworks", "torch", "--out", str(f / "sub")],
        ["run", "--frameworks", "torch", "--out", str(tmp_path / "o"), "--found-dir", str(f)],
    ):
        assert main(argv) == exitcodes.USAGE
        err = capsys.readouterr().err
        assert ("--out" in err or "--found-dir" in err) and "Traceback" not in err


@pytest.mark.torch
def test_two_concurrent_runs_on_one_directory_one_is_refused(tmp_path, tally):
    """Two runs (and a third resume) into one --out: exactly one runs; no result is recorded twice."""
    pytest.importorskip("torch")
    out = tmp_path / "out"
    args = [
        "replay",
        "refgrad/cases/gemm_paths.json",
        "--frameworks",
        "torch",
        "--checks",
        "forward",
        "--quiet",
        "--out",
        out,
    ]
    procs = [
        subprocess.Popen(
            cli(*args, *extra), env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for extra in ([], [], ["--resume"])
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    codes = sorted(p.returncode for p in procs)
    refused = [e for (o, e), p in zip(outs, procs) if p.returncode == exitcodes.USAGE]
    assert codes.count(exitcodes.USAGE) >= 2, outs
    assert all("in use by another run" in e or "already holds the results" in e for e in refused), refused
    lines = (out / "results.jsonl").read_text().splitlines()
    keys = [(json.loads(x)["case_id"], json.loads(x)["framework"], json.loads(x)["check"]) for x in lines]
    assert len(keys) == len(set(keys)) and keys
    tally["faults injected"] += 2
    tally["results compared"] += len(keys)


@pytest.mark.torch
def test_the_output_directory_deleted_mid_run_exits_5_not_green(tmp_path, tally):
    import shutil

    pytest.importorskip("torch")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        cli(
            "run",
            "--ops",
            "conv",
            "--frameworks",
            "torch",
            "--checks",
            "forward",
            "--dtypes",
            "float64",
            "--max-examples",
            "400",
            "--cases",
            "refgrad/cases/gemm_paths.json",
            "--quiet",
            "--out",
            out,
            "--found-dir",
            tmp_path / "found",
        ),
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (
        (out / "results.jsonl").exists() and (out / "results.jsonl").stat().st_size > 0
    ):
        time.sleep(0.05)
    shutil.rmtree(out)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == exitcodes.OUTPUT_LOST, (stdout, stderr)
    assert "disappeared" in stderr and "no report was written" in stderr and "Traceback" not in stderr
    assert "no failures" not in stdout and "wrote" not in stdout
    tally["faults injected"] += 1


@pytest.mark.torch
@pytest.mark.parametrize("where", ["results", "report"])
def test_the_directory_made_read_only_mid_run_exits_5_keeping_what_was_recorded(
    tmp_path, monkeypatch, capsys, where, tally
):
    """A read-only remount mid-run: writes then fail with EROFS (an open file included; root is not
    spared, unlike with permission bits). Failing on results.jsonl or on the report, the run stops
    with the output-lost code, never a green report, and every line recorded before stays parsable."""
    pytest.importorskip("torch")
    from conformance import report
    from conformance.cli import main

    def read_only(*_args, **_kw):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(tmp_path / "out"))

    if where == "results":
        real, written = ResultsWriter._write, []

        def fails_after_two(self, text):
            if len(written) == 2:
                read_only()
            real(self, text)
            written.append(text)

        monkeypatch.setattr(ResultsWriter, "_write", fails_after_two)
    else:
        monkeypatch.setattr(report, "atomic_write", read_only)
    out = tmp_path / "out"
    argv = [
        "replay",
        "refgrad/cases/gemm_paths.json",
        "--frameworks",
        "torch",
        "--checks",
        "forward",
        "--out",
        str(out),
    ]
    assert main(argv) == exitcodes.OUTPUT_LOST
    captured = capsys.readouterr()
    assert os.strerror(errno.EROFS) in captured.err and "Traceback" not in captured.err
    assert "no failures" not in captured.out
    lines = (out / "results.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]  # every recorded line is whole
    assert len(records) == (2 if where == "results" else len(records)) and records
    assert not (out / "report.json").exists()
    tally["faults injected"] += 1
