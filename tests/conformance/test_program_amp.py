"""Mixed precision as users run it (issue #33, conformance.amp): program cases under a cast policy
(``"amp": "mixed_bfloat16"``): PyTorch's forward under ``torch.autocast`` CPU bfloat16, JAX's and
TensorFlow's with the same casts written by hand, judged per element against the bound the error
tracker derives with each kernel in the dtype the policy says it runs in."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conformance.amp import low_dtype
from conformance.case import Case, CaseError
from conformance.programs import (
    execute,
    program_inputs,
    program_precision,
    program_verdict,
    reference_bounds,
    reference_outcome,
)
from conformance.tolerance import ulp_of

# a linear layer with a bias, summed; and the same with an in-place update through a view
LINEAR = """def prog(T, v0, v1, v2):
    v3 = v0 @ v1.t() + v2
    loss = (v3 * 1).sum()
    loss.backward()
    return [v0, v1, v2, v3]
"""
LINEAR_INPLACE = """def prog(T, v0, v1, v2):
    v3 = v0 @ v1.t() + v2
    v4 = v3[:, 1:3]
    v4.mul_(2.0)
    loss = (v3 * 1).sum() + (v4 * v4).sum()
    loss.backward()
    return [v0, v1, v2, v3, v4]
"""
# the layers of the model templates: layer_norm (its output in its input's dtype), tanh, cross entropy
# (a float32 op), a matmul feeding it
BLOCK = """def prog(T, v0, v1, v2):
    v3 = v0 @ v1.t() + v2
    v4 = T.nn.functional.layer_norm(v3, (3,))
    v5 = v4.tanh()
    v6 = T.nn.functional.cross_entropy(v5 @ v1, T.tensor([0, 2]))
    loss = (v6 * 1).sum() + (v3 * 2).sum()
    loss.backward()
    return [v0, v1, v2, v3, v4, v5, v6]
