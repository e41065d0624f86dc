"""Samples for the activations family (:mod:`reference.ops.rules.activations`). Kinds: ``a`` any,
``p`` positive (>= 0.5), ``f`` 0.05 <= |x| <= 0.95 away from 0 and +-0.5 (kinks)."""

import reference as T

F = T.nn.functional


def _noise(a):
    return T.full_like(a, 0.2)


RECORDS = {
    "gelu": [
        ("erf", lambda a: F.gelu(a), [(2, 3)], "a"),
        ("tanh", lambda a: F.gelu(a, approximate="tanh"), [(2, 3)], "a"),
    ],
    "silu": [("unary", lambda a: F.silu(a), [(2, 3)], "a")],
    "mish": [("unary", lambda a: F.mish(a), [(2, 3)], "a")],
    "log_sigmoid": [("unary", lambda a: F.logsigmoid(a), [(2, 3)], "a")],
    "softplus": [
        ("default", lambda a: F.softplus(a), [(4,)], "a"),
        ("beta_threshold", lambda a: F.softplus(a, beta=2.0, threshold=1.0), [(4,)], "f"),
    ],
    "elu": [
        ("alpha", lambda a: F.elu(a, alpha=0.7), [(4,)], "f"),
        ("selu", lambda a: T.selu(a), [(4,)], "f"),
    ],
    "celu": [("alpha", lambda a: F.celu(a, alpha=0.5), [(4,)], "f")],
    "leaky_relu": [("slope", lambda a: F.leaky_relu(a, 0.2), [(4,)], "f")],
    "prelu": [
        ("channels", lambda a, w: F.prelu(a, w), [(2, 3, 2), (3,)], "fa"),
        ("shared", lambda a, w: F.prelu(a, w), [(4,), (1,)], "fa"),
    ],
    "rrelu_with_noise": [
        ("eval", lambda a: F.rrelu(a), [(4,)], "f"),
        ("train_noise", lambda a: F.rrelu(a, training=True, noise=_noise(a)), [(4,)], "f"),
    ],
    "hardtanh": [
        ("half", lambda a: F.hardtanh(a, -0.5, 0.5), [(4,)], "f"),
        ("relu6", lambda a: F.relu6(a * 4 + 3), [(4,)], "f"),
    ],
    "hardsigmoid": [("wide", lambda a: F.hardsigmoid(a * 4), [(4,)], "f")],
    "hardswish": [("wide", lambda a: F.hardswish(a * 4), [(4,)], "f")],
    "hardshrink": [("half", lambda a: F.hardshrink(a) * a, [(4,)], "f")],
    "softshrink": [("half", lambda a: F.softshrink(a, 0.5), [(4,)], "f")],
    "threshold": [("value", lambda a: F.threshold(a, 0.1, 2.0) * a, [(4,)], "f")],
    "glu": [
        ("last", lambda a: F.glu(a), [(3, 4)], "a"),
        ("dim0", lambda a: F.glu(a, 0), [(2, 3)], "a"),
    ],
}


def _derivative(fn, order):
    """The ``order``-th derivative of ``fn`` (elementwise, so the gradient for a cotangent of ones),
    as a differentiable program: its backward runs the next derivative primitive."""

    def prog(a):
        a = a if a.requires_grad else a.clone().requires_grad_()  # a leaf of its own (under vmap)
        out = fn(a)
        for _ in range(order):
            out = T.autograd.grad(out, a, T.ones_like(out), create_graph=True)[0]
        return out

    return prog


# the exact derivative primitives <name>_d1, _d2, _d3 (reference.ops.rules.activations): _dk runs
# in the backward of the (k-1)-th derivative (_d3 has no derivative of its own: it is checked as
# the backward of the second derivative, never differentiated twice)
for _name, _fn in (
    ("softplus", lambda a: F.softplus(a)),
    ("silu", lambda a: F.silu(a)),
    ("mish", lambda a: F.mish(a)),
    ("gelu", lambda a: F.gelu(a)),
    ("gelu_tanh", lambda a: F.gelu(a, approximate="tanh")),
):
    for _k in (1, 2, 3):
        _opts = {"first_order_only": "the third derivative has no derivative of its own (no fourth)"} if _k == 3 else {}
        RECORDS[f"{_name}_d{_k}"] = [(f"derivative_{_k - 1}", _derivative(_fn, _k - 1), [(2, 3)], "a", _opts)]

