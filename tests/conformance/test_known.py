"""Known departures (conformance/known.py), --fail-on new and JUnit XML: what makes refgrad a CI gate."""

from __future__ import annotations

import functools
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from conformance import exitcodes
from conformance.case import Case
from conformance.cli import main
from conformance.known import SHIPPED, KnownFileError, load_known
from conformance.report import summarise

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ROOT / "refgrad" / "cases" / "double_backward_groups.json"


def _rec(
    verdict="fail", framework="tensorflow", version="2.21.0", check="vjp", dtype="float32", n=2, **extra
):
    return {
        "case_id": f"c-{verdict}-{n}-{check}",
        "framework": framework,
        "version": version,
        "check": check,
        "dtype": dtype,
        "verdict": verdict,
        "reason": extra.pop("reason", "output grad_input has shape (0, 3, 4) but reference says (0, 2, 4)"),
        "case": Case.from_dict(
            {
                "op": "conv",
                "params": {"rank": 1},
                "shapes": {"input": [n, 2, 4], "weight": [3, 2, 2]},
                "dtype": dtype,
            }
        ).to_dict(),
        **extra,
    }


def _known(tmp_path, *entries, name="known.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"schema": 1, "departures": list(entries)}))
    return path


EMPTY_BATCH = {
    "id": "tf-empty-batch",
    "framework": "tensorflow",
    "versions": ">=2.12",
    "match": {
        "op": "conv",
        "where": [{"path": "shapes.input.0", "op": "==", "value": 0}],
        "reason": "has shape",
    },
    "verdict": "fail",
    "reason": "TensorFlow gives an empty batch's convolution the input's channel count",
}


# ---- the file -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "entry, says",
    [
        ({**EMPTY_BATCH, "versions": "2.12+"}, "versions '2.12+' is not a PEP 440 specifier set"),
        ({**EMPTY_BATCH, "verdict": "pass"}, "'tf-empty-batch', field verdict"),
        ({k: v for k, v in EMPTY_BATCH.items() if k != "reason"}, "'reason' is a required property"),
        ({**EMPTY_BATCH, "match": {"reason": "("}}, "match.reason '(' is not a regular expression"),
        ({**EMPTY_BATCH, "reproducer": "no/such.json"}, "reproducer 'no/such.json' does not exist"),
        ({**EMPTY_BATCH, "match": {"opp": "conv"}}, "Additional properties are not allowed ('opp'"),
    ],
)
def test_a_malformed_entry_is_an_error_naming_the_entry_field_and_rule(tmp_path, entry, says):
    with pytest.raises(KnownFileError, match="entry 0") as err:
        load_known(_known(tmp_path, entry))
    assert says in str(err.value) and "known.json" in str(err.value)


def test_a_duplicate_id_and_a_file_that_is_not_json_are_errors(tmp_path):
    with pytest.raises(KnownFileError, match="already used by entry 0"):
        load_known(_known(tmp_path, EMPTY_BATCH, EMPTY_BATCH))
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not json")
    with pytest.raises(KnownFileError, match="bad.json: not a JSON"):
        load_known(bad)


def test_the_shipped_file_is_valid_and_its_reproducers_exist():
    known = load_known(SHIPPED)
    assert len(known.entries) >= 5
    for e in known.entries:
        assert e.reproducer is None or (SHIPPED.parent / e.reproducer).exists()


# ---- classification ------------------------------------------------------------------------------
def test_matching_results_are_known_and_others_keep_their_verdict(tmp_path):
    known = load_known(_known(tmp_path, EMPTY_BATCH))
    records = [
        _rec(n=0),
        _rec(n=2),
        _rec(n=0, framework="jax", version="0.10.2"),
        _rec(n=0, version="2.11.0"),
    ]
    out, summary = known.classify(records)
    assert [r["verdict"] for r in out] == ["known", "fail", "fail", "fail"]
    assert out[0]["known"] == {"id": "tf-empty-batch", "verdict": "fail"}
    assert summary["entries"][0]["matched"] == 1 and summary["stale"] == []


def test_an_entry_whose_region_ran_but_matched_nothing_is_stale_unless_flaky(tmp_path):
    passing = [_rec("pass", n=0, reason="")]
    known = load_known(_known(tmp_path, EMPTY_BATCH))
    assert known.classify(passing)[1]["stale"] == ["tf-empty-batch"]
    assert known.classify([_rec("pass", n=3)])[1]["stale"] == []  # the region was not reached
    flaky = load_known(_known(tmp_path, {**EMPTY_BATCH, "flaky": True}, name="flaky.json"))
    assert flaky.classify(passing)[1]["stale"] == []


def test_a_framework_entry_covers_its_modes_and_a_mode_entry_only_its_own(tmp_path):
    known = load_known(
        _known(tmp_path, EMPTY_BATCH, {**EMPTY_BATCH, "id": "xla-only", "framework": "jax:eager"})
    )
    out, _ = known.classify(
        [_rec(n=0, framework="tensorflow:xla"), _rec(n=0, framework="jax:jit", version="0.10.2")]
    )
    assert [r["verdict"] for r in out] == ["known", "fail"]


# ---- the run's outcome ----------------------------------------------------------------------------
def _outcome(records, tmp_path, **kw):
    rep = summarise(records, {}, out_dir=tmp_path, **kw)
    return rep["outcome"]["code"], rep


def test_known_departures_pass_the_gate_new_ones_and_stale_entries_fail_it(tmp_path):
    known = load_known(_known(tmp_path, EMPTY_BATCH))
    covered = [_rec(n=0), _rec("pass", n=2, reason="")]
    assert _outcome(covered, tmp_path)[0] == exitcodes.DEPARTURES
    code, rep = _outcome(covered, tmp_path, known=known)
    assert code == exitcodes.OK and rep["totals"]["known"] == 1 and not rep["failed"]
    assert (
        _outcome([*covered, _rec(n=2)], tmp_path, known=known)[0] == exitcodes.DEPARTURES
    )  # a new departure
    stale = [_rec("pass", n=0, reason=""), _rec("pass", n=2, reason="")]
    code, rep = _outcome(stale, tmp_path, known=known)
    assert code == exitcodes.DEPARTURES and rep["known"]["stale"] == ["tf-empty-batch"]
    assert "1 stale" in rep["outcome"]["message"]
    assert _outcome(stale, tmp_path, known=known, allow_stale=True)[0] == exitcodes.OK


def test_fail_on_new_fails_only_on_failures_the_baseline_did_not_have(tmp_path):
    old_records = [_rec(n=2), _rec("pass", n=3, reason="")]
    baseline = summarise(old_records, {}, out_dir=tmp_path)
    same = _outcome(old_records, tmp_path, baseline=baseline, baseline_path="old", fail_on="new")
    assert same[0] == exitcodes.OK and same[1]["regression"]["new_failures"] == 0
    worse = [_rec(n=2), _rec(n=3)]
    code, rep = _outcome(worse, tmp_path, baseline=baseline, baseline_path="old", fail_on="new")
    assert code == exitcodes.DEPARTURES and rep["regression"]["new_failures"] == 1
    with pytest.raises(ValueError, match="needs a baseline"):
        summarise(worse, {}, out_dir=tmp_path, fail_on="new")


# ---- through the CLI, with a planted bug --------------------------------------------------------
@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    """A replay with a planted wrong double-backward derivative, and one with stock torch."""
    pytest.importorskip("torch")
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    base = tmp_path_factory.mktemp("known")
    cases = base / "groups.json"  # two of the curated double-backward cases (groups 2, strides 1 and 2)
    cases.write_text(json.dumps(json.loads(GROUPS.read_text())[:2]))
    runs = {}
    for name, flags in {
        "planted": ["--adapter", "planted_adapters:DroppedGroup"],
        "stock": ["--frameworks", "torch"],
    }.items():
        out = base / name
        code = main(["replay", str(cases), *flags, "--checks", "vjp_vjp", "--out", str(out), "--quiet"])
        runs[name] = (code, out)
    return base, runs


PLANTED_ENTRY = {
    "id": "planted-dropped-group",
    "framework": "torch-dropped-group",
    "match": {"op": "conv", "check": "vjp_vjp", "where": [{"path": "params.groups", "op": ">", "value": 1}]},
    "verdict": ["fail"],
    "reason": "the planted adapter drops a group in the double backward",
}


def test_a_planted_bug_fails_the_run_and_the_junit_file_shows_it(planted_run):
    base, runs = planted_run
    code, out = runs["planted"]
    assert code == exitcodes.DEPARTURES
    junit = base / "planted.xml"
    assert main(["report", str(out), "--junit-xml", str(junit)]) == exitcodes.DEPARTURES
    root = ET.parse(junit).getroot()
    failures = root.findall(".//testcase/failure")
    assert failures and int(root.get("failures")) == len(failures)
    assert all(
        f.get("type") == "fail" and "torch-dropped-group vjp_vjp" in f.get("message") for f in failures
    )
    assert any("reproducer: " in (f.text or "") for f in failures)
    assert {tc.get("classname") for tc in root.iter("testcase")} == {
        "refgrad.torch-dropped-group.conv.vjp_vjp"
    }


def test_a_known_entry_covering_the_bug_makes_the_gate_green_with_known_results(planted_run, capsys):
    base, runs = planted_run
    _, out = runs["planted"]
    known = _known(base, PLANTED_ENTRY, name="planted-known.json")
    junit = base / "known.xml"
    assert main(["report", str(out), "--known", str(known), "--junit-xml", str(junit)]) == exitcodes.OK
    printed = capsys.readouterr().out
    rep = json.loads((out / "report.json").read_text())
    assert rep["totals"]["known"] >= 1 and "fail" not in rep["totals"]
    assert printed.splitlines()[0] == f"{rep['totals']['known']} known"
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "0" and int(root.get("skipped")) == rep["totals"]["known"]
    assert "known departure planted-dropped-group" in root.find(".//skipped").get("message")
    assert 'id="known"' in (out / "index.html").read_text()


def test_an_entry_made_stale_fails_the_run_naming_it(planted_run, capsys):
    base, runs = planted_run
    code, out = runs["stock"]
    assert code == exitcodes.OK
    stale = _known(base, {**PLANTED_ENTRY, "framework": "torch"}, name="stale.json")
    junit = base / "stale.xml"
    assert (
        main(["report", str(out), "--known", str(stale), "--junit-xml", str(junit)]) == exitcodes.DEPARTURES
    )
    printed = capsys.readouterr().out
    assert "1 stale" in printed and "stale: known departure 'planted-dropped-group'" in printed
    assert (
        ET.parse(junit).getroot().find(".//testcase[@classname='refgrad.known']/failure").get("type")
        == "stale"
    )
    assert main(["report", str(out), "--known", str(stale), "--allow-stale"]) == exitcodes.OK


