"""Program templates shaped like models (issue #33): the blocks users write, small enough for the reference.

Each template is a Hypothesis draw of a :class:`conformance.programs.Program` whose steps are one
layer or cell each (sizes drawn: tens to hundreds of elements), composed with the program vocabulary's
view and in-place steps on its intermediates and one of the program endings, so a template program
runs, is judged, shrinks (Hypothesis shrinks the draws: sizes, the composed steps, the ending) and has
a reproducer like any program:

* ``mlp``: a linear layer, ``layer_norm`` and an activation with a residual (pre- or post-norm);
* ``conv``: ``conv1d``, ``batch_norm`` in training mode (batch statistics), ReLU, ``max_pool1d``;
* ``attention``: one head of scaled dot-product attention written out, a causal mask or a key
  padding mask (``masked_fill``), an explicit dropout mask (a constant, scaled by ``1 / (1 - p)``);
* ``rnn``: an LSTM or GRU cell unrolled over two or three time steps (``split`` of the gates);
* ``cross_entropy``: an embedding lookup, a linear layer and ``cross_entropy`` with
  ``label_smoothing`` and targets equal to ``ignore_index``;
* ``tied``: the same with the output layer weight-tied to the embedding (``h @ E.t()``);
* ``accumulate``: gradient accumulation, a linear classifier's cross entropy on two or three
  micro-batches (slices of the batch), each ``(loss_k / k).backward()`` into the same ``.grad``.

``MODEL_TEMPLATES[name](draw)`` returns ``(program, key)``: ``key`` is the variable the template's
main layer makes (the planted-bug tests rewrite that line so that its gradient is off).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance.programs import _INPLACE_CONST, ENDING_DRAWS, Program, Step, _view_steps

IGNORE = -100  # PyTorch's default ignore_index


class _Builder:
    """Steps numbered as programs number variables: inputs ``v0..``, then one per assignment."""

    def __init__(self, shapes):
        self.shapes = [tuple(s) for s in shapes]
        self.var_shapes = list(self.shapes)
        self.steps = []

    def add(self, code: str, shape) -> str:
        name = f"v{len(self.var_shapes)}"
        self.steps.append(Step(f"{name} = {code}"))
        self.var_shapes.append(tuple(shape))
        return name

    def add_many(self, code: str, shapes) -> list:
        names = [f"v{len(self.var_shapes) + k}" for k in range(len(shapes))]
        self.steps.append(Step(f"{', '.join(names)} = {code}"))
        self.var_shapes.extend(tuple(s) for s in shapes)
        return names


def _ints(values) -> str:
    return f"T.tensor({[int(v) for v in values]})"


def _targets(draw, n, classes):
    """Class indices, some of them ``IGNORE`` (at least one kept: a mean over no target is 0/0)."""
    t = draw(st.lists(st.integers(0, classes - 1), min_size=n, max_size=n))
    ignored = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    ignored[draw(st.integers(0, n - 1))] = False
    return [IGNORE if i else v for v, i in zip(t, ignored)]


def mlp(draw):
    b, d = draw(st.integers(1, 3)), draw(st.integers(2, 4))
    m = _Builder([(b, d), (d, d), (d,), (d,), (d,)])
    act = draw(st.sampled_from(["relu()", "tanh()"]))
    if draw(st.booleans()):  # post-norm: x + act(LN(x W^T + b))
        h = m.add("v0 @ v1.t() + v2", (b, d))
        key = m.add(f"T.nn.functional.layer_norm({h}, ({d},), v3, v4)", (b, d))
        a = m.add(f"{key}.{act}", (b, d))
    else:  # pre-norm: x + act(LN(x) W^T + b)
        key = m.add(f"T.nn.functional.layer_norm(v0, ({d},), v3, v4)", (b, d))
        a = m.add(f"({key} @ v1.t() + v2).{act}", (b, d))
    out = m.add(f"v0 + {a}", (b, d))
    return m, key, [out]


def conv(draw):
    n, c, co = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = draw(st.integers(1, 3))
    pad = k // 2
    length = draw(st.integers(max(2, k), 6))
    out_len = length + 2 * pad - k + 1
    m = _Builder([(n, c, length), (co, c, k)])
    y = m.add(f"T.nn.functional.conv1d(v0, v1, padding={pad})", (n, co, out_len))
    key = m.add(f"T.nn.functional.batch_norm({y}, None, None, training=True)", (n, co, out_len))
    a = m.add(f"{key}.relu()", (n, co, out_len))
    out = m.add(f"T.nn.functional.max_pool1d({a}, 2)", (n, co, out_len // 2))
    return m, key, [out]


def attention(draw):
    length, d = draw(st.integers(2, 4)), draw(st.integers(1, 3))
    m = _Builder([(length, d), (d, d), (d, d), (d, d)])
    q = m.add("v0 @ v1.t()", (length, d))
    k = m.add("v0 @ v2.t()", (length, d))
    v = m.add("v0 @ v3.t()", (length, d))
    s = m.add(f"({q} @ {k}.t()) * {float(1 / np.sqrt(d))!r}", (length, length))
    if draw(st.booleans()):  # causal: key j > query i masked
        mask = f"T.ones({length}, {length}, dtype=T.bool).triu(1)"
    else:  # key padding: the last keys masked (at least the first kept)
        kept = draw(st.integers(1, length))
        mask = f"T.tensor([{[j >= kept for j in range(length)]}])"
    # -1e4, not -inf: exp underflows to 0 the same; the error tracker's bounds through -inf are NaN
    masked = m.add(f"{s}.masked_fill({mask}, -10000.0)", (length, length))
    key = m.add(f"T.nn.functional.softmax({masked}, -1)", (length, length))
    keep = draw(st.lists(st.sampled_from([1.0, 0.0]), min_size=length * length, max_size=length * length))
    rows = np.array(keep).reshape(length, length).tolist()
    dropped = m.add(f"{key} * T.tensor({rows}, dtype=v0.dtype) * 2.0", (length, length))  # p = 0.5
    out = m.add(f"{dropped} @ {v}", (length, d))
    return m, key, [out]


def rnn(draw):
    b, d, h = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    steps = draw(st.integers(2, 3))
    lstm = draw(st.booleans())
    gates = 4 if lstm else 3
    m = _Builder([(steps, b, d), (gates * h, d), (gates * h, h), (gates * h,)])
    hidden = m.add(f"T.zeros(({b}, {h}), dtype=v0.dtype)", (b, h))
    cell = m.add(f"T.zeros(({b}, {h}), dtype=v0.dtype)", (b, h)) if lstm else None
    key = None
    for t in range(steps):
        if lstm:
            pre = m.add(f"v0[{t}] @ v1.t() + {hidden} @ v2.t() + v3", (b, gates * h))
            i, f, g, o = m.add_many(f"{pre}.split({h}, -1)", [(b, h)] * 4)
            cell = m.add(f"{f}.sigmoid() * {cell} + {i}.sigmoid() * {g}.tanh()", (b, h))
            hidden = m.add(f"{o}.sigmoid() * {cell}.tanh()", (b, h))
        else:
            xr, xz, xn = m.add_many(f"(v0[{t}] @ v1.t() + v3).split({h}, -1)", [(b, h)] * 3)
            hr, hz, hn = m.add_many(f"({hidden} @ v2.t()).split({h}, -1)", [(b, h)] * 3)
            z = m.add(f"({xz} + {hz}).sigmoid()", (b, h))
            n = m.add(f"({xn} + ({xr} + {hr}).sigmoid() * {hn}).tanh()", (b, h))
            hidden = m.add(f"(1 - {z}) * {n} + {z} * {hidden}", (b, h))
        key = key or hidden
    return m, key, [hidden]


def _classifier(draw, tied):
    vocab, d, n = draw(st.integers(2, 5)), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    classes = vocab if tied else draw(st.integers(2, 4))
    smoothing = draw(st.sampled_from([0.0, 0.1, 0.25]))
    m = _Builder([(vocab, d)] if tied else [(vocab, d), (classes, d)])
    ids = draw(st.lists(st.integers(0, vocab - 1), min_size=n, max_size=n))
    e = m.add(f"T.nn.functional.embedding({_ints(ids)}, v0)", (n, d))
    h = m.add(f"{e}.tanh()", (n, d))
    logits = m.add(f"{h} @ v0.t()" if tied else f"{h} @ v1.t()", (n, classes))
    targets = _targets(draw, n, classes)
    key = m.add(
        f"T.nn.functional.cross_entropy({logits}, {_ints(targets)}, ignore_index={IGNORE}, "
        f"label_smoothing={smoothing})",
        (),
    )
    return m, (logits if tied else key), [key]


def cross_entropy(draw):
    return _classifier(draw, tied=False)


def tied(draw):
    return _classifier(draw, tied=True)


def accumulate(draw):
    parts, size = draw(st.integers(2, 3)), draw(st.integers(1, 2))
    d, classes = draw(st.integers(1, 3)), draw(st.integers(2, 3))
    smoothing = draw(st.sampled_from([0.0, 0.1]))
    m = _Builder([(classes, d), (parts * size, d), (classes,)])
    losses = []
    for k in range(parts):
        logits = m.add(f"v1[{k * size}:{(k + 1) * size}] @ v0.t() + v2", (size, classes))
        losses.append(
            m.add(
                f"T.nn.functional.cross_entropy({logits}, {_ints(_targets(draw, size, classes))}, "
                f"label_smoothing={smoothing})",
                (),
            )
        )
    return m, losses[0], losses


MODEL_TEMPLATES = {
    "mlp": mlp,
    "conv": conv,
    "attention": attention,
    "rnn": rnn,
    "cross_entropy": cross_entropy,
    "tied": tied,
    "accumulate": accumulate,
}


@st.composite
def model_template(draw, name: str, extra_steps: int = 2):
    """A program of template ``name``: the template's steps, up to ``extra_steps`` view and in-place
    steps on its intermediates (drawn; shrinking removes them first), its outputs in the loss, and an
    ending (``accumulate``: its own, one backward per micro-batch loss)."""
    m, key, outputs = MODEL_TEMPLATES[name](draw)
    n_inputs = len(m.shapes)
    for _ in range(draw(st.integers(0, extra_steps))):
        made = [i for i in range(n_inputs, len(m.var_shapes)) if m.var_shapes[i]]
        if not made:
            break
        i = draw(st.sampled_from(made))
        target = f"v{i}"
        if draw(st.booleans()):  # through a view of it
            code, shape = _view_steps(draw, target, m.var_shapes[i])
            target = m.add(code, shape)
        m.steps.append(Step(f"{target}.{draw(st.sampled_from(_INPLACE_CONST))}", no_grad=draw(st.booleans())))
    outs = [int(o[1:]) for o in outputs]
    if name == "accumulate":
        program = Program(m.shapes, m.steps, [0], len(m.var_shapes), [], "micro_batches", [], outs)
    else:
        program = Program(m.shapes, m.steps, outs, len(m.var_shapes), [], draw(st.sampled_from(ENDING_DRAWS)))
    return program, key


def model_programs(extra_steps: int = 2):
    """A program of any template (:data:`MODEL_TEMPLATES`), the first (``mlp``) where shrinking heads."""
    return st.sampled_from(sorted(MODEL_TEMPLATES, key=lambda n: n != "mlp")).flatmap(
        lambda name: model_template(name, extra_steps).map(lambda pk: pk[0])
    )


__all__ = ["MODEL_TEMPLATES", "model_programs", "model_template"]
