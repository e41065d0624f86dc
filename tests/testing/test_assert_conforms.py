"""refgrad.testing.assert_conforms: a user's own function judged with the harness's derived bounds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import reference as T
from refgrad.testing import ConformanceError, assert_conforms

ROOT = Path(__file__).resolve().parents[2]
torch = pytest.importorskip("torch")


def gelu_torch(x):
    return 0.5 * x * (1 + torch.erf(x * 2**-0.5))


def gelu_reference(x):
    return 0.5 * x * (1 + T.erf(x * 2**-0.5))


class _WrongGelu(torch.autograd.Function):
    """A hand-written GELU kernel whose backward forgets the x·pdf(x) term (a planted bug)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return gelu_torch(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 0.5 * (1 + torch.erf(x * 2**-0.5))


def wrong_gelu(x):
    return _WrongGelu.apply(x)


def _x(dtype=torch.float32, n=257):
    return torch.linspace(-4, 4, n, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_a_correct_kernel_passes_in_its_dtype_with_no_hand_set_tolerance(dtype):
    records = assert_conforms(
        gelu_torch, gelu_reference, _x(dtype), checks=("forward", "vjp", "vjp_vjp", "jvp")
    )
    assert [r["verdict"] for r in records] == ["pass"] * 4
    assert all(r["max_ratio"] <= 1 for r in records)


def test_a_planted_wrong_gradient_is_caught_with_element_values_bound_and_reproducer(tmp_path, monkeypatch):
    monkeypatch.setenv("REFGRAD_REPRO_DIR", str(tmp_path))
    assert_conforms(wrong_gelu, gelu_reference, _x(), checks=("forward",))  # the forward is right
    with pytest.raises(ConformanceError) as err:
        assert_conforms(wrong_gelu, gelu_reference, _x(), checks=("forward", "vjp"))
    message = str(err.value)
    assert message.startswith("fail: torch vjp of wrong_gelu([257]) float32")
    assert "element grad_0[" in message and "> bound" in message and "terms {" in message
    assert err.value.record["worst"]["ratio"] > 1
    script = Path(message.split("reproducer: ")[1].split(" (data: ")[0])
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("grad_0 [") and "worst element" in run.stdout


def test_exact_but_differently_rounded_results_pass():
    """x*x*x on the framework against pow(x, 3) in the reference: different roundings, both within the bound."""
    assert_conforms(lambda x: x * x * x, lambda x: x**3, _x(n=1001), checks=("forward", "vjp", "jvp"))


def test_numpy_inputs_need_the_framework_and_bad_arguments_are_named():
    with pytest.raises(ValueError, match="framework=None"):
        assert_conforms(gelu_torch, gelu_reference, np.ones(3, dtype=np.float32))
    assert_conforms(gelu_torch, gelu_reference, np.ones(3, dtype=np.float32), framework="torch")
    with pytest.raises(ValueError, match=r"checks=\('hessian',\)"):
        assert_conforms(gelu_torch, gelu_reference, _x(), checks=("hessian",))
    with pytest.raises(ValueError, match="dtype='float8'"):
        assert_conforms(gelu_torch, gelu_reference, _x(), dtype="float8")


def test_jax_functions_are_judged_the_same_way():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    # x >= -1.5: below, JAX's float32 tanh-form gelu derivative cancels in 1 - tanh^2 and departs
    # from the exact value (known entry jax-gelu-tanh-one-plus-tanh-cancels; docs/accuracy.md)
    x = jax.numpy.asarray(np.linspace(-1.5, 3, 101), dtype=jax.numpy.float32)
    assert_conforms(
        jax.nn.gelu, lambda t: T.nn.functional.gelu(t, approximate="tanh"), x, checks=("forward", "vjp")
    )


def test_the_plugin_writes_a_report_that_conformance_report_renders(tmp_path):
    test_file = tmp_path / "test_user.py"
    test_file.write_text(
        textwrap.dedent(
            """
            import torch, pytest
            import reference as T
            from refgrad.testing import assert_conforms

            def test_square():
                assert_conforms(lambda x: x * x, lambda x: x * x, torch.linspace(-2, 2, 33))

            def test_wrong():
                assert_conforms(lambda x: x * x, lambda x: x * x * 1.001, torch.linspace(-2, 2, 33))
            """
        )
    )
    out = tmp_path / "rg"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(test_file),
            "--refgrad-report",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 1, run.stdout + run.stderr  # test_wrong fails
    assert "1 failed, 1 passed" in run.stdout and f"written to {out}/index.html" in run.stdout
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["verdict"] for r in records] == ["pass", "pass", "pass", "fail"]
    from conformance.cli import main

    assert main(["report", str(out)]) == 1
    assert "FAILURES FOUND" in (out / "index.html").read_text()


# ---- the run-integrity contract (issue #36) ---------------------------------------------------------
def test_a_call_that_judges_no_element_fails_saying_nothing_judged():
    """exp(100) is past float32's range: every element's bound is infinite, so `a * 0` would pass."""
    with pytest.raises(ConformanceError, match="^nothing judged: torch forward") as err:
        assert_conforms(lambda a: a * 0, T.exp, torch.full((8,), 100.0))
    assert "none of the 8 elements could be compared" in str(err.value)
    assert err.value.record["verdict"] == "refused"  # a harness verdict: judged nothing, departs nowhere
    with pytest.raises(ConformanceError, match="^nothing judged"):  # every reference value NaN
        assert_conforms(lambda a: a * float("nan"), lambda a: a * float("nan"), torch.ones(3))


RETURNS = [
    (lambda a: 1.5, "returned builtins.float (1.5)"),
    (lambda a: (a, a), "returned builtins.tuple (("),
    (lambda a: a.detach().numpy(), "returned numpy.ndarray (array("),
]


# (under torch.func.jvp, .numpy() itself raises inside the user's function: a genuine error_mismatch)
@pytest.mark.parametrize(
    "returned, says, check",
    [(r, s, c) for c in ("forward", "vjp", "jvp") for r, s in RETURNS if not (c == "jvp" and "numpy" in s)],
)
def test_a_return_value_that_is_not_a_tensor_is_a_type_error_naming_it(returned, says, check):
    with pytest.raises(TypeError, match="the function under test") as err:
        assert_conforms(returned, lambda a: a, _x(n=5), checks=(check,))
    assert says in str(err.value) and "not a torch tensor" in str(err.value)
    assert not isinstance(err.value, ConformanceError) and "torch raised" not in str(err.value)


def test_a_reference_returning_no_reference_tensor_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match=r"the reference function .* returned builtins.float \(3.0\)"):
        assert_conforms(lambda a: a, lambda a: 3.0, _x(n=5))