def test_gate_flags_are_checked_before_any_work(tmp_path, capsys):
    bad = _known(tmp_path, {**EMPTY_BATCH, "versions": "soon"})
    for argv in (
        ["replay", str(GROUPS), "--frameworks", "torch", "--known", str(bad), "--out", str(tmp_path / "o")],
        ["replay", str(GROUPS), "--frameworks", "torch", "--fail-on", "new", "--out", str(tmp_path / "o")],
        [
            "replay",
            str(GROUPS),
            "--frameworks",
            "torch",
            "--junit-xml",
            str(tmp_path),
            "--out",
            str(tmp_path / "o"),
        ],
    ):
        try:
            code = main(argv)
        except SystemExit as exc:  # a UsageError is argparse's error(): usage line, message, exit 2
            code = exc.code
        assert code == exitcodes.USAGE
        err = capsys.readouterr().err
        assert "--known" in err or "versions 'soon'" in err or "--fail-on" in err or "--junit-xml" in err, err
        assert "Traceback" not in err
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_settings_conditions_hold_a_departure_to_the_machines_that_have_it(tmp_path):
    """TensorFlow's empty-batch shape bug exists only where its kernels run through oneDNN (a CPU
    feature question: the same wheel on another machine computes the right shape). An entry that
    names the setting matches there, and elsewhere neither matches nor goes stale."""
    entry = {
        **EMPTY_BATCH,
        "match": {**EMPTY_BATCH["match"], "settings": [{"path": "onednn", "op": "==", "value": True}]},
    }
    known = load_known(_known(tmp_path, entry))
    failing, passing = _rec(n=0), _rec(verdict="pass", n=0, reason=None)
    on = {"tensorflow": {"device": "cpu", "onednn": True}}
    off = {"tensorflow": {"device": "cpu", "onednn": False}}

    out, summary = known.classify([failing], on)
    assert out[0]["verdict"] == "known" and summary["stale"] == []
    out, summary = known.classify([passing], off)  # a machine without oneDNN: not evidence of a fix
    assert out[0]["verdict"] == "pass" and summary["stale"] == []
    assert summary["entries"][0]["in_region"] == 0
    out, summary = known.classify([failing], off)  # nor does it excuse the failure there
    assert out[0]["verdict"] == "fail"
    out, _ = known.classify([failing])  # settings unknown (an old report): the entry does not apply
    assert out[0]["verdict"] == "fail"
    out, summary = known.classify([passing], on)  # where the setting holds, a fix is still noticed
    assert summary["stale"] == ["tf-empty-batch"]


def test_the_tensorflow_adapter_reports_whether_onednn_is_on():
    """The setting is TensorFlow's own state, not the environment variable: with
    TF_ENABLE_ONEDNN_OPTS=0 it is off on every machine."""
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    import os
    import subprocess
    import sys

    code = (
        "from conformance.adapters.tf_adapter import TensorFlowAdapter as A; "
        "print(A().setup('cpu', 'highest')['onednn'])"
    )
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": "0", "TF_CPP_MIN_LOG_LEVEL": "3"}
    off = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
    assert off.stdout.strip().splitlines()[-1] == "False", off.stderr[-2000:]


def test_a_where_path_takes_the_max_or_min_of_a_per_dim_parameter(tmp_path):
    """``params.dilation.max >= 2``: some spatial dim is dilated, whichever it is; an aggregate of a
    list that is not all numbers (or of no list) holds for nothing."""
    entry = {
        **EMPTY_BATCH,
        "match": {"op": "conv", "where": [{"path": "params.dilation.max", "op": ">=", "value": 2}]},
    }
    known = load_known(_known(tmp_path, entry))

    def rec(dilation):
        r = _rec()
        r["case"]["params"]["dilation"] = dilation
        return r

    verdicts = [r["verdict"] for r in known.classify([rec([1, 2]), rec([3, 1]), rec([1, 1]), rec("x")])[0]]
    assert verdicts == ["known", "known", "fail", "fail"]
    low = {**entry, "match": {"op": "conv", "where": [{"path": "params.dilation.min", "op": "==", "value": 1}]}}
    known = load_known(_known(tmp_path, low, name="low.json"))
    assert [r["verdict"] for r in known.classify([rec([1, 2]), rec([2, 2])])[0]] == ["known", "fail"]


def test_a_where_path_takes_the_sum_of_a_padding_pair(tmp_path):
    """``params.padding.0.sum >= 0``: the first dim's (low, high) pair crops no more than it pads
    (jax-conv1d-pad-crop-input-gradient-with-a-1-wide-kernel departs at (1, -1) and (2, -1), not at
    (1, -2)); a pair that is not all numbers holds for nothing."""
    entry = {**EMPTY_BATCH, "match": {"op": "conv", "where": [{"path": "params.padding.0.sum", "op": ">=", "value": 0}]}}
    known = load_known(_known(tmp_path, entry))

    def rec(padding):
        r = _rec()
        r["case"]["params"]["padding"] = padding
        return r

    got = known.classify([rec([[1, -1]]), rec([[2, -1]]), rec([[1, -2]]), rec([["a", 1]])])[0]
    assert [r["verdict"] for r in got] == ["known", "known", "fail", "fail"]


def test_cpu_settings_say_whether_the_processor_has_native_float16(monkeypatch):
    """oneDNN runs float16 kernels of its own on an avx512_fp16 processor (the PyTorch float16
    dilated-convolution segfault exists there only), so the CPU settings record it: True or False
    from the processor's flags, None where they are unknown (no /proc/cpuinfo)."""
    from conformance.adapters import base

    monkeypatch.setattr(base, "cpu_flags", lambda: frozenset({"avx2", "avx512_fp16"}))
    assert base.cpu_setup(None, "cpu", "highest", {})["avx512_fp16"] is True
    monkeypatch.setattr(base, "cpu_flags", lambda: frozenset({"avx2", "avx512f"}))
    assert base.cpu_setup(None, "cpu", "highest", {})["avx512_fp16"] is False
    monkeypatch.setattr(base, "cpu_flags", lambda: None)
    assert base.cpu_setup(None, "cpu", "highest", {})["avx512_fp16"] is None


def test_the_torch_float16_dilated_conv_segfault_is_claimed_on_its_machines_only():
    """Seed 1 of the README command: the torch worker died (SIGSEGV) in a float16 conv with
    dilation [1, 2]. The shipped entry claims it where the CPU has avx512_fp16, not elsewhere, and
    not an undilated conv's crash."""
    known = load_known(SHIPPED)
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 2, "stride": [2, 3], "padding": [2, 2], "dilation": [1, 2]},
            "shapes": {"input": [2, 1, 1, 1], "weight": [1, 1, 1, 1]},
            "dtype": "float16",
        }
    ).to_dict()
    crash = {**_rec(framework="torch", version="2.13.0+cpu", check="vjp_vjp", dtype="float16"),
             "verdict": "crash", "reason": "torch worker killed by SIGSEGV", "case": case}
    undilated = {**crash, "case": {**case, "params": {**case["params"], "dilation": [1, 1]}}}
    fp16 = {"torch": {"device": "cpu", "avx512_fp16": True}}
    out, _ = known.classify([crash, undilated], fp16)
    assert [r["verdict"] for r in out] == ["known", "crash"]
    assert out[0]["known"] == {"id": "torch-onednn-float16-dilated-conv-segfaults", "verdict": "crash"}
    out, _ = known.classify([crash], {"torch": {"device": "cpu", "avx512_fp16": False}})
    assert out[0]["verdict"] == "crash"


def test_a_partial_entry_is_not_stale_where_a_run_drew_only_its_passing_cases(tmp_path):
    """TensorFlow's empty-batch shape bug gives the right shape where the input's shape is the
    output's: a run that drew only such cases is no evidence of a fix. A ``partial`` entry says so;
    the same entry without it goes stale."""
    passing = _rec(verdict="pass", n=0, reason=None)
    strict = load_known(_known(tmp_path, EMPTY_BATCH, name="strict.json"))
    assert strict.classify([passing])[1]["stale"] == ["tf-empty-batch"]
    partial = load_known(_known(tmp_path, {**EMPTY_BATCH, "partial": True}, name="partial.json"))
    out, summary = partial.classify([passing, _rec(n=0)])
    assert summary["stale"] == [] and [r["verdict"] for r in out] == ["pass", "known"]
    assert partial.classify([passing])[1]["stale"] == []


def test_the_torch_adapter_reports_its_cpu_capability():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    from conformance.adapters.torch_adapter import TorchAdapter

    settings = TorchAdapter().setup("cpu", "highest")
    assert settings["cpu_capability"] == torch.backends.cpu.get_cpu_capability()


# ---- a stale entry's reproducer decides -----------------------------------------------------------
def _script(tmp_path, prints: str) -> str:
    (tmp_path / "repro.py").write_text(f"print({prints!r})\n")
    return "repro.py"


def test_a_script_reproducer_that_still_reproduces_keeps_the_entry_off_the_stale_list(tmp_path):
    """The run's draws missed the departure, its reproducer did not: not stale, and the report says
    what the reproducer printed."""
    entry = {
        **EMPTY_BATCH,
        "reproducer": _script(tmp_path, "shape (0, 5, 5, 2)"),
        "reproduces": r"\(0, 5, 5, 2\)",
    }
    known = load_known(_known(tmp_path, entry))
    code, rep = _outcome([_rec("pass", n=0, reason="")], tmp_path, known=known)
    assert code == exitcodes.OK and rep["known"]["stale"] == []
    said = rep["known"]["reproducers"]["tf-empty-batch"]
    assert said["reproduces"] is True and said["rc"] == 0 and said["printed"] == "shape (0, 5, 5, 2)"


def test_a_script_reproducer_that_no_longer_reproduces_leaves_the_entry_stale_with_its_output(
    tmp_path, capsys
):
    entry = {
        **EMPTY_BATCH,
        "reproducer": _script(tmp_path, "shape (0, 5, 5, 4)"),
        "reproduces": r"\(0, 5, 5, 2\)",
    }
    known = _known(tmp_path, entry)
    code, rep = _outcome([_rec("pass", n=0, reason="")], tmp_path, known=load_known(known))
    assert code == exitcodes.DEPARTURES and rep["known"]["stale"] == ["tf-empty-batch"]
    assert rep["known"]["reproducers"]["tf-empty-batch"]["printed"] == "shape (0, 5, 5, 4)"
    from conformance.cli import _gate_lines

    lines = "\n".join(_gate_lines(rep))
    assert "repro.py no longer reproduces (exit 0); it printed: \n      shape (0, 5, 5, 4)" in lines


def test_a_script_shared_by_several_entries_runs_once_and_each_entry_reads_its_own_pattern(tmp_path):
    """One script often shows a departure in several dtypes, each its own entry: it runs once (it
    counts its runs in a file), and each entry is judged by its own pattern on that output."""
    from conformance import stale

    counter = tmp_path / "runs.txt"
    (tmp_path / "repro.py").write_text(
        f"from pathlib import Path\np = Path({str(counter)!r})\n"
        "p.write_text(p.read_text() + 'x' if p.exists() else 'x')\nprint('float32: WRONG\\nfloat64: right')\n"
    )
    f32 = {**EMPTY_BATCH, "id": "f32", "reproducer": "repro.py", "reproduces": "float32: WRONG"}
    f64 = {**EMPTY_BATCH, "id": "f64", "reproducer": "repro.py", "reproduces": "float64: WRONG"}
    known = load_known(_known(tmp_path, f32, f64))
    said = stale.run_reproducers(known.entries)
    assert counter.read_text() == "x"
    assert said["f32"]["reproduces"] is True and said["f64"]["reproduces"] is False
    assert said["f64"]["printed"] == "float32: WRONG\nfloat64: right" and said["f64"]["rc"] == 0
    still, _ = stale.confirm(known.entries, ["f32", "f64"])
    assert still == ["f64"] and counter.read_text() == "xx"


def test_a_script_reproducer_needs_its_pattern_and_a_case_reproducer_takes_none(tmp_path):
    script = _script(tmp_path, "x")
    for entry, says in [
        ({**EMPTY_BATCH, "reproducer": script}, "'reproduces' must give the regular expression"),
        (
            {**EMPTY_BATCH, "reproducer": script, "reproduces": "("},
            "reproduces '(' is not a regular expression",
        ),
        (
            {**EMPTY_BATCH, "reproducer": "known.json", "reproduces": "x"},
            "only a .py reproducer is judged by a pattern",
        ),
        ({**EMPTY_BATCH, "reproducer": "repro.py.txt"}, "does not exist"),
    ]:
        with pytest.raises(KnownFileError, match="entry 0") as err:
            load_known(_known(tmp_path, entry))
        assert says in str(err.value)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(KnownFileError, match="must be a .py script or a .json case file"):
        load_known(_known(tmp_path, {**EMPTY_BATCH, "reproducer": "notes.txt"}))


