"""Programs in low precision: the per-element bound the reference derives with its error tracker
catches a 16-ulp error in one gradient element of a bfloat16 program, and accepts a sum computed in
another order (in the dtype, or in float32 where the framework promises float32 accumulation)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformance.case import Case
from conformance.programs import (
    execute,
    program_inputs,
    program_precision,
    program_verdict,
    reference_bounds,
    reference_outcome,
)
from conformance.tolerance import ulp_of

# views, an in-place update through a view (CopySlices), a reduction, a backward
VIEW_PROGRAM = """def prog(T, v0, v1):
    v2 = v0 * 1.0
    v3 = v2[1:3]
    v3.mul_(v1)
    v4 = v2.sum(0)
    loss = (v2 * 1).sum() + (v4 * 2).sum()
    loss.backward()
    return [v0, v1, v2, v3, v4]
"""
SUM_PROGRAM = """def prog(T, v0):
    v1 = v0.sum(0)
    loss = (v1 * 1).sum()
    loss.backward()
    return [v0, v1]
"""


def _case(source, shapes, dtype):
    return Case("program", None, shapes, dtype, 0, ("program",), source=source)


def _verdict(case, outputs, framework):
    return program_verdict(case, reference_outcome(case), {"status": "ok", "outputs": outputs}, framework)


@pytest.mark.torch
def test_a_16_ulp_error_in_any_gradient_element_of_a_bfloat16_program_is_caught():
    torch = pytest.importorskip("torch")
    case = _case(VIEW_PROGRAM, {"v0": (3, 4), "v1": (2, 4)}, "bfloat16")
    observed = execute(case.source, torch, program_inputs(case), dtype="bfloat16")
    honest = _verdict(case, observed, "torch")
    assert honest["verdict"] == "pass", honest  # PyTorch's own bfloat16 run is within the bound
    for name in ("grad[v0]", "grad[v1]"):
        for idx in np.ndindex(observed[name].shape):
            planted = observed[name].copy()
            planted[idx] += 16 * ulp_of(planted[idx], "bfloat16")
            verdict = _verdict(case, {**observed, name: planted}, "torch")
            assert verdict["verdict"] == "fail", (name, idx, verdict)
            assert verdict["worst"]["output"] == name and tuple(verdict["worst"]["index"]) == idx


def _sum_in_reverse(values, accumulate):
    """Column sums of ``values`` added last row first, each partial sum rounded to ``accumulate``,
    the result rounded to bfloat16 (what a kernel summing in another order returns)."""
    torch = pytest.importorskip("torch")
    acc = torch.zeros(values.shape[1], dtype=getattr(torch, accumulate))
    for row in values[::-1]:
        acc = acc + torch.tensor(row, dtype=torch.float64).to(acc.dtype)
    return acc.to(torch.bfloat16).double().numpy()


@pytest.mark.torch
def test_a_sum_in_another_order_is_not_a_failure_and_a_wrong_sum_is():
    case = _case(SUM_PROGRAM, {"v0": (64, 3)}, "bfloat16")
    status, expected = reference_outcome(case)
    assert status == "ok"
    x = program_inputs(case)["v0"]
    # JAX and TensorFlow promise no float32 accumulator: any order, partial sums in bfloat16
    in_bf16 = {**expected, "result[1]": _sum_in_reverse(x, "bfloat16")}
    assert not np.array_equal(in_bf16["result[1]"], _sum_in_reverse(x[::-1], "bfloat16"))  # order matters
    assert _verdict(case, in_bf16, "jax")["verdict"] == "pass"
    assert (
        _verdict(case, {**in_bf16, "result[1]": _sum_in_reverse(x[::-1], "bfloat16")}, "tensorflow")[
            "verdict"
        ]
        == "pass"
    )
    # PyTorch promises float32 accumulation: another order in float32 passes
    in_fp32 = {**expected, "result[1]": _sum_in_reverse(x, "float32")}
    assert _verdict(case, in_fp32, "torch")["verdict"] == "pass"
    assert program_precision(case, "torch").accumulate == "float32"
    # ... and a sum off by 16 ulps does not
    off = in_fp32["result[1]"].copy()
    off[1] += 16 * ulp_of(off[1], "bfloat16")
    assert _verdict(case, {**in_fp32, "result[1]": off}, "torch")["verdict"] == "fail"
    assert program_precision(case, "jax").accumulate is None


def test_the_bound_carries_errors_through_accumulate_grad_and_double_backward():
    """Gradients accumulated into ``.grad`` over two backward calls, and a double backward's, carry
    the rounding of every pass: non-zero bounds where the value rounds, zero where it is exact."""
    from reference.errors import Precision

    source = """def prog(T, v0):
    v1 = v0.exp()
    loss = (v1 * 1).sum()
    (g,) = T.autograd.grad(loss, [v0], create_graph=True)
    (g * g).sum().backward(retain_graph=True)
    (g * g).sum().backward()
    return [v0, v1]
