"""Program cases on JAX and TensorFlow: functionalised by the reference, differentiated by the framework."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from conformance.programs import (
    Program,
    ProgramError,
    Step,
    program_case,
    program_inputs,
    program_verdict,
    programs,
    reference_outcome,
)

BACKENDS = {"jax": "JaxBackend", "tensorflow": "TensorFlowBackend"}


def _backend(name):
    pytest.importorskip(name)
    import conformance.functional as functional

    return getattr(functional, BACKENDS[name])()


def _to_numpy(v):
    return None if v is None else np.asarray(v, dtype=np.float64)


def _verdict(B, case):
    from conformance.functional import run_functional

    try:
        outputs = run_functional(B, case, program_inputs(case), _to_numpy)
        reply = {"status": "ok", "outputs": outputs, "judged_to": getattr(outputs, "judged_to", None)}
    except ProgramError as exc:
        reply = {
            "status": "error",
            "type": exc.type_name,
            "message": exc.message,
            "line": exc.line,
            "text": "",
        }
    return program_verdict(case, reference_outcome(case), reply, B.name)


CASES = {
    # in place on a view of a transposed base: a scatter into the base, as CopySlices defines it
    "copyslices": Program(
        [(3, 2), (2,)],
        [Step("v2 = v0 * 1.0"), Step("v3 = v2.t()[1]"), Step("v3.mul_(v1.sum())"), Step("v4 = v2.exp()")],
        [2, 4],
        5,
        [],
        "retain_twice",
    ),
    # in place under no_grad: new values, the old derivative
    "no_grad_inplace": Program(
        [(4,)],
        [Step("v1 = v0 * 2.0"), Step("v1.narrow(0, 1, 2).add_(3.0)", no_grad=True), Step("v2 = v1.tanh()")],
        [2],
        3,
        [],
        "backward",
    ),
    # second order through a conv, a softmax and a view written in place
    "double_backward": Program(
        [(5,), (3,)],
        [
            Step("v2 = v0 * 1.0"),
            Step("v2[1:3] = v1[:2] * v0[0]"),
            Step("v3 = T.nn.functional.conv1d(v2.reshape(1, 1, 5), v1.reshape(1, 1, 3), padding=1)"),
            Step("v4 = T.nn.functional.softmax(v3 * v2.sum(), -1)"),
        ],
        [3, 4],
        5,
        [],
        "double_backward",
    ),
}


@pytest.mark.parametrize("framework", sorted(BACKENDS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_functionalised_program_matches_the_reference(framework, name):
    B = _backend(framework)
    case = program_case(CASES[name])
    assert reference_outcome(case)[0] == "ok"
    verdict = _verdict(B, case)
    assert verdict["verdict"] == "pass", verdict


@pytest.mark.parametrize("framework", sorted(BACKENDS))
def test_a_scatter_that_forgets_to_rewrite_the_base_is_caught(framework):
    """The planted functionalisation bug: an in-place op on a view leaves its base unchanged."""
    B = _backend(framework)
    B.scatter = lambda flat, idx, values, real=B.scatter: (
        flat if idx.size < flat.shape[0] else real(flat, idx, values)
    )
    verdict = _verdict(B, program_case(CASES["copyslices"]))
    assert verdict["verdict"] == "fail", verdict


@pytest.mark.parametrize("framework", sorted(BACKENDS))
def test_a_gradient_that_ignores_no_grad_is_caught(framework):
    """The planted bug: stop_gradient does nothing, so a no_grad in-place op changes the derivative."""
    B = _backend(framework)
    B.stop_gradient = lambda x: x
    case = program_case(
        Program([(3,)], [Step("v1 = v0 * 1.0"), Step("v1.mul_(v1)", no_grad=True)], [1], 2, [], "backward")
    )
    verdict = _verdict(B, case)
    assert verdict["verdict"] == "fail" and "grad[v0]" in verdict["reason"], verdict


S = Step
# gradient state translated (issue #33): a retained gradient is the gradient with respect to a zero added
# to the values of the tensor's current node; a hook is a custom gradient on its node's values
GRADIENT_STATE = {
    "retain": Program(
        [(3,)],
        [S("v1 = v0 * 1.0"), S("v2 = v1.exp()"), S("v1.retain_grad()"), S("v3 = v2 * v1")],
        [3],
        4,
        [1],
    ),
    # the retained gradient moves to the node of the in-place update; v2 read the old one
    "retain_after_inplace": Program(
        [(3,)],
        [
            S("v1 = v0 * 1.0"),
            S("v2 = v1 * 3.0"),
            S("v1.retain_grad()"),
            S("v1.mul_(2.0)"),
            S("v3 = v1.exp()"),
        ],
        [2, 3],
        4,
        [1],
        "retain_twice",
    ),
    # a base written through a view: its node is CopySlices
    "retain_base_via_view": Program(
        [(3, 2)],
        [S("v1 = v0 * 1.0"), S("v1.retain_grad()"), S("v2 = v1[1]"), S("v2.mul_(3.0)"), S("v3 = v1.tanh()")],
        [3, 1],
        4,
        [1],
    ),
    # a view's gradient: what is read through it and the views made from it (not through its base)
    "retain_view": Program(
        [(3, 2)],
        [S("v1 = v0 * 1.0"), S("v2 = v1.t()"), S("v2.retain_grad()"), S("v3 = v2[0]"), S("v4 = v3.exp()")],
        [4, 1],
        5,
        [2],
    ),
    "hook": Program(
        [(3,)],
        [S("v1 = v0 * 1.0"), S("v2 = v1 * v1"), S("v1.register_hook(lambda g: g * 2.0)"), S("v3 = v1.exp()")],
        [2, 3],
        4,
        [],
    ),
    # a hook stays on the node it was registered on (the one before the in-place update)
    "hook_then_inplace": Program(
        [(3,)],
        [
            S("v1 = v0 * 1.0"),
            S("v1.register_hook(lambda g: g * 2.0)"),
            S("v1.mul_(2.0)"),
            S("v2 = v1.tanh()"),
        ],
        [1, 2],
        3,
        [],
        "retain_twice",
    ),
    "hook_leaf": Program(
        [(3,)], [S("v1 = v0.exp()"), S("v0.register_hook(lambda g: g * 2.0)")], [1, 0], 2, []
    ),
}


@pytest.mark.parametrize("framework", ["jax", "tensorflow"])
@pytest.mark.parametrize("name", sorted(GRADIENT_STATE))
def test_retained_gradients_and_hooks_match_the_reference(framework, name):
    verdict = _verdict(_backend(framework), program_case(GRADIENT_STATE[name]))
    assert verdict["verdict"] == "pass", verdict


@pytest.mark.parametrize("plant", ["hook", "retain"])
def test_a_translation_without_the_hook_or_the_perturbation_fails(plant, monkeypatch):
    import conformance.functional as functional

    if plant == "hook":  # the hook's custom gradient dropped: the doubled gradient is missed
        monkeypatch.setattr(functional.Run, "_hook", lambda self, hook: lambda x: x)
    else:  # the perturbation cut off from the program: a zero retained gradient
        until = functional.Run.until
        monkeypatch.setattr(
            functional.Run,
            "until",
            lambda self, k, xs, deltas=None: until(self, k, xs, [(key, d * 0.0) for key, d in deltas or ()]),
        )
    verdict = _verdict(_backend("jax"), program_case(GRADIENT_STATE[plant]))
    assert verdict["verdict"] == "fail", verdict


def test_programs_without_a_functional_counterpart_say_why():
    from conformance.functional import Unsupported, run_functional, why_not_functional

    hook = Program(
        [(2,)], [S("v1 = v0.exp()"), S("v1.register_hook(lambda g: g * 2.0)")], [1], 2, [], "double_backward"
    )
    assert "gradient hooks or retain_grad with autograd.grad" in why_not_functional(program_case(hook))
    written = program_case(
        Program(
            [(3, 2)],
            [S("v1 = v0 * 1.0"), S("v2 = v1.t()"), S("v2.retain_grad()"), S("v1.add_(1.0)")],
            [2],
            3,
            [2],
        )
    )
    with pytest.raises(Unsupported, match="regenerates the view's node"):
        run_functional(_backend("jax"), written, program_inputs(written), _to_numpy)
    first = Program([(2,)], [Step("v0.add_(1.0)"), Step("v1 = v0.exp()")], [1], 2, [])
    assert "the reference raises AutogradError at line 2 ('v0.add_(1.0)') before any step ran" in (
        why_not_functional(program_case(first))
    )
    # a shape error is not autograd state: not judged before it (JAX and TensorFlow would run the rest)
    shape = Program([(3, 1)], [Step("v1 = v0 * 1.0"), Step("v2 = v1[0]"), Step("v2.add_(v0)")], [1], 3, [])
    assert why_not_functional(program_case(shape)) == (
        "the reference raises RuntimeError at line 4 ('v2.add_(v0)'): the program's error is compared on PyTorch"
    )


# programs the reference (as PyTorch) raises on: the result saved by exp written in place, a graph
# freed by the first backward; JAX and TensorFlow are judged on the program before the raising statement
RAISING = {
    "saved_result_written": (
        Program(
            [(2, 3)], [Step("v1 = v0.exp()"), Step("v2 = v1.t() * 2.0"), Step("v1.add_(1.0)")], [1, 2], 3, []
        ),
        6,  # loss.backward()
    ),
    "graph_freed": (
        Program([(3,), (3,)], [Step("v2 = v0 * v1"), Step("v3 = v2.tanh()")], [3], 4, [], "twice"),
        6,  # the second loss.backward()
    ),
    # PyTorch's requires_grad state (a tensor made by T.zeros has none; JAX and TensorFlow have no such
    # state): 4 of the 28 programs of the seed-3 done-when campaign of issue #33
    "retain_grad_without_requires_grad": (
        Program(
            [(2,)],
            [Step("v1 = v0 * 1.0"), Step("v2 = T.zeros((2,), dtype=v0.dtype)"), Step("v2.retain_grad()")],
            [1, 2],
            3,
            [],
        ),
        4,  # v2.retain_grad()
    ),
}


@pytest.mark.parametrize("framework", sorted(BACKENDS))
@pytest.mark.parametrize("name", sorted(RAISING))
def test_a_program_the_reference_raises_on_is_judged_before_the_raising_statement(framework, name):
    from conformance.functional import why_not_functional

    program, line = RAISING[name]
    case = program_case(program, dtype="float32")
    status, error = reference_outcome(case)
    assert status == "raises" and error.statement == line, (error, case.source)
    assert why_not_functional(case) is None
    verdict = _verdict(_backend(framework), case)
    assert verdict["verdict"] == "pass" and verdict["judged_to_line"] == line, verdict
    assert f"judged up to line {line}" in verdict["reason"], verdict


@pytest.mark.parametrize("framework", sorted(BACKENDS))
def test_a_wrong_gradient_before_the_raising_statement_is_caught(framework, monkeypatch):
    """The first backward's gradient (the second raises on PyTorch) scaled by 1 + 2^-4: a fail."""
    import conformance.functional as functional

    run = functional.run_functional

    def planted(B, case, arrays, to_numpy, compile=None):
        out = run(B, case, arrays, to_numpy, compile)
        if "grad[v0]" in out and out["grad[v0]"] is not None:
            out["grad[v0]"] = out["grad[v0]"] * (1 + 2.0**-4)
        return out

    monkeypatch.setattr(functional, "run_functional", planted)
    case = program_case(RAISING["graph_freed"][0], dtype="float32")
    verdict = _verdict(_backend(framework), case)
    assert verdict["verdict"] == "fail" and "grad[v0]" in verdict["reason"], verdict