"""
SHAPES = {"v0": [2, 3], "v1": [4, 3], "v2": [4]}
BLOCK_SHAPES = {"v0": [2, 3], "v1": [3, 3], "v2": [3]}
_rng = np.random.default_rng(0)
# positive inputs, multiples of 1/16 in [0.5, 2): no cancellation in the sums (a gradient element's bound
# is then a few bfloat16 ulps of it; where a sum cancels, the casts' roundings are many ulps of the result)
POSITIVE = {n: (_rng.integers(8, 32, s) / 16).tolist() for n, s in SHAPES.items()}


def _case(source, shapes=None, data=None, **extra):
    shapes = shapes or (BLOCK_SHAPES if source == BLOCK else SHAPES)
    raw = {"op": "program", "source": source, "shapes": shapes, "dtype": "float32"}
    raw.update({"amp": "mixed_bfloat16", **extra})
    if data:
        raw["data"] = data
    return Case.from_dict(raw)


def _verdict(case, outputs, framework="torch"):
    return program_verdict(case, reference_outcome(case), {"status": "ok", "outputs": outputs}, framework)


def _torch_run(case):
    from conformance.adapters.torch_adapter import TorchAdapter

    adapter = TorchAdapter()
    adapter.setup()
    return adapter.run(case, "program", program_inputs(case))


def test_a_mixed_precision_case_round_trips_and_bad_fields_are_typed_errors():
    case = _case(LINEAR)
    assert case.to_dict()["amp"] == "mixed_bfloat16" and case.selector == "mixed_bfloat16"
    assert Case.from_dict(case.to_dict()) == case
    plain = Case.from_dict({k: v for k, v in case.to_dict().items() if k != "amp"})
    assert "amp" not in plain.to_dict() and plain.selector == "float32"  # saved cases load unchanged
    assert plain.id != case.id
    with pytest.raises(
        CaseError, match=r"field 'amp': must be one of \['mixed_bfloat16', 'mixed_float16'\].*'fp8'"
    ):
        _case(LINEAR, amp="fp8")
    with pytest.raises(CaseError, match="field 'dtype': .* float32 variables: dtype must be 'float32'"):
        Case.from_dict({**case.to_dict(), "dtype": "bfloat16"})


@pytest.mark.torch
def test_autocast_runs_the_forward_in_bfloat16_and_pytorch_is_within_the_derived_bound():
    torch = pytest.importorskip("torch")
    for source in (LINEAR, LINEAR_INPLACE, BLOCK):
        case = _case(source)
        observed = _torch_run(case)
        verdict = _verdict(case, observed)
        assert verdict["verdict"] == "pass", (source, verdict)
        plain = execute(source, torch, program_inputs(case), dtype="float32")
        # bfloat16 matmuls: the results differ from the float32 program's far beyond float32 rounding
        assert max(np.max(np.abs(plain[k] - observed[k])) for k in ("result[3]", "grad[v0]")) > 1e-4


@pytest.mark.torch
def test_what_pytorch_does_where_the_autocast_lists_say_nothing():
    """layer_norm and batch_norm are in neither CPU list: PyTorch 2.13 returns the input's dtype for a
    bfloat16 input with float32 weights (not the promoted float32), as conformance.amp.INPUT_DTYPE says."""
    torch = pytest.importorskip("torch")
    from conformance.amp import FLOAT32, INPUT_DTYPE, LOWER

    F = torch.nn.functional
    x, w = torch.randn(3, 4), torch.randn(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w
        assert y.dtype == torch.bfloat16 and "matmul" in LOWER
        assert F.conv1d(x.reshape(1, 3, 4), w[:2, :3].reshape(2, 3, 1)).dtype == torch.bfloat16
        assert "conv1d" in LOWER
        assert F.layer_norm(y, (4,), torch.ones(4), torch.zeros(4)).dtype == torch.bfloat16
        assert F.batch_norm(y.reshape(3, 4, 1), None, None, training=True).dtype == torch.bfloat16
        assert {"layer_norm", "batch_norm"} <= set(INPUT_DTYPE)
        assert F.cross_entropy(y, torch.tensor([0, 1, 2])).dtype == torch.float32
        assert "cross_entropy" in FLOAT32
        assert (y + torch.ones(4)).dtype == torch.float32  # not listed: promotion
        assert F.softmax(y, -1).dtype == torch.bfloat16  # not listed on CPU (CUDA's float32 list has it)
        assert not {"softmax", "log_softmax"} & set(FLOAT32 + LOWER + INPUT_DTYPE)


@pytest.mark.torch
def test_cpu_autocast_takes_float16_with_the_same_lists():
    """torch 2.13's CPU autocast accepts float16 (conformance.amp.LOW_DTYPE cites the source) and casts
    by the same CPU lists as for bfloat16: a matmul in float16, cross entropy in float32, layer_norm in
    its input's dtype, an unlisted op promoted."""
    torch = pytest.importorskip("torch")
    from conformance.amp import LOW_DTYPE

    assert LOW_DTYPE["mixed_float16"] == "float16"
    F = torch.nn.functional
    x, w = torch.randn(3, 4), torch.randn(4, 4)
    with torch.autocast("cpu", dtype=torch.float16):
        y = x @ w
        assert y.dtype == torch.float16
        assert F.conv1d(x.reshape(1, 3, 4), w[:2, :3].reshape(2, 3, 1)).dtype == torch.float16
        assert F.layer_norm(y, (4,), torch.ones(4), torch.zeros(4)).dtype == torch.float16
        assert F.cross_entropy(y, torch.tensor([0, 1, 2])).dtype == torch.float32
        assert (y + torch.ones(4)).dtype == torch.float32


@pytest.mark.torch
@pytest.mark.parametrize("amp", ["mixed_bfloat16", "mixed_float16"])
@pytest.mark.parametrize("source", [LINEAR, LINEAR_INPLACE])
def test_a_16_ulp_error_in_any_gradient_element_under_autocast_is_caught(source, amp):
    case = _case(source, data=POSITIVE, amp=amp)
    observed = _torch_run(case)
    assert _verdict(case, observed)["verdict"] == "pass"
    low = low_dtype(amp)
    for name in ("grad[v0]", "grad[v1]", "grad[v2]"):
        for idx in np.ndindex(observed[name].shape):
            planted = observed[name].copy()
            planted[idx] += 16 * ulp_of(planted[idx], low)
            verdict = _verdict(case, {**observed, name: planted})
            assert verdict["verdict"] == "fail", (name, idx, verdict)
            assert verdict["worst"]["output"] == name and tuple(verdict["worst"]["index"]) == idx


