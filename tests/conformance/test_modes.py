"""Execution modes (``framework:mode``): parsing and errors, per-signature compile caching and timing,
a planted bug in one mode's compiled path (caught and attributed to that mode, the eager column
clean), the mode-vs-mode differential, a missing compiler, and a small real run per mode."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from conformance import adapters
from conformance.adapters._modes import ModeCache, signature
from conformance.adapters.base import Adapter
from conformance.case import load_cases
from conformance.cli import _frameworks, _parser, main
from conformance.report import build_report, mode_differential
from conformance.runner import Campaign

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "refgrad" / "cases" / "gemm_paths.json"


def _chosen(value):
    return _frameworks(_parser().parse_args(["run", "--frameworks", value]))


def _case(i=0, **changes):
    return replace(load_cases(GEMM)[i], **changes)


# ---- parsing ------------------------------------------------------------------------------------
def test_default_modes_are_the_plain_names_and_modes_have_specs_of_their_own():
    assert _chosen("torch:eager,jax:jit,tensorflow:eager") == {
        "torch": "conformance.adapters.torch_adapter:TorchAdapter",
        "jax": "conformance.adapters.jax_adapter:JaxAdapter",
        "tensorflow": "conformance.adapters.tf_adapter:TensorFlowAdapter",
    }
    chosen = _chosen("torch:compile,torch:aot_eager,jax:eager,tensorflow:function,tensorflow:xla")
    assert chosen == adapters.mode_specs()
    for name, spec in chosen.items():
        assert adapters.load_class(spec).name == name  # the results' framework column is the mode's name
    # the default campaign runs every installed framework in its default mode only
    default = _frameworks(_parser().parse_args(["run"]))
    assert default and not any(":" in name for name in default)


@pytest.mark.parametrize(
    "value, words",
    [
        ("torch:jit", "'jit' is not an execution mode of torch (valid modes: eager, compile, aot_eager"),
        ("jax:compile", "'compile' is not an execution mode of jax (valid modes: eager, jit"[:40]),
        ("tensorflow:graph", "valid modes: eager, function, xla"),
        ("numpy:eager", "'numpy' has no execution modes"),
        ("torch:", "'' is not an execution mode of torch"),
    ],
)
def test_an_unknown_mode_exits_2_naming_the_valid_modes(value, words, capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--frameworks", value, "--out", "/nonexistent/never-written"])
    assert info.value.code == 2
    assert words in capsys.readouterr().err


def test_frameworks_lists_the_execution_modes(capsys, monkeypatch):
    from conformance.runner import Worker

    def no_start(self):  # the listing of modes does not depend on starting the frameworks
        raise RuntimeError("not started in this test")

    monkeypatch.setattr(Worker, "start", no_start)
    assert main(["frameworks"]) == 0
    out = capsys.readouterr().out
    assert (
        "torch execution modes (--frameworks torch:MODE; torch = the first): torch:eager, torch:compile"
        in out
    )
    assert "tensorflow:xla" in out and "jax:eager" in out


def test_a_shape_signature_ignores_values_and_names_but_not_shapes_dtype_or_check():
    a = _case(0)
    assert signature(a, "vjp") == signature(replace(a, seed=7, name="other", description="x"), "vjp")
    assert signature(a, "vjp") != signature(a, "forward")
    assert signature(a, "vjp") != signature(replace(a, dtype="float64"), "vjp")
    assert signature(a, "vjp") != signature(replace(a, shapes={**a.shapes, "input": (3, 5, 4, 3)}), "vjp")


# ---- the mode-vs-mode differential (unit) -------------------------------------------------------
def _rec(fw, verdict, kind_output="output"):
    rec = {"case_id": "c1", "check": "forward", "framework": fw, "verdict": verdict, "phase": "campaign"}
    if verdict == "fail":
        rec.update(reason="outside the bound", worst={"output": kind_output})
    return rec


def _index(*records):
    from conformance.report import _mode_index

    return _mode_index(list(records))


def test_differential_names_the_departing_mode_and_tells_inductor_from_capture():
    eager, comp, aot = _rec("torch", "pass"), _rec("torch:compile", "fail"), _rec("torch:aot_eager", "pass")
    modes, text = mode_differential(comp, _index(eager, comp, aot))
    assert modes == {"torch": "pass", "torch:aot_eager": "pass", "torch:compile": "fail"}
    assert "torch:compile departs; torch (eager), torch:aot_eager pass(es) this case" in text
    assert "Inductor's code generation" in text
    aot = _rec("torch:aot_eager", "fail")
    _, text = mode_differential(comp, _index(eager, comp, aot))
    assert "graph capture or AOTAutograd's decompositions, not Inductor's code generation" in text


def test_differential_says_kernel_not_compiler_when_every_mode_departs_the_same_way():
    eager, xla = _rec("tensorflow", "fail"), _rec("tensorflow:xla", "fail")
    _, text = mode_differential(xla, _index(eager, xla))
    assert "every mode of tensorflow run on this case departs the same way" in text
    assert "it is tensorflow's kernel, not its compiler" in text
    # a different kind of departure is not "the same way"
    _, text = mode_differential(xla, _index(_rec("tensorflow", "fail", "grad_input"), xla))
    assert "kernel, not its compiler" not in text
    assert mode_differential(xla, _index(xla)) == (None, None)  # no other mode ran it
    # the op-by-op mode did not run: no claim about the kernel either way
    function, xla = _rec("tensorflow:function", "fail"), _rec("tensorflow:xla", "pass")
    _, text = mode_differential(function, _index(function, xla))
    assert "tensorflow:function departs; tensorflow:xla pass(es) this case" in text
    assert "did not run this case: whether tensorflow's kernel shares the departure is not known" in text


# ---- a planted bug in the compiled path only -----------------------------------------------------
def test_a_bug_in_the_jit_path_only_is_caught_and_attributed_to_that_mode(tmp_path):
    pytest.importorskip("jax")
    frameworks = {
        "jax:eager": adapters.mode_specs()["jax:eager"],
        "jax:planted_jit": "planted_modes:JitDropsBias",
    }
    cases = [c for c in load_cases(GEMM) if c.params.bias][:2]
    assert cases
    out = tmp_path / "out"
    with Campaign(out, frameworks) as camp:
        camp.start()
        records = camp.run_cases([c.with_checks(["forward", "vjp"]) for c in cases])
    by = {(r["framework"], r["check"], r["case_id"]): r["verdict"] for r in records}
    for c in cases:
        assert by[("jax:eager", "forward", c.id)] == "pass"  # the eager column stays clean
        assert by[("jax:eager", "vjp", c.id)] == "pass"
        assert by[("jax:planted_jit", "forward", c.id)] == "fail"
        assert by[("jax:planted_jit", "vjp", c.id)] == "pass"  # the bias is dropped in forward only
    report = build_report(out, camp.frameworks_info())
    found = report["discrepancies"]
    assert found and {d["framework"] for d in found} == {"jax:planted_jit"}
    for d in found:
        assert d["modes"] == {"jax:eager": "pass", "jax:planted_jit": "fail"}
        assert "jax:planted_jit departs; jax:eager pass(es) this case" in d["mode_differential"]
        assert d["mode_differential"] in d["reason"]
    assert {c["framework"] for c in report["cells"]} == {"jax:eager", "jax:planted_jit"}  # own columns
    html = (out / "index.html").read_text()
    assert "mode differential: jax:planted_jit departs" in html
    assert report["environment"]["frameworks"]["jax:eager"]["settings"]["mode"] == "eager"


# ---- compiler missing -------------------------------------------------------------------------------
def test_torch_compile_without_a_cxx_compiler_is_unsupported_with_the_reason(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    monkeypatch.delenv("TORCH_INDUCTOR_INSTALL_GXX", raising=False)
    with Campaign(tmp_path / "out", {"torch:compile": adapters.mode_specs()["torch:compile"]}) as camp:
        info = camp.start()
        [rec] = camp.run_check(_case(0, checks=("forward",)), "forward")
    assert info["torch:compile"]["settings"]["cxx"].startswith("missing")
    assert rec["verdict"] == "unsupported"
    assert "needs a C++ compiler for Inductor's CPU code and none was found" in rec["reason"]


# ---- a small real run per mode ---------------------------------------------------------------------
def _real_run(tmp_path, name, checks=("forward", "vjp")):
    spec = adapters.known()[name]
    case = _case(0, checks=tuple(checks))
    with Campaign(tmp_path / name.replace(":", "-"), {name: spec}) as camp:
        info = camp.start()
        first = camp.run_cases([case])
        again = camp.run_cases([replace(case, seed=5)])  # the same shape signature: a cache hit
    assert {r["verdict"] for r in first + again} == {"pass"}, [r.get("reason") for r in first + again]
    settings = info[name]["settings"]
    assert settings["mode"] == name.partition(":")[2] or name.partition(":")[2] == ""
    return first, again, settings


def _compiled_timing(first, again):
    for r in first:
        assert r["cache"] == "miss" and r["compile_seconds"] >= 0
        assert abs(r["compile_seconds"] + r["run_seconds"] - r["seconds"]) < 1e-5
    for r in again:
        assert r["cache"] == "hit" and r["compile_seconds"] == 0


def test_jax_eager_real_run(tmp_path):
    pytest.importorskip("jax")
    first, again, settings = _real_run(tmp_path, "jax:eager")
    assert all("cache" not in r for r in first + again)  # nothing compiles
    assert settings["compile_allowance_s"] == 0


def test_jax_jit_caches_per_signature(tmp_path):
    pytest.importorskip("jax")
    first, again, settings = _real_run(tmp_path, "jax")
    _compiled_timing(first, again)
    assert settings["mode"] == "jit"


@pytest.mark.parametrize(
    "name, checks",
    [
        ("tensorflow:function", ("forward",)),
        pytest.param("tensorflow:xla", ("forward", "vjp"), marks=pytest.mark.slow),
    ],
)
def test_tensorflow_function_and_xla_real_run(tmp_path, name, checks):
    pytest.importorskip("tensorflow")
    first, again, settings = _real_run(tmp_path, name, checks)
    _compiled_timing(first, again)
    assert settings["jit_compile"] is (name == "tensorflow:xla")


def test_torch_aot_eager_real_run(tmp_path):
    pytest.importorskip("torch")
    first, again, settings = _real_run(tmp_path, "torch:aot_eager", ("forward",))
    _compiled_timing(first, again)
    assert settings["backend"] == "aot_eager" and settings["dynamic_shapes"] is False


@pytest.mark.slow
def test_torch_compile_real_run(tmp_path):
    pytest.importorskip("torch")
    first, again, settings = _real_run(tmp_path, "torch:compile", ("forward", "vjp", "jvp"))
    _compiled_timing(first, again)
    assert settings["backend"] == "inductor" and not settings["cxx"].startswith("missing")


@pytest.mark.parametrize("name", ["jax:eager", pytest.param("tensorflow:xla", marks=pytest.mark.slow)])
def test_an_op_record_runs_in_a_mode(tmp_path, name):
    pytest.importorskip(name.partition(":")[0])
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--frameworks",
            name,
            "--ops",
            "silu",
            "--checks",
            "forward,vjp,jvp",
            "--dtypes",
            "float64",
            "--max-examples",
            "1",
            "--out",
            str(out),
            "--found-dir",
            str(tmp_path / "found"),
            "--quiet",
        ]
    )
    assert code == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["framework"] for r in records} == {name}
    assert {r["check"] for r in records} == {"forward", "vjp", "jvp"}
    assert {r["verdict"] for r in records} == {"pass"}


@pytest.mark.slow
def test_torch_compile_records_and_aotautograds_double_backward_limit(tmp_path):
    """An op record under torch:aot_eager: forward, vjp and jvp pass; vjp_vjp, which AOTAutograd
    refuses ("does not currently support double backward"), is unsupported with that reason."""
    pytest.importorskip("torch")
    out = tmp_path / "out"
    argv = ["run", "--frameworks", "torch:aot_eager", "--ops", "silu", "--dtypes", "float32"]
    argv += ["--max-examples", "1", "--out", str(out), "--found-dir", str(tmp_path / "found"), "--quiet"]
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_check = {r["check"]: r for r in records}
    assert {by_check[c]["verdict"] for c in ("forward", "vjp", "jvp")} == {"pass"}
    assert by_check["vjp_vjp"]["verdict"] == "unsupported"
    assert "does not differentiate its compiled backward (double backward)" in by_check["vjp_vjp"]["reason"]


# ---- the fair deadline: a first compile is the framework's work, with the mode's allowance --------
class _FakeCompiler(ModeCache, Adapter):
    name = "fake:compile"
    compiles = True
    compile_allowance = 7.0

    def forward(self, case, a):
        return self._compiled(case, "forward", lambda: lambda x: 2 * x, lambda f: {"output": f(a["input"])})


def test_the_worker_announces_the_allowance_on_a_miss_and_reports_compile_time():
    from conformance.worker import handle

    adapter = _FakeCompiler()
    message = {"case": _case(0, checks=("forward",)).to_dict(), "check": "forward"}
    first = handle(adapter, message)
    assert first["status"] == "ok" and first["allowance"] == 7.0 and first["cache"] == "miss"
    assert 0 <= first["compile_seconds"] <= first["seconds"]
    message["case"] = _case(0, checks=("forward",), seed=3).to_dict()  # same signature, other values
    again = handle(adapter, message)
    assert again["allowance"] == 0.0 and again["cache"] == "hit" and again["compile_seconds"] == 0.0


def test_the_runner_extends_the_deadline_by_the_announced_allowance(monkeypatch):
    import time

    from conformance.runner import Worker

    worker = Worker("fake:compile", "x:Y")
    now = time.monotonic()
    replies = iter([{"status": "started", "started_at": now, "allowance": 300.0}, {"status": "ok"}])
    deadlines = []

    def receive(deadline, what=""):
        deadlines.append(deadline)
        return next(replies)

    monkeypatch.setattr(worker, "_receive", receive)
    assert worker.receive(120.0) == {"status": "ok"}
    assert deadlines[1] == pytest.approx(now + 420.0)


# ---- an op record's vmap checks compile the whole transform ---------------------------------------
@pytest.mark.parametrize("check", ["vmap", pytest.param("vmap_vjp", marks=pytest.mark.slow)])
def test_torch_compile_record_vmap_compiles_the_whole_transform(check):
    """A compiled function called inside ``torch.func.vmap`` runs eager (Dynamo does not compile
    under an outer functorch transform), so the record's vmap checks compile the whole
    ``torch.func.vmap``: the backend sees a graph, and the answer passes."""
    pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAotEagerAdapter
    from conformance.ops.judge import run_in_process
    from conformance.strategies import draw_examples, record_cases

    graphs = []

    class Counting(TorchAotEagerAdapter):
        def _compile(self, fn):
            def backend(gm, inputs):
                graphs.append(gm)
                return gm.forward

            return self.torch.compile(fn, backend=backend, dynamic=False)

    adapter = Counting()
    case = draw_examples(record_cases("silu", ("float64",), (check,)), 1)[0]
    result = run_in_process(adapter, case, check, adapter.setup())
    assert result["verdict"] == "pass", result
    assert graphs, "the vmap check ran eager: nothing was compiled"


# ---- tensorflow:xla: an op XLA has no kernel for is unsupported, with the op named -----------------
_TF2XLA = (
    "Detected unsupported operations when trying to compile graph __inference_f_23[_XlaMustCompile=true] "
    "on XLA_CPU_JIT: MaxPoolGradGrad (No registered 'MaxPoolGradGrad' OpKernel for XLA_CPU_JIT devices "
    "compatible with node {{node gradient_tape/MaxPoolGradGrad}}\n\t (OpKernel was found, but attributes "
    'didn\'t match) Requested Attributes: T=DT_DOUBLE, data_format="NHWC"){{node MaxPoolGradGrad}}, '
    "MatrixDeterminant (No registered 'MatrixDeterminant' OpKernel for XLA_CPU_JIT devices compatible with "
    "node {{node MatrixDeterminant}}){{node MatrixDeterminant}}\n\ttf2xla conversion failed while converting"
)


def test_xla_missing_kernels_names_the_ops_and_the_dtype():
    from conformance.adapters.tf_adapter import xla_missing_kernels

    reason = xla_missing_kernels(_TF2XLA)
    assert reason.startswith("XLA has no XLA_CPU_JIT kernel for MatrixDeterminant, MaxPoolGradGrad in double")
    # a conversion failure that is not a missing kernel stays an error (a departure to judge)
    assert (
        xla_missing_kernels("Slice dim size 1 greater than dynamic slice dimension: 0. [[{{node Svd}}]]")
        is None
    )
    assert xla_missing_kernels("Detected unsupported operations when trying to compile graph g") is None


@pytest.mark.slow
def test_tensorflow_xla_reports_an_op_without_an_xla_kernel_unsupported():
    pytest.importorskip("tensorflow")
    from conformance.adapters.tf_adapter import TensorFlowXlaAdapter
    from conformance.ops.judge import run_in_process
    from conformance.strategies import draw_examples, record_cases

    adapter = TensorFlowXlaAdapter()
    settings = adapter.setup()
    case = draw_examples(record_cases("linalg_det", ("float64",), ("forward",)), 1)[0]
    result = run_in_process(adapter, case, "forward", settings)
    assert result["verdict"] == "unsupported", result
    assert "XLA has no XLA_CPU_JIT kernel for MatrixDeterminant" in result["reason"]


def test_an_unsupported_reason_raised_inside_a_traced_tf_function_is_the_message_alone():
    """TF re-raises an exception from a traced function (a vectorized_map body) with its traceback
    around the message; the result's reason is the adapter's reason alone."""
    from conformance.functional import Unsupported
    from conformance.worker import handle, unsupported_reason

    wrapped = Unsupported(
        'in user code:\n\n    File "conformance/ops/_run.py", line 392, in per_sample\n        return fn(tf, *xs)\n'
        '    File "conformance/ops/pooling.py", line 65, in _tf_max_pool3d\n        raise Unsupported("...")\n\n'
        "    Unsupported: tf.nn.max_pool3d has no float64 kernel\n"
    )
    assert unsupported_reason(wrapped) == "tf.nn.max_pool3d has no float64 kernel"
    assert unsupported_reason(Unsupported("plain reason")) == "plain reason"

    class Traced(_FakeCompiler):
        def forward(self, case, a):
            raise wrapped

    reply = handle(Traced(), {"case": _case(0, checks=("forward",)).to_dict(), "check": "forward"})
    assert reply == {"status": "unsupported", "reason": "tf.nn.max_pool3d has no float64 kernel"}