def test_a_case_reproducer_is_replayed_on_the_entrys_framework(tmp_path):
    """The shipped torch entry's curated case still departs on torch (reproduces); the same case
    under an entry whose departure is not there (a reason pattern it does not show) does not."""
    pytest.importorskip("torch")
    from conformance import stale

    shipped = next(e for e in load_known(SHIPPED).entries if e.id == "torch-empty-batch-accepts-dilation-0")
    (tmp_path / "found").mkdir()
    (tmp_path / "found" / "case.json").write_text((SHIPPED.parent / shipped.reproducer).read_text())
    raw = {
        "id": shipped.id,
        "framework": "torch",
        "verdict": "error_mismatch",
        "reproducer": "found/case.json",
        "reason": shipped.reason,
        "match": {"op": "conv", "check": "error", "reason": "dilation"},
    }
    gone = {**raw, "id": "gone", "match": {**raw["match"], "reason": "no such words in any reason"}}
    known = load_known(_known(tmp_path, raw, gone))
    still, said = stale.confirm(known.entries, [shipped.id, "gone"])
    assert still == ["gone"]
    assert said[shipped.id]["reproduces"] is True and f"matched {shipped.id!r}" in said[shipped.id]["printed"]
    assert said["gone"]["reproduces"] is False and "0 result(s) matched 'gone'" in said["gone"]["printed"]


def _scripts() -> dict[str, list]:
    """{shipped ``.py`` reproducer: the entries that name it}."""
    scripts: dict[str, list] = {}
    for entry in load_known(SHIPPED).entries:
        if entry.reproducer and entry.reproducer.endswith(".py"):
            scripts.setdefault(entry.reproducer, []).append(entry)
    return scripts


SCRIPTS = _scripts()


@functools.cache
def _settings_here(framework: str) -> dict:
    """The settings a campaign's worker for ``framework`` reports on this machine (device, oneDNN,
    avx512_fp16, jit_compile...): what an entry's ``settings`` conditions are judged against."""
    import tempfile

    from conformance import adapters
    from conformance.runner import Worker

    with tempfile.TemporaryDirectory() as logs:
        worker = Worker(framework, adapters.known()[framework], log_dir=logs)
        try:
            return worker.start()["settings"]
        finally:
            worker.close()


def _applies_here(entry) -> str | None:
    """None where ``entry`` applies to this machine's installed framework, else why not."""
    import importlib
    import importlib.util

    name = entry.framework.split(":")[0]
    if importlib.util.find_spec(name) is None:
        return f"{name} is not installed"
    version = importlib.import_module(name).__version__
    if not entry.applies_to(entry.framework, version):
        return f"its range {entry.versions} leaves out {name} {version}"
    if entry.settings:
        settings = _settings_here(entry.framework)
        unmet = [f"{c.path} {c.op} {c.value!r}" for c in entry.settings if not c.holds(settings)]
        if unmet:  # a CUDA kernel's or another processor's departure (test_gpu_known.py runs CUDA's)
            return f"this machine's {entry.framework} settings do not meet {', '.join(unmet)}"
    return None


def test_the_shipped_file_has_script_reproducers():
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_shipped_script_reproducer_reproduces_on_the_installed_frameworks(script):
    """Each shipped ``.py`` reproducer still shows its departure on the installed version that the
    entry's range covers, on a machine its settings conditions hold on: the check a stale entry
    would get, run on every entry (one test per script, so that CI's workers share them)."""
    from conformance import stale

    entries = SCRIPTS[script]
    why_not = {e.id: _applies_here(e) for e in entries}
    installed = [e for e in entries if why_not[e.id] is None]
    if not installed:
        pytest.skip(f"{script}: no entry applies here: " + "; ".join(f"{k}: {v}" for k, v in why_not.items()))
    said = stale.run_reproducers(installed)  # a script shared by several entries runs once
    # a flaky entry's departure (uninitialised or out-of-bounds memory) may not show in one run of
    # its reproducer on every machine: TensorFlow's oneDNN bfloat16 weight gradient was nan in 0 of
    # 300 calls on session 27's Sapphire Rapids machine. Its pattern must still be one the script can print.
    missed = [
        f"{e.id}: {e.reproducer} printed {said[e.id]['printed']!r}"
        for e in installed
        if not said[e.id]["reproduces"] and not e.flaky
    ]
    assert not missed, "\n".join(missed)


def test_an_entry_naming_a_setting_its_framework_does_not_report_is_stale_naming_the_keys(tmp_path):
    """A misspelt settings key would keep the entry out of its region on every machine, silently."""
    entry = {
        **EMPTY_BATCH,
        "match": {**EMPTY_BATCH["match"], "settings": [{"path": "onedn", "op": "==", "value": True}]},
    }
    known = load_known(_known(tmp_path, entry))
    _, summary = known.classify([_rec(n=0)], {"tensorflow": {"onednn": True, "data_format": "NHWC"}})
    assert summary["stale"] == ["tf-empty-batch"]
    why = summary["unreported_settings"]["tf-empty-batch"]
    assert "'onedn'" in why and "it reports: data_format, onednn" in why
    # a framework that did not run, or reported nothing, is no evidence
    assert known.classify([_rec(n=0)], {})[1]["stale"] == []


def test_a_reproducer_is_found_beside_its_known_file_whatever_the_label_or_working_directory(
    tmp_path, monkeypatch
):
    """The shipped file is labelled ``builtin`` and a user's file by the path given: the reproducer
    is resolved when the file is read, not from the label (it ran from its own temporary directory)."""
    (tmp_path / "lists").mkdir()
    _script(tmp_path / "lists", "shape (0, 5, 5, 2)")
    entry = {**EMPTY_BATCH, "reproducer": "repro.py", "reproduces": r"\(0, 5, 5, 2\)"}
    _known(tmp_path / "lists", entry)
    monkeypatch.chdir(tmp_path)
    known = load_known(["lists/known.json"])
    monkeypatch.chdir(tmp_path / "lists")  # the campaign may report from elsewhere
    code, rep = _outcome([_rec("pass", n=0, reason="")], tmp_path, known=known)
    assert rep["known"]["reproducers"]["tf-empty-batch"]["reproduces"] is True, rep["known"]["reproducers"]
    assert code == exitcodes.OK
    from conformance import stale

    shipped = [e for e in load_known("builtin").entries if e.reproducer]
    assert shipped and all(stale.reproducer_path(e).is_file() for e in shipped)


# ---- conditions on an input's values ----------------------------------------------------------------
def _hyper_rec(op, point, dtype="float64", verdict="fail"):
    """A JAX result of ``op`` at one point (explicit one-element data for each input)."""
    names = ("a", "b", "x") if op == "hyp1f1" else ("a", "b", "c", "x")
    case = {
        "op": op,
        "shapes": {n: [1] for n in names},
        "dtype": dtype,
        "data": {n: [v] for n, v in zip(names, point)},
    }
    return {
        "case_id": f"{op}-{point}-{dtype}", "framework": "jax", "version": "jax 0.10.2, jaxlib 0.10.2",
        "check": "forward", "dtype": dtype, "verdict": verdict, "reason": "value outside the bound",
        "case": Case.from_dict(case).to_dict(),
    }  # fmt: skip


NEGATIVE_X = {
    "id": "jax-negative-x",
    "framework": "jax",
    "match": {"op": "hyp1f1", "where": [{"path": "values.x.min", "op": "<", "value": 0}]},
    "verdict": "fail",
    "reason": "JAX's hyp1f1 sums its Taylor series at negative x, which cancels",
}


@pytest.mark.parametrize(
    "condition, says",
    [
        (
            {"path": "values.x.mean", "op": "<", "value": 0},
            "must be values.NAME.STAT, STAT one of min, max, absmax, absmin, negint, tiny",
        ),
        ({"path": "values.x", "op": "<", "value": 0}, "must be values.NAME.STAT"),
        ({"path": "values.input.min", "op": "<", "value": 0}, "'input' is not an input, cotangent or tangent of every op"),
        ({"path": "values.x.min", "op": "in", "value": [0]}, "op 'in' does not compare numbers"),
        ({"path": "values.x.min", "op": "<", "value": "{params.values}"}, "must be a real number"),
        ({"path": "values.x.min", "op": "<", "value": True}, "must be a real number"),
    ],
)
def test_a_malformed_value_condition_is_an_error_naming_the_entry_field_value_and_rule(
    tmp_path, condition, says
):
    entry = {**NEGATIVE_X, "match": {"op": "hyp1f1", "where": [condition]}}
    with pytest.raises(KnownFileError, match=r"entry 0 \('jax-negative-x'\)") as err:
        load_known(_known(tmp_path, entry))
    assert f"match.where[0].path {condition['path']!r}" in str(err.value) and says in str(err.value)


def test_a_value_condition_needs_an_op_records_inputs(tmp_path):
    for match in (
        {"where": NEGATIVE_X["match"]["where"]},
        {"op": "conv", "where": NEGATIVE_X["match"]["where"]},
    ):
        with pytest.raises(KnownFileError, match="needs match.op naming op records"):
            load_known(_known(tmp_path, {**NEGATIVE_X, "match": match}))


def test_a_value_condition_reads_the_elements_the_framework_received(tmp_path):
    """min < 0 holds when some element is negative, max < 0 only when all are; the values are the
    case's arrays as made for the framework (seeded ones included), and a NaN element makes none hold."""
    known = load_known(_known(tmp_path, NEGATIVE_X))
    some = {**_hyper_rec("hyp1f1", (0.5, 1.5, 2.0)), "case_id": "some"}
    some["case"] = Case.from_dict({**some["case"], "shapes": {"a": [2], "b": [2], "x": [2]},
                                   "data": {"a": [0.5, 0.5], "b": [1.5, 1.5], "x": [2.0, -3.0]}}).to_dict()  # fmt: skip
    nan = _hyper_rec("hyp1f1", (0.5, 1.5, float("nan")))
    out, _ = known.classify([some, nan, _hyper_rec("hyp1f1", (0.5, 1.5, 2.0))])
    assert [r["verdict"] for r in out] == ["known", "fail", "fail"]
    every = load_known(_known(tmp_path, {**NEGATIVE_X, "match": {"op": "hyp1f1", "where": [
        {"path": "values.x.max", "op": "<", "value": 0}]}}, name="every.json"))  # fmt: skip
    assert every.classify([some])[0][0]["verdict"] == "fail"
    seeded = Case.from_dict({"op": "hyp1f1", "shapes": {"a": [4], "b": [4], "x": [4]}, "seed": 3})
    rec = {**_hyper_rec("hyp1f1", (0, 0, 0)), "case": seeded.to_dict()}
    negative = bool((seeded.arrays()["x"] < 0).any())
    assert (known.classify([rec])[0][0]["verdict"] == "known") == negative


