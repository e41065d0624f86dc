"""Known departures (conformance/known.py), --fail-on new and JUnit XML: what makes refgrad a CI gate."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

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
    entry = {**EMPTY_BATCH, "match": {**EMPTY_BATCH["match"], "settings": [
        {"path": "onednn", "op": "==", "value": True}]}}
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
