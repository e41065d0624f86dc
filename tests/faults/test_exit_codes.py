"""The exit-code contract: one table, every subcommand, no traceback for an input or environment fault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import exitcodes
from conformance.cli import main
from conformance.runner import read_results

ROOT = Path(__file__).resolve().parents[2]


def test_outcome_follows_the_table():
    assert exitcodes.outcome([]) == (4, "no result at all: nothing was judged")
    assert exitcodes.outcome(["unsupported", "unsupported"])[0] == exitcodes.NOTHING_JUDGED
    assert exitcodes.outcome(["refused", "reference_error"])[0] == exitcodes.NOTHING_JUDGED
    assert exitcodes.outcome(["pass", "unsupported"])[0] == exitcodes.OK
    assert exitcodes.outcome(["pass", "fail"])[0] == exitcodes.DEPARTURES
    assert exitcodes.outcome(["pass", "timeout"])[0] == exitcodes.DEPARTURES
    assert exitcodes.outcome(["a-verdict-from-the-future"])[0] == exitcodes.NOTHING_JUDGED
    # issue #19: known departures tolerated by --fail-on new
    assert exitcodes.outcome(["pass", "known"], fail_on=("fail", "new"), tolerated=("known",))[0] == 0


def test_the_docs_table_is_the_modules_table():
    text = (ROOT / "docs" / "reliability.md").read_text()
    assert exitcodes.table_markdown() in text


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "soon", "1e400"])
def test_timeout_must_be_positive_and_finite(value, capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        main(["run", "--frameworks", "torch", "--timeout", value, "--out", str(tmp_path / "o")])
    assert info.value.code == exitcodes.USAGE
    err = capsys.readouterr().err
    assert "--timeout" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists(), "nothing may be created before the flags are valid"


@pytest.mark.parametrize("value", ["0", "-4G", "lots", "nanG"])
def test_memory_budget_must_be_a_positive_size(value, capsys, tmp_path):
    with pytest.raises(SystemExit) as info:
        main(["run", "--frameworks", "torch", "--memory-budget", value, "--out", str(tmp_path / "o")])
    assert info.value.code == exitcodes.USAGE
    assert "--memory-budget" in capsys.readouterr().err


def test_filters_selecting_nothing_exit_2_naming_them(tmp_path, capsys):
    empty = tmp_path / "cases"
    empty.mkdir()
    code = main(
        [
            "run",
            "--frameworks",
            "torch",
            "--ops",
            "programs",
            "--dtypes",
            "float32",
            "--cases",
            str(empty),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err
    assert code == exitcodes.USAGE
    assert "nothing selected" in err and "--dtypes float32" in err and "--ops programs" in err
    assert "float64 only" in err


def test_replay_filters_selecting_nothing_exit_2(tmp_path, capsys):
    code = main(
        [
            "replay",
            str(ROOT / "refgrad" / "cases" / "gemm_paths.json"),
            "--frameworks",
            "torch",
            "--dtypes",
            "bfloat16",
            "--checks",
            "vmap",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err
    assert code == exitcodes.USAGE and "nothing selected" in err and "--dtypes bfloat16" in err


def test_an_internal_error_is_one_line_and_a_crash_log(tmp_path, capsys, monkeypatch):
    import conformance.cli as cli

    def broken(args):
        raise ZeroDivisionError("planted harness bug")

    monkeypatch.setattr(cli, "cmd_report", broken)
    code = main(["report", str(tmp_path), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == exitcodes.INTERNAL
    assert "Traceback" not in err and "internal error" in err and "planted harness bug" in err
    log = Path(err.split("the traceback is in ")[1].split(";")[0])
    assert "ZeroDivisionError" in log.read_text() and "Traceback" in log.read_text()


def test_report_on_results_that_judged_nothing_is_not_green(tmp_path, capsys):
    rec = {
        "schema": 1,
        "case_id": "c",
        "framework": "torch",
        "check": "vjp",
        "verdict": "unsupported",
        "reason": "the adapter implements no check",
    }
    (tmp_path / "results.jsonl").write_text(json.dumps(rec) + "\n")
    assert main(["report", str(tmp_path)]) == exitcodes.NOTHING_JUDGED
    assert "NOTHING JUDGED" in capsys.readouterr().err
    assert "NOTHING JUDGED" in (tmp_path / "index.html").read_text()
    (tmp_path / "results.jsonl").write_text("")
    assert main(["report", str(tmp_path)]) == exitcodes.NOTHING_JUDGED


def test_a_sigterm_whose_exception_was_swallowed_still_stops_the_run(tmp_path, monkeypatch):
    """A signal handler's exception raised inside a gc callback is printed and dropped by Python
    (Hypothesis registers one): the flag it sets makes the next recording raise, so no spurious
    result (the fuzz loop's 'crash' for the aftermath) is ever written."""
    from conformance import interrupt
    from conformance.runner import Campaign

    monkeypatch.setattr(interrupt, "requested", False)
    with Campaign(tmp_path, {}) as camp:
        rec = {"case_id": "a", "framework": "f", "check": "forward", "verdict": "pass"}
        camp.record(rec)
        monkeypatch.setattr(interrupt, "requested", True)
        with pytest.raises(interrupt.Interrupted):
            camp.record({**rec, "case_id": "b"})
    assert [r["case_id"] for r in read_results(tmp_path / "results.jsonl")] == ["a"]


def test_a_ctrl_c_that_something_swallowed_is_still_an_interruption(monkeypatch):
    """Ray's code, a ``__del__`` or a GC callback may swallow the KeyboardInterrupt a Ctrl-C raises;
    the command must still end as interrupted (130), never go on to exit 0 (an interrupted local Ray
    run under load did, in CI)."""
    import os
    import signal
    import time

    from conformance import cli

    def swallows_a_ctrl_c(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the handler runs here and raises
        except KeyboardInterrupt:
            pass  # as Ray's or a __del__'s except clause would
        return exitcodes.OK

    def finishes(args):
        return exitcodes.OK

    # as in an interactive interpreter (a pytest-xdist worker ignores SIGINT, and main() keeps a
    # handling its caller chose)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(cli, "cmd_ops", swallows_a_ctrl_c)
        assert cli.main(["ops"]) == exitcodes.INTERRUPTED
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
        monkeypatch.setattr(cli, "cmd_ops", finishes)
        assert cli.main(["ops"]) == exitcodes.OK  # the next command starts afresh
    finally:
        signal.signal(signal.SIGINT, previous)