def test_a_value_condition_reads_the_batched_array_a_vmap_check_hands_the_framework(tmp_path):
    """A vmap check batches x as batched_x and never passes the unbatched draw x: seed 1's whole-domain
    hyp1f1-61e50a4f1840 (float32 vmap, in_dims [0, None, 0]) drew x = 124.6 but batched_x = -25.65,
    where JAX's hyp1f1 is inf (exact 5.1e14); min < 0 reads batched_x. Drawn the other way round
    (x negative, batched_x positive) it does not hold; x unbatched (in_dims None) it reads x."""
    known = load_known(_known(tmp_path, NEGATIVE_X))
    reached = {"op": "hyp1f1", "params": {"domain": "whole", "in_dims": [0, None, 0], "values": "large",
               "vmap_size": 1}, "shapes": {"a": [], "b": [], "x": []}, "dtype": "float32", "seed": 9935,
               "checks": ["vmap"]}  # fmt: skip
    case = Case.from_dict(reached)
    assert case.arrays()["x"] > 0 > case.arrays()["batched_x"][0]
    rec = {**_hyper_rec("hyp1f1", (0, 0, 0), "float32"), "check": "vmap", "case": case.to_dict()}

    def drawn(seed, dims):  # seed 3 draws x = -23.1 and batched_x = 11.1
        raw = {**reached, "seed": seed, "params": {**reached["params"], "in_dims": dims}}
        return {**rec, "case_id": f"seed{seed}-{dims[2]}", "case": Case.from_dict(raw).to_dict()}

    other = Case.from_dict({**reached, "seed": 3}).arrays()
    assert other["x"] < 0 < other["batched_x"][0]
    out, _ = known.classify([rec, drawn(3, [0, None, 0]), drawn(3, [0, None, None])])
    assert [r["verdict"] for r in out] == ["known", "fail", "known"]


def test_a_value_condition_reads_the_arrays_of_the_results_own_check(tmp_path):
    """One case run by a forward and a vmap check: the forward result is judged on the x its check
    hands the framework (positive), the vmap result on batched_x (negative); neither on the other's."""
    known = load_known(_known(tmp_path, NEGATIVE_X))
    raw = {"op": "hyp1f1", "params": {"domain": "whole", "in_dims": [0, None, 0], "values": "large",
           "vmap_size": 1}, "shapes": {"a": [], "b": [], "x": []}, "dtype": "float32", "seed": 9935,
           "checks": ["forward", "vmap"]}  # fmt: skip
    case = Case.from_dict(raw)
    assert case.arrays()["x"] > 0 > case.arrays()["batched_x"][0]
    base = {**_hyper_rec("hyp1f1", (0, 0, 0), "float32"), "case": case.to_dict()}
    results = [{**base, "check": check, "case_id": f"c-{check}"} for check in ("forward", "vmap")]
    out, _ = known.classify(results)
    assert [r["verdict"] for r in out] == ["fail", "known"]


@pytest.mark.parametrize(
    "entry_id, departing, planted",
    [
        ("jax-hyp1f1-at-negative-x",
         [("hyp1f1", (0.5, 1.5, -150.0), "float64"), ("hyp1f1", (0.5, 1.5, -20.0), "float32")],
         ("hyp1f1", (0.5, 1.5, 20.0), "float32")),
        ("jax-hyp2f1-taylor-series-at-x-below-minus-one",
         [("hyp2f1", (0.5, 1.5, 2.5, -3.0), "float64"), ("hyp2f1", (0.5, 1.5, 2.5, -0.9999962), "float32")],
         ("hyp2f1", (0.5, 1.5, 2.5, 0.5), "float32")),
    ],
)  # fmt: skip
def test_the_shipped_hypergeometric_entries_hold_the_sign_of_x(entry_id, departing, planted):
    """The two entries' reproducers' points (refgrad/cases/reproducers/jax-hypergeometric-special9.py,
    B and D) are in their regions (the Taylor entry's: with its per-dtype siblings, -float32 ...);
    a failure planted at positive x is not: it stays a failure."""
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id == entry_id or e.id.startswith(f"{entry_id}-float")
                     or e.id == f"{entry_id}-bfloat16"]  # fmt: skip
    out, summary = known.classify([_hyper_rec(*point) for point in departing])
    assert [r["verdict"] for r in out] == ["known"] * len(departing), summary
    out, _ = known.classify([_hyper_rec(*planted)])
    assert out[0]["verdict"] == "fail"


def test_absmin_holds_where_some_element_is_near_zero_of_either_sign(tmp_path):
    """values.a.absmin < 0.2 reads the element nearest 0, whatever its sign: it holds at a = -0.05
    beside a = 3 and not where every |a| >= 0.2 (a = -0.25, 0.2: the comparison is strict)."""
    entry = {
        **NEGATIVE_X,
        "match": {"op": "hyp1f1", "where": [{"path": "values.a.absmin", "op": "<", "value": 0.2}]},
    }
    known = load_known(_known(tmp_path, entry))
    near, far = (_hyper_rec("hyp1f1", (0.5, 1.5, 2.0)) for _ in range(2))
    near["case"] = Case.from_dict({**near["case"], "shapes": {"a": [2], "b": [2], "x": [2]},
                                   "data": {"a": [3.0, -0.05], "b": [1.5, 1.5], "x": [2.0, 2.0]}}).to_dict()  # fmt: skip
    far["case"] = Case.from_dict({**far["case"], "shapes": {"a": [2], "b": [2], "x": [2]},
                                  "data": {"a": [-0.25, 0.2], "b": [1.5, 1.5], "x": [2.0, 2.0]}}).to_dict()  # fmt: skip
    out, _ = known.classify([{**near, "case_id": "near"}, {**far, "case_id": "far"}])
    assert [r["verdict"] for r in out] == ["known", "fail"]


def test_absmin_and_absmax_of_a_complex_input_read_the_moduli_and_min_max_do_not_hold(tmp_path):
    """values.input.absmin < 1e-19 of a complex input reads |z|: it holds at z = 3e-20 + 4e-20i
    (|z| = 5e-20) beside 1 + 1i, not at 1e-19 + 1e-19i (|z| = 1.4e-19, each part below 1e-19);
    values.input.min has no value on complex numbers and holds nowhere."""

    def rec(z):
        case = {"op": "abs", "shapes": {"input": [len(z)]}, "dtype": "complex64",
                "data": {"input": {"real": [v.real for v in z], "imag": [v.imag for v in z]}}}  # fmt: skip
        return {"case_id": f"abs-{z}", "framework": "tensorflow", "version": "2.21.0", "check": "vjp",
                "dtype": "complex64", "verdict": "fail", "reason": "outside the bound",
                "case": Case.from_dict(case).to_dict()}  # fmt: skip

    def entry(path):
        return {"id": f"tf-tiny-{path}", "framework": "tensorflow", "verdict": "fail",
                "reason": "TensorFlow departs where some |z| is below 1e-19",
                "match": {"op": "abs", "where": [{"path": path, "op": "<", "value": 1e-19}]}}  # fmt: skip

    points = [[3e-20 + 4e-20j, 1 + 1j], [1e-19 + 1e-19j]]
    out, _ = load_known(_known(tmp_path, entry("values.input.absmin"))).classify([rec(z) for z in points])
    assert [r["verdict"] for r in out] == ["known", "fail"]
    out, _ = load_known(_known(tmp_path, entry("values.input.min"))).classify([rec(z) for z in points])
    assert [r["verdict"] for r in out] == ["fail", "fail"]


def test_the_shipped_infinite_a_entry_holds_a_timeout_only_where_some_element_of_a_is_infinite():
    """JAX's hyp2f1 loops to |a| + 1 for every element: a = -inf hangs as +inf does (absmax); a timeout
    planted at finite a stays a timeout."""
    known = load_known(SHIPPED)
    known.entries = [
        e for e in known.entries if e.id == "jax-hyp2f1-terminal-series-loop-never-ends-at-infinite-a"
    ]
    points = [(-math.inf, 0.8, 1.5, 0.45), (math.inf, 0.8, 1.5, 0.45), (3.0, 0.8, 1.5, 0.45)]
    out, _ = known.classify([_hyper_rec("hyp2f1", p, "float16", verdict="timeout") for p in points])
    assert [r["verdict"] for r in out] == ["known", "known", "timeout"]


@pytest.mark.parametrize(
    "entry_id, departing, planted",
    [
        ("jax-hyp1f1-b-derivative-digamma-difference-at-large-b",
         ("hyp1f1", (6.913722, 112.268646, 44.859135), "float32"), ("hyp1f1", (6.913722, 2.0, 44.859135), "float32")),
        ("jax-hyp2f1-c-derivative-digamma-difference-at-large-c",
         ("hyp2f1", (1.5, 2.0, 100.0, 0.5), "float64"), ("hyp2f1", (1.5, 100.0, 3.0, 0.5), "float64")),
    ],
)  # fmt: skip
def test_the_shipped_large_lower_parameter_entries_hold_where_it_is_at_least_4(entry_id, departing, planted):
    """The reproducer's points (b = 112.3, c = 100) are in the entries' regions; a failure planted
    where the lower parameter is small (b = 2; c = 3 beside an upper b = 100) stays a failure."""
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id == entry_id]
    out, _ = known.classify([{**_hyper_rec(*point), "check": "vjp", "case_id": str(i)}
                             for i, point in enumerate((departing, planted))])  # fmt: skip
    assert [r["verdict"] for r in out] == ["known", "fail"]


@pytest.mark.parametrize(
    "entry_id, framework, op, point, check",
    [
        ("tf-xlogy-gradient-at-x-zero", "tensorflow", "xlogy", "input:x = 0", "vjp"),
        ("tf-xlogy-gradient-at-x-zero", "tensorflow", "xlog1py", "input:x = 0", "vjp"),
        ("jax-hypergeometric-mixed-derivative-at-x-zero", "jax", "hyp1f1", "x:x = 0", "jvp_vjp"),
        ("jax-hypergeometric-mixed-derivative-at-x-zero", "jax", "hyp2f1", "x:x = 0", "jvp_vjp"),
    ],
)  # fmt: skip
def test_the_shipped_at_x_zero_entries_hold_the_sweeps_at_cell_and_not_its_near_cell(
    entry_id, framework, op, point, check
):
    """The entries whose departure lives on x = 0 exactly (TensorFlow's masked x-gradient of xlogy,
    JAX's empty parameter-derivative series) hold an exact 0 in x: the reach sweep's ``at`` case of
    the point x = 0 is in the region; the same point's ``near`` case (x within 2^-4 of 0, never on
    it) is not, so a failure planted there stays a failure."""
    from conformance.case import DTYPES
    from conformance.executors.plan import fuzz_units
    from conformance.ops import AT, NEAR, RECORD_CHECKS
    from conformance.runner import _hypothesis

    version = {"tensorflow": "2.21.0", "jax": "jax 0.10.2, jaxlib 0.10.2"}[framework]
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id == entry_id]
    records = []
    for unit in fuzz_units([op], [op], RECORD_CHECKS, DTYPES, 1, 0):
        if unit.point == point:
            cases = []
            _hypothesis(
                cases.append, unit.strategy(), unit.max_examples, unit.seed, shrink=False, simplest=True
            )()
            (case,) = cases
            records.append({"case_id": unit.point_kind, "framework": framework, "version": version,
                            "check": check, "dtype": case.dtype, "verdict": "fail",
                            "reason": "value outside the bound", "case": {**case.to_dict(), "checks": [check]}})  # fmt: skip
    assert sorted(r["case_id"] for r in records) == sorted([AT, NEAR])
    out, _ = known.classify(records)
    assert {r["case_id"]: r["verdict"] for r in out} == {AT: "known", NEAR: "fail"}


