"""Reproducers of op-record discrepancies (issues #12, #19): a campaign with planted spelling bugs
on tanh and sum_dim writes a report whose record discrepancies each carry a standalone script
(NumPy and the framework only). The script made for the planted adapter exits 1 (the departure is
present); the same case's script made for the stock adapter exits 0; an adapter whose record
programs are its own gets no script, and the discrepancy says why (the report is still written)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.case import Case
from conformance.ops import RECORDS, RecordParams
from conformance.record_reproducer import CannotReproduce, lambda_source, spelling_source
from conformance.reproducer import reproducer

HERE = Path(__file__).resolve().parent
STOCK = {
    "torch": "conformance.adapters.torch_adapter:TorchAdapter",
    "jax": "conformance.adapters.jax_adapter:JaxAdapter",
    "tensorflow": "conformance.adapters.tf_adapter:TensorFlowAdapter",
}
PLANTED = {
    "torch-scaled-ops": ("torch", "planted_spellings:TorchScaledOps"),
    "jax-scaled-tanh": ("jax", "planted_spellings:JaxScaledTanh"),
}


def _case(op, shapes, checks, dtype="float32", seed=3, **params):
    params = {"values": "normal", **params}
    return Case(op, RecordParams.of(params), shapes, dtype, seed, tuple(checks))


CASES = [
    _case("tanh", {"input": (2, 3)}, ("vjp", "vmap", "jvp"), in_dims=[-1], vmap_size=3),
    _case(
        "sum_dim",
        {"input": (3, 4)},
        ("vmap_vjp", "vjp_vjp"),
        dtype="float64",
        dim=[1],
        keepdim=False,
        in_dims=[0],
        vmap_size=2,
    ),
    _case("sum_dim", {"input": (2, 3)}, ("error",), dim=5, keepdim=False, invalid="dim_out_of_range"),
]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    from conformance.report import build_report
    from conformance.runner import Campaign

    out = tmp_path_factory.mktemp("record-repro")
    frameworks = {k: spec for k, (_, spec) in PLANTED.items()}
    sys.path.insert(0, str(HERE))
    try:
        with Campaign(out, frameworks, timeout=120) as camp:
            camp.start()
            camp.run_cases(CASES, phase="curated")
            info = camp.frameworks_info()
        build_report(
            out, info, "conformance run (record reproducers)", run={"device": "cpu", "precision": "highest"}
        )
        yield out, json.loads((out / "report.json").read_text())
    finally:
        sys.path.remove(str(HERE))


def _run(script: Path, tmp_path):
    """Run a script where importing refgrad (conformance, reference) or the planted modules fails."""
    blocker = tmp_path / "no-refgrad"
    for name in ("conformance", "reference", "planted_spellings", "planted_records"):
        (blocker / name).mkdir(parents=True, exist_ok=True)
        (blocker / name / "__init__.py").write_text(f"raise ImportError('the reproducer imported {name}')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(blocker)
    return subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


def _by(report, framework):
    return [d for d in report["discrepancies"] if d["framework"] == framework]


def test_the_report_writes_record_reproducers(campaign):
    _, report = campaign
    scaled = {(d["op"], d["check"]) for d in _by(report, "torch-scaled-ops")}
    checks = {
        ("tanh", "vjp"),
        ("tanh", "vmap"),
        ("tanh", "jvp"),
        ("sum_dim", "vmap_vjp"),
        ("sum_dim", "vjp_vjp"),
    }
    assert checks | {("sum_dim", "error")} <= scaled, scaled
    jax_checks = {(d["op"], d["check"]) for d in _by(report, "jax-scaled-tanh")}
    assert jax_checks == {("tanh", c) for c in ("vjp", "vmap", "jvp")}, jax_checks
    for d in report["discrepancies"]:
        assert d["reproducer"] and d["reproducer_error"] is None, d
        assert "import conformance" not in d["reproducer"] and "from conformance" not in d["reproducer"]


def test_an_adapter_with_its_own_record_programs_gets_the_reason_not_a_script(monkeypatch):
    """planted_records.WrapsDim overrides run_record: a script cannot copy it; the report's
    discrepancy carries the reason (conformance/report.py catches it)."""
    monkeypatch.syspath_prepend(str(HERE))
    case = CASES[2]
    result = {
        "case": case.to_dict(),
        "case_id": case.id,
        "check": "error",
        "framework": "planted-wraps-dim",
        "verdict": "error_mismatch",
        "reason": "accepted",
    }
    with pytest.raises(CannotReproduce, match="overrides run_record"):
        reproducer(result, "planted_records:WrapsDim")


@pytest.mark.parametrize("framework", ["torch-scaled-ops", "jax-scaled-tanh"])
def test_planted_reproducers_exit_1_and_stock_ones_exit_0(campaign, framework, tmp_path):
    out, report = campaign
    fw, _ = PLANTED[framework]
    records = {
        (r["case_id"], r["check"]): r
        for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
        if r.get("framework") == framework
    }
    entries = _by(report, framework)
    assert entries
    for d in entries:
        proc = _run(out / d["reproducer_file"], tmp_path)
        assert proc.returncode == 1, (d["reproducer_file"], proc.stdout, proc.stderr[-3000:])
        assert "DEPARTURE" in proc.stdout
        if d["check"] != "error":
            assert "worst element" in proc.stdout and "bound" in proc.stdout
        # the same case and check, its script made for the stock adapter: the departure is gone
        stock = tmp_path / f"stock-{d['id']}.py"
        stock.write_text(reproducer(records[(d["case_id"], d["check"])], STOCK[fw]))
        proc = _run(stock, tmp_path)
        assert proc.returncode == 0, (stock.read_text()[-4000:], proc.stdout, proc.stderr[-3000:])


def test_a_tensorflow_reproducer(tmp_path):
    """A TensorFlow vmap_vjp case (tf.vectorized_map over GradientTape) judged in process."""
    pytest.importorskip("tensorflow")
    sys.path.insert(0, str(HERE))
    try:
        from planted_spellings import TensorFlowScaledTanh

        from conformance.adapters.tf_adapter import TensorFlowAdapter
        from conformance.ops.judge import run_in_process

        case = _case("tanh", {"input": (3,)}, ("vmap_vjp",), in_dims=[0], vmap_size=2)
        planted = TensorFlowScaledTanh()
        result = run_in_process(planted, case, "vmap_vjp", planted.setup())
        assert result["verdict"] == "fail"
        result = {
            "case": case.to_dict(),
            "case_id": case.id,
            "check": "vmap_vjp",
            "framework": "tensorflow",
            **result,
        }
        for spec, code in (("planted_spellings:TensorFlowScaledTanh", 1), (STOCK["tensorflow"], 0)):
            script = tmp_path / f"{code}.py"
            script.write_text(reproducer(result, spec))
            proc = _run(script, tmp_path)
            assert proc.returncode == code, (spec, proc.stdout, proc.stderr[-3000:])
        assert TensorFlowAdapter  # the stock class the second script copied nothing from
    finally:
        sys.path.remove(str(HERE))


def test_a_spelling_made_inside_a_function_gets_a_script(tmp_path):
    """The one-argument records (pointwise.py's ``_simple``: log1p, acosh, erf...) spell each op with
    a lambda made inside a helper, reading the helper's names from closure cells; compiled alone the
    lambda read them as globals, its bytecode differed, and every such record was refused a script
    (151 of the records' 944 spellings, session 30). The planted closure's script exits 1, the stock
    one's 0."""
    pytest.importorskip("jax")
    sys.path.insert(0, str(HERE))
    try:
        from planted_spellings import JaxScaledLog1p

        from conformance.ops.judge import run_in_process

        case = _case("log1p", {"input": (2, 3)}, ("vjp",), dtype="float64")
        planted = JaxScaledLog1p()
        result = run_in_process(planted, case, "vjp", planted.setup())
        assert result["verdict"] == "fail", result
        result = {"case": case.to_dict(), "case_id": case.id, "check": "vjp", "framework": "jax", **result}
        for spec, code in (("planted_spellings:JaxScaledLog1p", 1), (STOCK["jax"], 0)):
            script = tmp_path / f"{code}.py"
            script.write_text(reproducer(result, spec))
            assert "# a closure cell of the spelling" in script.read_text()
            proc = _run(script, tmp_path)
            assert proc.returncode == code, (spec, proc.stdout, proc.stderr[-3000:])
    finally:
        sys.path.remove(str(HERE))


def test_lambda_source_takes_the_inner_lambda_of_a_lambda_factory():
    """``(lambda j: lambda J, x, y: getattr(J.jnp, j)(x, y))(_n)`` makes fmax's JAX spelling: the
    script must define the inner lambda with ``j`` bound, not the factory (whose script raised
    TypeError: takes 1 positional argument but 3 were given, a departure that was not there)."""
    assert lambda_source(RECORDS["fmax"].jax) == "lambda J, x, y: getattr(J.jnp, j)(x, y)"
    _, text = spelling_source(RECORDS["fmax"].jax)
    assert "j = 'fmax'  # a closure cell of the spelling" in text
    _, text = spelling_source(RECORDS["clamp_min_tensor"].jax)  # f's default n=_n, bound before f
    assert text.index("_n = 'clamp_min_tensor'") < text.index("f = lambda jnp, n=_n:")


@pytest.mark.parametrize(
    "framework, op, shapes",
    [
        ("jax", "sum", {"input": (2, 3)}),  # a 0-d output: its cotangent is 0-d (it was written 1-d)
        ("jax", "fmax", {"input": (2, 3), "other": (2, 3)}),  # a lambda factory's inner lambda
        ("jax", "clamp_min_tensor", {"input": (2, 3), "other": (2, 3)}),  # a helper's default argument
        ("torch", "linalg_det", {"input": (3, 3)}),  # helpers f and run: the check binds f and run too
        ("tensorflow", "bessel_j0", {"input": (2, 3)}),  # a closure cell named op
    ],
)
def test_stock_reproducers_of_passing_cases_exit_0(framework, op, shapes, tmp_path):
    """A script made for a case the campaign passed shows no departure: a reproducer that reports
    one that is not there (a 0-d array written with shape (1,), the wrong lambda, a helper's name
    rebound by the check's code) is a false report a maintainer would have to refute."""
    pytest.importorskip(framework)
    from conformance.adapters import load_class
    from conformance.ops.judge import run_in_process

    case = _case(op, shapes, ("vjp",), dtype="float64")
    adapter = load_class(STOCK[framework])()
    result = run_in_process(adapter, case, "vjp", adapter.setup())
    assert result["verdict"] == "pass", result
    result = {"case": case.to_dict(), "case_id": case.id, "check": "vjp", "framework": framework, **result}
    script = tmp_path / f"{op}.py"
    script.write_text(reproducer(result, STOCK[framework]))
    proc = _run(script, tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])


def test_every_record_spelling_has_standalone_source():
    """Every function spelling of every record, for each built-in framework, becomes standalone text
    that defines ``op`` (the frameworks are not imported: a spelling needs them only when called)."""
    from conformance.adapters import load_class

    refused = []
    for framework, spec in STOCK.items():
        cls = load_class(spec)
        adapter = cls.__new__(cls)  # no __init__: the spelling needs no framework
        for name, rec in RECORDS.items():
            spelled = adapter.spelling(rec)
            if isinstance(spelled, str) or spelled is None:
                continue  # a sentence saying why the framework has no spelling
            try:
                imports, text = spelling_source(spelled)
            except CannotReproduce as exc:
                refused.append(f"{framework} {name}: {exc}")
                continue
            namespace = {}
            exec(compile(f"{imports}\n{text}", f"<{framework} {name}>", "exec"), namespace)
            assert callable(namespace["op"]), (framework, name)
    assert not refused, "\n".join(refused)


def test_lambda_source_picks_the_lambda_by_its_code():
    """elementwise.py spells tanh with three lambdas on one line: each framework's is found."""
    rec = RECORDS["tanh"]
    assert lambda_source(rec.fn) == "lambda T, x: T.tanh(x)"
    assert lambda_source(rec.jax) == "lambda J, x: J.jnp.tanh(x)"
    assert lambda_source(rec.tf) == "lambda tf, x: tf.math.tanh(x)"


def test_lambda_source_finds_a_lambda_holding_lambdas():
    """pnorm's JAX and TensorFlow spellings pass lambdas to a helper: the nested code objects are
    compared by their code, not by their repr (which holds their address: the same text compiled
    twice never matched, and every pnorm and cdist reproducer was refused)."""
    for name, fw in [("pnorm", "jax"), ("pnorm", "tf"), ("cdist", "jax"), ("cdist", "tf")]:
        text = lambda_source(getattr(RECORDS[name], fw))
        assert text.startswith("lambda ") and "_pnorm_of(" in text and text.count("lambda x, ax:") == 2


def test_spelling_source_binds_defaults_closures_and_helpers():
    _, text = spelling_source(RECORDS["sum_dim"].fn)
    assert "_t = 'sum'" in text and text.rstrip().endswith("getattr(x, _t)(dim, keepdim=keepdim)")
    sys.path.insert(0, str(HERE))
    try:
        import planted_spellings

        _, text = spelling_source(planted_spellings._scaled_sum)
        assert "SCALE = 1.015625" in text and "def _scaled_sum(T, x, dim, keepdim):" in text
        namespace = {}
        exec(text, namespace)  # the text alone defines the op
        assert namespace["op"].__name__ == "_scaled_sum"
    finally:
        sys.path.remove(str(HERE))
    with pytest.raises(CannotReproduce):
        spelling_source(len)


def test_a_reproducer_with_an_infinite_parameter_runs(tmp_path):
    """``repr(float('inf'))`` is ``inf``: the script names it (a pnorm p=inf reproducer of campaign
    seed 2 stopped at ``NameError: name 'inf' is not defined``)."""
    pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAdapter
    from conformance.ops.judge import run_in_process

    case = _case("pnorm", {"input": (2, 3), "other": (2, 3)}, ("vjp",), dtype="float64", p=float("inf"))
    adapter = TorchAdapter()
    result = run_in_process(adapter, case, "vjp", adapter.setup())
    assert result["verdict"] == "pass", result
    result = {"case": case.to_dict(), "case_id": case.id, "check": "vjp", "framework": "torch", **result}
    script = tmp_path / "pnorm_inf.py"
    script.write_text(reproducer(result, STOCK["torch"]))
    assert "'p': inf" in script.read_text()
    proc = _run(script, tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])