def test_mixed_float_dtypes_are_an_error_unless_dtype_is_given():
    x64, x32 = _x(torch.float64, n=5), _x(torch.float32, n=5)
    with pytest.raises(ValueError, match="input 0 is float64, input 1 is float32"):
        assert_conforms(lambda a, b: a * b, lambda a, b: a * b, x64, x32)
    records = assert_conforms(lambda a, b: a * b, lambda a, b: a * b, x64, x32, dtype="float32")
    assert {r["dtype"] for r in records} == {"float32"}
    assert all(r["converted_inputs"] == {"input0": "float64 -> float32"} for r in records)


def test_a_failure_inside_the_reference_is_a_reference_error_not_the_frameworks():
    def broken_reference(a):
        return T.exp(a).no_such_method()

    with pytest.raises(ConformanceError, match="^reference_error: ") as err:
        assert_conforms(lambda a: a, broken_reference, _x(n=5))
    rec = err.value.record
    assert rec["verdict"] == "reference_error" and rec["check"] == "forward"
    assert "the reference function raised AttributeError" in rec["reason"] and "not torch" in str(err.value)
    assert isinstance(err.value.__cause__, AttributeError)


def test_a_builtin_function_that_departs_gets_a_runnable_reproducer(tmp_path, monkeypatch):
    """A framework builtin (torch.sin, no Python source) judged against another function fails with
    ConformanceError and a reproducer that imports it by name, not a TypeError from inspect."""
    monkeypatch.setenv("REFGRAD_REPRO_DIR", str(tmp_path))
    with pytest.raises(ConformanceError) as err:
        assert_conforms(torch.sin, T.cos, _x(n=9), checks=("forward",))
    script = Path(str(err.value).split("reproducer: ")[1].split(" (data: ")[0])
    assert "from torch import sin as fn" in script.read_text()
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
