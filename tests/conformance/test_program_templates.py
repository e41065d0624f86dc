"""Program templates for custom Functions, checkpoint and saved-tensor hooks (issue #14).

Each template runs as a program on PyTorch and on the reference; the custom Functions and
checkpointed blocks also on JAX and TensorFlow (``jax.custom_vjp`` / ``tf.custom_gradient``,
``jax.checkpoint`` / ``tf.recompute_grad``); the saved-tensor hook steps run there without the hooks
(the templates' pairs restore exactly), another pair is ``unsupported`` with the reason. The planted engine bugs of issue #14 each change the outcome of a short fixed program (the
shrunk programs their campaigns find; the campaigns themselves are slow tests in
test_program_campaigns.py). Bad input (a wrong number of gradients, a gradient or a saved tensor of
the wrong shape) raises PyTorch's error type and message, at the same line.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.programs import (
    CHECKPOINT_BLOCKS,
    CUSTOM_FUNCTIONS,
    HOOK_CONTEXTS,
    Program,
    ProgramError,
    Step,
    execute,
    program_case,
    program_inputs,
    program_verdict,
    reference_outcome,
)

ENDINGS = ("backward", "double_backward", "retain_twice")


def _custom_program(fn, ending):
    """``fn`` applied to a transposed intermediate, its output used beside the input's base."""
    if fn == "NonDifferentiable":
        steps = [
            Step("v1 = v0 * 1.0"),
            Step("v2 = v1.t()"),
            Step(f"v3, v4 = {fn}.apply(v2)"),
            Step("v5 = v3 * v4"),
        ]
        return Program([(2, 3)], steps, [5, 1], 6, [], ending, [fn])
    arg = "v2 * 1.5" if "Dirty" in fn else "v2.exp()"  # (exp saves its result: dirtying it raises)
    steps = [
        Step("v1 = v0 * 1.0"),
        Step("v2 = v1.t()"),
        Step(f"v3 = {fn}.apply({arg})"),
        Step("v4 = v3 * v1.t()"),
    ]
    return Program([(2, 3)], steps, [4, 1], 5, [], ending, [fn])


def _checkpoint_program(block, reentrant, ending):
    out, n = ("v3, v4", 5) if block == "block_two" else ("v3", 4)
    call = f"T.utils.checkpoint.checkpoint({block}, v2, use_reentrant={reentrant}, preserve_rng_state=True)"
    steps = [Step("v1 = v0 * 1.0"), Step("v2 = v1.t()"), Step(f"{out} = {call}")]
    return Program([(2, 3)], steps, [n - 1, 1], n, [], ending, [block])


def _hook_program(context, ending):
    steps = [Step("v1 = v0 * 1.0"), Step("v2 = v1.exp() * v1", context=context), Step("v3 = v2.tanh()")]
    needs = [HOOK_CONTEXTS[context]] if HOOK_CONTEXTS[context] else []
    return Program([(2, 3)], steps, [3], 4, [], ending, needs)


PROGRAMS = {
    **{f"{fn}-{e}": _custom_program(fn, e) for fn in sorted(CUSTOM_FUNCTIONS) for e in ENDINGS},
    **{
        f"{b}-reentrant={r}-{e}": _checkpoint_program(b, r, e)
        for b in sorted(CHECKPOINT_BLOCKS)
        for r in (False, True)
        for e in ("backward", "double_backward")
    },
    **{f"hooks{k}-{e}": _hook_program(c, e) for k, c in enumerate(sorted(HOOK_CONTEXTS)) for e in ENDINGS},
}
# the reference (as PyTorch) raises on these: autograd.grad through a reentrant checkpoint (a second
# order through a non-differentiable output raised too while the ending backpropagated (g * g).sum()
# alone; the gradient penalty adds the loss, which has a graph)
RAISES = {f"{b}-reentrant=True-double_backward" for b in CHECKPOINT_BLOCKS}