def _check_script(out):
    cmd = [sys.executable, str(HERE.parents[1] / "scripts" / "check_record_reproducers.py"), str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_the_reproducer_checker_tells_agreeing_scripts_from_disagreeing_ones(tmp_path):
    """scripts/check_record_reproducers.py: a passing case's script exits 0 and agrees; the same
    result recorded as a failure disagrees (its script finds no departure) and the checker exits 1
    naming it; a directory with no results is a usage error."""
    pytest.importorskip("jax")
    from conformance.adapters.jax_adapter import JaxAdapter
    from conformance.ops.judge import run_in_process

    case = _case("log1p", {"input": (2, 3)}, ("vjp",), dtype="float64")
    adapter = JaxAdapter()
    result = run_in_process(adapter, case, "vjp", adapter.setup())
    result = {"case": case.to_dict(), "case_id": case.id, "check": "vjp", "framework": "jax", **result}
    for verdict, code in (("pass", 0), ("fail", 1)):
        out = tmp_path / verdict
        out.mkdir()
        (out / "results.jsonl").write_text(json.dumps({**result, "verdict": verdict}) + "\n")
        proc = _check_script(out)
        assert proc.returncode == code, (proc.stdout, proc.stderr[-2000:])
        assert f"jax: {1 - code} scripts agree with their verdicts, {code} do not" in proc.stdout
    assert "log1p vjp fail: exit 0, want 1" in proc.stdout
    proc = _check_script(tmp_path / "missing")
    assert proc.returncode == 2 and "has no results.jsonl" in proc.stderr


@pytest.mark.slow
def test_every_stock_script_of_a_campaign_agrees_with_its_verdict(tmp_path):
    """The whole sweep (session 30's: 4,148 scripts of a one-example campaign over every record,
    five checks, three frameworks, all agreeing): a script that reports a departure the campaign did
    not find, or none where it did, is a false report."""
    for name in ("torch", "jax", "tensorflow"):
        pytest.importorskip(name)
    out = tmp_path / "campaign"
    cmd = [sys.executable, "-m", "conformance", "run", "--frameworks", "torch,jax,tensorflow",
           "--checks", "forward,vjp,vjp_vjp,jvp,vmap_vjp,jvp_vjp", "--max-examples", "1",
           "--out", str(out), "--quiet"]  # fmt: skip
    subprocess.run(cmd, cwd=HERE.parents[1], capture_output=True, timeout=3600)
    proc = _check_script(out)
    assert proc.returncode == 0, proc.stdout[-6000:]
