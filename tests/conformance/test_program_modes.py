"""Programs in compiled modes: ``torch:aot_eager`` compiles the program's forward (fullgraph) and
differentiates through AOTAutograd; ``jax:jit`` and ``tensorflow:function`` compile the whole
functionalised program. A graph break or a refusal is ``unsupported`` in the compiler's words, never
an eager run; a compiled function is kept per program."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.adapters import known, load
from conformance.case import Case
from conformance.programs import program_inputs, program_verdict, reference_outcome, split_program
from conformance.worker import handle

PLAIN = """def prog(T, v0, v1):
    v2 = v0 * 1.0
    v3 = v2[1:3]
    v3.mul_(v1)
    v4 = T.nn.functional.softmax(v2.sum(0), 0)
    with T.no_grad():
        v3.add_(0.5)
    loss = (v2 * 1).sum() + (v4 * 2).sum()
    loss.backward()
    return [v0, v1, v2, v3, v4]
"""
DOUBLE = PLAIN.replace(
    "    loss.backward()\n",
    "    (g,) = T.autograd.grad(loss, [v0], create_graph=True)\n    (g * g).sum().backward()\n",
)
HOOKED = PLAIN.replace(
    "    v2 = v0 * 1.0\n",
    "    def pack_scaled(t):\n        return t * 2.0\n\n    def unpack_scaled(p):\n        return p / 2.0\n"
    "    with T.autograd.graph.saved_tensors_hooks(pack_scaled, unpack_scaled):\n        v2 = v0 * 1.0\n",
)
SHAPES = {"v0": (3, 4), "v1": (2, 4)}


def _case(source, dtype="float32"):
    return Case("program", None, SHAPES, dtype, 0, ("program",), source=source)


def _adapter(name):
    adapter = load(known()[name])
    adapter.setup()
    return adapter


def _judge(adapter, case):
    reply = handle(adapter, {"case": case, "check": "program"})
    if reply["status"] in ("ok", "error"):
        return {**reply, **program_verdict(case, reference_outcome(case), reply, adapter.name)}
    return reply


def test_the_program_splits_on_its_own_line_numbers():
    definitions, forward, tail = split_program(HOOKED)
    original = HOOKED.splitlines()
    for part in (definitions, forward, tail):  # every non-blank line of a part is the program's, in place
        for i, line in enumerate(part.splitlines()[1:], start=1):
            if line.strip() and not line.lstrip().startswith("return") and i < len(original):
                assert line == original[i], (i, line)
    assert "def pack_scaled" in definitions and "def pack_scaled" not in forward
    assert forward.rstrip().endswith("return (v0, v1, v2, v3, v4, loss,)")
    assert "loss.backward()" in tail and "loss.backward()" not in forward


@pytest.mark.torch
def test_torch_aot_eager_judges_a_program_and_names_what_it_refuses():
    pytest.importorskip("torch")
    adapter = _adapter("torch:aot_eager")
    for dtype in ("float32", "bfloat16"):
        out = _judge(adapter, _case(PLAIN, dtype))
        assert out["verdict"] == "pass", out
        assert out["cache"] == "miss" and out["compile_seconds"] > 0  # compiled, once per program
    again = _judge(adapter, Case.from_dict({**_case(PLAIN).to_dict(), "seed": 3}))
    assert again["verdict"] == "pass" and again["cache"] == "hit"
    double = _judge(adapter, _case(DOUBLE))
    assert (
        double["status"] == "unsupported" and "does not currently support double backward" in double["reason"]
    )
    # the saved-tensor hook context runs between compiled regions, the hooked step compiled inside it
    hooked = _judge(adapter, _case(HOOKED))
    assert hooked["verdict"] == "pass", hooked


RETAINED = """def prog(T, v0, v1):
    v2 = v0 * 1.0
    v3 = v2[1:3]
    v3.mul_(v1)
    v4 = T.nn.functional.softmax(v2.sum(0), 0)
    v4.retain_grad()
    v5 = v4.exp()
    loss = (v2 * 1).sum() + (v5 * 2).sum()
    loss.backward()
    return [v0, v1, v2, v3, v4, v5, v4.grad]
