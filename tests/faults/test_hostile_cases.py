"""Hostile case files and programs: a typed error naming the file, or a verdict, never a hang or a
traceback; the reference side of a program is isolated like a framework."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformance import exitcodes
from conformance.case import Case, CaseError
from conformance.cli import main
from conformance.identity import check_ids, load_case_files
from conformance.nonfinite import settle
from conformance.runner import Campaign

CONV = {
    "op": "conv",
    "params": {"rank": 1, "stride": 1, "padding": 0},
    "shapes": {"input": [1, 1, 3], "weight": [1, 1, 2]},
    "dtype": "float64",
    "checks": ["forward"],
}


def test_a_latin1_case_file_is_named(tmp_path):
    p = tmp_path / "latin.json"
    p.write_bytes(json.dumps({**CONV, "description": "x"}).replace('"x"', '"caf\xe9"').encode("latin-1"))
    with pytest.raises(CaseError, match=r"latin\.json.*not UTF-8"):
        load_case_files(p)


def test_a_bom_is_allowed_and_binary_is_named(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(CONV).encode())
    assert len(load_case_files(p)[0]) == 1
    p.write_bytes(b"\x00\x01\x02garbage")
    with pytest.raises(CaseError, match="binary"):
        load_case_files(p)
    p.write_text("[" * 100000)
    with pytest.raises(CaseError, match="bom.json"):
        load_case_files(p)
    p.write_text(json.dumps([CONV, 3]))
    with pytest.raises(CaseError, match=r"bom.json\[1\].*JSON object"):
        load_case_files(p)


def test_duplicate_ids_name_both_files_and_unsafe_ids_are_refused(tmp_path, capsys):
    (tmp_path / "a.json").write_text(json.dumps({**CONV, "id": "same"}))
    (tmp_path / "b.json").write_text(json.dumps({**CONV, "id": "same", "seed": 3}))
    code = main(["replay", str(tmp_path), "--frameworks", "torch", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == exitcodes.USAGE and "a.json" in err and "b.json" in err and "'same'" in err
    for bad in ("../escape", "a/b", "", "x" * 200, ".hidden", "tab\there", "caf\xe9"):
        cases, sources = load_case_files_with_id(tmp_path, bad)
        if bad == "":
            check_ids(cases, sources)  # no id: the content hash names it
            continue
        with pytest.raises(CaseError, match="not a safe id"):
            check_ids(cases, sources)


def load_case_files_with_id(tmp_path, case_id):
    p = tmp_path / "one" / "c.json"
    p.parent.mkdir(exist_ok=True)
    p.write_text(json.dumps({**CONV, "id": case_id}))
    return load_case_files(p)


def test_a_field_of_an_unforeseen_type_is_a_case_error(tmp_path, capsys):
    p = tmp_path / "c.json"
    for raw in ({**CONV, "params": [1, 2]}, {**CONV, "shapes": "big"}, {**CONV, "checks": 5}):
        p.write_text(json.dumps(raw))
        code = main(["replay", str(p), "--frameworks", "torch", "--out", str(tmp_path / "o")])
        err = capsys.readouterr().err
        assert code == exitcodes.USAGE and "c.json" in err and "Traceback" not in err


def test_huge_shapes_are_refused_before_anything_is_allocated(tmp_path):
    case = Case.from_dict({**CONV, "shapes": {"input": [64, 512, 10**8], "weight": [512, 512, 3]}})
    with Campaign(tmp_path, {"torch": "conformance.adapters.torch_adapter:TorchAdapter"}) as camp:
        [rec] = camp.run_check(case, "forward")  # no worker is even started for it
        assert not camp.workers["torch"].alive()
    assert rec["verdict"] == "refused" and "memory budget" in rec["reason"] and "GiB" in rec["reason"]


def _program(body: str, **extra) -> Case:
    return Case.from_dict(
        {
            "op": "program",
            "shapes": {"v0": [2]},
            "source": "def prog(T, v0):\n" + body,
            "checks": ["program"],
            **extra,
        }
    )


@pytest.mark.parametrize(
    "body, words",
    [
        ("    while True:\n        pass\n", "ran past the time limit"),
        ("    import sys\n    sys.exit(0)\n", "SystemExit"),
        ("    import os, signal\n    os.kill(os.getpid(), signal.SIGSEGV)\n", "SIGSEGV"),
        ("    raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    ],
)
def test_a_hostile_program_is_a_reference_error_and_the_campaign_goes_on(tmp_path, body, words, tally):
    """The reference side runs in its own worker: loop, exit, segfault become verdicts for the case;
    no framework is asked (nothing to compare with) and the next case runs."""
    with Campaign(tmp_path, {"torch": "conformance.adapters.torch_adapter:TorchAdapter"}, timeout=10) as camp:
        [rec] = camp.run_check(_program(body), "program")
        assert not camp.workers["torch"].alive()
        assert camp.reference_worker.restarts >= 0
        # the campaign goes on: the reference worker restarts for the next program
        status, value = camp._reference(_program("    return v0 * 2\n"), "program")
    assert rec["verdict"] == "reference_error" and words in rec["reason"], rec["reason"]
    assert status == "ok" and np.array_equal(value["result[0]"], 2 * value["result[0]"] / 2)
    tally["faults injected"] += 1


def test_a_reference_that_hangs_once_is_retried_and_its_program_judged(tmp_path):
    """The reference side's timeout follows the frameworks' rule: retried once on a fresh worker,
    only a second timeout is the case's ``reference_error``; the retry is on every result."""
    marker = tmp_path / "hung-once"
    body = (
        "    import os\n"
        f"    if not os.path.exists({str(marker)!r}):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        while True:\n"
        "            pass\n"
        "    return v0 * 2\n"
    )
    with Campaign(
        tmp_path / "run", {"torch": "conformance.adapters.torch_adapter:TorchAdapter"}, timeout=3
    ) as camp:
        [rec] = camp.run_check(_program(body), "program")
    assert marker.exists(), "the first attempt did hang"
    assert rec["verdict"] == "pass", rec.get("reason")
    assert rec["reference_retried"]["first"] == "timeout" and rec["reference_retried"]["after_s"] >= 3.0


def test_nan_and_inf_judging():
    exp = {"y": np.array([np.nan, np.inf, -np.inf, 1.0])}
    obs = {"y": np.array([np.nan, np.inf, -np.inf, 1.0])}
    o, e, failure = settle(obs, exp)
    assert (
        failure is None and np.array_equal(o["y"], [0, 0, 0, 1.0]) and np.array_equal(e["y"], [0, 0, 0, 1.0])
    )
    for bad in (
        [np.nan, np.inf, -np.inf, np.nan],
        [1.0, np.inf, -np.inf, 1.0],
        [np.nan, -np.inf, -np.inf, 1.0],
    ):
        _, _, failure = settle({"y": np.array(bad)}, exp)
        assert failure["verdict"] == "fail" and failure["reason"].startswith("non-finite on one side")


@pytest.mark.torch
def test_nan_in_explicit_data_agrees_with_the_reference(tmp_path):
    pytest.importorskip("torch")
    case = Case.from_dict({**CONV, "data": {"input": [[[1.0, float("nan"), 2.0]]]}})
    with Campaign(tmp_path, {"torch": "conformance.adapters.torch_adapter:TorchAdapter"}) as camp:
        camp.start()
        [rec] = camp.run_check(case, "forward")
    assert rec["verdict"] == "pass", rec.get("reason")