@pytest.mark.parametrize("framework", sorted(BACKENDS))
def test_the_vocabulary_spells_its_record_ops_as_their_records(framework, monkeypatch):
    """One place per op: the JAX and TensorFlow spellings of the vocabulary's ops that have a record
    (conformance.functional.RECORD_OPS: unary, softmax, binary, reductions, matmul, embedding,
    masked_fill) are their op records' own, not a second copy: a record spelling planted in
    RECORDS is what the vocabulary's op then calls."""
    import dataclasses

    from conformance.functional import RECORD_OPS
    from conformance.ops import RECORDS
    from conformance.ops.elementwise import jax_masked_fill, tf_masked_fill

    field = {"jax": "jax", "tensorflow": "tf"}[framework]
    table = _backend(framework).ops()
    for op, how in RECORD_OPS.items():
        if isinstance(how, str):
            assert table[op].func is getattr(RECORDS[how], field), op
    # masked_fill with the program's mask: the function its record spells itself with
    masked_fill = {"jax": jax_masked_fill, "tf": tf_masked_fill}[field]
    assert table["masked_fill"].func is masked_fill
    assert masked_fill.__name__ in getattr(RECORDS["masked_fill"], field).__code__.co_names
    # the adapted ops (sum with or without a dim, embedding's argument order) call their records
    calls = []
    for name in ("sum", "sum_dim", "embedding"):
        planted = lambda ns, *args, _name=name: calls.append((_name, len(args)))  # noqa: E731
        monkeypatch.setitem(RECORDS, name, dataclasses.replace(RECORDS[name], **{field: planted}))
    table = _backend(framework).ops()
    table["sum"]("x")
    table["sum"]("x", 1)
    table["embedding"](np.zeros((2, 3), dtype=np.int64), "w")
    assert calls == [("sum", 1), ("sum_dim", 3), ("embedding", 5)], calls


