"""conformance bisect: the search, the environment cache and the command, driven by fakes; one real
bisection over released JAX versions (slow, network)."""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from pathlib import Path

import pytest

from conformance import bisect as B
from conformance.cli import main

REAL_INDEX_VERSIONS = B.index_versions

VERSIONS = [f"1.{i}.0" for i in range(12)]


def fake(verdicts: dict, untestable=(), calls=None):
    def evaluate(v):
        if calls is not None:
            calls.append(v)
        if v in untestable:
            raise B.Untestable(f"{v} does not install here: no wheel")
        return B.Outcome(verdicts[v], f"reason at {v}")

    return evaluate


def monotone(first_bad: int, versions=VERSIONS, good="pass", bad="fail"):
    return {v: (good if i < first_bad else bad) for i, v in enumerate(versions)}


# ---- the search ------------------------------------------------------------------------------------
@pytest.mark.parametrize("first_bad", range(1, len(VERSIONS)))
def test_monotone_finds_the_change_in_log_installs(first_bad):
    calls = []
    result = B.search(VERSIONS, fake(monotone(first_bad), calls=calls))
    assert (result.last_good, result.first_bad) == (VERSIONS[first_bad - 1], VERSIONS[first_bad])
    assert result.tested[result.last_good].verdict == "pass"
    assert result.tested[result.first_bad].verdict == "fail"
    # both ends, then a binary search over the versions between them
    assert len(calls) <= 2 + math.ceil(math.log2(len(VERSIONS) - 1))
    assert len(calls) == len(set(calls))  # never the same version twice
    assert not result.same and result.between() == []


@pytest.mark.parametrize(
    "seq",
    [
        "ppffppffppff",  # fixed, broken again, ...
        "pfpfpfpfpfpf",
        "pffffffffffp"[:-1] + "f",
        "peeeeeffffff",  # a third verdict in the middle (e = error_mismatch)
        "pppppppppppe",
    ],
)
def test_non_monotone_ends_on_an_adjacent_change(seq):
    names = {"p": "pass", "f": "fail", "e": "error_mismatch"}
    verdicts = {v: names[c] for v, c in zip(VERSIONS, seq)}
    result = B.search(VERSIONS, fake(verdicts))
    i, j = VERSIONS.index(result.last_good), VERSIONS.index(result.first_bad)
    assert j == i + 1  # an exact answer: two consecutive released versions
    assert verdicts[result.last_good] == verdicts[VERSIONS[0]]
    assert verdicts[result.first_bad] != verdicts[VERSIONS[0]]


def test_same_verdict_at_both_ends_tests_nothing_else():
    calls = []
    verdicts = {v: "pass" for v in VERSIONS} | {VERSIONS[5]: "fail"}
    result = B.search(VERSIONS, fake(verdicts, calls=calls))
    assert result.same and calls == [VERSIONS[0], VERSIONS[-1]]
    assert result.last_good is None and result.first_bad is None


def test_an_install_failure_in_the_middle_is_skipped():
    verdicts = monotone(7)
    calls = []
    result = B.search(VERSIONS, fake(verdicts, untestable={VERSIONS[5], VERSIONS[6]}, calls=calls))
    assert (result.last_good, result.first_bad) == (VERSIONS[4], VERSIONS[7])
    assert set(result.skipped) <= {VERSIONS[5], VERSIONS[6]}
    assert result.between() == [VERSIONS[5], VERSIONS[6]]  # the change is in one of these
    assert "does not install" in result.skipped[VERSIONS[5]]


def test_skipped_versions_away_from_the_change_cost_only_themselves():
    result = B.search(VERSIONS, fake(monotone(9), untestable={VERSIONS[5]}))
    assert (result.last_good, result.first_bad) == (VERSIONS[8], VERSIONS[9])
    assert result.between() == []


@pytest.mark.parametrize("end", [0, -1])
def test_an_untestable_end_is_an_error_naming_it(end):
    with pytest.raises(B.EndUntestable) as err:
        B.search(VERSIONS, fake(monotone(3), untestable={VERSIONS[end]}))
    assert err.value.version == VERSIONS[end]