# ---- overlapping entries ---------------------------------------------------------------------------
def test_a_planted_overlap_is_listed_with_every_entry_and_the_report_warns(tmp_path):
    """A result that two entries match is claimed by the first, and both are listed: by
    KnownSet.overlaps per result, in the classify summary per group (which the CI lines print),
    and by overlaps_in_run on a results directory; a result one entry matches is not listed."""
    from conformance.cli import _gate_lines
    from conformance.known import overlaps_in_run

    wide = {**NEGATIVE_X, "id": "wide-any-hyp1f1", "match": {"op": "hyp1f1"}}
    known = load_known(_known(tmp_path, wide, NEGATIVE_X))
    negative = {**_hyper_rec("hyp1f1", (0.5, 1.5, -150.0)), "case_id": "negative"}
    positive = {**_hyper_rec("hyp1f1", (0.5, 1.5, 2.0)), "case_id": "positive"}
    passing = {**_hyper_rec("hyp1f1", (0.5, 1.5, -3.0), verdict="pass"), "case_id": "passing"}
    records = [negative, positive, passing]
    listed = known.overlaps(records)
    assert [(o["case_id"], o["op"], o["check"], o["entries"]) for o in listed] == [
        ("negative", "hyp1f1", "forward", ["wide-any-hyp1f1", "jax-negative-x"])
    ]
    out, summary = known.classify(records)
    assert [r.get("known", {}).get("id") for r in out] == ["wide-any-hyp1f1", "wide-any-hyp1f1", None]
    assert summary["overlaps"] == [
        {"entries": ["wide-any-hyp1f1", "jax-negative-x"], "results": 1, "cases": ["negative"]}
    ]
    lines = _gate_lines({"totals": {"known": 2}, "known": {**summary, "strict": True}})
    warning = "  overlap: 1 result(s) match 'wide-any-hyp1f1' (which claims them) and 'jax-negative-x'"
    assert any(line.startswith(warning) for line in lines), lines
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert overlaps_in_run(run, known) == listed
    # the narrower entry first: each result is claimed by one entry's mechanism, the overlap still listed
    known = load_known(_known(tmp_path, NEGATIVE_X, wide, name="narrow-first.json"))
    out, summary = known.classify(records)
    assert [r.get("known", {}).get("id") for r in out] == ["jax-negative-x", "wide-any-hyp1f1", None]
    assert summary["overlaps"][0]["entries"] == ["jax-negative-x", "wide-any-hyp1f1"]


def _point_rec(op, point, dtype, check, values, reason, point_name=None):
    """A JAX result of the reach sweep's kind (domain whole, ``values`` at, near or ties) at one point."""
    names = {"hyp1f1": ("a", "b", "x"), "hyp2f1": ("a", "b", "c", "x")}.get(op, ("input",))
    params = {"domain": "whole", "values": values, **({"point": point_name} if point_name else {})}
    case = {"op": op, "params": params, "shapes": {n: [] for n in names}, "dtype": dtype,
            "data": {n: v for n, v in zip(names, point)}}  # fmt: skip
    return {
        "case_id": f"{op}-{point}-{dtype}-{check}", "framework": "jax", "version": "jax 0.10.2, jaxlib 0.10.2",
        "check": check, "dtype": dtype, "verdict": "fail", "reason": reason,
        "case": Case.from_dict(case).to_dict(),
    }  # fmt: skip


A, B, C = -0.18676839768886566, 0.08106234669685364, -0.19417297840118408  # the reach sweep's base draw


@pytest.mark.parametrize(
    "op, point, dtype, check, values, reason, claimed_by",
    [
        # claimed by the nonpositive-integer entry (its mechanism) before and after it was narrowed
        ("hyp1f1", (0.0, B, -0.6485388875007629), "float32", "vjp", "at",
         "grad_a[]=-0.0 but reference says 5.000370101657515", "jax-hypergeometric-at-nonpositive-integer-upper-parameter"),
        # 1F1 at a pole of b with x > 0 and x in (-0.8633, 0): the pole entry's, not the
        # upper-parameter entry's, which claimed it while its region held any b (harness26)
        ("hyp1f1", (0.5, -1.0, 0.0377), "float32", "vjp", "near",
         "grad_a[]=0.0 but reference says nan", "jax-hyp1f1-series-at-a-pole-of-b"),
        ("hyp1f1", (0.5, -1.0, -0.5), "float32", "vjp", "ties",
         "grad_a[]=0.0 but reference says nan", "jax-hyp1f1-series-at-a-pole-of-b"),
        # 2F1's terminating b = -1 (hyp2f1-125ef6472768): the b entry since the upper-parameter
        # entry holds values.b.negint == 0 (1F1's negative integer b is a pole; harness26)
        ("hyp2f1", (A, -1.0, C, 0.3514611277690688), "float64", "jvp_jvp", "at",
         "tangent2_output[]=nan but reference says 5.262751950988267e+77", "jax-hyp2f1-parameter-derivative-at-nonpositive-integer-b"),
        # the reach sweep's x points, which it claimed while its region was every ties/near/at draw
        ("hyp2f1", (A, B, C, 0.0), "float32", "jvp_vjp", "at",
         "tangent_grad_b[]=0.0 but reference says -0.8418375762463143", "jax-hypergeometric-mixed-derivative-at-x-zero"),
        ("hyp1f1", (A, B, -100.0), "float64", "vjp", "at",
         "grad_x[]=nan but reference says 1040.5532435088578", "jax-hyp1f1-at-negative-x"),
        ("hyp1f1", (-0.1865234375, 0.0810546875, -98.5), "bfloat16", "forward", "near",
         "output[]=7.6e+35 but reference says 62774.32233317478", "jax-hyp1f1-at-negative-x"),
        ("hyp2f1", (A, B, C, -0.9999923706054688), "float32", "jvp_vjp", "near",
         "tangent_grad_x[]=11.6699295 but reference says 11.669792061956853", "jax-hyp2f1-taylor-series-at-x-below-minus-one-float32"),
        # bfloat16 at x = -0.867, far above bfloat16's Taylor threshold -0.9780 (hyp2f1-a3de2c0f7253);
        # 1F1 at the pole b = -1, x negative (hyp1f1-08cb7d2e9278), which the negative-x entry claimed
        ("hyp2f1", (A, B, C, -0.8671875), "bfloat16", "jvp_vjp", "ties",
         "tangent_grad_c[]=-85983232.0 but reference says 72835749.94592658", "jax-hypergeometric-half-precision-series"),
        ("hyp1f1", (4.76837158203125e-07, -1.0, -1.3692489862442017), "float32", "forward", "near",
         "output[]=1.0 but reference says nan", "jax-hyp1f1-series-at-a-pole-of-b"),
        # sinc: cancellation near 0, the rounding of pi x at 1016
        ("sinc", (1e-8,), "float64", "jvp_jvp", "near",
         "tangent2_output[]=-4.0 but reference says -3.2898681336964524", "jax-sinc-derivatives-cancel-near-zero"),
        ("sinc", (1016.0,), "bfloat16", "jvp", "near",
         "tangent_output[]=-1.17e-06 but reference says 0.0003037340059055118", "jax-half-precision-sinc-derivative-at-large-argument"),
        # ndtri: the approximation's derivative off by ulps; 0 at the pole where it is -inf
        ("ndtri", (0.3,), "float32", "vjp", "normal",
         "grad_input[]=2.8849 but reference says 2.8848", "jax-ndtri-derivative-of-the-approximation"),
        ("ndtri", (0.0,), "float32", "vjp", "at",
         "grad_input[]=0.0 but reference says -inf", "jax-zero-derivative-at-infinite-argument-or-pole"),
    ],
)  # fmt: skip
def test_the_shipped_file_gives_each_overlapping_result_to_the_entry_of_its_mechanism(
    op, point, dtype, check, values, reason, claimed_by
):
    """Results of the reach sweep of the 103 records with points (pointclass24's final run) that
    several shipped entries match: the first match, the one the report names, is the entry whose mechanism the
    result shows (the wider regions were narrowed: values.x.absmin > 0 and values.x.min > -0.8633
    on the hypergeometric entries, values.input.absmin < 0.78 on sinc's cancellation, a finite
    reference on ndtri's approximation)."""
    known = load_known(SHIPPED)
    (matched, *_) = known.matching(_point_rec(op, point, dtype, check, values, reason))
    assert matched.id == claimed_by


@pytest.mark.parametrize(
    "x, taylor",
    [(-0.9, {"float64"}), (-0.95, {"float64", "float32"}), (-0.975, {"float64", "float32", "float16"}),
     (-0.98, {"float64", "float32", "float16", "bfloat16"})],
)  # fmt: skip
def test_the_taylor_entries_hold_each_dtypes_threshold(x, taylor):
    """The truncated Taylor series of hyp2f1 departs where |x|^250 reaches the dtype's unit roundoff u,
    x <= -u^(1/250): -0.8633 (float64), -0.9356 (float32), -0.9699 (float16), -0.9780 (bfloat16). A
    failure at x is claimed by a Taylor entry in the dtypes past their threshold; in the others by
    another entry (the half-precision rounding) or none."""
    known = load_known(SHIPPED)
    claimed = {}
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        hits = known.matching(_hyper_rec("hyp2f1", (0.5, 1.5, 2.5, x), dtype))
        claimed[dtype] = hits[0].id if hits else None
    assert {d for d, i in claimed.items() if i and "taylor-series" in i} == taylor, claimed
    half = {d for d in ("float16", "bfloat16") if d not in taylor}
    assert all(claimed[d].startswith("jax-hypergeometric-half-precision-series") for d in half), claimed


def test_negint_counts_the_negative_integer_elements(tmp_path):
    """values.b.negint > 0 holds where some element of b is a negative integer (b = -1 beside 0.5),
    not at -1.5, 0, -inf (no integer) or with a NaN element; == 0 where none is."""

    def entry(op):
        where = [{"path": "values.b.negint", "op": op, "value": 0}]
        return {**NEGATIVE_X, "match": {"op": "hyp1f1", "where": where}}

    rows = {"pole": [0.5, -1.0], "half": [-1.5, 0.5], "zero": [0.0, 0.5], "inf": [-math.inf, 0.5],
            "nan": [-1.0, math.nan]}  # fmt: skip

    def rec(name, b):
        case = Case.from_dict({"op": "hyp1f1", "shapes": {"a": [2], "b": [2], "x": [2]}, "dtype": "float64",
                               "data": {"a": [0.5, 0.5], "b": b, "x": [0.3, 0.3]}}).to_dict()  # fmt: skip
        return {**_hyper_rec("hyp1f1", (0.5, 1.5, 0.3)), "case_id": name, "case": case}

    records = [rec(n, b) for n, b in rows.items()]
    out, _ = load_known(_known(tmp_path, entry(">"))).classify(records)
    assert [r["verdict"] for r in out] == ["known", "fail", "fail", "fail", "fail"]
    out, _ = load_known(_known(tmp_path, entry("=="), name="none.json")).classify(records)
    assert [r["verdict"] for r in out] == ["fail", "known", "known", "known", "fail"]


def _jax_conv_rec(padding, transposed=False):
    """A JAX float32 vjp failure of a conv case with ``padding`` (rank = its number of pairs)."""
    rank = len(padding)
    weight = ([3, 8] if transposed else [8, 3]) + [2] * rank
    params = {"rank": rank, "padding": padding, "transposed": transposed}
    case = {"op": "conv", "params": params, "shapes": {"input": [2, 3] + [6] * rank, "weight": weight}}
    return {
        "case_id": f"conv-{padding}-{transposed}", "framework": "jax", "version": "jax 0.10.2, jaxlib 0.10.2",
        "check": "vjp", "dtype": "float32", "verdict": "fail",
        "reason": "grad_weight[0,8,0,1,0]=-3.87 but reference says 0.763 (ratio 4e6 > bound 1)",
        "case": Case.from_dict({**case, "dtype": "float32"}).to_dict(),
    }  # fmt: skip


