"""Complex cases in the compiled modes (issue 34): torch:aot_eager, torch:compile, tensorflow:function
and tensorflow:xla judge complex op records like the default modes (they were all ``unsupported``
before); a gradient left unconjugated in a compiled path fails; what a mode cannot do is
``unsupported`` in the framework's own words, and its departures are known entries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conformance.adapters import BUILTIN, load, mode_specs
from conformance.case import Case
from conformance.known import load_known
from conformance.ops import RecordParams
from conformance.ops.judge import record_verdict, run_in_process

MODES = ["torch:aot_eager", "torch:compile", "tensorflow:function", "tensorflow:xla"]
# (op, dtype, check, shapes, params): a product, a holomorphic function, a real result of complex input (a
# real cotangent: abs's vjp_jvp seed), a reduction under vmap, linear algebra (Inductor's complex QR
# gradient is a known departure, torch-compile-complex-qr-gradient)
CASES = [
    ("mul", "complex64", "vjp", {"input": (3,), "other": (3,)}, {}),
    ("exp", "complex128", "jvp", {"input": (3,)}, {}),
    ("abs", "complex128", "vjp_jvp", {"input": (3,)}, {}),
    ("sum", "complex64", "vmap_vjp", {"input": (2, 3)}, {}),
    ("linalg_qr", "complex128", "vjp", {"input": (3, 3)}, {"mode": "reduced"}),
]
_ADAPTERS: dict = {}


def _adapter(mode):
    pytest.importorskip(mode.partition(":")[0])
    if mode not in _ADAPTERS:
        adapter = load(mode_specs()[mode])
        _ADAPTERS[mode] = (adapter, adapter.setup("cpu", "highest"))
    return _ADAPTERS[mode]


def _case(op, dtype, check, shapes, params=None, seed=3):
    return Case(op, RecordParams.of({"values": "normal", **(params or {})}), shapes, dtype, seed, (check,))


def _classified(mode, case, check, result, settings):
    """The result as a run reports it: a departure matched by a shipped known entry is ``known``."""
    rec = {
        "framework": mode,
        "version": str(_adapter(mode)[0].version()),
        "case": case.to_dict(),
        "check": check,
        "dtype": case.dtype,
        **result,
    }
    (out,), _ = load_known("builtin").classify([rec], {mode: settings})
    return out


@pytest.mark.parametrize(
    "op, dtype, check, shapes, params", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES]
)
@pytest.mark.parametrize("mode", MODES)
def test_complex_records_are_judged_in_each_compiled_mode(mode, op, dtype, check, shapes, params):
    adapter, settings = _adapter(mode)
    case = _case(op, dtype, check, shapes, params)
    got = _classified(mode, case, check, run_in_process(adapter, case, check, settings), settings)
    assert got["verdict"] in ("pass", "known"), got


@pytest.mark.parametrize("mode", MODES)
def test_an_unconjugated_gradient_in_a_compiled_mode_fails(mode):
    """The compiled path's VJP of exp replaced by g * exp(z) (the derivative without PyTorch's
    conjugate, what a mode that lost the conjugate would answer): the imaginary parts fail."""
    adapter, settings = _adapter(mode)
    case = _case("exp", "complex128", "vjp", {"input": (4,)})
    assert run_in_process(adapter, case, "vjp", settings)["verdict"] == "pass"
    out = adapter.run(case, "vjp", _data(case))
    grad, g = np.asarray(out["grad_input"]), _data(case)["grad_output"]
    unconjugated = g * np.conj(grad / g)  # g * conj(g conj(f') / g) = g f'
    assert not np.allclose(unconjugated, grad)
    with np.errstate(all="ignore"):
        got = record_verdict(case, "vjp", adapter.record_framework, {"grad_input": unconjugated}, settings)
    assert got["verdict"] == "fail", got
    assert got["worst"]["index"][-1] == 1  # the imaginary part


def _data(case):
    from conformance.ops.judge import case_data

    return case_data(case)


def test_aot_autograd_double_backward_after_a_first_order_check_is_unsupported():
    """A first-order check compiles the function's backward with donated buffers; the double backward
    that follows is refused in AOTAutograd's other words: unsupported, quoting them."""
    adapter, settings = _adapter("torch:aot_eager")
    case = _case("linalg_det", "complex128", "vjp", {"input": (3, 3)})
    assert run_in_process(adapter, case, "vjp", settings)["verdict"] == "pass"
    got = run_in_process(adapter, case.with_checks(["vjp_vjp"]), "vjp_vjp", settings)
    assert got["verdict"] == "unsupported", got
    assert "torch:aot_eager" in got["reason"] and "donated buffers" in got["reason"], got