"""
    case = _case(source, {"v0": (3,)}, "float32")
    (bounds,) = reference_bounds(case, [Precision("float32")])
    x = program_inputs(case)["v0"]
    grad = reference_outcome(case)[1]["grad[v0]"]
    np.testing.assert_allclose(grad, 2 * 2 * np.exp(2 * x))  # d/dx e^{2x}, twice
    assert not bounds["result[0]"].any()
    # at least the roundings of exp, the product, its VJP and the accumulation: a few ulps, not zero
    assert (bounds["grad[v0]"] > 3 * 2.0**-24 * np.abs(grad)).all()
    assert (bounds["grad[v0]"] < 64 * 2.0**-24 * np.abs(grad)).all()


@pytest.mark.torch
def test_run_ops_programs_in_every_dtype(tmp_path):
    pytest.importorskip("torch")
    from conformance.cli import main

    out, curated = tmp_path / "run", tmp_path / "none"
    curated.mkdir()
    argv = ["run", "--ops", "programs", "--frameworks", "torch", "--dtypes", "float32,bfloat16,float16"]
    argv += ["--max-examples", "12", "--cases", str(curated), "--out", str(out), "--quiet"]
    assert main(argv + ["--found-dir", str(tmp_path / "found")]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    records = [r for r in records if r.get("check") == "program"]
    assert {r["dtype"] for r in records} == {"float32", "bfloat16", "float16"}
    assert all(r["verdict"] == "pass" for r in records)
    for r in records:
        assert r["bound"]["dtype"] == r["dtype"]
        assert r["bound"]["accumulator"] == ("float32" if r["dtype"] != "float64" else "float64")


@pytest.mark.torch
def test_the_reproducer_of_a_bfloat16_program_runs_it_in_bfloat16_with_the_derived_bounds(tmp_path):
    import subprocess
    import sys

    pytest.importorskip("torch")
    from conformance.reproducer import program_reproducer

    case = _case(VIEW_PROGRAM, {"v0": (3, 4), "v1": (2, 4)}, "bfloat16")
    record = {
        "case": case.to_dict(),
        "case_id": case.id,
        "framework": "torch",
        "verdict": "fail",
        "reason": "x",
    }
    record["bound"] = {"dtype": "bfloat16", "accumulator": "float32", "underflow": "gradual"}
    script = program_reproducer(record)
    assert "DTYPE = 'bfloat16'" in script
    ok = tmp_path / "repro.py"
    ok.write_text(script)
    run = subprocess.run([sys.executable, str(ok)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and "agrees with the reference" in run.stdout, run.stdout + run.stderr
    # the same script with every bound zero: PyTorch's bfloat16 values are not the float64 reference's
    start = script.index("BOUNDS = json.loads(")
    end = script.index("\n", start)
    zero = (
        script[:start]
        + "BOUNDS = {k: np.zeros(np.shape(v)).tolist() for k, v in json.loads("
        + script[start + 20 : end]
        + ".items()}"
        + script[end:]
    )
    bad = tmp_path / "repro_zero.py"
    bad.write_text(zero)
    run = subprocess.run([sys.executable, str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr


@pytest.mark.torch
def test_an_autograd_error_in_bfloat16_names_the_tensor_in_its_dtype():
    """The reference computes in float64; the version-counter message it reproduces names the tensor
    as PyTorch does for the case's dtype ([CPUBFloat16Type [3]]), so PyTorch's own error passes."""
    torch = pytest.importorskip("torch")
    from conformance.programs import ProgramError

    source = "def prog(T, v0):\n    v1 = v0.exp()\n    v1.add_(1.0)\n    loss = (v1 * 1).sum()\n    loss.backward()\n    return [v0, v1]\n"
    case = _case(source, {"v0": (3,)}, "bfloat16")
    with pytest.raises(ProgramError) as raised:
        execute(case.source, torch, program_inputs(case), dtype="bfloat16")
    assert "[CPUBFloat16Type [3]]" in raised.value.message
    reply = {"status": "error", "type": raised.value.type_name, "message": raised.value.message}
    reply.update(line=raised.value.line, text=raised.value.text)
    verdict = program_verdict(case, reference_outcome(case), reply, "torch")
    assert verdict["verdict"] == "pass", verdict


def test_an_in_place_update_adds_its_rounding_to_the_bound():
    """``v1.add_(0.5)`` rounds like ``v1 + 0.5``: the tracker carries the in-place result's bound into
    the tensor's storage (before, the write kept the old bound: the add's rounding was missing)."""
    from reference.errors import Precision

    source = """def prog(T, v0):
    v1 = v0 * 1.0
    v1.add_(0.5)
    v2 = v1 + 0.5
    loss = (v1 * 1).sum() + (v2 * 1).sum()
    loss.backward()
    return [v0, v1, v2]
"""
    case = _case(source, {"v0": (4,)}, "bfloat16")
    (bounds,) = reference_bounds(case, [Precision("bfloat16")])
    values = reference_outcome(case)[1]
    u = 2.0**-8
    assert (bounds["result[1]"] >= u * np.abs(values["result[1]"])).all()  # the add_'s own rounding
    # the same rounding as the out-of-place add's, which v2 adds on top of it
    np.testing.assert_allclose(
        bounds["result[2]"] - bounds["result[1]"], u * np.abs(values["result[2]"]), rtol=0.01
    )


def test_an_in_place_update_through_a_view_keeps_the_bound_of_the_rest_of_its_base():
    """The written region's bound is set inside the storage's: the base's other elements keep theirs
    (a bound registered for the view's region alone answered for the whole base from its first element)."""
    from reference.errors import Precision

    head = "def prog(T, v0):\n    v1 = v0 * 3.0\n"
    tail = "    loss = (v1 * 1).sum()\n    loss.backward()\n    return [v0, v1]\n"
    written = _case(head + "    v2 = v1[:, 0, None]\n    v2.div_(4.0)\n" + tail, {"v0": (1, 2)}, "bfloat16")
    plain = _case(head + tail, {"v0": (1, 2)}, "bfloat16")
    (b_written,) = reference_bounds(written, [Precision("bfloat16")])
    (b_plain,) = reference_bounds(plain, [Precision("bfloat16")])
    assert b_written["result[1]"][0, 1] == b_plain["result[1]"][0, 1] > 0
    assert b_written["result[1]"][0, 0] > b_plain["result[1]"][0, 0] / 4  # the division's own rounding