def _reply(run):
    try:
        return {"status": "ok", "outputs": run()}
    except ProgramError as exc:
        return {
            "status": "error",
            "type": exc.type_name,
            "message": exc.message,
            "line": exc.line,
            "text": exc.text,
        }


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_template_program_matches_torch(name):
    torch = pytest.importorskip("torch")
    case = program_case(PROGRAMS[name])
    reference = reference_outcome(case)
    assert reference[0] == ("raises" if name in RAISES else "ok"), reference
    reply = _reply(lambda: execute(case.source, torch, program_inputs(case)))
    verdict = program_verdict(case, reference, reply, "torch")
    assert verdict["verdict"] == "pass", f"{verdict}\n{case.source}"


BACKENDS = {"jax": "JaxBackend", "tensorflow": "TensorFlowBackend"}
# (saved-tensor hooks run there as their step without the hooks: the templates' pairs restore exactly)
FUNCTIONAL = sorted(
    n for n in PROGRAMS if n not in RAISES and not (n.startswith("hooks") and n.endswith("-twice"))
)


@pytest.mark.parametrize("framework", sorted(BACKENDS))
def test_templates_on_jax_and_tensorflow(framework):
    """Every custom Function template and checkpointed block, with every ending the reference runs, agrees with the reference through custom_vjp/custom_gradient and
    jax.checkpoint/tf.recompute_grad -- second order included."""
    pytest.importorskip(framework)
    import conformance.functional as functional

    B = getattr(functional, BACKENDS[framework])()
    failures = []
    for name in FUNCTIONAL:
        case = program_case(PROGRAMS[name])
        assert functional.why_not_functional(case) is None, name
        reply = _reply(lambda case=case: functional.run_functional(B, case, program_inputs(case), _np))
        verdict = program_verdict(case, reference_outcome(case), reply, framework)
        if verdict["verdict"] != "pass":
            failures.append((name, verdict))
    assert not failures, failures


def _np(v):
    return None if v is None else np.asarray(v, dtype=np.float64)


def test_programs_without_a_functional_counterpart_say_why():
    from conformance.functional import why_not_functional

    for context in HOOK_CONTEXTS:  # the templates' exact pairs and save_on_cpu run without the hooks
        assert why_not_functional(program_case(_hook_program(context, "backward"))) is None
    from conformance.case import Case

    hooked = program_case(_hook_program(sorted(HOOK_CONTEXTS)[1], "backward")).source
    other = hooked.replace(
        "saved_tensors_hooks(pack_copy, unpack_copy)", "saved_tensors_hooks(pack_copy, unpack_scaled)"
    )
    assert other != hooked
    why = why_not_functional(Case("program", None, {"v0": (2, 3)}, "float64", 0, ("program",), source=other))
    assert why and "saved-tensor hooks have no JAX/TensorFlow counterpart" in why
    source = program_case(_custom_program("StraightThrough", "backward")).source
    materialize = source.replace(
        "ctx.save_for_backward(x)",
        "ctx.save_for_backward(x)\n                ctx.set_materialize_grads(False)",
    )
    case = Case("program", None, {"v0": (2, 3)}, "float64", 0, ("program",), source=materialize)
    assert "set_materialize_grads" in why_not_functional(case)


@pytest.mark.parametrize("framework", sorted(BACKENDS))
def test_residuals_that_keep_their_derivative_are_caught(framework):
    """The planted translation bug: a saved tensor made inside forward (not an input or an output)
    keeps its derivative in the framework (PyTorch saves it as a constant): the second order of
    SavedView differs."""
    pytest.importorskip(framework)
    import conformance.functional as functional

    B = getattr(functional, BACKENDS[framework])()
    B.stop_gradient = lambda x: x
    case = program_case(PROGRAMS["SavedView-double_backward"])
    reply = _reply(lambda: functional.run_functional(B, case, program_inputs(case), _np))
    assert program_verdict(case, reference_outcome(case), reply, framework)["verdict"] == "fail"