def test_xla_reciprocal_gradient_without_the_conjugate_is_a_known_departure():
    """tensorflow:xla's complex reciprocal gradient is g * f'(z) (XLA's ReciprocalGrad lowering),
    tensorflow:function's g * conj(f'(z)): the result fails, and the shipped entry makes it known."""
    adapter, settings = _adapter("tensorflow:xla")
    case = _case("reciprocal", "complex128", "vjp", {"input": (3,)})
    got = run_in_process(adapter, case, "vjp", settings)
    assert got["verdict"] == "fail", got
    known = _classified("tensorflow:xla", case, "vjp", got, settings)
    assert known["verdict"] == "known"
    assert known["known"]["id"] == "tf-xla-complex-sqrt-rsqrt-reciprocal-gradient-not-conjugated"
    function, function_settings = _adapter("tensorflow:function")
    assert run_in_process(function, case, "vjp", function_settings)["verdict"] == "pass"


def test_a_failed_compiled_jvp_leaves_no_forward_ad_level_behind():
    """Inductor fails to compile the JVP of a complex addmm of empty matrices (a known departure);
    torch leaves the dual level of that torch.func.jvp entered, so every later forward-mode check in
    the worker raised "Nested forward mode AD is not supported" until the adapter exits it: the JVP
    of exp run after it passes."""
    adapter, settings = _adapter("torch:compile")
    empty = _case(
        "addmm", "complex64", "jvp", {"input": (0,), "mat1": (0, 0), "mat2": (0, 0)}, {"alpha": 1.0, "beta": 1.0}
    )
    got = run_in_process(adapter, empty, "jvp", settings)
    assert got["verdict"] == "error_mismatch" and "divisible by 2" in got["reason"], got
    after = run_in_process(adapter, _case("exp", "complex64", "jvp", {"input": (3,)}), "jvp", settings)
    assert after["verdict"] == "pass", after


def test_the_tf_sqrt_cut_side_entry_covers_tensorflows_kernels_not_xla():
    """tf.math.sqrt's side of the cut by element position is TensorFlow's own kernel (eager and
    tf.function); XLA's lowering is right there: a failing complex sqrt result is known by the entry
    in tensorflow and tensorflow:function and outside its region in tensorflow:xla (where a result on
    the cut departs only by XLA's unconjugated gradient, an entry of its own)."""
    entry = "tf-complex-sqrt-cut-side-depends-on-the-element-position"
    pytest.importorskip("tensorflow")
    eager = load(BUILTIN["tensorflow"][1])
    modes = {"tensorflow": (eager, eager.setup("cpu", "highest"))}
    modes.update({m: _adapter(m) for m in ("tensorflow:function", "tensorflow:xla")})
    case = _case("sqrt", "complex64", "forward", {"input": (3,)})
    for mode, (adapter, settings) in modes.items():
        rec = {
            "framework": mode,
            "version": str(adapter.version()),
            "case": case.to_dict(),
            "check": "forward",
            "dtype": "complex64",
            "verdict": "fail",
            "reason": "output: max abs err 4 at [0, 1] (0.0 vs ref -2.0)",
        }
        (out,), summary = load_known("builtin").classify([rec], {mode: settings})
        region = {e["id"]: e["in_region"] for e in summary["entries"]}[entry]
        if mode == "tensorflow:xla":
            assert out["verdict"] == "fail" and region == 0, (mode, out)
        else:
            assert out["verdict"] == "known" and out["known"]["id"] == entry, (mode, out)
        assert entry not in summary["stale"], (mode, summary["unreported_settings"])


CURATED = sorted((Path(__file__).parents[2] / "refgrad" / "cases" / "programs").glob("complex_*.json"))


@pytest.mark.skipif(not CURATED, reason="no curated complex programs")
def test_curated_complex_programs_are_judged_in_the_compiled_modes(tmp_path, capsys):
    """The curated complex programs in torch:aot_eager, tensorflow:function and tensorflow:xla:
    pass or a known departure (torch.compile's functionalization of x.imag of a conjugate view
    written in place), and unsupported only where torch.compile refuses in its own words (a write
    through a view chain replayed with as_strided, under the gradient penalty's torch.func.grad)."""
    from conformance.cli import main

    pytest.importorskip("torch")
    pytest.importorskip("tensorflow")
    cases = tmp_path / "cases"
    cases.mkdir()
    for p in CURATED:
        shutil.copy(p, cases / p.name)
    frameworks = "torch:aot_eager,tensorflow:function,tensorflow:xla"
    main(["replay", str(cases), "--frameworks", frameworks, "--out", str(tmp_path / "out"), "--quiet"])
    capsys.readouterr()
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * len(CURATED)
    rows, _ = load_known("builtin").classify(rows)  # (results.jsonl keeps the raw verdicts)
    for r in rows:
        if r["framework"] == "torch:aot_eager" and "conj-view" in r["case_id"]:
            assert r["verdict"] == "known", r
            assert r["known"]["id"] == "torch-aot-eager-imag-of-a-written-conjugate-view"
        elif r["framework"] == "torch:aot_eager" and "double-backward" in r["case_id"]:
            assert r["verdict"] == "unsupported", r
            assert "not possible to functionalize" in r["reason"], r
        else:
            assert r["verdict"] == "pass", r