"""


def test_the_forward_splits_into_compiled_regions_at_what_dynamo_cannot_capture():
    from conformance.programs import program_regions

    assert [r.kind for r in program_regions(PLAIN)] == ["compiled"]
    regions = program_regions(RETAINED)
    assert [(r.kind, r.inputs, r.outputs) for r in regions] == [
        ("compiled", ["v0", "v1"], ["v2", "v3", "v4"]),
        ("eager", ["v4"], []),
        ("compiled", ["v2", "v4"], ["v5", "loss"]),
    ]
    hooked = program_regions(HOOKED)
    assert [r.kind for r in hooked] == ["context", "compiled"] and hooked[0].outputs == ["v2"]
    assert "return T.autograd.graph.saved_tensors_hooks(pack_scaled, unpack_scaled)" in hooked[0].text
    original = RETAINED.splitlines()
    for region in regions:  # on the program's own line numbers
        for i, line in enumerate(region.text.splitlines()[1 : len(original)], start=1):
            assert not line.strip() or line == original[i], (i, line)


@pytest.mark.torch
def test_torch_aot_eager_judges_retain_grad_between_compiled_regions():
    pytest.importorskip("torch")
    out = _judge(_adapter("torch:aot_eager"), _case(RETAINED))
    assert out["verdict"] == "pass" and out["outputs"]["result[6]"] is not None, out


@pytest.mark.torch
def test_a_compiled_forward_that_departs_is_a_failure_not_an_eager_rerun(monkeypatch):
    """A planted compiler bug (the compiled forward's graph scales one output) is judged as such."""
    torch = pytest.importorskip("torch")
    adapter = _adapter("torch:aot_eager")
    real = torch.compile

    def planted(fn, **kwargs):
        compiled = real(fn, **kwargs)

        def run(*xs):
            v2, v3, v4, loss = compiled(*xs)  # the program's one region: what it assigns
            return (v2, v3, v4 * 1.01, loss)  # softmax's output, off by 1%

        return run

    monkeypatch.setattr(torch, "compile", planted)
    out = _judge(adapter, _case(PLAIN))
    assert out["verdict"] == "fail" and out["worst"]["output"] == "result[4]", out


@pytest.mark.parametrize("name", ["jax", "tensorflow:function"])
def test_the_functionalised_program_is_compiled_whole(name):
    pytest.importorskip(name.split(":")[0])
    adapter = _adapter(name)
    for source in (PLAIN, DOUBLE, HOOKED):
        out = _judge(adapter, _case(source, "bfloat16"))
        assert out["verdict"] == "pass", out
        assert out["cache"] == "miss" and out["compile_seconds"] > 0
    assert adapter.timing()["cache_size"] == 3
    values = np.asarray(_judge(adapter, _case(PLAIN, "bfloat16"))["outputs"]["grad[v0]"])
    assert values.shape == SHAPES["v0"]
    assert program_inputs(_case(PLAIN, "bfloat16"))["v0"].dtype == np.float64


@pytest.mark.torch
def test_an_error_raised_while_compiling_is_placed_on_the_program_line_dynamo_quotes():
    pytest.importorskip("torch")
    source = (
        "def prog(T, v0):\n    v1 = T.zeros((2,), dtype=v0.dtype)\n    v1.register_hook(lambda g: g * 2.0)\n"
        "    v2 = v0 * v1\n    loss = (v2 * 1).sum()\n    loss.backward()\n    return [v0, v1, v2]\n"
    )
    case = Case("program", None, {"v0": (2,)}, "float32", 0, ("program",), source=source)
    out = _judge(_adapter("torch:aot_eager"), case)
    assert out["status"] == "error" and out["type"] == "BackendCompilerFailed" and out["line"] == 3, out
    assert out["verdict"] == "pass" and out["reason"].startswith("both raise at line 3")


# the departures of torch.compile found in program cases (issue #33), each as a short program; the
# shipped known entries (refgrad/cases/known_departures.toml) name them
DEPARTURES = {
    "unreached-input-zero-grad": (
        {"v0": (2,), "v1": (2,)},
        "    v2 = v0 * 1.0\n    v3 = v1 * 1.0\n    loss = (v3 * 1).sum()\n    loss.backward()\n"
        "    return [v0, v1, v2, v3]\n",
    ),
    "saved-then-written-unreached": (
        {"v0": (2,)},
        "    v1 = v0 * 1.0\n    v1.tanh_()\n    v1.add_(1.0)\n    loss = (v0 * 1).sum()\n    loss.backward()\n"
        "    return [v0, v1]\n",
    ),
    "unbind-view-nograd-inplace": (
        {"v0": (1,)},
        "    v1 = T.zeros((1,), dtype=v0.dtype) * (v0 * 1.0)\n    v2 = v1.unbind(0)[0]\n"
        "    with T.no_grad():\n        v2.div_(4.0)\n    loss = (v0 * 1).sum()\n    loss.backward()\n"
        "    return [v0, v1, v2]\n",
    ),
    "retain-grad-mutated-input": (
        {"v0": (3,)},
        "    v1 = v0 * 1.0\n    v2 = v1.exp()\n    v1.retain_grad()\n    v1.mul_(2.0)\n    v3 = v2 * v1\n"
        "    loss = (v3 * 1).sum()\n    loss.backward()\n    return [v0, v1, v2, v3, v1.grad]\n",
    ),
    "aliased-inputs-nograd-view-write": (
        {"v0": (3, 2)},
        "    v1 = v0 * 1.0\n    v2 = v1[1:3]\n    v1.retain_grad()\n    v3 = T.nn.functional.softmax(v1.sum(0), 0)\n"
        "    with T.no_grad():\n        v2.add_(0.5)\n    loss = (v1 * 1).sum() + (v3 * 2).sum()\n    loss.backward()\n"
        "    return [v0, v1, v2, v3]\n",
    ),
    "autograd-error-wrapped-while-tracing": (
        {"v0": (2,)},
        "    v1 = v0 * 1.0\n    v0.fill_(1.25)\n    loss = (v1 * 1).sum()\n    loss.backward()\n    return [v0, v1]\n",
    ),
    "custom-function-view-output-node-name": (
        {"v0": (2,)},
        "    class Identity(T.autograd.Function):\n        @staticmethod\n        def forward(ctx, x):\n"
        "            return x\n\n        @staticmethod\n        def backward(ctx, g):\n            return g * 0.5\n"
        "    v1 = v0 * 1.0\n    v2 = Identity.apply(v1)\n    v1.retain_grad()\n    v2.clamp_(-0.5, 0.5)\n"
        "    loss = (v0 * 1).sum()\n    loss.backward()\n    return [v0, v1, v2]\n",
    ),
    "retain-grad-unreached-zero-grad": (
        {"v0": (2,)},
        "    v1 = v0 * 1.0\n    v1.retain_grad()\n    v2 = v1.exp()\n    loss = (v0 * 1).sum()\n    loss.backward()\n"
        "    return [v0, v1, v2, v1.grad]\n",
    ),
    "unreached-written-output-version-error": (
        {"v0": (2,)},
        "    v1 = v0 * 1.0\n    v2 = v1.exp()\n    v1.retain_grad()\n    v2.add_(0.5)\n    loss = (v0 * 1).sum()\n"
        "    loss.backward()\n    return [v0, v1, v2]\n",
    ),
    "mark-dirty-version-message": (
        {"v0": (1, 2)},
        "    class MarkDirty(T.autograd.Function):\n        @staticmethod\n        def forward(ctx, x):\n"
        "            x.mul_(2.0)\n            ctx.mark_dirty(x)\n            return x\n\n"
        "        @staticmethod\n        def backward(ctx, g):\n            return g * 2.0\n"
        "    v2 = v0 * 1.0\n    v3 = v2.tanh()\n    with T.autograd.graph.save_on_cpu():\n"
        "        v4 = MarkDirty.apply(v3)\n    v3.sub_(1.0)\n"
        "    loss = (v0 * 1).sum() + (v4 * 2).sum() + (v2 * 3).sum()\n    loss.backward()\n"
        "    return [v0, v2, v3, v4]\n",
    ),
    # the accumulate model template (conformance.models): both micro-batch losses from one compiled forward
    "two-losses-one-graph": (
        {"v0": (2, 2), "v1": (2, 2)},
        "    v2 = (v1[0:1] @ v0.t()).tanh()\n    v3 = (v1[1:2] @ v0.t()).tanh()\n    loss = (v0 * 1).sum()\n"
        "    for part in [v2, v3]:\n        (part.sum() / 2).backward()\n    return [v0, v1, v2, v3]\n",
    ),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(DEPARTURES))
def test_the_torch_compile_departures_of_programs_are_known(name):
    torch = pytest.importorskip("torch")
    from conformance.known import load_known

    shapes, body = DEPARTURES[name]
    source = f"def prog(T, {', '.join(shapes)}):\n" + body
    case = Case("program", None, shapes, "float32", 0, ("program",), source=source)
    eager = _judge(_adapter("torch"), case)
    assert eager["verdict"] == "pass", eager  # PyTorch eager and the reference agree
    out = _judge(_adapter("torch:aot_eager"), case)
    rec = {**out, "framework": "torch:aot_eager", "version": torch.__version__, "check": "program"}
    rec.update(case=case.to_dict(), dtype="float32")
    (classified,), _ = load_known("builtin").classify([rec])
    assert classified["verdict"] == "known", out
    assert classified["known"]["id"] == f"torch-aot-eager-{name}"


PENALTY = PLAIN.replace("(v4 * 2).sum()", "(v4 * v4).sum()").replace(
    "    loss.backward()\n",
    "    (g,) = T.autograd.grad(loss, [v0], create_graph=True)\n    (loss + (g * g).sum()).backward()\n",
)


@pytest.mark.torch
def test_a_gradient_penalty_is_compiled_with_torch_func_grad(monkeypatch):
    """AOTAutograd refuses to differentiate its compiled backward; the gradient-penalty ending is
    compiled as users spell it (torch.func.grad inside the compiled forward) and judged; with the
    penalty's gradient planted to zero, it fails."""
    torch = pytest.importorskip("torch")
    adapter = _adapter("torch:aot_eager")
    out = _judge(adapter, _case(PENALTY))
    assert out["verdict"] == "pass", out
    real = torch.func.grad
    monkeypatch.setattr(torch.func, "grad", lambda f, **kw: lambda *xs: torch.zeros_like(real(f, **kw)(*xs)))
    planted = _judge(_adapter("torch:aot_eager"), Case.from_dict({**_case(PENALTY).to_dict(), "seed": 5}))
    assert planted["verdict"] == "fail" and "grad[v" in planted["reason"], planted
