"""A compiled mode's record reproducer compiles what the campaign compiles (issue #31).

The compiled adapters run a vmap / vmap_vjp check as one compiled program: torch:compile and
torch:aot_eager compile the whole ``torch.func`` transform (a compiled op called inside
``torch.func.vmap`` runs eager), jax:jit jits the ``jax.vmap``, tensorflow:function traces the
whole check. Each script here is made from a result of that adapter, run in process with the
framework's compiler watched (what it was handed), and run as a standalone script (exit 0: the
stock framework agrees with the embedded oracle)."""

from __future__ import annotations

import runpy

import pytest
from test_record_reproducers import _run  # (this directory)

from conformance.case import Case
from conformance.ops import RecordParams
from conformance.reproducer import reproducer


def _vmap_case(check):
    params = {"values": "normal", "in_dims": [0], "vmap_size": 2}
    return Case("tanh", RecordParams.of(params), {"input": (3,)}, "float64", 3, (check,))


def _script(tmp_path, spec, adapter, check):
    from conformance.ops.judge import run_in_process

    case = _vmap_case(check)
    result = run_in_process(adapter, case, check, adapter.setup())
    assert result["verdict"] == "pass", result
    result = {"case": case.to_dict(), "case_id": case.id, "check": check, "framework": adapter.name, **result}
    path = tmp_path / f"{adapter.name.replace(':', '_')}_{check}.py"
    path.write_text(reproducer(result, spec))
    return path


def _observed_with(path, module, attr, monkeypatch):
    """Run the script's ``observed()`` in process with ``module.attr`` (the compiler) recording the
    functions it is handed; the names of their code."""
    handed, real = [], getattr(module, attr)

    def watching(fn, *args, **kwargs):
        handed.append(fn.__name__)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(module, attr, watching)
    runpy.run_path(str(path), run_name="reproducer")["observed"]()
    return handed


@pytest.mark.parametrize("check", ["vmap", "vmap_vjp"])
def test_a_torch_compiled_vmap_reproducer_compiles_the_whole_transform(check, tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAotEagerAdapter

    spec = "conformance.adapters.torch_adapter:TorchAotEagerAdapter"
    path = _script(tmp_path, spec, TorchAotEagerAdapter(), check)
    text = path.read_text()
    assert "f = (lambda *xs: op(torch, *xs, **PARAMS))" in text  # the op itself not compiled
    assert "return COMPILE_WHOLE(whole)(" in text
    # what torch.compile is handed (on each of the script's two calls) is the whole check
    # (torch.func.vmap inside), as the adapter's: never the op (torch.func.vmap would run it eager)
    assert set(_observed_with(path, torch, "compile", monkeypatch)) == {"whole"}
    proc = _run(path, tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])


@pytest.mark.parametrize("check", ["vmap", "vmap_vjp"])
def test_a_jax_jit_vmap_reproducer_jits_the_vmap(check, tmp_path, monkeypatch):
    jax = pytest.importorskip("jax")
    from conformance.adapters.jax_adapter import JaxAdapter

    path = _script(tmp_path, "conformance.adapters.jax_adapter:JaxAdapter", JaxAdapter(), check)
    text = path.read_text()
    assert f"return jax_check(jax, {check!r}, lambda *ys: op(J, *ys, **PARAMS)" in text
    assert "ARRAYS, arr, VJP, jax.jit)" in text  # each check one program under jax.jit
    # jax_check hands jax.jit the vmapped function (jax.vmap returns it named after the mapped one)
    handed = _observed_with(path, jax, "jit", monkeypatch)
    assert handed == ["<lambda>" if check == "vmap" else "per_sample"], handed
    proc = _run(path, tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])


@pytest.mark.parametrize("check", ["vmap", "vmap_vjp"])
def test_a_tensorflow_function_vmap_reproducer_traces_the_whole_check(check, tmp_path, monkeypatch):
    tf = pytest.importorskip("tensorflow")
    from conformance.adapters.tf_adapter import TensorFlowFunctionAdapter

    spec = "conformance.adapters.tf_adapter:TensorFlowFunctionAdapter"
    path = _script(tmp_path, spec, TensorFlowFunctionAdapter(), check)
    assert "function = tf.function(run, jit_compile=False, autograph=False)" in path.read_text()
    assert _observed_with(path, tf, "function", monkeypatch) == ["run"]
    proc = _run(path, tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