# ---- planted engine bugs (conformance.testing.mutants): the shrunk programs ----------------------
PLANTED = {
    # exp saves its result; a kernel then writes it through .data: only mark_dirty's bump tells
    "mark_dirty_no_bump": Program(
        [(3,)],
        [Step("v1 = v0.exp()"), Step("v2 = MarkDirtyData.apply(v1)")],
        [2],
        3,
        [],
        "backward",
        ["MarkDirtyData"],
    ),
    # v0 reaches the loss directly and through the Function: the two gradients must add
    "custom_backward_not_summed": Program(
        [(3,)], [Step("v1 = StraightThrough.apply(v0)")], [0, 1], 2, [], "backward", ["StraightThrough"]
    ),
    # the checkpoint's input is written in place before backward: PyTorch raises the version error
    "checkpoint_stale_inputs": Program(
        [(3,)],
        [
            Step("v1 = v0 * 1.0"),
            Step("v2 = T.utils.checkpoint.checkpoint(block, v1, use_reentrant=False)"),
            Step("v1.add_(0.5)"),
        ],
        [2],
        3,
        [],
        "backward",
        ["block"],
    ),
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_planted_engine_bug_changes_the_outcome_of_its_program(bug):
    from conformance.testing import mutants

    case = program_case(PLANTED[bug])
    reference = reference_outcome(case)
    engine = mutants.mutant(bug)
    reply = _reply(lambda: execute(case.source, engine, program_inputs(case)))
    verdict = program_verdict(case, reference, reply, f"mutant {bug}")
    assert verdict["verdict"] in ("fail", "error_mismatch"), verdict
    torch = pytest.importorskip("torch")
    reply = _reply(lambda: execute(case.source, torch, program_inputs(case)))
    assert program_verdict(case, reference, reply, "torch")["verdict"] == "pass"


# ---- bad input: PyTorch's error type and message, at the same line --------------------------------
BAD = {
    "too_few_gradients": """
def prog(T, v0):
    class Two(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g
    v1 = Two.apply(v0, v0 * 2.0)
    v1.sum().backward()
    return [v1]
""",
    "too_many_gradients": """
def prog(T, v0):
    class One(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2.0

        @staticmethod
        def backward(ctx, g):
            return g, g, g
    v1 = One.apply(v0)
    v1.sum().backward()
    return [v1]
""",
    "gradient_of_the_wrong_shape": """
def prog(T, v0):
    class Short(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2.0

        @staticmethod
        def backward(ctx, g):
            return g[:2]
    v1 = Short.apply(v0)
    v1.sum().backward()
    return [v1]
""",
    "gradient_hook_changes_the_size": """
def prog(T, v0):
    v1 = v0 * 2.0
    v1.register_hook(lambda g: g[:2])
    v1.sum().backward()
    return [v1]
""",
    "unpack_hook_returns_another_shape": """
def prog(T, v0):
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t[:2]):
        v1 = v0 * v0
    v1.sum().backward()
    return [v1]
""",
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_pytorchs_error(name):
    torch = pytest.importorskip("torch")
    import reference

    arrays = {"v0": np.array([1.0, 2.0, 3.0])}
    raised = {}
    for T in (torch, reference):
        with pytest.raises(ProgramError) as info:
            execute(BAD[name], T, arrays)
        raised[T.__name__] = (info.value.type_name, info.value.message, info.value.line)
    assert raised["reference"] == raised["torch"]
    # the verdict compares these messages word for word (CUSTOM_FUNCTION_ERRORS) or at least the line
    from conformance.case import Case

    case = Case("program", None, {"v0": (3,)}, "float64", 0, ("program",), source=BAD[name].lstrip())
    reply = _reply(lambda: execute(case.source, torch, program_inputs(case)))
    assert program_verdict(case, reference_outcome(case), reply, "torch")["verdict"] == "pass"