@pytest.mark.jax
@given(programs(numeric=True))
def test_random_programs_on_jax_match_the_reference_or_are_declared(program):
    from conformance.functional import Unsupported, why_not_functional

    B = _backend("jax")
    case = program_case(program)
    if why_not_functional(case):
        return
    try:
        verdict = _verdict(B, case)
    except Unsupported:
        return
    assert verdict["verdict"] == "pass", f"{verdict}\n{case.source}"


@pytest.mark.jax
@pytest.mark.tensorflow
def test_run_ops_programs_on_jax_and_tensorflow(tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("tensorflow")
    import json

    from conformance.cli import main

    out, curated = tmp_path / "run", tmp_path / "none"
    curated.mkdir()
    argv = [
        "run",
        "--ops",
        "programs",
        "--frameworks",
        "jax,tensorflow",
        "--max-examples",
        "12",
        "--dtypes",
        "float64",
    ]
    assert (
        main(argv + ["--cases", str(curated), "--out", str(out), "--found-dir", str(tmp_path), "--quiet"])
        == 0
    )
    cells = json.loads((out / "report.json").read_text())["cells"]
    assert {c["framework"] for c in cells} == {"jax", "tensorflow"}
    assert all(c["op"] == "program" and c["counts"].get("pass", 0) >= 3 for c in cells), cells


@pytest.mark.jax
def test_jax_eager_says_it_judged_a_raising_program_up_to_the_statement():
    """The worker's reply carries ``judged_to`` in every mode (jax:eager converts its outputs in place)."""
    pytest.importorskip("jax")
    from conformance.adapters import known, load
    from conformance.worker import handle

    adapter = load(known()["jax:eager"])
    adapter.setup()
    case = program_case(RAISING["graph_freed"][0], dtype="float32")
    reply = handle(adapter, {"case": case, "check": "program"})
    assert reply["judged_to"]["line"] == RAISING["graph_freed"][1], reply
    verdict = program_verdict(case, reference_outcome(case), reply, "jax:eager")
    assert verdict["verdict"] == "pass" and verdict["judged_to_line"] == 6, verdict


# found by the mixed-precision campaign (issue #33), in every dtype: a detached-copy hook makes a saved
# input never stale, so PyTorch and the reference run this program; without its hooks it raises
HOOK_DECIDES = """def prog(T, v0):
    def block_inplace(x):
        y = x * 2.0
        y.mul_(x.exp())
        return y.tanh()
    def pack_copy(t):
        return (tuple(t.shape), t.detach().clone())

    def unpack_copy(p):
        return p[1].reshape(p[0])
    v1 = v0 * 1.0
    with T.autograd.graph.saved_tensors_hooks(pack_copy, unpack_copy):
        v2 = T.utils.checkpoint.checkpoint(block_inplace, v1, use_reentrant=False)
    v1.add_(0.5)
    loss = (v0 * 1).sum() + (v2 * 2).sum()
    loss.backward()
    return [v0, v1, v2]
"""


@pytest.mark.jax
def test_a_program_whose_hooks_decide_a_version_check_is_unsupported_not_an_error_mismatch():
    from conformance.case import Case
    from conformance.functional import Unsupported, run_functional

    B = _backend("jax")
    case = Case("program", None, {"v0": (2,)}, "float64", 0, ("program",), source=HOOK_DECIDES)
    assert reference_outcome(case)[0] == "ok"
    with pytest.raises(Unsupported, match="without its saved-tensor hooks it raises at line 16"):
        run_functional(B, case, program_inputs(case), _to_numpy)