# ---- versions ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, says",
    [
        ("0.10.2", "is not a range"),
        ("0.9.0..", "is not a range"),
        ("0.9.0...0.10.2", "is not a version number"),
        ("a..b", "is not a version number"),
        ("0.10.2..0.9.0", "is not older than"),
        ("0.9.0..0.9.0", "is not older than"),
    ],
)
def test_a_malformed_range_names_the_flag_value_and_rule(value, says):
    with pytest.raises(B.BisectError) as err:
        B.parse_range(value)
    msg = str(err.value)
    assert msg.startswith("--versions:") and says in msg and "A..B" in msg


def test_versions_in_range_are_released_and_ordered():
    listed = ["0.10.2", "0.10.0", "0.9.0.1", "0.10.1rc1", "0.9.2", "0.9.0", "0.8.3", "0.10.1", "junk"]
    assert B.versions_in_range(listed, "0.9.0", "0.10.2", "jax") == [
        "0.9.0",
        "0.9.0.1",
        "0.9.2",
        "0.10.0",
        "0.10.1",
        "0.10.2",
    ]
    torch_cpu_index = ["2.11.0+cpu", "2.12.0+cpu", "2.12.0", "2.13.0+cpu"]
    assert B.versions_in_range(torch_cpu_index, "2.11.0", "2.13.0", "torch") == ["2.11.0", "2.12.0", "2.13.0"]
    with pytest.raises(B.BisectError, match=r"--versions: 0\.9\.1 is not a released version of jax"):
        B.versions_in_range(listed, "0.9.1", "0.10.2", "jax")


# ---- the environment cache (a fake uv) -----------------------------------------------------------------
FAKE_UV = """#!{python}
import json, os, sys
from pathlib import Path
log = Path(os.environ["FAKE_UV_LOG"])
with log.open("a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if args[0] == "venv":
    env = Path(args[-1])
    (env / "bin").mkdir(parents=True)
    os.symlink({python!r}, env / "bin" / "python")
    sys.exit(0)
if any(a.startswith("jax[cpu]==" + os.environ.get("FAKE_UV_BROKEN", "none")) for a in args):
    print("No solution found when resolving dependencies: jaxlib has no wheel for cp311", file=sys.stderr)
    sys.exit(1)
sys.exit(0)
"""