def _matmul_in_another_order(a, b, accumulate, low="bfloat16"):
    """``a @ b.T`` as autocast computes it, its terms added last first: operands rounded to ``low``,
    each partial sum rounded to ``accumulate``, the result rounded to ``low``."""
    torch = pytest.importorskip("torch")
    a16 = torch.tensor(a).to(getattr(torch, low)).double().numpy()
    b16 = torch.tensor(b).to(getattr(torch, low)).double().numpy()
    acc = torch.zeros(a.shape[0], b.shape[0], dtype=getattr(torch, accumulate))
    for k in reversed(range(a.shape[1])):
        term = torch.tensor(np.outer(a16[:, k], b16[:, k])).to(acc.dtype)
        acc = acc + term
    return acc.to(getattr(torch, low)).double().numpy()


@pytest.mark.torch
@pytest.mark.parametrize("amp", ["mixed_bfloat16", "mixed_float16"])
def test_a_matmul_in_another_order_under_the_policy_passes_and_a_wrong_one_does_not(amp):
    source = """def prog(T, v0, v1):
    v2 = v0 @ v1.t()
    loss = (v2 * 1).sum()
    loss.backward()
    return [v0, v1, v2]
"""
    case = _case(source, {"v0": [2, 64], "v1": [3, 64]}, amp=amp)
    status, expected = reference_outcome(case)
    assert status == "ok"
    x = program_inputs(case)
    low = low_dtype(amp)
    for framework, acc in (("torch", "float32"), ("jax", "float32"), ("tensorflow", low)):
        assert program_precision(case, framework).accumulate == (acc if acc == "float32" else None)
        reordered = _matmul_in_another_order(x["v0"], x["v1"], acc, low)
        outputs = {**expected, "result[2]": reordered}
        assert _verdict(case, outputs, framework)["verdict"] == "pass", framework
        if acc != "float32":  # 64 terms added in the half type: the bound is K·u·sum|terms|
            continue
        off = reordered.copy()
        off[1, 2] += 16 * ulp_of(off[1, 2], low)
        verdict = _verdict(case, {**outputs, "result[2]": off}, framework)
        assert verdict["verdict"] == "fail" and verdict["worst"]["index"] == [1, 2], (framework, verdict)
    # in the half type the order matters (TensorFlow promises no float32 accumulator: the bound allows it)
    assert not np.array_equal(
        _matmul_in_another_order(x["v0"], x["v1"], low, low),
        _matmul_in_another_order(x["v0"][:, ::-1].copy(), x["v1"][:, ::-1].copy(), low, low),
    )


def test_the_policy_bound_is_that_of_the_casts():
    """The tracker under the cast policy: a float32 op (no cast) has float32 bounds, a bfloat16 op's
    output bfloat16 ones; the bound without the policy (plain float32) is far smaller."""
    case = _case(LINEAR)
    plain = Case.from_dict({k: v for k, v in case.to_dict().items() if k != "amp"})
    (mixed,) = reference_bounds(case, [program_precision(case, "torch")])
    (f32,) = reference_bounds(plain, [program_precision(plain, "torch")])
    value = reference_outcome(case)[1]["result[3]"]
    assert (mixed["result[3]"] > 2.0**-9 * np.abs(value)).all()  # at least the output's bfloat16 rounding
    assert (f32["result[3]"] < 2.0**-18 * np.abs(value) + 1e-6).all()
    assert not mixed["result[0]"].any()  # an input is exact


