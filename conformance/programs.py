"""Programs that run unchanged on PyTorch and on the reference, and the machinery to compare them.

A program is data: a list of :class:`Step` (each one line of Python over variables ``v0, v1, ...``),
printable with :meth:`Program.source` and executed from that very source, so a failing case is
its own reproducer. :func:`programs` is a Hypothesis strategy over view and in-place chains
(the later conformance harness builds on it); :func:`run` executes a program with ``T=torch`` or
``T=reference`` and records the outcome (values, every leaf's ``.grad``, the error if any);
:func:`assert_same_outcome` compares two outcomes and explains the first difference.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field, replace

import numpy as np
from hypothesis import strategies as st

import reference
from conformance.amp import CastPolicy, amp_accumulator, low_dtype, reference_autocast
from conformance.case import (
    AMP_POLICIES,
    AMP_VARIABLES,
    COMPLEX_DTYPES,
    PART_DTYPE,
    Case,
    ProgramCase,
)
from conformance.precision import precision_for
from conformance.tolerance import complex_parts, explain, judge_bounds, known, ulp_of
from reference.autograd.graph import short_node_name, tensor_type_name
from reference.errors import Tracker

# Autograd errors whose full message the reference reproduces word for word (PyTorch 2.13).
AUTOGRAD_ERRORS = (
    "one of the variables needed for gradient computation has been modified by an inplace operation",
    "a leaf Variable that requires grad is being used in an in-place operation.",
    "a view of a leaf Variable that requires grad is being used in an in-place operation.",
    "Trying to backward through the graph a second time",
    "A view was created in no_grad mode and",
    "unsupported operation: more than one element of the written-to tensor refers to a single memory",
    "element 0 of tensors does not require grad and does not have a grad_fn",
    "can't retain_grad on Tensor that has requires_grad=False",  # (JAX, TensorFlow: no requires_grad state)
)
MULTI_OUTPUT_VIEW_ERROR = "This view is the output of a function that returns multiple views."
CUSTOM_FUNCTION_ERRORS = (  # custom autograd.Function errors the reference reproduces word for word
    "This view was created inside a custom Function",
    "a leaf Variable that requires grad has been used in an in-place operation.",
    "If your Function modifies inplace an input that is a view of another Tensor",
    "trying to differentiate twice a function that was marked with @once_differentiable",
    "returned an incorrect number of gradients",  # "function XBackward returned ... (expected 2, got 1)"
    "returned an invalid gradient at index",  # a gradient whose shape does not fit its input
    "has changed the size of value",  # a gradient hook returning another shape
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad()",
)

# A PyTorch 2.13 crash found by these programs (the process dies with SIGSEGV in
# torch/_tensor.py register_hook, while regenerating the view's grad_fn). The reference runs it.
TORCH_REGISTER_HOOK_CRASH = """
def prog(T, x):
    a = x * 1.0
    v = a[2]
    a.mul_(2)
    v.register_hook(lambda g: g)