@pytest.mark.parametrize(
    "padding, transposed, claimed_by",
    [([[-1, 1]], False, "jax-conv1d-mixed-sign-padding-wrong-values"),
     ([[-1, 1]], True, "jax-conv-transpose1d-mixed-sign-padding-input-gradient"),
     ([[-1, 2]], False, None), ([[-1, 2]], True, None),
     ([[0, 0], [-1, 1]], False, "jax-conv2d-mixed-sign-padding-wrong-values"),
     ([[0, 0], [-1, 2]], False, None), ([[-1, 2], [0, 0]], False, None),
     ([[-1, 1], [-1, 2]], False, "jax-conv2d-mixed-sign-padding-wrong-values-first-dim")],
)  # fmt: skip
def test_the_mixed_sign_padding_entries_claim_a_pad_no_larger_than_the_crop(padding, transposed, claimed_by):
    """XLA:CPU's low-dtype convolution departs at a (low, high) pair with 0 < high <= -low ((-1, 1)
    wrong, (-1, 2) right in every draw tried, rank 1 and 2, forward, weight gradient and a transposed
    convolution's input gradient: review27): a failure at (-1, 2) is no entry's, and a 2-d case with
    (-1, 1) on dim 0 and (-1, 2) on dim 1 is the first-dim entry's (conv-5eb965f873e6's padding).
    These cases have stride 1, where the pads read are the pads drawn (test_conv_pads_read.py: with a
    stride, the law reads the pads the windows read)."""
    hits = load_known(SHIPPED).matching(_jax_conv_rec(padding, transposed))
    assert (hits[0].id if hits else None) == claimed_by, [e.id for e in hits]


def _igamma_rec(op, framework, check, reason, a=(0.0, 0.5)):
    """A ``framework`` result of ``op`` at a = ``a``, x = (0.3473, 1.0) (explicit data), float32."""
    case = {
        "op": op,
        "shapes": {"input": [2], "other": [2]},
        "dtype": "float32",
        "data": {"input": list(a), "other": [0.3473, 1.0]},
        "params": {"values": "at"},
    }
    version = {"jax": "jax 0.10.2, jaxlib 0.10.2", "tensorflow": "2.21.0"}[framework]
    return {"case_id": f"{op}-{check}", "framework": framework, "version": version, "check": check,
            "dtype": "float32", "verdict": "fail", "reason": reason, "case": Case.from_dict(case).to_dict()}  # fmt: skip


@pytest.mark.parametrize(
    "op, framework, check, reason, a, claimed_by",
    [("gammainc", "jax", "vjp", "grad_input[0]=nan but reference says 0.663", (0.0, 0.5),
      "jax-igamma-a-derivative-nan-at-a-zero"),
     ("gammainc", "jax", "vjp", "grad_input[1]=0.5 but reference says 0.66 (ratio 9 > bound 1)", (0.0, 0.5), None),
     ("gammaincc", "tensorflow", "jvp", "tangent_output[1]=0.1 but reference says 0.2 (ratio 9 > bound 1)", (0.0, 0.5),
      None),
     ("gammainc", "jax", "forward", "output[0]=nan but reference says 1.0", (0.0, 0.5), "jax-igamma-value-nan-at-a-zero"),
     ("gammainc_x", "jax", "forward", "output[0]=nan but reference says 1.0", (0.0, 0.5), "jax-igamma-value-nan-at-a-zero"),
     ("gammaincc", "jax", "forward", "output[0]=nan but reference says 0.0", (0.0, 0.5), None),
     ("gammainc", "jax", "forward", "output[0]=nan but reference says 1.0", (0.25, 0.5), None),
     # a subnormal a (the smallest float32) gives the same nan; the smallest normal is outside the region,
     # and a failure there is jax-igamma-at-a-below-e-times-the-smallest-normal's (JAX's P is 0 up to
     # e times it, x < 1)
     ("gammainc", "jax", "forward", "output[0]=nan but reference says 1.0", (1.401298464324817e-45, 0.5),
      "jax-igamma-value-nan-at-a-zero"),
     ("gammaincc", "tensorflow", "vjp", "grad_input[0]=nan but reference says -0.6", (1.401298464324817e-45, 0.5),
      "tf-igamma-a-derivative-nan-at-a-zero"),
     ("gammainc", "jax", "forward", "output[0]=0.0 but reference says 1.0", (1.1754943508222875e-38, 0.5),
      "jax-igamma-at-a-below-e-times-the-smallest-normal"),
     ("gammaincc", "tensorflow", "forward", "output[0]=nan but reference says 0.0", (0.0, 0.5),
      "tf-igamma-value-nan-at-a-zero"),
     ("gammaincc_x", "tensorflow", "jvp", "tangent_output[0]=nan but reference says -0.0", (0.0, 0.5),
      "tf-igamma-x-forward-mode-nan-at-a-zero")],
)  # fmt: skip
def test_the_incomplete_gamma_entries_at_a_zero_claim_its_nan(op, framework, check, reason, a, claimed_by):
    """At a = 0 JAX and TensorFlow say nan: the a-derivative (both), P(0, x) = 1 (both), Q(0, x) = 0
    (TensorFlow), TensorFlow's forward mode in x alone (review27: the values and the forward mode
    failed a default `--checks forward` run with no entry). The entries claim that nan and nothing
    else: a finite failure of a case with a = 0 somewhere, JAX's right Q(0, x) or a nan at a != 0 is
    no entry's (they matched 'but reference says', any failure)."""
    hits = load_known(SHIPPED).matching(_igamma_rec(op, framework, check, reason, a))
    assert (hits[0].id if hits else None) == claimed_by, [e.id for e in hits]


@pytest.mark.parametrize(
    "point, dtype, check, values, reason, claimed_by",
    [((0.5, -1.0, 1.5, 0.25), "float64", "jvp", "at", "tangent_output[]=nan but reference says 0.0767",
      "jax-hyp2f1-parameter-derivative-at-nonpositive-integer-b"),
     ((0.5, -1.0, 1.5, 0.25), "float64", "forward", "at", "output[]=0.9 but reference says 0.9166666666666666", None),
     ((0.5, -1.0, 1.5, 0.25), "float64", "vjp", "at", "grad_x[]=-0.3 but reference says -0.3333333333333333", None),
     ((-1.0, 0.5, 1.5, -0.9), "float32", "vjp", "ties", "grad_a[]=nan but reference says -0.3679",
      "jax-hypergeometric-at-nonpositive-integer-upper-parameter-float32"),
     ((-1.0, 0.5, 1.5, -0.9), "float32", "forward", "ties", "output[]=1.4 but reference says 1.3", None),
     ((-1.0, 0.5, 1.5, -0.9), "float16", "forward", "ties", "output[]=1.4 but reference says 1.3",
      "jax-hypergeometric-half-precision-series")],
)  # fmt: skip
def test_the_terminating_hyp2f1_entries_claim_its_derivatives_only(
    point, dtype, check, values, reason, claimed_by
):
    """At a nonpositive integer a or b 2F1 is a polynomial and JAX's value is right (1 - a x / c,
    1.2999999523 for 1.3 in float32): only its parameter derivative departs, as nan at b = -1. The
    harness26 entries for b and for a below float64's Taylor threshold held every check (review27); a
    float16 value there is the half-precision rounding's."""
    hits = load_known(SHIPPED).matching(_point_rec("hyp2f1", point, dtype, check, values, reason))
    assert (hits[0].id if hits else None) == claimed_by, [e.id for e in hits]


def _betainc_rec(check, reason, a, b):
    """A TensorFlow float32 result of betainc at (a, b, x = 0.5) (explicit one-element data)."""
    case = {"op": "betainc", "shapes": {"a": [1], "b": [1], "x": [1]}, "dtype": "float32",
            "data": {"a": [a], "b": [b], "x": [0.5]}, "params": {"values": "ties"}}  # fmt: skip
    return {"case_id": f"betainc-{a}-{b}-{check}", "framework": "tensorflow", "version": "2.21.0", "check": check,
            "dtype": "float32", "verdict": "fail", "reason": reason, "case": Case.from_dict(case).to_dict()}  # fmt: skip


@pytest.mark.parametrize(
    "check, reason, a, b, claimed_by",
    [("forward", "output[0]=nan but reference says 1.0", 0.0, 2.0, "tf-betainc-nan-at-a-zero"),
     ("jvp_jvp", "tangent2_output[0]=nan but reference says -0.0", 2.0, 0.0, "tf-betainc-nan-at-b-zero"),
     ("forward", "output[0]=0.9 but reference says 1.0 (ratio 9 > bound 1)", 0.0, 2.0, None),
     ("vjp", "grad_x[0]=nan but reference says 0.0", 0.0, 2.0, None),
     ("forward", "output[0]=nan but reference says 0.5", 1.0, 1.0, None)],
)  # fmt: skip
def test_the_betainc_entries_at_a_or_b_zero_claim_its_nan(check, reason, a, b, claimed_by):
    """TensorFlow's betainc is nan at a = 0 (where it is 1) or b = 0 (0), and so is its forward
    over forward derivative in x (review27: a default run failed them with no entry, once
    specbound26 made the bound there finite); its first derivative, right, and other failures are
    no entry's."""
    hits = load_known(SHIPPED).matching(_betainc_rec(check, reason, a, b))
    assert (hits[0].id if hits else None) == claimed_by, [e.id for e in hits]


@pytest.mark.parametrize(
    "s, params, reason, claimed",
    [([1.0], {"domain": "whole", "values": "at", "point": "input:pole s = 1"}, "grad_other[0]=nan but reference says -9.37", True),
     ([1.0, 1.5], {"domain": "whole", "values": "near"}, "grad_other[0]=nan but reference says -9.37", True),
     ([1.0, 1.5], {"domain": "whole", "values": "near"}, "grad_other[1]=-2.1 but reference says -2.2 (ratio 9 > bound 1)", False),
     ([1.5, 2.0], {"values": "ties"}, "grad_other[0]=nan but reference says -2.2", False)],
)  # fmt: skip
def test_the_zeta_entry_claims_the_q_derivatives_nan_at_every_element_on_s_one(s, params, reason, claimed):
    """JAX's q-derivative of zeta is nan at s = 1, wherever the element came from: the reach sweep's
    'at' case, or the whole-domain near kind (1 in 16 elements exactly on the point), which the
    entry's params.point region left out (review27); only the nan, only with an element on s = 1."""
    n = len(s)
    case = {"op": "zeta_q", "shapes": {"input": [n], "other": [n]}, "dtype": "float32", "params": params,
            "data": {"input": s, "other": [0.3473, 2.0][:n]}}  # fmt: skip
    rec = {"case_id": "zeta_q", "framework": "jax", "version": "jax 0.10.2, jaxlib 0.10.2", "check": "vjp",
           "dtype": "float32", "verdict": "fail", "reason": reason, "case": Case.from_dict(case).to_dict()}  # fmt: skip
    hits = [e.id for e in load_known(SHIPPED).matching(rec)]
    assert ("jax-zeta-q-derivative-nan-at-s-one" in hits) == claimed, hits


@pytest.mark.parametrize(
    "framework, op, a, x, reason, claimed_by",
    [("tensorflow", "gammaincc", math.inf, math.inf, "output[]=0.0 but reference says nan", "tf-igamma-at-infinite-a-and-x"),
     ("jax", "gammainc", math.inf, math.inf, "output[]=1.0 but reference says nan", "jax-igamma-at-infinite-a-and-x"),
     ("jax", "gammainc", math.inf, 2.0, "output[]=1.0 but reference says nan", None),
     ("tensorflow", "gammaincc", math.inf, math.inf, "output[]=0.5 but reference says nan", None)],
)  # fmt: skip
def test_the_incomplete_gamma_entries_at_infinite_a_and_x(framework, op, a, x, reason, claimed_by):
    """P and Q have no value at a = x = inf (nan: PyTorch, SciPy); TensorFlow gives 0 and 0, JAX 1
    and 0 (review27: a default run failed TensorFlow's with no entry)."""
    case = {
        "op": op,
        "shapes": {"input": [], "other": []},
        "dtype": "float32",
        "data": {"input": a, "other": x},
    }
    version = {"jax": "jax 0.10.2, jaxlib 0.10.2", "tensorflow": "2.21.0"}[framework]
    rec = {"case_id": op, "framework": framework, "version": version, "check": "forward", "dtype": "float32",
           "verdict": "fail", "reason": reason, "case": Case.from_dict(case).to_dict()}  # fmt: skip
    hits = load_known(SHIPPED).matching(rec)
    assert (hits[0].id if hits else None) == claimed_by, [e.id for e in hits]