@pytest.mark.jax
@pytest.mark.tensorflow
@pytest.mark.parametrize("framework", ["jax", "tensorflow"])
def test_jax_and_tensorflow_run_the_policy_by_hand_and_pass(framework):
    pytest.importorskip(framework)
    from conformance.adapters.jax_adapter import JaxAdapter
    from conformance.adapters.tf_adapter import TensorFlowAdapter

    adapter = {"jax": JaxAdapter, "tensorflow": TensorFlowAdapter}[framework]()
    adapter.setup()
    for source in (LINEAR_INPLACE, BLOCK):
        case = _case(source)
        observed = adapter.run(case, "program", program_inputs(case))
        assert _verdict(case, observed, framework)["verdict"] == "pass", (framework, source)
        plain = Case.from_dict({k: v for k, v in case.to_dict().items() if k != "amp"})
        f32 = adapter.run(plain, "program", program_inputs(plain))
        assert np.max(np.abs(f32["result[3]"] - observed["result[3]"])) > 1e-4  # the casts were made


def test_an_adapter_without_the_policy_says_unsupported():
    from conformance.adapters.base import Adapter

    class Plain(Adapter):
        name = "plain"

        def program(self, case, a):
            return {}

    for amp in ("mixed_bfloat16", "mixed_float16"):
        assert f"does not declare the {amp!r} mixed-precision policy" in Plain().why_unsupported(
            _case(LINEAR, amp=amp), "program"
        )


def _compiled_run(adapter, case):
    adapter.setup()
    assert adapter.why_unsupported(case, "program") is None  # run, never reported unsupported
    return adapter.run(case, "program", program_inputs(case))


@pytest.mark.torch
@pytest.mark.parametrize("amp", ["mixed_bfloat16", "mixed_float16"])
def test_aot_eager_runs_autocast_inside_the_compiled_forward_and_a_16_ulp_error_is_caught(amp):
    """torch:aot_eager compiles the forward with ``torch.autocast`` inside (conformance.amp): it runs
    the policy's casts (its values are eager autocast's, far from the float32 program's), is within the
    derived bound, and a 16-ulp error in any one gradient element is a ``fail`` naming it."""
    torch = pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAotEagerAdapter

    low = low_dtype(amp)
    for source in (LINEAR_INPLACE, BLOCK):
        case = _case(source, data=POSITIVE if source != BLOCK else None, amp=amp)
        observed = _compiled_run(TorchAotEagerAdapter(), case)
        assert _verdict(case, observed, "torch:aot_eager")["verdict"] == "pass", source
        eager = _torch_run(case)
        assert all(
            np.allclose(eager[k], observed[k], rtol=2.0**-6, atol=0) for k in eager if eager[k] is not None
        )
        if source == BLOCK:  # (drawn inputs: POSITIVE's products are exact in float16)
            plain = execute(source, torch, program_inputs(case), dtype="float32")
            assert np.max(np.abs(plain["result[3]"] - observed["result[3]"])) > 1e-4  # the casts were made
            continue
        for name in ("grad[v0]", "grad[v1]", "grad[v2]"):
            for idx in np.ndindex(observed[name].shape):
                planted = observed[name].copy()
                planted[idx] += 16 * ulp_of(planted[idx], low)
                verdict = _verdict(case, {**observed, name: planted}, "torch:aot_eager")
                assert verdict["verdict"] == "fail", (name, idx, verdict)
                assert verdict["worst"]["output"] == name and tuple(verdict["worst"]["index"]) == idx


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize("amp", ["mixed_bfloat16", "mixed_float16"])
def test_inductor_under_autocast_passes_in_its_own_summation_order(amp):
    """torch:compile (Inductor's generated kernels, its own fusion and summation order) under autocast:
    within the derived bound, and the casts are made."""
    torch = pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchCompileAdapter

    case = _case(BLOCK, amp=amp)
    observed = _compiled_run(TorchCompileAdapter(), case)
    assert _verdict(case, observed, "torch:compile")["verdict"] == "pass"
    plain = execute(BLOCK, torch, program_inputs(case), dtype="float32")
    assert np.max(np.abs(plain["result[3]"] - observed["result[3]"])) > 1e-4