@pytest.fixture
def fake_uv(tmp_path, monkeypatch):
    uv = tmp_path / "uv"
    uv.write_text(FAKE_UV.format(python=sys.executable))
    uv.chmod(uv.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "uv.log"
    monkeypatch.setenv("REFGRAD_UV", str(uv))
    monkeypatch.setenv("FAKE_UV_LOG", str(log))

    def calls():
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return calls


def test_environments_are_built_once_and_reused(tmp_path, fake_uv):
    cache = tmp_path / "envs"
    inst = B.UvInstaller("jax", cache)
    py = inst.install("0.4.30")
    assert Path(py) == cache / "jax-0.4.30" / "bin" / "python"
    built = fake_uv()
    assert built[0][0] == "venv"
    install = [c for c in built if c[:2] == ["pip", "install"]]
    assert any("jax[cpu]==0.4.30" in c for c in install)
    assert any(d.startswith("numpy") for c in install for d in c)  # the project's runtime deps
    assert ["--no-deps", "-e", str(B.PROJECT_ROOT)] == install[-1][-3:]
    marker = json.loads((cache / "jax-0.4.30" / B.MARKER).read_text())
    assert marker["version"] == "0.4.30" and marker["root"] == str(B.PROJECT_ROOT)
    # a second installer (a later bisection) reuses it: no uv call at all
    n = len(fake_uv())
    again = B.UvInstaller("jax", cache)
    assert again.install("0.4.30") == py and again.installs == 0 and len(fake_uv()) == n


def test_a_half_built_environment_is_rebuilt(tmp_path, fake_uv):
    cache = tmp_path / "envs"
    (cache / "jax-0.5.0" / "bin").mkdir(parents=True)  # interrupted before its marker
    (cache / "jax-0.5.0" / "leftover").write_text("x")
    inst = B.UvInstaller("jax", cache)
    inst.install("0.5.0")
    assert inst.installs == 1 and not (cache / "jax-0.5.0" / "leftover").exists()
    assert (cache / "jax-0.5.0" / B.MARKER).is_file()


def test_a_version_that_does_not_install_is_untestable_and_loses_nothing(tmp_path, fake_uv, monkeypatch):
    cache = tmp_path / "envs"
    inst = B.UvInstaller("jax", cache)
    inst.install("0.4.30")
    monkeypatch.setenv("FAKE_UV_BROKEN", "0.4.31")
    with pytest.raises(
        B.Untestable, match="jax\\[cpu\\]==0.4.31 does not install here: .*no wheel for cp311"
    ):
        inst.install("0.4.31")
    assert not (cache / "jax-0.4.31").exists()  # no half-built environment left behind
    assert (cache / "jax-0.4.30" / B.MARKER).is_file()  # the others are kept


def test_extra_requirements_get_their_own_environment(tmp_path, fake_uv):
    cache = tmp_path / "envs"
    plain = B.UvInstaller("jax", cache).install("0.4.20")
    pinned = B.UvInstaller("jax", cache, extra=["numpy<2"])
    py = pinned.install("0.4.20")
    assert py != plain and Path(py).parent.parent.name.startswith("jax-0.4.20-with-")
    assert any("numpy<2" in call for call in fake_uv() if call[:2] == ["pip", "install"])
    assert json.loads((Path(py).parent.parent / B.MARKER).read_text())["with"] == ["numpy<2"]


def test_the_cache_root_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("REFGRAD_ENV_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert B.cache_root() == tmp_path / "refgrad" / "envs"
    monkeypatch.setenv("REFGRAD_ENV_CACHE", str(tmp_path / "x"))
    assert B.cache_root() == tmp_path / "x"


# ---- the case ----------------------------------------------------------------------------------------
def test_case_by_curated_id_file_and_result(tmp_path):
    cases = Path(B.PROJECT_ROOT) / "refgrad" / "cases"
    by_id = B.resolve_case("error-kernel-larger-than-input", cases)
    assert by_id["id"] == "error-kernel-larger-than-input" and by_id["checks"] == ["error"]
    with pytest.raises(B.BisectError, match="holds 7 matching cases; bisect takes one"):
        B.resolve_case(str(cases / "error_conformance.json"), cases)
    picked = B.resolve_case(str(cases / "error_conformance.json") + "#error-zero-stride", cases)
    assert picked["id"] == "error-zero-stride"
    run = tmp_path / "run"
    run.mkdir()
    rec = {
        "case_id": "abs-1",
        "framework": "jax",
        "verdict": "fail",
        "case": {"op": "abs", "dtype": "float32"},
    }
    (run / "results.jsonl").write_text(json.dumps(rec) + "\n")
    assert B.resolve_case(f"{run}#abs-1", cases) == {"op": "abs", "dtype": "float32", "id": "abs-1"}
    with pytest.raises(B.BisectError, match="no result of case 'abs-2'"):
        B.resolve_case(f"{run}/results.jsonl#abs-2", cases)
    repro = tmp_path / "d1-vjp-jax-abs-1.py"
    case = {"op": "abs", "dtype": "float32", "checks": ["forward", "vjp"]}
    repro.write_text(f"import json\nCHECK = 'vjp'\nCASE_ID = 'abs-1'\nCASE_JSON = {json.dumps(case)!r}\n")
    assert B.resolve_case(str(repro), cases) == {
        "op": "abs",
        "dtype": "float32",
        "checks": ["vjp"],
        "id": "abs-1",
    }
    (tmp_path / "other.py").write_text("print('hello')\n")
    with pytest.raises(B.BisectError, match="is not a refgrad reproducer"):
        B.resolve_case(str(tmp_path / "other.py"), cases)
    with pytest.raises(B.BisectError, match="CASE: 'no-such-case' is neither"):
        B.resolve_case("no-such-case", cases)


def test_case_verdict_is_the_most_serious_judged_result():
    recs = [{"verdict": "pass"}, {"verdict": "error_mismatch", "reason": "r"}, {"verdict": "unsupported"}]
    assert B.case_verdict(recs).verdict == "error_mismatch"
    with pytest.raises(B.Untestable, match="nothing judged"):
        B.case_verdict([{"verdict": "unsupported", "reason": "no spelling"}])
    with pytest.raises(B.Untestable, match="no result"):
        B.case_verdict([])


# ---- the command, with a fake index, installer and replayer ---------------------------------------------
@pytest.fixture
def fake_world(monkeypatch, tmp_path):
    """The command with jax 1.0.0 .. 1.11.0 on the index; pass before 1.7.0, fail from it."""
    state = {"verdicts": monotone(7), "broken": set(), "built": [], "asked": 0}

    def index(fw, python=None, index_url=None):
        state["asked"] += 1
        return VERSIONS + ["2.0.0rc1"]

    monkeypatch.setattr(B, "index_versions", index)

    class Installer:
        def __init__(
            self, framework, cache=None, python=None, index_url=None, root=B.PROJECT_ROOT, log=None, extra=()
        ):
            self.cache, self.installs = cache or tmp_path / "cache", 0

        def install(self, v):
            if v in state["broken"]:
                raise B.Untestable(f"jax[cpu]=={v} does not install here: no wheel")
            self.installs += 1
            state["built"].append(v)
            return sys.executable

    def replay(self, python, v):
        if v in state.get("interrupt_at", ()):
            raise KeyboardInterrupt
        return B.Outcome(
            state["verdicts"][v], "grad_input[0]=1 but reference says 2" * (state["verdicts"][v] != "pass")
        )

    monkeypatch.setattr(B, "UvInstaller", Installer)
    monkeypatch.setattr(B.Replayer, "__call__", replay)
    return state


def test_bisect_prints_last_good_and_first_bad(fake_world, tmp_path, capsys):
    out = tmp_path / "b"
    code = main(
        [
            "bisect",
            "error-kernel-larger-than-input",
            "--framework",
            "jax",
            "--versions",
            "1.0.0..1.11.0",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert "last good: jax 1.6.0: pass" in text
    assert "first bad: jax 1.7.0: fail (grad_input[0]=1 but reference says 2" in text
    assert "the change: pass -> fail (jax departs from 1.7.0 on)" in text
    summary = json.loads((out / "bisect.json").read_text())
    assert summary["last_good"] == "1.6.0" and summary["first_bad"] == "1.7.0"
    assert len(fake_world["built"]) <= 2 + math.ceil(math.log2(11))
    assert json.loads((out / "case.json").read_text())["id"] == "error-kernel-larger-than-input"
    # a second bisection into the same --out keeps the first one's summary
    fake_world["verdicts"] = monotone(3)
    assert (
        main(
            [
                "bisect",
                "error-kernel-larger-than-input",
                "--framework",
                "jax",
                "--versions",
                "1.0.0..1.11.0",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    earlier = [p for p in out.glob("bisect-*.json")]
    assert len(earlier) == 1 and json.loads(earlier[0].read_text())["first_bad"] == "1.7.0"
    assert json.loads((out / "bisect.json").read_text())["first_bad"] == "1.3.0"


def test_bisect_same_verdict_says_so_and_exits_2(fake_world, tmp_path, capsys):
    fake_world["verdicts"] = {v: "error_mismatch" for v in VERSIONS}
    code = main(
        [
            "bisect",
            "error-kernel-larger-than-input",
            "--framework",
            "jax",
            "--versions",
            "1.2.0..1.9.0",
            "--out",
            str(tmp_path / "b"),
        ]
    )
    assert code == 2
    assert (
        "same verdict at both ends: jax 1.2.0 and 1.9.0 are both 'error_mismatch'" in capsys.readouterr().out
    )
    assert fake_world["built"] == ["1.2.0", "1.9.0"]


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["--framework", "mxnet", "--versions", "1.0.0..1.2.0"],
            "--framework: 'mxnet' is not one of jax, tensorflow, torch",
        ),
        (["--framework", "jax", "--versions", "1.2.0"], "--versions: '1.2.0' is not a range"),
        (
            ["--framework", "jax", "--versions", "1.0.0..1.99.0"],
            "--versions: 1.99.0 is not a released version of jax",
        ),
        (
            ["--framework", "jax", "--versions", "1.0.0..2.0.0rc1"],
            "--versions: 2.0.0rc1 is not a released version",
        ),
        (
            ["--framework", "jax", "--versions", "1.0.0..1.2.0", "--checks", "vjp"],
            "--checks: 'vjp' selects nothing",
        ),
        (
            ["--framework", "jax", "--versions", "1.0.0..1.2.0", "--dtypes", "float16"],
            "--dtypes: 'float16' selects",
        ),
    ],
)
def test_bisect_bad_input_is_a_typed_error(fake_world, tmp_path, capsys, argv, says):
    code = main(["bisect", "error-kernel-larger-than-input", *argv, "--out", str(tmp_path / "b")])
    assert code == 2
    assert says in capsys.readouterr().err
    assert fake_world["built"] == []  # nothing installed for bad input


def test_bisect_unknown_check_is_a_usage_error(fake_world, tmp_path, capsys):
    argv = ["bisect", "error-kernel-larger-than-input", "--framework", "jax", "--versions", "1.0.0..1.2.0"]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--checks", "nope", "--out", str(tmp_path / "b")])
    assert exc.value.code == 2 and "--checks: 'nope' is not one of" in capsys.readouterr().err
    assert fake_world["built"] == []


def test_bisect_an_end_that_does_not_install_is_a_typed_error(fake_world, tmp_path, capsys):
    fake_world["broken"] = {"1.0.0"}
    code = main(
        [
            "bisect",
            "error-kernel-larger-than-input",
            "--framework",
            "jax",
            "--versions",
            "1.0.0..1.11.0",
            "--out",
            str(tmp_path / "b"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--versions: 1.0.0 (an end of 1.0.0..1.11.0) cannot be tested" in err and "does not install" in err


def test_bisect_reports_untestable_versions_between(fake_world, tmp_path, capsys):
    fake_world["broken"] = {"1.5.0", "1.6.0"}
    code = main(
        [
            "bisect",
            "error-kernel-larger-than-input",
            "--framework",
            "jax",
            "--versions",
            "1.0.0..1.11.0",
            "--out",
            str(tmp_path / "b"),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert "last good: jax 1.4.0: pass" in text and "first bad: jax 1.7.0: fail" in text
    assert "could not be tested: 1.5.0, 1.6.0" in text


# ---- the replayer against this interpreter's conformance ------------------------------------------------
@pytest.mark.jax
def test_replayer_runs_conformance_replay_in_a_subprocess(tmp_path):
    pytest.importorskip("jax")
    case = B.resolve_case("error-kernel-larger-than-input", Path(B.PROJECT_ROOT) / "refgrad" / "cases")
    case_file = tmp_path / "case.json"
    case_file.write_text(json.dumps(case))
    outcome = B.Replayer("jax", case_file, tmp_path / "out")(sys.executable, "here")
    assert outcome.verdict == "error_mismatch" and "larger than the padded input" in outcome.reason
    assert Path(outcome.results) == tmp_path / "out" / "jax-here" / "results.jsonl"
    assert outcome.framework_version.startswith("jax ")


def test_without_uv_bisect_names_the_extra_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("REFGRAD_UV", raising=False)
    monkeypatch.setattr(B.shutil, "which", lambda name, *a, **k: None)  # no uv on PATH
    monkeypatch.setattr(B.sys, "executable", str(tmp_path / "bin" / "python"))  # none beside Python
    monkeypatch.setattr(B, "index_versions", lambda *a, **k: ["0.4.30", "0.4.31"])  # no package index
    argv = ["bisect", "error-kernel-larger-than-input", "--framework", "jax", "--versions", "0.4.30..0.4.31"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bisect: needs uv" in err and "pip install 'refgrad[bisect]'" in err and "Traceback" not in err


def test_the_bisect_extra_provides_uv_and_all_and_bootstrap_install_it():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    extras = tomllib.loads((B.PROJECT_ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert [r for r in extras["bisect"] if r.startswith("uv")]
    assert "bisect" in extras["all"][0].split("[", 1)[1]
    assert '".[all]"' in (B.PROJECT_ROOT / "scripts" / "bootstrap.sh").read_text()


# ---- a real bisection ----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.network
def test_real_bisection_over_released_jax_versions(tmp_path):
    """Builds (or reuses, from the default cache) environments for jax 0.4.30 and 0.4.31 with uv and
    replays a curated case in each: JAX accepts the configuration in both (a known departure), so the
    same verdict at both ends (exit 2). A second bisection builds nothing: the cache is reused."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(B.PROJECT_ROOT)}
    argv = [sys.executable, "-m", "conformance", "bisect", "error-kernel-larger-than-input"]
    argv += ["--framework", "jax", "--versions", "0.4.30..0.4.31"]
    runs = []
    for n in (1, 2):
        out = tmp_path / f"b{n}"
        proc = subprocess.run(
            [*argv, "--out", str(out)], capture_output=True, text=True, env=env, timeout=1800, cwd=tmp_path
        )
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "jax 0.4.30       error_mismatch" in proc.stdout
        assert "same verdict at both ends: jax 0.4.30 and 0.4.31 are both 'error_mismatch'" in proc.stdout
        summary = json.loads((out / "bisect.json").read_text())
        assert summary["tested"]["0.4.31"]["framework_version"] == "jax 0.4.31, jaxlib 0.4.31"
        assert summary["tested"]["0.4.30"]["framework_version"] == "jax 0.4.30, jaxlib 0.4.30"
        runs.append(summary)
    assert runs[1]["environments_built"] == 0  # the second bisection reuses both environments


# ---- the run-integrity contract (issue #36): every argument and the case checked before any work -------
BISECT = ["bisect", "error-kernel-larger-than-input", "--framework", "jax", "--versions", "1.0.0..1.11.0"]


def _bisect_fails(argv, capsys, code=2):
    got = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert got == code, err
    assert "Traceback" not in err and "internal error" not in err
    return err


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf"])
def test_bisect_a_bad_timeout_is_refused_before_the_index_or_any_build(fake_world, tmp_path, capsys, value):
    err = _bisect_fails([*BISECT, "--timeout", value, "--out", tmp_path / "b"], capsys)
    assert "--timeout: must be a" in err and "number of seconds, got" in err and "--versions" not in err
    assert fake_world["asked"] == 0 and fake_world["built"] == []


@pytest.mark.parametrize("flag", ["--out", "--cache"])
def test_bisect_an_output_path_naming_a_file_is_a_usage_error_not_5(fake_world, tmp_path, capsys, flag):
    blocker = tmp_path / "blocker"
    blocker.write_text("mine")
    other = {"--out": ["--cache", tmp_path / "cache"], "--cache": ["--out", tmp_path / "b"]}[flag]
    err = _bisect_fails([*BISECT, flag, blocker, *other], capsys)
    assert f"{flag}: {str(blocker)!r} exists and is not a directory" in err
    assert fake_world["asked"] == 0 and fake_world["built"] == [] and blocker.read_text() == "mine"


def test_bisect_a_cache_under_a_file_is_a_usage_error(fake_world, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("mine")
    err = _bisect_fails([*BISECT, "--cache", blocker / "envs", "--out", tmp_path / "b"], capsys)
    assert f"--cache: cannot create {str(blocker / 'envs')!r}: Not a directory" in err
    assert fake_world["asked"] == 0 and fake_world["built"] == []


def _case_inputs(tmp_path) -> dict:
    """Hostile CASE arguments -> what the message must say."""
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"case_id": "caf\u00e9", "case": {"op": "abs"}}\n'.encode("latin-1"))
    listed = tmp_path / "listed.jsonl"
    listed.write_text(json.dumps({"case_id": "abs-1", "framework": "jax", "case": [1, 2]}) + "\n[1, 2]\n7\n")
    repro = tmp_path / "repro.py"
    repro.write_text(f"CHECK = 'vjp'\nCASE_JSON = {json.dumps([1, 2])!r}\n")
    cases = Path(B.PROJECT_ROOT) / "refgrad" / "cases" / "error_conformance.json"
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    return {
        f"{binary}#abs-1": "is a binary file, not a results.jsonl",
        f"{latin}#abs-1": "is not UTF-8 text",
        f"{listed}#abs-1": "hold no case (line 1: its 'case' is a list, not a JSON object)",
        f"{listed}#abs-9": "no result of case 'abs-9'",
        str(repro): "its CASE_JSON is a list, not a case (a JSON object)",
        f"{cases}#no-such-id": "holds no case with id 'no-such-id' (its cases: error-",
        str(empty_dir): "is a directory without a results.jsonl",
        f"{empty_dir}#abs-1": "is a directory without a results.jsonl",
        f"{tmp_path / 'missing.json'}#abs-1": "missing.json does not exist",
    }


def test_bisect_hostile_cases_are_typed_errors_before_any_work(fake_world, tmp_path, capsys):
    for case, says in _case_inputs(tmp_path).items():
        argv = ["bisect", case, "--framework", "jax", "--versions", "1.0.0..1.11.0", "--out", tmp_path / "b"]
        err = _bisect_fails(argv, capsys)
        assert says in err, (case, err)
        if Path(case.partition("#")[0]).exists():
            assert "does not exist" not in err, (case, err)  # an existing path is never called missing
    assert fake_world["asked"] == 0 and fake_world["built"] == []


def test_bisect_interrupted_says_how_to_continue_without_a_resume_flag(fake_world, tmp_path, capsys):
    fake_world["interrupt_at"] = {"1.11.0"}
    err = _bisect_fails([*BISECT, "--out", tmp_path / "b"], capsys, code=130)
    assert "interrupted: bisect stopped" in err and "run the same command again" in err
    assert "--resume" not in err  # bisect has no such flag


PIP_UNREACHABLE = "\n".join(
    f"WARNING: Retrying (Retry(total={n}, connect=None, read=None, redirect=None, status=None)) after "
    "connection broken by 'NewConnectionError(\"HTTPConnection(host='10.9.9.9', port=80): Failed to "
    "establish a new connection: [Errno 101] Network is unreachable\")': /simple/jax/"
    for n in range(4, -1, -1)
)


@pytest.mark.parametrize("listed", [True, False])
def test_bisect_an_unreachable_index_is_reported_as_unreachable_not_unreleased(
    fake_world, tmp_path, capsys, monkeypatch, listed
):
    """pip lists what its other sources (find-links, an extra index) have, exit 0; or nothing, exit 1."""
    import subprocess

    def pip(cmd, **kwargs):
        assert cmd[1:5] == ["-m", "pip", "index", "versions"]
        out = "jax (1.11.0)\nAvailable versions: 1.11.0\n" if listed else ""
        return subprocess.CompletedProcess(cmd, 0 if listed else 1, out, PIP_UNREACHABLE)

    monkeypatch.setattr(B, "index_versions", REAL_INDEX_VERSIONS)
    monkeypatch.setattr(B.subprocess, "run", pip)
    err = _bisect_fails([*BISECT, "--out", tmp_path / "b"], capsys)
    assert "could not be reached" in err and "10.9.9.9:80: Failed to establish a new connection" in err
    assert "not a released version" not in err and "lists no versions" not in err
    assert fake_world["built"] == []


def test_bisect_a_reachable_index_still_says_not_released(monkeypatch):
    import subprocess

    listing = "jax (1.11.0)\nAvailable versions: 1.11.0, 1.10.0\n"
    monkeypatch.setattr(
        B.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0, listing, "")
    )
    with pytest.raises(B.BisectError, match="1.0.0 is not a released version of jax"):
        B.versions_in_range(B.index_versions("jax"), "1.0.0", "1.11.0", "jax")


def test_a_convention_is_a_judged_verdict_of_the_case_more_serious_than_unsupported():
    # A framework whose answer differs only by a declared convention answered: bisecting from a
    # version that failed to one that chose the other convention is a change of verdict, and a
    # result of another check that this framework cannot run does not hide it.
    results = [
        {"verdict": "unsupported", "reason": "no float64 kernel"},
        {"verdict": "convention", "reason": "tie"},
    ]
    assert B.case_verdict(results).verdict == "convention"
    assert B.case_verdict([{"verdict": "convention"}, {"verdict": "fail", "reason": "off"}]).verdict == "fail"