def test_the_tensorflow_adjoint_solve_entry_claims_finite_differences_only():
    """tf-solve-adjoint-factors-the-adjoint is pivot growth on A^H: finite values a little off. A
    nan or an infinity from TensorFlow's solve is another departure and stays a failure."""
    known = load_known(SHIPPED)
    case = {
        "op": "linalg_lu_solve",
        "params": {"left": True, "adjoint": True},
        "shapes": {"LU": [3, 3], "B": [3, 2]},
        "dtype": "float64",
    }

    def rec(observed):
        return {
            **_rec(check="forward", dtype="float64"),
            "case": case,
            "reason": f"output[0,1]={observed} but reference says 0.004021757801882758 (3.1e+04 ulps of float64; "
            "ratio 99.8 > bound 1)",
        }

    out, _ = known.classify([rec("0.004021757801891413"), rec("nan"), rec("-inf")])
    assert [r["verdict"] for r in out] == ["known", "fail", "fail"]


def test_tensorflow_sinc_nan_gradient_at_an_exact_zero_is_claimed_by_its_value_not_its_draw_kind():
    """The whole domain's removable point of sinc draws x = 0 (values 'at'), outside the 'tiny' and
    'ties' draws of tf-sinc-derivatives-near-zero; TensorFlow's gradient there is nan (seed 0 of
    `--ops sinc`). tf-sinc-gradient-nan-at-zero claims it by the input's value (some element ±0) and
    the nan; a finite wrong value at 0 is not claimed."""
    known = load_known(SHIPPED)
    case = {
        "op": "sinc",
        "params": {"domain": "whole", "point": "input:removable 0", "values": "at"},
        "shapes": {"input": []},
        "dtype": "float32",
        "seed": 0,
        "checks": ["vjp"],
    }

    def rec(observed):
        return {
            **_rec(check="vjp"),
            "case_id": "sinc-13436d772dcf",
            "case": case,
            "reason": f"grad_input[]={observed} but reference says 0.0 (inf ulps of float32; ratio inf > bound 1)",
        }

    out, _ = known.classify([rec("nan"), rec("0.25")])
    assert [r["verdict"] for r in out] == ["known", "fail"]
    assert out[0]["known"]["id"] == "tf-sinc-gradient-nan-at-zero"


@pytest.mark.parametrize(
    "entry_id, check, departing, planted",
    [
        # the seeded run's point (b = 157.5 at x = 117.2); b = 7.9 with a = 0.5 is within the bound
        ("jax-hyp1f1-asymptotic-branch-at-large-b", "forward",
         ("hyp1f1", (28.56175248129361, 157.48333015127362, 117.20819161144931), "float64"),
         ("hyp1f1", (0.5, 7.9, 117.2), "float64")),
        # a = -12.5 at x = 100; the same a at x = 99 (the Taylor series) is not this branch
        ("jax-hyp1f1-asymptotic-branch-at-large-a", "forward",
         ("hyp1f1", (-12.5, 2.0, 100.0), "float64"), ("hyp1f1", (-12.5, 2.0, 99.0), "float64")),
        # float32's e^100 overflows; float64 is the float64 entries' (b = 5.5 is within their bound)
        ("jax-hyp1f1-asymptotic-branch-overflows-below-float64", "forward",
         ("hyp1f1", (0.5, 5.5, 100.0), "float32"), ("hyp1f1", (0.5, 5.5, 100.0), "float64")),
        # the truncated parameter derivative at x = 250; at x = 120 the 250 terms reach eps
        ("jax-hyp1f1-parameter-derivative-series-stops-at-250-terms", "vjp",
         ("hyp1f1", (2.0, 3.0, 250.0), "float64"), ("hyp1f1", (2.0, 3.0, 120.0), "float64")),
    ],
)  # fmt: skip
def test_the_shipped_asymptotic_branch_entries_hold_x_from_100_and_their_parameters(
    entry_id, check, departing, planted
):
    """JAX's hyp1f1 for x >= 100 (refgrad/cases/reproducers/jax-hyp1f1-asymptotic-branch.py): the
    reproducer's points are in the entries' regions; a failure planted where the branch is accurate
    or not taken (small parameters, x below 100 or 150, float64 for the overflow entry) stays a
    failure, and so does one at an infinite x (values 'nonfinite': the nan entries')."""
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id == entry_id]
    op, point, dtype = departing
    infinite = (op, (*point[:-1], math.inf), dtype)
    out, summary = known.classify([{**_hyper_rec(*p), "check": check, "case_id": str(i)}
                                   for i, p in enumerate((departing, planted, infinite))])  # fmt: skip
    assert [r["verdict"] for r in out] == ["known", "fail", "fail"], summary


def test_the_shipped_logcumsumexp_overflow_entry_holds_tensorflows_infinity_and_not_a_finite_value():
    """tf-logcumsumexp-forward-over-reverse-tangent-over-cotangent-overflows is matched by its
    infinity (the seeded seed-1 case logcumsumexp-3ddd188123dd: -inf where -2.43e76); a finite wrong
    value, or the infinity in forward over forward, stays a failure."""
    known = load_known(SHIPPED)
    known.entries = [
        e for e in known.entries if e.id == "tf-logcumsumexp-forward-over-reverse-tangent-over-cotangent-overflows"
    ]
    case = Case.from_dict({"op": "logcumsumexp", "params": {"dim": -1, "values": "ties"}, "shapes": {"input": [32]},
                           "dtype": "float64", "seed": 52214, "checks": ["jvp_vjp"]}).to_dict()  # fmt: skip
    said = "tangent_grad_input[0]={} but reference says -2.4322686437424316e+76 (inf ulps of float64)"
    results = [
        {**_rec(check=check, dtype="float64", reason=said.format(value), case=case), "case_id": f"{check}-{value}"}
        for check, value in (("jvp_vjp", "-inf"), ("vmap_jvp_vjp", "inf"), ("jvp_vjp", "-1.2e+76"), ("jvp_jvp", "-inf"))
    ]
    out, summary = known.classify(results)
    assert [r["verdict"] for r in out] == ["known", "known", "fail", "fail"], summary


def test_the_shipped_seed_one_and_two_crash_entries_hold_their_cases_and_not_other_dtypes():
    """The README command's crashes at seeds 1 and 2: TensorFlow's abort in max_pool2d's vectorized
    forward over reverse over an empty batch (max_pool2d-fbc03cfb2151, float16, oneDNN on) and
    PyTorch's float16 dilated conv2d fault (conv-d20d9e30efe7, on an avx512_fp16 CPU) are known; the same abort in float64 (no
    oneDNN kernel), or with oneDNN off, and the same fault in float32, stay crashes."""
    known = load_known(SHIPPED)
    ids = ("tf-onednn-max-pool-forward-over-reverse-vectorized-empty-batch-aborts",
           "tf-onednn-max-pool2d-forward-over-reverse-vectorized-empty-batch-aborts-float16",
           "torch-onednn-float16-dilated-conv-segfaults")  # fmt: skip
    known.entries = [e for e in known.entries if e.id in ids]
    pool = {"op": "max_pool2d", "params": {"in_dims": [0], "kernel_size": [1, 1], "padding": [0, 0], "stride": [1, 1],
            "values": "normal", "vmap_size": 1}, "shapes": {"input": [0, 1, 1, 1]}, "seed": 0, "checks": ["vmap_jvp_vjp"]}  # fmt: skip
    conv = {"op": "conv", "params": {"rank": 2, "stride": [2, 3], "padding": [2, 2], "dilation": [1, 2]},
            "shapes": {"input": [1, 1, 1, 1], "weight": [1, 1, 1, 1]}, "seed": 3, "checks": ["vjp_vjp"]}  # fmt: skip
    abort = "tensorflow worker killed by SIGABRT; its stderr ends: Check failed: dtype() == expected_dtype (19 vs. 3)"

    def rec(case, framework, check, dtype):
        return {**_rec("crash", framework, "2.21.0" if framework == "tensorflow" else "2.13.0", check, dtype,
                       reason=abort if framework == "tensorflow" else "torch worker killed by SIGSEGV",
                       case=Case.from_dict({**case, "dtype": dtype}).to_dict()),
                "case_id": f"{case['op']}-{dtype}"}  # fmt: skip

    results = [rec(pool, "tensorflow", "vmap_jvp_vjp", "float16"), rec(pool, "tensorflow", "vmap_jvp_vjp", "float32"),
               rec(pool, "tensorflow", "vmap_jvp_vjp", "float64"), rec(conv, "torch", "vjp_vjp", "float16"),
               rec(conv, "torch", "vjp_vjp", "float32")]  # fmt: skip
    machine = {"tensorflow": {"onednn": True, "avx512_fp16": True}, "torch": {"device": "cpu", "avx512_fp16": True}}
    out, summary = known.classify(results, machine)
    assert [r["verdict"] for r in out] == ["known", "known", "crash", "known", "crash"], summary
    out, _ = known.classify(results[:1], {"tensorflow": {"onednn": False, "avx512_fp16": True}})
    assert out[0]["verdict"] == "crash"
    # oneDNN has float16 pooling kernels only with native float16 arithmetic: on an AMD EPYC with
    # AVX-512 but no avx512_fp16 (session 30) the float16 call returns the right shape
    out, _ = known.classify(results[:1], {"tensorflow": {"onednn": True, "avx512_fp16": False}})
    assert out[0]["verdict"] == "crash"


def test_the_torch_sinc_gradient_entry_claims_its_zero_at_float64_subnormal_inputs_only():
    """torch-sinc-derivative-zero-where-x-squared-underflows: PyTorch's sinc_backward answers 0 where
    x * x * pi underflows (float64 values 'tiny'); another wrong value there, another dtype or
    another value kind stays a failure."""
    known = load_known(SHIPPED)

    def rec(observed, dtype="float64", values="tiny", check="vjp"):
        case = {"op": "sinc", "params": {"values": values}, "shapes": {"input": [3]}, "dtype": dtype}
        return {
            **_rec(framework="torch", version="2.13.0", check=check, dtype=dtype),
            "case": case,
            "reason": f"grad_input[0]={observed} but reference says -1.5150135662203984e-307 (7.67e+15 ulps "
            f"of {dtype}; ratio 7.67e+15 > bound 1)",
        }

    out, _ = known.classify(
        [rec("0.0"), rec("0.0", check="vmap_vjp"), rec("nan"), rec("0.0", dtype="float32"), rec("0.0", values="normal")]
    )
    assert [r["verdict"] for r in out] == ["known", "known", "fail", "fail", "fail"]