@pytest.mark.torch
def test_a_planted_compiled_backward_under_autocast_is_caught():
    """conformance.testing.planted:AotEagerBackwardScaled (AOTAutograd's compiled backward scales its
    first gradient by 1 + 2^-4) on a mixed-precision program: a ``fail``."""
    pytest.importorskip("torch")
    from conformance.testing.planted import AotEagerBackwardScaled

    for amp in ("mixed_bfloat16", "mixed_float16"):
        case = _case(LINEAR, data=POSITIVE, amp=amp)
        verdict = _verdict(case, _compiled_run(AotEagerBackwardScaled(), case), "torch:aot_eager")
        assert verdict["verdict"] == "fail" and verdict["worst"]["output"].startswith("grad["), (amp, verdict)


@pytest.mark.torch
def test_run_dtypes_mixed_bfloat16_and_its_usage_errors(tmp_path, capsys):
    from conformance.cli import main

    none = tmp_path / "none"
    none.mkdir()
    base = ["run", "--cases", str(none), "--quiet", "--found-dir", str(tmp_path / "found")]
    out = tmp_path / "run"
    argv = base + ["--ops", "programs", "--frameworks", "torch", "--dtypes", "mixed_bfloat16"]
    assert main(argv + ["--max-examples", "4", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    records = [r for r in records if r.get("check") == "program"]
    assert records and all(r["dtype"] == "mixed_bfloat16" and r["verdict"] == "pass" for r in records)
    assert all(r["case"]["amp"] == "mixed_bfloat16" and "policy" in r["bound"] for r in records)
    assert main(base + ["--ops", "conv", "--dtypes", "mixed_bfloat16", "--out", str(tmp_path / "c")]) == 2
    assert "nothing selected" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # a usage error (argparse's exit 2)
        main(base + ["--ops", "programs", "--dtypes", "mixed_fp8", "--out", str(tmp_path / "d")])
    assert usage.value.code == 2
    assert "--dtypes: 'mixed_fp8' is not one of" in capsys.readouterr().err


@pytest.mark.torch
@pytest.mark.parametrize("amp", ["mixed_bfloat16", "mixed_float16"])
def test_the_pytorch_reproducer_runs_the_forward_under_autocast(tmp_path, amp):
    pytest.importorskip("torch")
    from conformance.reproducer import program_reproducer

    case = _case(LINEAR_INPLACE, amp=amp)
    record = {"case": case.to_dict(), "case_id": case.id, "framework": "torch", "verdict": "fail"}
    text = program_reproducer(record, "torch")
    assert f'    with T.autocast("cpu", dtype=T.{low_dtype(amp)}):\n        v3 = v0 @ v1.t() + v2' in text
    path = tmp_path / "repro.py"
    path.write_text(text)
    assert subprocess.run([sys.executable, str(path)], capture_output=True, cwd=tmp_path).returncode == 0
    # a gradient 1 + 2^-4 times PyTorch's (the layer's line rewritten): the reproducer exits 1
    planted = "v3 = (lambda y: y + 0.0625 * (y - y.detach()))(v0 @ v1.t() + v2)"
    path.write_text(text.replace("v3 = v0 @ v1.t() + v2", planted))
    assert subprocess.run([sys.executable, str(path)], capture_output=True, cwd=tmp_path).returncode == 1


@pytest.mark.torch
@pytest.mark.parametrize("amp", ["mixed_bfloat16", "mixed_float16"])
def test_the_gradient_penalty_spelling_runs_its_forward_under_autocast(amp):
    """torch:aot_eager's gradient penalty (torch.func.grad inside the compiled function): the forward
    under autocast, its backward outside, as eager's; within the derived bound, and the casts are made."""
    torch = pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAotEagerAdapter

    source = BLOCK.replace(
        "    loss.backward()\n",
        "    (g,) = T.autograd.grad(loss, [v0], create_graph=True)\n    (loss + (g * g).sum()).backward()\n",
    )
    case = _case(source, BLOCK_SHAPES, amp=amp)
    observed = _compiled_run(TorchAotEagerAdapter(), case)
    assert _verdict(case, observed, "torch:aot_eager")["verdict"] == "pass"
    plain = execute(source, torch, program_inputs(case), dtype="float32")
    assert np.max(np.abs(plain["grad[v0]"] - observed["grad[v0]"])) > 1e-4
