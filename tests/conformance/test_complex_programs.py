"""Programs with complex tensors (issue 34): the curated cases refgrad/cases/programs/complex_*.json
(view_as_real / view_as_complex as views, view_as_real written in place, the lazy conjugate view
written through, .real / .imag views differentiated twice) and random programs of complex leaves
(the generator's complex steps) are judged like every program: each framework against the reference
within the tracker's bounds (JAX and TensorFlow run the functional translation: conformance.functional);
planted convention bugs fail."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conformance.cli import main
from conformance.functional import why_not_functional
from conformance.programs import (
    ProgramError,
    execute,
    program_case,
    program_inputs,
    program_verdict,
    programs,
    reference_outcome,
)
from conformance.strategies import program_cases

pytest.importorskip("torch")

CASES = sorted((Path(__file__).parents[2] / "refgrad" / "cases" / "programs").glob("complex_*.json"))


def test_the_conjugate_view_written_in_place_conjugates_the_write_into_its_base():
    """v3 = v2.conj(); v3.mul_(2 + 1j) stores conj((2 + 1j) conj(v2)) = (2 - 1j) v2 into v2's storage:
    view_as_real(v2) reads it (the reference and torch alike)."""
    import torch

    import reference

    case = json.loads(next(p for p in CASES if "conj_view" in p.name).read_text())
    v0, v1 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]), np.array([[1.0, 0.5, -2.0], [0.0, -1.5, 0.3]])
    want = (2 - 1j) * (v0 + 1j * v1)
    for T in (reference, torch):
        out = execute(case["source"], T, {"v0": v0, "v1": v1})
        np.testing.assert_allclose(out["result[2]"], np.stack([want.real, want.imag], -1), rtol=1e-15)


@pytest.mark.skipif(not CASES, reason="no curated complex programs")
def test_curated_complex_programs_pass_on_every_framework(tmp_path, capsys):
    """JAX and TensorFlow translate the complex steps functionally (a real view of a complex storage
    reads and writes its parts, a complex view of a real one pairs of elements, a conjugate view
    stores the conjugate); they reported ``unsupported`` before."""
    pytest.importorskip("jax")
    pytest.importorskip("tensorflow")
    cases = tmp_path / "cases"
    cases.mkdir()
    for p in CASES:
        shutil.copy(p, cases / p.name)
    main(
        [
            "replay",
            str(cases),
            "--frameworks",
            "torch,jax,tensorflow",
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ]
    )
    capsys.readouterr()
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * len(CASES)
    assert all(r["verdict"] == "pass" for r in rows), [r for r in rows if r["verdict"] != "pass"]


# ---- random complex programs (conformance.programs.programs(complex_steps=True)) -----------------------
COMPLEX_STEPS = ("= T.view_as_real(", "T.view_as_complex(", ".conj()", ".real", ".imag", ".abs()", ".angle()")


def _reply(run):
    """A worker's reply to a program case: ``run()``'s outputs, or the program's error."""
    try:
        out = run()
    except ProgramError as exc:
        return {"status": "error", "type": exc.type_name, "message": exc.message, "line": exc.line}
    reply = {"status": "ok", "outputs": dict(out)}
    if getattr(out, "judged_to", None):
        reply["judged_to"] = out.judged_to
    return reply


def _torch_verdict(case):
    import torch

    reply = _reply(lambda: execute(case.source, torch, program_inputs(case), dtype=case.dtype))
    return program_verdict(case, reference_outcome(case), reply, "torch")


def _jax_verdict(case):
    from conformance.functional import JaxBackend, host_array, run_functional

    if why_not_functional(case):
        return None
    run = lambda: run_functional(JaxBackend(case.dtype), case, program_inputs(case), host_array)  # noqa: E731
    return program_verdict(case, reference_outcome(case), _reply(run), "jax")


def test_complex_program_cases_are_drawn_for_the_complex_dtypes():
    """``--ops programs --dtypes complex64,complex128`` draws complex programs: complex leaves, the
    complex steps, a real loss read through view_as_real."""
    drawn = []

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(program_cases(dtypes=("complex64", "complex128")))
    def collect(case):
        drawn.append(case)

    collect()
    assert {c.dtype for c in drawn} == {"complex64", "complex128"}
    text = "".join(c.source for c in drawn)
    assert all(step in text for step in COMPLEX_STEPS), [s for s in COMPLEX_STEPS if s not in text]
    assert all("T.view_as_real(v0 * " in c.source.split("loss = ")[1].splitlines()[0] for c in drawn)


def test_a_campaign_of_complex_programs_passes_on_torch_and_jax():
    """Random complex programs: PyTorch (the program as it is) and JAX (functionalised, its gradients
    conjugated back to PyTorch's convention) against the reference within the tracker's bounds."""
    pytest.importorskip("jax")
    verdicts = {"torch": [], "jax": []}

    @settings(
        max_examples=8,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.generate],  # (no shrinking: a failure prints its program)
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(complex_steps=True), st.sampled_from(["complex64", "complex128"]))
    def check(program, dtype):
        case = program_case(program, dtype=dtype)
        for name, verdict in (("torch", _torch_verdict(case)), ("jax", _jax_verdict(case))):
            if verdict is not None:
                assert verdict["verdict"] == "pass", (name, verdict, case.source)
                verdicts[name].append(verdict)

    check()
    assert len(verdicts["torch"]) == 8 and len(verdicts["jax"]) >= 4, {k: len(v) for k, v in verdicts.items()}


PLANTED = """def prog(T, v0):
    v1 = v0 * 1.0
    v2 = v1.conj()
    v2.mul_(0.5 + 1j)
    v3 = v1.exp()
    v4 = v1.real
    v4.mul_(2.0)
    loss = T.view_as_real(v0 * 1).sum() + T.view_as_real(v3 * 2).sum() + (v4 * 3).sum()
    loss.backward()
    return [v0, v1, v2, v3, v4]
"""


def _planted_case():
    from conformance.case import Case

    return Case("program", None, {"v0": (2, 3)}, "complex128", 0, ("program",), source=PLANTED)


def test_the_planted_program_passes_unpatched():
    pytest.importorskip("jax")
    case = _planted_case()
    assert reference_outcome(case)[0] == "ok"  # (judged on values: it does not raise)
    assert _torch_verdict(case)["verdict"] == "pass"
    assert _jax_verdict(case)["verdict"] == "pass"


def test_a_conjugated_exp_gradient_in_torch_is_caught(monkeypatch):
    """torch's exp with the gradient g * exp(z) (the holomorphic derivative without PyTorch's conjugate):
    the program's leaf gradient fails."""
    import torch

    class WrongExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            out = torch._C._TensorBase.exp(z)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out  # PyTorch's is g * out.conj()

    monkeypatch.setattr(torch.Tensor, "exp", lambda self: WrongExp.apply(self))
    verdict = _torch_verdict(_planted_case())
    assert verdict["verdict"] == "fail" and "grad[v0]" in verdict["reason"], verdict


def test_jax_gradients_left_in_jaxs_convention_are_caught(monkeypatch):
    """Without conjugating JAX's gradient back to PyTorch's convention (conj(grad) for a complex leaf),
    the leaf gradient fails."""
    jax = pytest.importorskip("jax")
    from conformance.functional import JaxBackend

    monkeypatch.setattr(
        JaxBackend, "grad", lambda self, f, xs: jax.grad(f, argnums=tuple(range(len(xs))))(*xs)
    )
    verdict = _jax_verdict(_planted_case())
    assert verdict["verdict"] == "fail" and "grad[v0]" in verdict["reason"], verdict