def test_the_torch_complex64_sgn_entry_claims_subnormal_and_huge_moduli_draws_only():
    """torch-complex64-sgn-at-subnormal-and-overflowing-moduli: sgn's value checks on complex64
    draws that hold subnormal or huge moduli ('tiny', 'special'); 'normal' draws, complex128's
    vectorised kernel and reverse mode are other matters and stay failures."""
    known = load_known(SHIPPED)

    def rec(values="tiny", dtype="complex64", check="forward"):
        case = {"op": "sgn", "params": {"values": values}, "shapes": {"input": [8]}, "dtype": dtype}
        return {
            **_rec(framework="torch", version="2.13.0", check=check),
            "dtype": dtype,
            "case": case,
            "reason": "output[3,0]=nan but reference says -0.0 (inf ulps of float32; ratio inf > bound 1)",
        }

    hits = [[e.id for e in known.matching(r)] for r in (rec(), rec("special", check="vmap"), rec("normal"), rec(check="vjp"))]
    claimed = "torch-complex64-sgn-at-subnormal-and-overflowing-moduli"
    assert [claimed in h for h in hits] == [True, True, False, False], hits


def test_the_torch_complex64_log_gradient_entry_claims_forward_mode_too():
    """torch-complex64-log-gradient-overflows-at-a-subnormal-input: the JVP t / z overflows in
    c10::complex<float> as the gradient g / conj(z) does (log-0c0bf40adf7c, jvp 'tiny')."""
    case = {"op": "log", "params": {"values": "tiny"}, "shapes": {"input": [4, 31]}, "dtype": "complex64"}
    rec = {
        **_rec(framework="torch", version="2.13.0", check="jvp"),
        "dtype": "complex64",
        "case": case,
        "reason": "tangent_output[0,19,0]=inf but reference says 2.3653792179408374e+38 (inf ulps of float32; "
        "ratio inf > bound 1)",
    }
    hits = [e.id for e in load_known(SHIPPED).matching(rec)]
    assert "torch-complex64-log-gradient-overflows-at-a-subnormal-input" in hits, hits


def test_the_tnp_var_ddof_entry_claims_every_dtype_and_axis_and_not_ddof_zero_or_another_spelling():
    """tf-numpy-var-with-ddof-raises: tnp.var with ddof != 0 raises in every dtype, float64 and float32
    too (four slices of it before: complex, vectorized_map, a tuple axis, float16/bfloat16), so a
    float64 forward over an int axis is claimed; correction 0 or the keras spelling stays a mismatch."""
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id.startswith("tf-numpy-var")]
    none = "tensorflow raised TypeError: Cannot convert the argument `type_value`: None to a TensorFlow DType. (the reference accepts this configuration)"  # fmt: skip
    tup = "tensorflow raised TypeError: '<' not supported between instances of 'tuple' and 'int' (the reference accepts this configuration)"  # fmt: skip

    def rec(dtype, check, dim, correction, spelling, reason):
        params = {"correction": correction, "dim": dim, "keepdim": False, "spelling_tensorflow": spelling, "values": "normal"}  # fmt: skip
        case = {"op": "var", "params": params, "shapes": {"input": [2, 3]}, "dtype": dtype, "seed": 1, "checks": [check]}  # fmt: skip
        return {**_rec("error_mismatch", check=check, dtype=dtype, reason=reason, case=case),
                "case_id": f"var-{dtype}-{check}-{dim}-{correction}-{spelling}"}  # fmt: skip

    results = [rec("float64", "forward", -1, 1, "tnp.var", none), rec("float32", "vjp", None, 2, "tnp.var", none),
               rec("float16", "vmap", -1, 1, "tnp.var", none), rec("bfloat16", "jvp", [-1, 0], 1, "tnp.var", tup),
               rec("float64", "forward", -1, 0, "tnp.var", none), rec("float64", "forward", -1, 1, "keras.ops.var", none)]  # fmt: skip
    out, summary = known.classify(results)
    assert [r["verdict"] for r in out] == ["known"] * 4 + ["error_mismatch"] * 2, summary


def test_the_logcumsumexp_zero_cotangent_entry_reads_the_cotangent_a_result_received():
    """tf-logcumsumexp-forward-over-reverse-drops-a-zero-cotangents-tangent holds where some cotangent
    element the check handed TensorFlow is zero (values.cot_output.absmin == 0; batched_cot_output in
    vmap_jvp_vjp): the seeded seed-3 cases logcumsumexp-82f9dc63243d ([6, 4] is -0) and -958fdb4453f3;
    not seed 2's [4] draw (no zero: absmin 0.194), not seed 23's one-element scan (its cotangent -0), not forward over forward."""
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id == "tf-logcumsumexp-forward-over-reverse-drops-a-zero-cotangents-tangent"]
    said = "tangent_grad_input[0]=0.15 but reference says 150299269.5 (9.39e+06 ulps of float32; ratio 2.01e+05 > bound 1)"

    def rec(check, seed, shape, dim=0, values="normal", dtype="float32", **params):
        case = {"op": "logcumsumexp", "params": {"dim": dim, "values": values, **params}, "shapes": {"input": shape},
                "dtype": dtype, "seed": seed, "checks": [check]}  # fmt: skip
        return {**_rec(check=check, dtype=dtype, reason=said, case=Case.from_dict(case).to_dict()),
                "case_id": f"{check}-{seed}-{shape}"}  # fmt: skip

    results = [rec("jvp_vjp", 52134, [9, 5], -2, "ties"),
               rec("vmap_jvp_vjp", 497, [1, 1, 32], -1, "ties", "float16", in_dims=[-4], vmap_size=2),
               rec("jvp_vjp", 2, [4]), rec("jvp_vjp", 23, [1]), rec("jvp_jvp", 52134, [9, 5], -2, "ties")]  # fmt: skip
    out, summary = known.classify(results)
    assert [r["verdict"] for r in out] == ["known", "known", "fail", "fail", "fail"], summary


def test_tiny_reads_the_smallest_nonzero_modulus_beside_zeros_and_nans(tmp_path):
    """values.input.tiny < t holds where some element is a nonzero within t of 0 whatever zeros or
    NaNs lie beside it: the seeded 'special' case gammainc_x-2310691e6c11 holds [nan, 1.4e-45, 0.264,
    -1] (absmin is NaN there, so no absmin condition holds) and PyTorch's P = 0 at its subnormal a is
    torch-gammainc-zero-at-subnormal-a's; a 'normal' draw (no subnormal) stays a failure."""
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id == "torch-gammainc-zero-at-subnormal-a"]
    raw = {"op": "gammainc_x", "params": {"in_dims": [None, -1], "spelling_jax": "lax.igamma", "values": "special",
           "vmap_size": 1}, "shapes": {"input": [4, 1], "other": [1]}, "dtype": "float32", "seed": 17209, "checks": ["vmap"]}  # fmt: skip
    said = "output[0,1,0]=0.0 but reference says 1.0 (8.39e+06 ulps of float32; ratio 2.59e+04 > bound 1)"

    def rec(values):
        case = Case.from_dict({**raw, "params": {**raw["params"], "values": values}})
        return {**_rec(framework="torch", version="2.13.0", check="vmap", reason=said, case=case.to_dict()),
                "case_id": f"gammainc_x-{values}"}  # fmt: skip

    special, normal = rec("special"), rec("normal")
    arrays = Case.from_dict(special["case"]).arrays()
    assert np.isnan(arrays["input"]).any() and 0 < np.nanmin(np.abs(arrays["input"])) < 1.2e-38
    out, summary = known.classify([special, normal])
    assert [r["verdict"] for r in out] == ["known", "fail"], summary


def _shipped(entry_id):
    known = load_known(SHIPPED)
    known.entries = [e for e in known.entries if e.id == entry_id]
    assert known.entries, entry_id
    return known


def _one_input_rec(op, values, dtype, check, data, framework, reason="outside the bound"):
    """A failing result of a one-input case of ``op`` holding exactly ``data``."""
    if dtype.startswith("complex"):
        data = {"real": [complex(v).real for v in data], "imag": [complex(v).imag for v in data]}
    n = len(data["real"]) if isinstance(data, dict) else len(data)
    case = Case.from_dict({"op": op, "params": {"values": values}, "shapes": {"input": [n]}, "dtype": dtype,
                           "checks": [check], "data": {"input": data}})  # fmt: skip
    version = "2.13.0" if framework == "torch" else "2.21.0"
    return {"case_id": f"{op}-{data}", "framework": framework, "version": version, "check": check, "dtype": dtype,
            "verdict": "fail", "reason": reason, "case": case.to_dict()}  # fmt: skip


def test_the_sinc_special_entry_holds_where_an_element_is_at_most_the_dtypes_smallest_normal():
    """PyTorch's sinc'' is nan where pi x x underflows (0/0) or its reciprocal overflows: at every
    point 'special' draws at or below the smallest normal, float16's 6e-8 and 6.1e-5 included (above
    the 1e-30 cut the entry had); a case whose smallest element is above it (0.5) is another failure."""
    known = _shipped("torch-sinc-second-derivative-at-special-tiny-arguments")
    points = [("float16", [6.103515625e-05, 0.5, math.nan]), ("float16", [5.960464477539063e-08, 2.0]),
              ("float64", [2.2250738585072014e-308, 1.0]), ("float16", [0.5, 1.5]), ("float32", [-0.5, 2.0])]  # fmt: skip
    out, _ = known.classify([_one_input_rec("sinc", "special", dt, "vjp_vjp", d, "torch") for dt, d in points])
    assert [r["verdict"] for r in out] == ["known", "known", "known", "fail", "fail"]
    assert np.sqrt(1 / (math.pi * 65504.0)) > 6.103515625e-05, "float16's smallest normal squares out of range"


def test_the_spence_entry_holds_only_where_an_element_is_exactly_one():
    """TensorFlow's spence'' is nan at x == 1 only (where(x == 1, -1, log x/(1 - x)) differentiated: 0/0
    in the masked branch), whatever draw put the 1 there (NaNs beside it too); 1 + 2^-20 is within the
    bound; a nan where the reference is infinite is x = 0's departure, not this one."""
    known = _shipped("tf-spence-second-derivative-at-one")
    said = "g_input[0]=nan but reference says 0.2067 (inf ulps of float64; ratio inf > bound 1)"
    points = [("special", [1.0, 0.3, math.nan]), ("normal", [0.7, 1.0]), ("special", [1.0 + 2.0**-20, 0.3]),
              ("special", [0.0, 2.0])]  # fmt: skip
    recs = [_one_input_rec("spence", v, "float64", "vjp_vjp", d, "tensorflow", said) for v, d in points]
    recs.append(_one_input_rec("spence", "ties", "float64", "vjp_vjp", [0.0, 1.0], "tensorflow", said.replace("0.2067", "-inf")))
    out, _ = known.classify(recs)
    assert [r["verdict"] for r in out] == ["known", "known", "fail", "fail", "fail"]


def test_the_complex_sigmoid_entry_holds_where_an_element_is_within_half_of_a_pole():
    """TensorFlow's 1/(1 + e^-z) amplifies e^-z's rounding by 1/|1 + e^z|: the entry holds where some
    element has |1 + e^z| < 1/2 (the seeded case's 0.000581 + 530.8198i: 0.109), in any draw the
    near/at entry does not claim; a 'wide' case with no element near a pole is another failure."""
    known = _shipped("tf-complex64-sigmoid-cancels-near-a-pole-in-the-wide-draws")
    points = [("wide", "complex64", [0.000581 + 530.8198j, 3 + 1j]), ("normal", "complex128", [0.1 + 3.0j]),
              ("wide", "complex64", [0.3 + 0.2j, 40 - 7j]), ("near", "complex64", [0.1 + 3.0j])]  # fmt: skip
    out, _ = known.classify([_one_input_rec("sigmoid", v, dt, "forward", d, "tensorflow") for v, dt, d in points])
    assert [r["verdict"] for r in out] == ["known", "known", "fail", "fail"]
    assert abs(1 + np.exp(0.000581 + 530.8198j)) < 0.5 < abs(1 + np.exp(0.3 + 0.2j))