"""


@dataclass
class Outcome:
    values: list = field(default_factory=list)  # numpy arrays (or None) of the returned tensors
    grads: list = field(default_factory=list)  # numpy arrays (or None) of the inputs' .grad
    error: BaseException | None = None
    dtypes: list = field(default_factory=list)  # dtype names of the results, then of the grads


def run(prog, T, arrays, requires_grad=None):
    """Run ``prog(T, *inputs)``: inputs are float64 leaves (requiring grad unless told otherwise)."""
    flags = requires_grad or [True] * len(arrays)
    inputs = [
        T.tensor(np.array(a, dtype=np.float64), dtype=T.float64, requires_grad=f)
        for a, f in zip(arrays, flags)
    ]
    out = Outcome()
    try:
        result = prog(T, *inputs)
        items = result if isinstance(result, (list, tuple)) else [result]
        out.values = [_to_numpy(r) for r in items]
        out.dtypes = [_dtype_name(r) for r in items]
    except Exception as exc:  # the error is part of the outcome
        out.error = exc
    out.grads = [_to_numpy(t.grad) for t in inputs]
    out.dtypes += [_dtype_name(t.grad) for t in inputs]
    return out


def _dtype_name(t):
    return None if t is None else str(getattr(t, "dtype", None)).replace("torch.", "")


def _to_numpy(t):
    if t is None:
        return None
    if hasattr(t, "detach"):
        t = t.detach()
        if _dtype_name(t) in ("bfloat16", "float16"):  # NumPy has no bfloat16: widen (exactly) first
            t = t.double()
        if t.is_conj() or t.is_neg():  # a lazy conjugate or negative view (complex programs): its values
            t = t.resolve_conj().resolve_neg()
        a = t.numpy(force=True)  # force: ZeroTensors
        return np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64, copy=True)
    a = np.asarray(t)
    return np.asarray(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)


def assert_same_outcome(ref, expected, label="", rtol=1e-9, atol=1e-12):
    """``ref`` (the reference's outcome) must equal ``expected`` (PyTorch's); explain the first difference."""
    if (ref.error is None) != (expected.error is None):
        raise AssertionError(
            f"{label}: PyTorch {'raised ' + repr(expected.error) if expected.error else 'succeeded'} but the "
            f"reference {'raised ' + repr(ref.error) if ref.error else 'succeeded'}"
        )
    if expected.error is not None:
        if isinstance(expected.error, RuntimeError) and not isinstance(ref.error, RuntimeError):
            raise AssertionError(
                f"{label}: PyTorch raised RuntimeError, the reference {type(ref.error).__name__}"
            )
        msg = str(expected.error).strip()
        known_errors = AUTOGRAD_ERRORS + CUSTOM_FUNCTION_ERRORS + (MULTI_OUTPUT_VIEW_ERROR,)
        if any(known in msg for known in known_errors) and msg != str(ref.error):
            raise AssertionError(
                f"{label}: PyTorch raised {msg!r} but the reference raised {str(ref.error)!r}"
            )
    if ref.error is None and ref.dtypes != expected.dtypes:
        raise AssertionError(f"{label}: dtypes {ref.dtypes} but PyTorch's are {expected.dtypes}")
    if len(ref.values) != len(expected.values):
        raise AssertionError(
            f"{label}: {len(ref.values)} results but PyTorch returned {len(expected.values)}"
        )
    for kind, a_list, b_list in (
        ("result", ref.values, expected.values),
        ("input.grad", ref.grads, expected.grads),
    ):
        for i, (a, b) in enumerate(zip(a_list, b_list)):
            if (a is None) != (b is None):
                raise AssertionError(
                    f"{label}: {kind}[{i}] is {'None' if a is None else 'set'} in the reference "
                    f"but {'None' if b is None else 'set'} in PyTorch"
                )
            if a is None:
                continue
            if a.shape != b.shape:
                raise AssertionError(f"{label}: {kind}[{i}] has shape {a.shape} but PyTorch's is {b.shape}")
            if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                k = np.unravel_index(np.argmax(np.abs(a - b)), a.shape) if a.ndim else ()
                raise AssertionError(f"{label}: {kind}[{i}]{list(k)}={a[k]!r} but PyTorch says {b[k]!r}")


# ---- random programs over views and in-place ops ------------------------------------------------------


@dataclass
class Step:
    code: str  # one statement over v0, v1, ... and T
    no_grad: bool = False
    context: str = ""  # another context manager the statement runs in (saved-tensor hooks, see HOOK_CONTEXTS)

    def source(self):
        if self.no_grad:
            return f"with T.no_grad():\n    {self.code}"
        return f"with {self.context}:\n    {self.code}" if self.context else self.code


@dataclass
class Program:
    shapes: list  # input shapes; inputs are v0..v{n-1}
    steps: list
    loss_vars: list  # variables summed into the loss
    n_vars: int
    retained: list = field(default_factory=list)  # variables whose .grad is returned (retain_grad)
    ending: str = "backward"  # how the program differentiates the loss, see ENDINGS
    functions: list = field(default_factory=list)  # custom autograd.Functions used (CUSTOM_FUNCTIONS)
    parts: list = field(default_factory=list)  # the micro-batch losses of the "micro_batches" ending
    complex_vars: list = field(default_factory=list)  # complex variables: real loss terms (view_as_real)

    def source(self, name="prog"):
        args = ", ".join(f"v{i}" for i in range(len(self.shapes)))
        body = [textwrap.dedent(DEFINITIONS[f]).strip() for f in self.functions]
        body += [s.source() for s in self.steps]
        terms = " + ".join(
            f"T.view_as_real(v{i} * {k + 1}).sum()" if i in self.complex_vars else f"(v{i} * {k + 1}).sum()"
            for k, i in enumerate(self.loss_vars)
        )
        body.append(f"loss = {terms or 'v0.sum()'}")
        if self.ending == "micro_batches":  # gradient accumulation: one backward per micro-batch loss
            parts = ", ".join(f"v{i}" for i in self.parts)
            body.extend([f"for part in [{parts}]:", f"    (part / {len(self.parts)}).backward()"])
        elif self.ending == "double_backward" and 0 in self.complex_vars:  # a complex gradient: |g|^2
            body.extend(COMPLEX_DOUBLE_BACKWARD)
        else:
            body.extend(ENDINGS[self.ending])
        returned = [f"v{i}" for i in range(self.n_vars)] + [f"v{i}.grad" for i in self.retained]
        body.append("return [" + ", ".join(returned) + "]")
        return f"def {name}(T, {args}):\n" + textwrap.indent("\n".join(body), "    ") + "\n"

    def function(self):
        scope = {}
        exec(compile(self.source(), "<program>", "exec"), scope)  # noqa: S102 - the program is our own data
        return scope["prog"]

    def inputs(self, seed=0):
        rng = np.random.default_rng(seed)
        return [np.round(rng.standard_normal(s), 2) + 0.05 for s in self.shapes]


ENDINGS = {
    "backward": ["loss.backward()"],
    "twice": ["loss.backward()", "loss.backward()"],
    "retain_twice": ["loss.backward(retain_graph=True)", "loss.backward()"],
    # a gradient penalty, as users write one (the loss plus the squared norm of its gradient): the
    # penalty's second order where the loss is not linear in v0 (the form ``(g * g).sum().backward()``
    # raised "element 0 of tensors does not require grad" for every linear loss: one error, drawn often)
    "double_backward": [
        "(g,) = T.autograd.grad(loss, [v0], create_graph=True)",
        "(loss + (g * g).sum()).backward()",
    ],
}

# the gradient penalty of a complex leaf: its squared modulus, a real loss (``(g * g).sum()`` is complex)
COMPLEX_DOUBLE_BACKWARD = [
    "(g,) = T.autograd.grad(loss, [v0], create_graph=True)",
    "(loss + (T.view_as_real(g) * T.view_as_real(g)).sum()).backward()",
]


ENDING_DRAWS = (
    "backward",
    "backward",
    "double_backward",
    "double_backward",
    "retain_twice",
    "retain_twice",
    "twice",
)


# Custom autograd.Function templates a program may define (in its own text, on ``T.autograd.Function``)
# and apply: a straight-through estimator, a Function saving a view of its output (the program may
# then write the output in place: the saved view's version check), one that modifies its input in
# place (mark_dirty: version bump and history rebase, on views too; also writing through ``.data``,
# where mark_dirty's bump is the only one), one returning its input as-is
# (a view of it: in-place on it is an error), one with a non-differentiable output. On JAX and
# TensorFlow (conformance.functional) each becomes ``jax.custom_vjp`` / ``tf.custom_gradient`` over
# the template's own forward and backward.
CUSTOM_FUNCTIONS = {
    "StraightThrough": """
        class StraightThrough(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sign()

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * (x.abs() <= 1.0).to(g.dtype)
    """,
    "SavedView": """
        class SavedView(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y[...])
                return y

            @staticmethod
            def backward(ctx, g):
                (v,) = ctx.saved_tensors
                return g * v
    """,
    "MarkDirty": """
        class MarkDirty(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2.0)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2.0
    """,
    "MarkDirtyData": """
        class MarkDirtyData(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.data.mul_(2.0)  # a kernel writing in place, unseen by autograd: mark_dirty's bump only
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2.0
    """,
    "Identity": """
        class Identity(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 0.5
    """,
    "NonDifferentiable": """
        class NonDifferentiable(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x * 3.0, x.exp()
                ctx.mark_non_differentiable(b)
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 3.0
    """,
}


# Blocks a program may wrap in ``T.utils.checkpoint.checkpoint`` (reentrant or not): written with
# tensor methods only, so the same block runs on the reference, PyTorch and the functional layer
# (where checkpoint is ``jax.checkpoint`` / ``tf.recompute_grad``). One block writes in place through a
# view of an intermediate (the recomputation must redo it), one returns two outputs.
CHECKPOINT_BLOCKS = {
    "block": """
        def block(x):
            return (x.exp() * x).tanh()
    """,
    "block_inplace": """
        def block_inplace(x):
            y = x * 2.0
            y.mul_(x.exp())
            y.unsqueeze(0)[..., :1].add_(1.0)
            return y.tanh()
    """,
    "block_two": """
        def block_two(x):
            return x.exp(), (x * x).sigmoid()
    """,
}

# Saved-tensor hook pairs: ``pack`` transforms what an op saves, ``unpack`` restores it exactly (a
# scaling by 2, a packed (shape, detached copy) tuple). With ``save_on_cpu`` they are the contexts a
# hooked step runs in. JAX and TensorFlow keep their residuals inside their autodiff: no counterpart.
HOOK_PAIRS = {
    "scaled_hooks": """
        def pack_scaled(t):
            return t * 2.0

        def unpack_scaled(p):
            return p / 2.0
    """,
    "copy_hooks": """
        def pack_copy(t):
            return (tuple(t.shape), t.detach().clone())

        def unpack_copy(p):
            return p[1].reshape(p[0])
    """,
}
HOOK_CONTEXTS = {  # the context a hooked step runs in -> the definitions it needs
    "T.autograd.graph.saved_tensors_hooks(pack_scaled, unpack_scaled)": "scaled_hooks",
    "T.autograd.graph.saved_tensors_hooks(pack_copy, unpack_copy)": "copy_hooks",
    "T.autograd.graph.save_on_cpu()": None,
}
DEFINITIONS = {**CUSTOM_FUNCTIONS, **CHECKPOINT_BLOCKS, **HOOK_PAIRS}


def _view_steps(draw, name, shape):
    """(code, shape) of a view of variable ``name`` with ``shape``, or None when none applies."""
    nd = len(shape)
    options = ["alias", "unsqueeze", "as_strided"]
    if nd >= 1:
        options += [
            "select",
            "slice",
            "narrow",
            "view",
            "expand",
            "split",
            "unbind",
            "getitem",
            "split_sizes",
            "flatten",
            "squeeze",
        ]
    if nd >= 2:
        options += ["transpose", "diagonal", "t", "permute"]
    kind = draw(st.sampled_from(options))
    if kind == "alias":
        return f"{name}[...]", shape
    if kind == "as_strided":
        if draw(st.booleans()) or int(np.prod(shape)) == 0:  # the same geometry, written explicitly
            return f"{name}.as_strided({name}.shape, {name}.stride(), {name}.storage_offset())", shape
        return f"{name}.as_strided((1,), (1,), {name}.storage_offset())", (1,)
    if kind == "flatten":
        return f"{name}.flatten()", (int(np.prod(shape)),)
    if kind == "squeeze":
        return f"{name}.squeeze()", tuple(n for n in shape if n != 1)
    if kind == "unsqueeze":
        d = draw(st.integers(0, nd))
        return f"{name}.unsqueeze({d})", shape[:d] + (1,) + shape[d:]
    d = draw(st.integers(0, nd - 1))
    n = shape[d]
    if kind == "select" and n > 0:
        i = draw(st.integers(-n, n - 1))
        return f"{name}.select({d}, {i})", shape[:d] + shape[d + 1 :]
    if kind == "slice" and n > 0:
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(a + 1, n))
        step = draw(st.integers(1, 2))
        idx = ", ".join([":"] * d + [f"{a}:{b}:{step}"])
        return f"{name}[{idx}]", shape[:d] + (len(range(a, b, step)),) + shape[d + 1 :]
    if kind == "narrow" and n > 0:
        a = draw(st.integers(0, n - 1))
        length = draw(st.integers(1, n - a))
        return f"{name}.narrow({d}, {a}, {length})", shape[:d] + (length,) + shape[d + 1 :]
    if kind == "view":
        total = int(np.prod(shape))
        return f"{name}.reshape({total})", (total,)
    if kind == "expand":
        if 1 in shape:
            d1 = shape.index(1)
            new = shape[:d1] + (2,) + shape[d1 + 1 :]
            return f"{name}.expand{new}", new
        return f"{name}.expand(2, *{name}.shape)", (2,) + shape
    if kind == "split" and n > 0:
        size = draw(st.integers(1, n))
        k = draw(st.integers(0, (n - 1) // size))
        out = min(size, n - k * size)
        return f"{name}.split({size}, {d})[{k}]", shape[:d] + (out,) + shape[d + 1 :]
    if kind == "split_sizes" and n > 1:
        first = draw(st.integers(1, n - 1))
        k = draw(st.integers(0, 1))
        return f"{name}.split([{first}, {n - first}], {d})[{k}]", shape[:d] + (
            (first, n - first)[k],
        ) + shape[d + 1 :]
    if kind == "unbind" and n > 0:
        k = draw(st.integers(0, n - 1))
        return f"{name}.unbind({d})[{k}]", shape[:d] + shape[d + 1 :]
    if kind == "getitem" and n > 0:
        i = draw(st.integers(0, n - 1))
        return f"{name}[{', '.join([':'] * d + [str(i)])}, None]", shape[:d] + shape[d + 1 :] + (1,)
    if kind == "transpose":
        d2 = draw(st.integers(0, nd - 1))
        s = list(shape)
        s[d], s[d2] = s[d2], s[d]
        return f"{name}.transpose({d}, {d2})", tuple(s)
    if kind == "t" and nd == 2:
        return f"{name}.t()", (shape[1], shape[0])
    if kind == "permute":
        perm = draw(st.permutations(range(nd)))
        return f"{name}.permute{tuple(perm)}", tuple(shape[p] for p in perm)
    if kind == "diagonal" and nd >= 2:
        k = draw(st.integers(-1, 1))
        keep = shape[2:]
        n_diag = max(0, min(shape[0], shape[1] - k) if k >= 0 else min(shape[0] + k, shape[1]))
        return f"{name}.diagonal({k})", keep + (n_diag,)
    return f"{name}[...]", shape


_UNARY = (
    "exp()",
    "tanh()",
    "sigmoid()",
    "relu()",
    "abs()",
    "neg()",
    "clone()",
    "detach()",
    "mul(1.5)",
    "add(0.25)",
    "sqrt().mean() * {v}",
    "softmax(-1)",
)
_INPLACE_CONST = (
    "add_(0.5)",
    "mul_(-2.0)",
    "sub_(1.0)",
    "div_(4.0)",
    "clamp_(-0.5, 0.5)",
    "relu_()",
    "zero_()",
    "fill_(1.25)",
    "exp_()",
    "sigmoid_()",
    "tanh_()",
    "neg_()",
)


# complex programs (``programs(complex_steps=True)``): the elementwise ops of a complex variable
# (abs, angle: real results) and its in-place ops with constants, complex ones among them
_COMPLEX_UNARY = (
    "exp()",
    "neg()",
    "clone()",
    "detach()",
    "mul(1.5)",
    "add(0.25)",
    "mul(0.5 - 1j)",
    "abs()",
    "angle()",
    "abs()",
    "angle()",
    "conj_physical()",
)
_COMPLEX_INPLACE_CONST = (
    "add_(0.5)",
    "mul_(-2.0)",
    "sub_(1.0)",
    "div_(4.0)",
    "zero_()",
    "fill_(1.25)",
    "exp_()",
    "neg_()",
    "mul_(0.5 + 1j)",
    "add_(-1j)",
    "div_(1 - 2j)",
)


def _complex_step(draw, name, shape, is_complex, is_conj, fresh, pair):
    """(code, shape, view, complex, conj) of a complex step on variable ``name``: whether the result is
    a view of it (written in place, it writes ``name``'s storage), complex, and has the conj bit.

    Of a complex variable: ``view_as_real`` (of a conjugate view: of its ``resolve_conj()`` copy, as
    PyTorch refuses the view), ``.real``, ``.imag`` (of a conjugate view: a view with the negative
    bit), the lazy conjugate ``conj()`` (a view; of a conjugate view, a view without the bit),
    ``resolve_conj()`` (a copy). Of a real one: ``view_as_complex`` of a ``view_as_real`` result
    (``pair``) or of a contiguous tensor of its own storage (``fresh``) reshaped to pairs, else a
    complex result of it (``v * (0.5 + 1j)``)."""
    if is_complex:
        kind = draw(st.sampled_from(["view_as_real", "real", "imag", "conj", "conj", "resolve_conj"]))
        if kind == "view_as_real":
            if is_conj:
                return f"T.view_as_real({name}.resolve_conj())", shape + (2,), False, False, False
            return f"T.view_as_real({name})", shape + (2,), True, False, False
        if kind in ("real", "imag"):
            return f"{name}.{kind}", shape, True, False, False
        if kind == "conj":
            return f"{name}.conj()", shape, True, True, not is_conj
        return f"{name}.resolve_conj()", shape, False, True, False
    n = int(np.prod(shape))
    if pair:
        return f"T.view_as_complex({name})", shape[:-1], True, True, False
    if fresh and n % 2 == 0 and n:
        return f"T.view_as_complex({name}.reshape({n // 2}, 2))", (n // 2,), True, True, False
    return f"{name} * (0.5 + 1j)", shape, False, True, False


def _numeric_step(draw, name, shape, other, other_shape):
    """(code, shape) of a numeric op of ``name`` (and ``other``): reductions, matmul, conv, softmax,
    batch_norm. Operands are flattened with ``reshape`` where the op needs a fixed rank."""
    n, m = int(np.prod(shape)), int(np.prod(other_shape))
    options = ["sum_dim", "mean", "amax", "softmax"]
    options += ["matmul", "conv"] if n and m else []
    options += ["batch_norm"] if n >= 2 else []
    kind = draw(st.sampled_from(options))
    nd = len(shape)
    if kind == "sum_dim" and nd:
        d = draw(st.integers(0, nd - 1))
        return f"{name}.sum({d})", shape[:d] + shape[d + 1 :]
    if kind == "amax" and n:
        return f"{name}.amax()", ()
    if kind == "softmax" and nd:
        return f"T.nn.functional.softmax({name}, {draw(st.integers(0, nd - 1))})", shape
    if kind == "matmul":  # an outer product of the flattened operands, then a contraction
        if draw(st.booleans()):
            return f"{name}.reshape({n}, 1) @ {other}.reshape(1, {m})", (n, m)
        return f"{name}.reshape(1, {n}) @ {name}.reshape({n}, 1)", (1, 1)
    if kind == "conv":  # a 1-d convolution of the flattened operands, the shorter as the kernel
        k = draw(st.integers(1, min(n, m)))
        pad = draw(st.integers(0, k - 1))
        code = (
            f"T.nn.functional.conv1d({name}.reshape(1, 1, {n}), {other}.reshape(1, 1, {m})[:, :, :{k}], "
            f"padding={pad})"
        )
        return code, (1, 1, n + 2 * pad - k + 1)
    if kind == "batch_norm":
        return (
            f"T.nn.functional.batch_norm({name}.reshape({n}, 1), None, None, training=True).reshape({shape})",
            shape,
        )
    return f"{name}.mean()", ()


def _broadcastable_to(src, dst):
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(reversed(src), reversed(dst)))


@st.composite
def programs(
    draw,
    max_inputs=2,
    max_steps=6,
    numeric=False,
    custom_functions=False,
    checkpoints=False,
    saved_hooks=False,
    complex_steps=False,
):
    """A random chain of views, in-place ops (some under no_grad), elementwise ops and a backward.

    ``numeric=True`` adds the numeric steps of :func:`_numeric_step` (reductions, matmul, conv,
    softmax, batch_norm) between them; ``custom_functions=True`` adds applications of the custom
    autograd.Function templates of :data:`CUSTOM_FUNCTIONS`; ``checkpoints=True`` steps that run a
    block of :data:`CHECKPOINT_BLOCKS` under ``T.utils.checkpoint.checkpoint`` (reentrant or not,
    ``preserve_rng_state`` given or not); ``saved_hooks=True`` runs some computing steps under a
    saved-tensor hook context (:data:`HOOK_CONTEXTS`).

    ``complex_steps=True``: a program of complex leaves (a complex128/complex64 case) with the complex
    steps of :func:`_complex_step` (view_as_real / view_as_complex, the lazy ``conj`` view, ``.real`` /
    ``.imag`` views, written in place like any view) and complex elementwise ops (mul, div, exp, abs,
    angle); each variable's kind (complex or real) decides its ops, and the loss reads complex
    variables through ``view_as_real`` (a real loss). Numeric steps, templates and hooks stay off.
    """
    functions = []
    n_inputs = draw(st.integers(1, max_inputs))
    dims = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)
    shapes = [draw(dims) for _ in range(n_inputs)]
    var_shapes = list(shapes)
    steps = []
    retained = []
    views = set()  # variables made by view steps
    storage = list(range(n_inputs))  # storage[k]: which storage variable k lives in (views alias)
    # complex programs: cplx[k] whether variable k is complex; conj[k] whether it has the conj bit
    cplx, conj = [complex_steps] * n_inputs, [False] * n_inputs
    pairs = set()  # view_as_real results (view_as_complex takes them back)

    def made(i, shape, base=None, is_complex=None, conjugate=False):
        """Record a new variable: a view of ``i`` when ``base`` is given, else a fresh storage."""
        storage.append(len(var_shapes) if base is None else storage[base])
        var_shapes.append(shape)
        cplx.append(cplx[i] if is_complex is None else is_complex)
        conj.append(conjugate)

    for i, shape in enumerate(shapes):  # non-leaf bases (in-place on a leaf that requires grad raises)
        if draw(st.booleans()):
            steps.append(Step(f"v{len(var_shapes)} = v{i} * 1.0"))
            made(i, shape)
    if draw(st.booleans()):  # a base that does not require grad, written with values that do
        steps.append(Step(f"v{len(var_shapes)} = T.zeros({shapes[0]}, dtype=v0.dtype)"))
        made(0, shapes[0])
    if complex_steps:
        numeric = custom_functions = checkpoints = saved_hooks = False
    for _ in range(draw(st.integers(1, max_steps))):
        kinds = ["view", "view", "unary", "unary", "binary", "inplace", "inplace", "inplace_other"]
        kinds += ["setitem", "hook"] + (["numeric", "numeric"] if numeric else [])
        kinds += ["custom"] * 4 if custom_functions else []
        kinds += ["checkpoint"] * 3 if checkpoints else []
        kinds += ["complex"] * 4 if complex_steps else []
        kind = draw(st.sampled_from(kinds))
        low = 0
        if (
            kind in ("inplace", "inplace_other", "setitem", "custom", "checkpoint")
            and len(var_shapes) > n_inputs
        ):
            low = n_inputs if draw(st.integers(0, 9)) else 0  # mostly non-leaves: leaves only raise
        i = len(var_shapes) - 1  # mostly a chain: the latest variable, or any other
        i = i if draw(st.integers(0, 2)) == 0 and i >= low else draw(st.integers(low, i))
        name, shape = f"v{i}", var_shapes[i]
        new = f"v{len(var_shapes)}"
        no_grad = draw(st.booleans()) if kind in ("view", "inplace", "inplace_other") else False
        no_grad = no_grad and draw(st.booleans())
        if kind == "view":
            code, out_shape = _view_steps(draw, name, shape)
            steps.append(Step(f"{new} = {code}", no_grad))
            views.add(len(var_shapes))
            made(i, out_shape, base=i, conjugate=conj[i])  # a view keeps the conj bit
        elif kind == "complex":
            real = [k for k in range(len(var_shapes)) if not cplx[k]]
            if real and draw(st.booleans()):  # a real variable (a part, a modulus): view_as_complex
                i = draw(st.sampled_from(real))
                name, shape = f"v{i}", var_shapes[i]
            fresh = storage[i] == i and not cplx[i]  # a real tensor of its own storage: contiguous
            code, out_shape, base, is_complex, conjugate = _complex_step(
                draw, name, shape, cplx[i], conj[i], fresh, i in pairs
            )
            if code.startswith("T.view_as_real(v"):
                pairs.add(len(var_shapes))
            steps.append(Step(f"{new} = {code}", no_grad and base is not None))
            if base is not None:
                views.add(len(var_shapes))
            made(i, out_shape, base=i if base else None, is_complex=is_complex, conjugate=conjugate)
        elif kind == "unary":
            op = draw(st.sampled_from(_COMPLEX_UNARY if cplx[i] else _UNARY))
            if "{v}" in op:
                code = f"{new} = {name}.abs().{op.format(v=name)}"
            else:
                code = f"{new} = {name}.{op}"
            steps.append(Step(code))
            made(i, shape, base=i if op == "detach()" else None, conjugate=conj[i] and op == "detach()")
            cplx[-1] = cplx[i] and op not in ("abs()", "angle()")
        elif kind == "custom":
            fn = draw(st.sampled_from(sorted(CUSTOM_FUNCTIONS)))
            if fn not in functions:
                functions.append(fn)
            if draw(st.booleans()):  # applied to a fresh intermediate that its op saved for backward
                steps.append(
                    Step(f"{new} = {name}.{draw(st.sampled_from(['exp()', 'tanh()', 'sigmoid()']))}")
                )
                made(i, shape)
                i, name = len(var_shapes) - 1, new
                new = f"v{len(var_shapes)}"
            if fn == "NonDifferentiable":
                steps.append(Step(f"{new}, v{len(var_shapes) + 1} = {fn}.apply({name})"))
                made(i, shape)
                made(i, shape)
            else:
                steps.append(Step(f"{new} = {fn}.apply({name})"))
                made(i, shape, base=i if fn in ("MarkDirty", "MarkDirtyData", "Identity") else None)
        elif kind == "checkpoint":
            block = draw(st.sampled_from(sorted(CHECKPOINT_BLOCKS)))
            if block not in functions:
                functions.append(block)
            reentrant = draw(st.booleans())
            rng = draw(st.sampled_from(["", ", preserve_rng_state=True", ", preserve_rng_state=False"]))
            call = f"T.utils.checkpoint.checkpoint({block}, {name}, use_reentrant={reentrant}{rng})"
            if block == "block_two":
                steps.append(Step(f"{new}, v{len(var_shapes) + 1} = {call}"))
                made(i, shape)
                made(i, shape)
            else:
                steps.append(Step(f"{new} = {call}"))
                made(i, shape)
        elif kind == "numeric":
            j = draw(st.integers(0, len(var_shapes) - 1))
            code, out_shape = _numeric_step(draw, name, shape, f"v{j}", var_shapes[j])
            steps.append(Step(f"{new} = {code}"))
            made(i, out_shape)
        elif kind == "binary":
            j = draw(st.integers(0, len(var_shapes) - 1))
            other = var_shapes[j]
            op = draw(st.sampled_from(["+", "*", "-", "/"] if complex_steps else ["+", "*", "-"]))
            try:
                out_shape = tuple(np.broadcast_shapes(shape, other))
            except ValueError:
                out_shape = shape
            # (a complex division by exp(v): a divisor that is never 0)
            steps.append(Step(f"{new} = {name} / v{j}.exp()" if op == "/" else f"{new} = {name} {op} v{j}"))
            made(i, out_shape, is_complex=cplx[i] or cplx[j])
        elif kind == "inplace":
            ops = _COMPLEX_INPLACE_CONST if cplx[i] else _INPLACE_CONST
            steps.append(Step(f"{name}.{draw(st.sampled_from(ops))}", no_grad))
        elif kind == "inplace_other":
            # the other operand is the target itself or lives in another storage: an operand that
            # partially aliases the target has no defined result (PyTorch's depends on loop order);
            # a real target takes real operands only (a complex one does not cast to it)
            j = draw(
                st.sampled_from(
                    [
                        k
                        for k in range(len(var_shapes))
                        if (k == i or storage[k] != storage[i]) and (cplx[i] or not cplx[k])
                    ]
                )
            )
            op = draw(st.sampled_from(["mul_", "add_", "copy_"]))
            steps.append(Step(f"{name}.{op}(v{j})", no_grad))
        elif kind == "hook":
            if draw(st.booleans()) or i in views:
                # (no register_hook on views: PyTorch 2.13 segfaults registering the first hook on a
                # view whose base was since modified in place -- see TORCH_REGISTER_HOOK_CRASH)
                steps.append(Step(f"{name}.retain_grad()"))
                retained.append(i)
            else:
                steps.append(Step(f"{name}.register_hook(lambda g: g * 2.0)"))
        else:  # setitem
            if not shape or shape[0] == 0:
                steps.append(Step(f"{name}[...] = 0.5"))
                continue
            k = draw(st.integers(0, shape[0] - 1))
            if draw(st.booleans()):
                steps.append(Step(f"{name}[{k}] = {draw(st.sampled_from(['0.5', '-1.0']))}"))
            else:
                if complex_steps:  # (a real target: real values only)
                    j = draw(st.sampled_from([m for m in range(len(var_shapes)) if cplx[i] or not cplx[m]]))
                else:
                    j = draw(st.integers(0, len(var_shapes) - 1))
                steps.append(Step(f"{name}[{k}] = v{j}.sum() * 0.5"))
        if (
            saved_hooks
            and kind in ("unary", "binary", "numeric", "custom", "checkpoint")
            and draw(st.booleans())
        ):
            context = draw(st.sampled_from(sorted(HOOK_CONTEXTS)))  # what the step saves goes through hooks
            steps[-1].context = context
            if HOOK_CONTEXTS[context] and HOOK_CONTEXTS[context] not in functions:
                functions.append(HOOK_CONTEXTS[context])
        if kind in ("custom", "checkpoint") and i >= n_inputs and draw(st.booleans()):
            # its input is then written in place (saved inputs go stale: the version checks)
            steps.append(Step(f"{name}.{draw(st.sampled_from(_INPLACE_CONST))}"))
    n_vars = len(var_shapes)
    loss_vars = draw(st.lists(st.integers(0, n_vars - 1), min_size=1, max_size=3, unique=True))
    if 0 not in loss_vars:  # the loss reaches an input: a loss of constants raised "does not require grad"
        loss_vars = [0] + loss_vars  # at every backward, and autograd.grad "not used in the graph"
    # "twice" (its outcome mostly PyTorch's "backward through the graph a second time", an error JAX
    # and TensorFlow cannot have) is drawn half as often as each other ending ("backward" first: shrinking)
    ending = draw(st.sampled_from(ENDING_DRAWS))
    complex_vars = [k for k in range(n_vars) if cplx[k]]
    return Program(
        shapes, steps, loss_vars, n_vars, sorted(set(retained)), ending, functions, complex_vars=complex_vars
    )


# ---- programs as conformance cases ------------------------------------------------------------------
# A program case (:class:`conformance.case.ProgramCase`) carries the program's own text; every framework runs that
# text (PyTorch as ``T=torch``; JAX and TensorFlow a functionalised form, see conformance.functional)
# and the reference runs it as ``T=reference``. Outputs are named ``result[i]`` (the returned
# tensors: every variable, then the retained ``.grad``s) and ``grad[vi]`` (each input leaf's ``.grad``).
# An error is part of the outcome: its type, message and the program line that raised it.

PROGRAM_FILE = "<program>"


def program_case(program: Program, seed: int = 0, dtype: str = "float64") -> Case:
    """The case of ``program`` in ``dtype``, or under a mixed-precision policy (``dtype`` one of
    :data:`conformance.case.AMP_POLICIES`: float32 variables, conformance.amp)."""
    shapes = {f"v{i}": tuple(s) for i, s in enumerate(program.shapes)}
    amp = dtype if dtype in AMP_POLICIES else ""
    dtype = AMP_VARIABLES if amp else dtype
    return ProgramCase("program", None, shapes, dtype, seed, ("program",), source=program.source(), amp=amp)


def _steps(lines: list) -> tuple[int, int]:
    """(first, at): the index of a program's first step, after the definitions (lines indented deeper,
    or blank, belong to them), and of its ``loss = ...`` line."""
    at = next(i for i, line in enumerate(lines) if line.startswith("    loss = "))
    first = 1
    while first < at and (
        lines[first].startswith(("    class ", "    def ", "        ")) or not lines[first].strip()
    ):
        first += 1
    return first, at


def autocast_source(source: str, low: str = "bfloat16") -> tuple[str, int]:
    """The program text as a PyTorch user writes the mixed-precision step: its forward (the steps up to
    and including ``loss = ...``) inside ``with T.autocast("cpu", dtype=T.<low>):``, the ending
    outside; and the line (1-based, of the program) the ``with`` is inserted at: a program line ``L``
    at or after it is line ``L + 1`` of this text. (The reproducer of a PyTorch case runs it.)"""
    lines = source.splitlines()
    first, at = _steps(lines)
    body = ["    " + line if line.strip() else line for line in lines[first : at + 1]]
    text = lines[:first] + [f'    with T.autocast("cpu", dtype=T.{low}):'] + body + lines[at + 1 :]
    return "\n".join(text) + "\n", first + 1


def split_program(source: str) -> tuple[str, str, str]:
    """The program text in three parts, each on the program's own line numbers (the other parts'
    lines blank), so that an error's line is the program's: (definitions, forward, tail).

    * definitions: ``def definitions(T)``: the template classes and functions the body defines
      first (custom Functions, checkpoint blocks, hook pairs), returned by name;
    * forward: ``def forward(T, v0, ...)``: every step up to and including ``loss = ...``, then
      ``return (<the returned variables>, loss)``;
    * tail: ``def tail(T, loss, <the returned variables>)``: the ending (the backward /
      autograd.grad calls) and the ``return``."""
    lines = source.splitlines()
    first, at = _steps(lines)
    defined = re.findall(r"^    (?:class|def) (\w+)", "\n".join(lines[1:first]), re.M)
    names = list(dict.fromkeys(re.findall(r"\bv\d+\b", lines[-1])))
    definitions = (
        ["def definitions(T):"]
        + lines[1:first]
        + [f"    return {{{', '.join(f'{n!r}: {n}' for n in defined)}}}"]
    )
    forward = [lines[0].replace("def prog(", "def forward(", 1)] + [""] * (first - 1) + lines[first : at + 1]
    forward.append(f"    return ({', '.join(names + ['loss'])},)")
    tail = [f"def tail(T, loss, {', '.join(names)}):"] + [""] * at + lines[at + 1 :]
    return tuple("\n".join(part) + "\n" for part in (definitions, forward, tail))


# Statements of a program's forward that torch.compile cannot capture, run between compiled regions as
# a user who compiles regions writes them: ``retain_grad`` (Dynamo graph-breaks on it) and the saved-tensor
# hook contexts (Dynamo skips their ``__init__``; the region inside runs compiled under them).
_BETWEEN_REGIONS = re.compile(
    r"^    (v\d+\.retain_grad\(\)|with T\.autograd\.graph\.(saved_tensors_hooks|save_on_cpu)\(.*\):)$"
)
_ASSIGNED = re.compile(r"^\s*((?:v\d+|loss)(?:\s*,\s*v\d+)*)\s*=(?!=)")


@dataclass
class Region:
    """A part of a program's forward: ``kind`` "compiled" (``text`` defines ``region(T, *inputs)``
    returning ``outputs``), "eager" (``text`` defines it returning nothing: a ``retain_grad`` call) or
    "context" (compiled, called under the context ``text`` also defines as ``context(T)``)."""

    kind: str
    text: str
    inputs: list
    outputs: list


def program_regions(source: str) -> list:
    """The forward of :func:`split_program` (every step up to ``loss = ...``) as regions: one compiled
    region when the program has no ``retain_grad`` and no saved-tensor hook context, else compiled
    regions split at them, each a function of the variables made before it that it reads to those it assigns, on the
    program's own line numbers (an error's line is the program's)."""
    lines = source.splitlines()
    first, at = _steps(lines)
    defined = re.findall(r"\bv\d+\b", lines[0])
    regions, pending = [], []

    def function(name, body, inputs, outputs):
        head = f"def {name}(T, {', '.join(inputs)}):"
        numbered = [""] * len(lines)
        numbered[0] = head
        for i, text in body:
            numbered[i] = text
        return "\n".join(numbered + [f"    return ({''.join(o + ', ' for o in outputs)})"]) + "\n"

    def assigned(body):
        return [
            n
            for _, text in body
            for m in [_ASSIGNED.match(text)]
            if m
            for n in re.split(r"\s*,\s*", m.group(1))
        ]

    def used(body):  # the variables made before that the region reads (aliased inputs only where it must)
        words = set(re.findall(r"\bv\d+\b", "\n".join(text for _, text in body)))
        return [n for n in defined if n in words]

    def flush():
        if pending:
            outputs = assigned(pending)
            regions.append(
                Region(
                    "compiled", function("region", pending, used(pending), outputs), used(pending), outputs
                )
            )
            defined.extend(o for o in outputs if o not in defined)
            pending.clear()

    i = first
    while i <= at:
        statement = [(i, lines[i])]
        while i + 1 < at and lines[i + 1].startswith("        "):
            i += 1
            statement.append((i, lines[i]))
        i += 1
        match = _BETWEEN_REGIONS.match(statement[0][1])
        if not match:
            pending.extend(statement)
            continue
        flush()
        if match.group(2) is None:  # retain_grad
            regions.append(
                Region("eager", function("region", statement, used(statement), []), used(statement), [])
            )
            continue
        body = [(j, text[4:]) for j, text in statement[1:]]
        outputs = assigned(body)
        text = function("region", body, used(body), outputs)
        text += f"def context(T):\n    return {statement[0][1].strip()[5:-1]}\n"
        regions.append(Region("context", text, used(body), outputs))
        defined.extend(o for o in outputs if o not in defined)
    flush()
    return regions


def compile_program(source: str, name: str = "prog", scope: dict | None = None):
    """The function ``name`` the text defines (``scope``: its globals, e.g. hoisted definitions)."""
    scope = dict(scope or {})
    exec(compile(source, PROGRAM_FILE, "exec"), scope)  # noqa: S102 - the program text is the case
    return scope[name]


def program_inputs(case) -> dict:
    """The input arrays ``v0, v1, ...`` of a program case (:meth:`conformance.case.ProgramCase.arrays`)."""
    return case.arrays()


def leaf_dtype(case) -> str:
    """The dtype the reference runs a program in: float64, complex128 for a complex program."""
    return "complex128" if case.dtype in COMPLEX_DTYPES else "float64"


class ProgramOutputs(dict):
    """The reference's outputs of a program (name -> array or None) with ``bounds``: repr of a
    :class:`reference.errors.Precision` -> that arithmetic's per-element bounds (:func:`reference_bounds`)."""

    bounds: dict = {}


class ProgramError(Exception):
    """A program raised: the framework's exception type and message and the program line that raised."""

    def __init__(
        self, type_name: str, message: str, line: int | None, text: str = "", statement: int | None = None
    ):
        super().__init__(f"{type_name} at line {line} ({text.strip()!r}): {message}")
        self.type_name, self.message, self.line, self.text = type_name, message, line, text
        self.statement = statement  # the first line of the program's own statement that raised (see below)


def error_line(exc: BaseException, source: str) -> tuple[int | None, str]:
    """The program line (1-based, and its text) whose execution raised ``exc``: the innermost program frame."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == PROGRAM_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    lines = source.splitlines()
    return line, (lines[line - 1] if line and line <= len(lines) else "")


def raising_statement(exc: BaseException, source: str) -> int | None:
    """The first line (1-based) of the program's top-level statement whose execution raised ``exc``:
    the outermost program frame's line (a template's body called from a step is that step), taken back
    to the start of its statement (a line inside ``with ...:`` belongs to the ``with``)."""
    tb, line = exc.__traceback__, None
    while tb is not None and line is None:
        if tb.tb_frame.f_code.co_filename == PROGRAM_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    lines = source.splitlines()
    while line and line > 1 and not re.match(r"    \S", lines[line - 1]):
        line -= 1
    return line if line and line > 1 else None


def prefix_program(source: str, statement: int | None) -> str | None:
    """The program up to (not including) its top-level statement at line ``statement``, returning the
    variables of the program's ``return`` made before it (``vi.grad`` of those too): what runs before
    a statement that raises. None when no step precedes it (nothing would be judged)."""
    lines = source.splitlines()
    if statement is None or not any(line.startswith("    loss = ") for line in lines):
        return None
    first, _ = _steps(lines)
    if statement - 1 <= first:
        return None
    made = set(re.findall(r"\bv\d+\b", lines[0]))
    for text in lines[first : statement - 1]:
        m = _ASSIGNED.match(text)
        if m:
            made.update(re.split(r"\s*,\s*", m.group(1)))
    returned = re.match(r"^    return \[(.*)\]$", lines[-1])
    if not returned:
        return None
    kept = [item for item in re.split(r",\s*", returned.group(1)) if item.split(".")[0] in made]
    return "\n".join(lines[: statement - 1] + [f"    return [{', '.join(kept)}]"]) + "\n"


def autograd_state_error(error: ProgramError) -> bool:
    """Whether a program's error is one of PyTorch's autograd state (version counters, a freed graph,
    a leaf or a view written in place, a custom Function's view output), which a framework without
    that state cannot raise; a shape or type error is not."""
    known = AUTOGRAD_ERRORS + CUSTOM_FUNCTION_ERRORS + (MULTI_OUTPUT_VIEW_ERROR,)
    return error.type_name == "AutogradError" or any(k in error.message for k in known)


def prefix_case(case, error: ProgramError):
    """The case running :func:`prefix_program` of ``case`` before the statement ``error`` names (same
    inputs, dtype and seed), or None; None too when the error is not one of autograd state
    (:func:`autograd_state_error`): a framework is judged on the whole program there."""
    if not autograd_state_error(error):
        return None
    source = prefix_program(case.source, error.statement)
    return None if source is None else replace(case, source=source)


def execute(source: str, T, arrays: dict, to_numpy=None, dtype: str = "float64", forward=None) -> dict:
    """Run the program text with namespace ``T`` on leaves of ``dtype`` that require grad (the
    arrays are exact in it).

    ``forward``: a context manager the program's forward (every step up to and including
    ``loss = ...``) runs in, the ending outside it (``torch.autocast`` of a mixed-precision case:
    :func:`split_program`'s parts, on the program's own line numbers); None runs the text as it is.

    Returns the outputs (``result[i]``, ``grad[vi]``; None where a tensor or a ``.grad`` is None);
    raises :class:`ProgramError` naming the line when the program raises.
    """
    to_numpy = to_numpy or _to_numpy
    prog = compile_program(source) if forward is None else _in_forward(source, forward)
    host = np.complex128 if dtype in COMPLEX_DTYPES else np.float64
    leaves = {
        n: T.tensor(np.array(a, dtype=host), dtype=getattr(T, dtype), requires_grad=True)
        for n, a in arrays.items()
    }
    try:
        result = prog(T, *leaves.values())
    except Exception as exc:
        line, text = error_line(exc, source)
        raise ProgramError(type(exc).__name__, str(exc), line, text, raising_statement(exc, source)) from None
    items = result if isinstance(result, (list, tuple)) else [result]
    out = {f"result[{i}]": to_numpy(r) for i, r in enumerate(items)}
    out.update({f"grad[{n}]": to_numpy(t.grad) for n, t in leaves.items()})
    return out


def _in_forward(source: str, context):
    """``prog(T, *leaves)`` running the forward of :func:`split_program` inside ``context()`` and its
    ending outside (as a user writes a mixed-precision step: autocast around the forward only). A
    program without its ``loss = ...`` line (a prefix cut before it, see :func:`prefix_program`) is
    all forward."""
    if not any(line.startswith("    loss = ") for line in source.splitlines()):
        whole = compile_program(source)

        def forward_only(T, *leaves):
            with context():
                return whole(T, *leaves)

        return forward_only
    definitions_text, forward_text, tail_text = split_program(source)
    definitions = compile_program(definitions_text, "definitions")

    def prog(T, *leaves):
        scope = definitions(T)
        with context():
            *made, loss = compile_program(forward_text, "forward", scope)(T, *leaves)
        return compile_program(tail_text, "tail", scope)(T, loss, *made)

    return prog


def reference_outcome(case) -> tuple[str, object]:
    """('ok', outputs) or ('raises', ProgramError) from running the case's program on the reference."""
    if case.amp:  # the casts explicit (their copies are what autocast's ops save): conformance.amp
        with Tracker(program_precision(case, "torch")) as tracker, np.errstate(all="ignore"):
            try:
                return "ok", execute(
                    case.source, reference, program_inputs(case), forward=_policy(tracker, case.amp)
                )
            except ProgramError as exc:
                return "raises", exc
    try:
        return "ok", execute(case.source, reference, program_inputs(case), dtype=leaf_dtype(case))
    except ProgramError as exc:
        return "raises", exc


def _policy(tracker, amp: str):
    """The forward context of a reference run of a case under the mixed-precision policy ``amp``: the
    tracker's cast policy (:class:`conformance.amp.CastPolicy`, installed here) with the casts made explicit."""
    tracker.policy = CastPolicy(tracker.p, low_dtype(amp))
    return lambda: reference_autocast(tracker.policy)


# -- the bound -------------------------------------------------------------------------------------------
PROGRAM_BOUND_FORMULA = (
    "|observed - expected| <= bound + 1 ulp of expected, per element: bound = the error tracker's "
    "(reference.errors) run of the program in the framework's arithmetic (dtype, accumulator), through "
    "every forward op, in-place update, backward and double backward"
)


def program_precision(case, framework: str, settings: dict | None = None):
    """The arithmetic a framework runs the program in (:class:`reference.errors.Precision`): the case's
    dtype and the framework's accumulation contract (conformance.precision.ACCUMULATION), as op records.
    Under a mixed-precision policy: the variables' dtype, the accumulator of the policy's bfloat16
    kernels (:func:`conformance.amp.amp_accumulator`; the tracker's CastPolicy picks each kernel's dtype)."""
    precision = precision_for(case, settings or {}, framework.split(":")[0])
    if case.amp:
        precision = replace(precision, accumulate=amp_accumulator(framework))
    return precision


def reference_bounds(case, precisions) -> list:
    """For each :class:`reference.errors.Precision`, {output name: absolute error bound per element}
    (None for an output that is None) of the program's outputs, derived by running the program on the
    reference under the error tracker: every table kernel the program runs (forward ops, in-place
    updates on bases and views, the VJP formulas of every backward and double backward, hooks, a
    custom Function's own backward) adds its declared rounding (the per-primitive declarations op
    records use) and propagates its inputs' errors; AccumulateGrad carries them into ``.grad``.
    Called for a program the reference runs: one that raises under the tracker is the error model's
    failure (a primitive without a declaration), raised as :class:`ErrorModelError`."""
    arrays = program_inputs(case)
    out = []
    for precision in precisions:
        with Tracker(precision) as tracker, np.errstate(all="ignore"):
            # a mixed-precision case: each kernel in the dtype its cast policy says (conformance.amp)
            forward = _policy(tracker, case.amp) if case.amp else None

            def bound(t, tracker=tracker):
                return None if t is None else np.array(tracker.error_of(t), dtype=np.float64)

            try:
                out.append(execute(case.source, reference, arrays, bound, leaf_dtype(case), forward=forward))
            except ProgramError as exc:
                raise ErrorModelError(f"{exc.type_name} at line {exc.line}: {exc.message}") from None
    return out


class ErrorModelError(Exception):
    """The program runs on the reference but not under its error tracker: the harness's failure."""


def program_expected(case, outputs: dict, bounds: dict) -> dict:
    """{name: (value, bound)} for :func:`conformance.tolerance.judge_bounds`: the tracker's bound plus
    one ulp of the expected value in the case's dtype (the framework's result is a value of its dtype:
    the float64 reference's value rounds to it), as op records."""
    dtype = PART_DTYPE.get(case.dtype, case.dtype)  # a complex program: one ulp of the larger part
    return {
        name: (a, known(bounds[name]) + ulp_of(np.maximum(np.abs(a.real), np.abs(a.imag)), dtype))
        for name, a in outputs.items()
        if a is not None and bounds.get(name) is not None
    }


def in_case_dtype(message: str, dtype: str) -> str:
    """A reference error message as PyTorch words it for the case's dtype: the reference computes in
    float64, so the tensors its autograd errors name are ``[torch.DoubleTensor [...]]``; PyTorch's
    are of the case's dtype (``[CPUBFloat16Type [...]]``)."""
    if dtype == "float64":
        return message
    return message.replace(f"[{tensor_type_name('float64')} [", f"[{tensor_type_name(dtype)} [")


def program_verdict(
    case, reference, reply: dict, framework: str, bounds: dict | None = None, precision=None
) -> dict:
    """The verdict fields for one framework's answer to a program case.

    ``reference`` is :func:`reference_outcome`'s pair; ``reply`` the worker's (status ``ok`` with
    ``outputs``, or ``error`` with ``type``, ``message`` and ``line``); ``bounds`` the reference's
    per-element bounds (:func:`reference_bounds`) for the framework's arithmetic, derived here when
    not given (for ``precision``, by default :func:`program_precision` of ``framework``).
    """
    status, value = reference
    if status == "raises" and reply["status"] == "ok" and reply.get("judged_to"):
        return _prefix_verdict(case, value, reply, framework, bounds, precision)
    if status == "raises":
        value = ProgramError(
            value.type_name, in_case_dtype(value.message, case.dtype), value.line, value.text
        )
        if reply["status"] != "error":
            return {
                "verdict": "error_mismatch",
                "reason": f"the reference raised {value.type_name} at line {value.line} "
                f"({value.text.strip()!r}): {_short(value.message)} but {framework} ran the program",
            }
        where = f"line {reply.get('line')} ({reply.get('text', '').strip()!r})"
        if reply.get("line") != value.line:
            return {
                "verdict": "error_mismatch",
                "reason": f"{framework} raised {reply['type']} at {where}: {_short(reply['message'])} "
                f"but the reference raised at line {value.line} ({value.text.strip()!r}): {_short(value.message)}",
            }
        known = any(
            k in reply["message"]
            for k in AUTOGRAD_ERRORS + CUSTOM_FUNCTION_ERRORS + (MULTI_OUTPUT_VIEW_ERROR,)
        )
        if known and _message(case, reply["message"]) != _message(case, value.message):
            return {
                "verdict": "error_mismatch",
                "reason": f"{framework} raised {reply['type']} at {where}: {_short(reply['message'])} "
                f"but the reference's message differs: {_short(value.message)}",
            }
        return {"verdict": "pass", "reason": f"both raise at {where}: {_short(reply['message'], 200)}"}
    if reply["status"] == "error":
        return {
            "verdict": "error_mismatch",
            "reason": f"{framework} raised {reply['type']} at line {reply.get('line')} "
            f"({reply.get('text', '').strip()!r}): {_short(reply['message'])} (the reference runs the program)",
        }
    observed = reply["outputs"]
    for name, a in value.items():
        if (a is None) != (observed.get(name) is None):
            mine, theirs = ("None", "set") if a is None else ("set", "None")
            return {
                "verdict": "fail",
                "reason": f"{name} is {theirs} in {framework} but {mine} in the reference",
            }
    if bounds is None:
        precision = precision or program_precision(case, framework)
        bounds = reference_bounds(case, [precision])[0]
    if case.dtype in COMPLEX_DTYPES:  # judged on real and imaginary parts, as complex op records
        known = {n: (a, bounds[n]) for n, a in value.items() if a is not None and bounds.get(n) is not None}
        observed, expected = complex_parts(observed, known, PART_DTYPE[case.dtype])
        judged = judge_bounds(observed, expected, PART_DTYPE[case.dtype])
    else:
        judged = judge_bounds(observed, program_expected(case, value, bounds), case.dtype)
    out = {k: judged[k] for k in ("verdict", "max_ratio", "worst")}
    if judged["verdict"] != "pass":
        out["reason"] = judged.get("reason") or explain(judged, framework)
    for key in ("failing_elements", "unjudged_elements", "nonfinite_mismatch"):
        if judged.get(key):
            out[key] = judged[key]
    return out


def _prefix_verdict(case, error, reply, framework, bounds, precision) -> dict:
    """The verdict of a framework without autograd state (JAX, TensorFlow: no version counters, no freed
    graphs) on a program the reference raises on: it ran :func:`prefix_case`, the program up to the
    statement that raises (``reply["judged_to"]`` names it), judged against the reference's run of the
    same prefix; the error itself is PyTorch's, compared on PyTorch."""
    prefix = prefix_case(case, error)
    where = f"line {error.statement} ({case.source.splitlines()[error.statement - 1].strip()!r})"
    if prefix is None or reply["judged_to"].get("line") != error.statement:
        return {
            "verdict": "crash",
            "reason": f"{framework} ran the program up to line {reply['judged_to'].get('line')} but the "
            f"reference raises at {where}",
        }
    outcome = getattr(error, "prefix", None) or reference_outcome(prefix)
    if outcome[0] != "ok":
        return {
            "verdict": "crash",
            "reason": f"the reference's run of the program before {where}: {outcome[1]}",
        }
    out = program_verdict(
        prefix, outcome, {"status": "ok", "outputs": reply["outputs"]}, framework, bounds, precision
    )
    judged = (
        f"judged up to {where}, where the reference (as PyTorch) raises {error.type_name}: "
        f"{_short(error.message, 160)} ({framework} has no autograd state to raise it)"
    )
    out["reason"] = f"{out['reason']}; {judged}" if out.get("reason") else judged
    out["judged_to_line"] = error.statement
    return out


_TENSOR_TYPE = re.compile(r"\[(?:torch\.\w+|CPU\w+Type) \[")
# A generated autograd node as an error message names it: PyTorch 2.13 says "output 0 of Tanh",
# earlier versions (2.11 on the first GPU run) "output 0 of TanhBackward0"; a custom Function's
# node "IdentityBackward" / "Identity". The same node either way: compared without the suffix, by
# the reference's own rule (reference.autograd.graph.short_node_name); this finds the names.
_NODE_NAME = re.compile(r"\b[A-Z]\w*Backward\d*\b")


def _message(case, message: str) -> str:
    """An autograd error message as compared: word for word, except two spellings that name the same
    thing. Under a mixed-precision policy the tensor it names is in the dtype the policy gave it
    (``[CPUBFloat16Type [2, 4]]``), which the reference's float64 run names by the variables' dtype:
    the type name is masked there. A node is named without its ``Backward<n>`` suffix, the way
    PyTorch 2.13 names it (``TanhBackward0`` -> ``Tanh``, ``FillBackward2`` -> ``Fill2``)."""
    message = _NODE_NAME.sub(lambda match: short_node_name(match.group(0)), message.strip())
    return _TENSOR_TYPE.sub("[<tensor> [", message) if case.amp else message


def _short(message: str, limit: int = 400) -> str:
    message = " ".join(str(message).split())
    return message if len(message) <= limit else message[:limit] + " ..."
