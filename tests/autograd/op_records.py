"""One record per primitive of the derivative table: a program over the op and its sample inputs.

``OP_RECORDS`` maps every rule name in :data:`reference.ops.RULES` to the samples that exercise
it (PyTorch's OpInfo idea): ``(label, fn, shapes, kinds[, check options])`` where ``kinds`` says how to draw each
input (``"any"``, ``"pos"`` for log/sqrt/pow, ``"far"`` for ops with kinks, kept away from
them so finite differences are valid; complex128: ``"c"`` any, ``"q"`` real part > 0.5, away from
0 and the branch cuts on the negative real axis, ``"u"`` inside the unit disk, away from 0). The
tests iterate these records; they name no op. A family module's ``EXTRA_SAMPLES`` add samples
(e.g. complex ones) to primitives whose records live elsewhere. A primitive given no samples here
takes them from its conformance record (``tests.autograd.records.record_samples``: a new elementwise
op needs nothing in tests/autograd).
"""

from __future__ import annotations

import reference as T
from conformance.ops import RECORDS as CONFORMANCE_RECORDS
from reference.ops import RULES
from tests.autograd.records import extra_samples, family_records, record_samples

F = T.nn.functional


def _rm():
    return T.tensor([0.1, -0.2], dtype=T.float64), T.tensor([1.5, 0.5], dtype=T.float64)


def _vjp_graph(y, x, g):
    """The VJP of y at x for cotangent g, with its graph (to be differentiated again)."""
    return T.autograd.grad(y, x, g, create_graph=True)[0]


def _hvp(y, x, t):
    """The Hessian of sum(y) at x times t (the VJP of its gradient), with its graph."""
    return _vjp_graph(_vjp_graph(y, x, T.ones_like(y)), x, t)


OP_RECORDS = {
    "add": [
        ("broadcast", lambda a, b: a + b * 1.0, [(2, 3), (3,)], "aa"),
        ("alpha", lambda a, b: T.add(a, b, alpha=-2.5), [(2, 3), (2, 3)], "aa"),
    ],
    "sub": [("broadcast", lambda a, b: a - b - 2.0, [(2, 3), (1, 3)], "aa")],
    "rsub": [("number_minus", lambda a: 2.0 - a * a, [(3,)], "a")],
    "mul": [("broadcast", lambda a, b: a * b, [(2, 3), (2, 1)], "aa")],
    "div": [("broadcast", lambda a, b: a / b, [(2, 3), (3,)], "ap")],
    "neg": [("unary", lambda a: -a, [(3,)], "a")],
    "pow": [
        ("int", lambda a: a**3, [(3,)], "a"),
        ("frac", lambda a: a.pow(2.5), [(3,)], "p"),
        ("zero", lambda a: a**0 + a, [(3,)], "a"),
    ],
    "pow_tensor": [("tensor", lambda a, b: a**b, [(3,), (3,)], "pa")],
    "pow_scalar_base": [
        ("two", lambda a: 2.0**a, [(3,)], "a"),
        ("zero_base", lambda a: 0.0 ** (a * a + 1), [(3,)], "a"),
    ],
    "reciprocal": [("rdiv", lambda a: 2.0 / a, [(3,)], "p")],
    "masked_fill": [("mask", lambda a: a.masked_fill(a > 0, 0.5) * a, [(4,)], "f")],
    "exp": [("unary", lambda a: a.exp(), [(3,)], "a")],
    "log": [("unary", lambda a: a.log(), [(3,)], "p")],
    "sqrt": [("unary", lambda a: a.sqrt(), [(3,)], "p")],
    "tanh": [("unary", lambda a: a.tanh(), [(3,)], "a")],
    "lerp_backward_self": [
        (
            "via_lerp",
            lambda a, b, g: T.autograd.grad(T.lerp(a, b, 0.75), a, g, create_graph=True)[0],
            [(3,), (3,), (3,)],
            "aaa",
        )
    ],
    "lerp_tensor_backward_self": [
        (
            "via_lerp",
            lambda a, b, w, g: T.autograd.grad(T.lerp(a, b, w), a, g, create_graph=True)[0],
            [(3,), (3,), (3,), (3,)],
            "aaaa",
        )
    ],
    # the exact float64 derivative primitives of the softmax family and the reductions (issue 38):
    # each reached through its op's VJP, differentiated again by gradcheck's second order
    "softmax_centred": [("via_softmax", lambda a, g: _vjp_graph(F.softmax(a, 1), a, g), [(2, 3), (2, 3)], "aa")],
    "softmax_centred_t": [
        ("via_log_softmax", lambda a, g: _vjp_graph(F.log_softmax(a, 1), a, g), [(2, 3), (2, 3)], "aa")
    ],
    "log_softmax_exp": [
        ("via_log_softmax_dim0", lambda a, g: _vjp_graph(F.log_softmax(a, 0), a, g), [(3, 2), (3, 2)], "aa")
    ],
    "logsumexp_weight": [("via_logsumexp", lambda a, g: _vjp_graph(T.logsumexp(a, 1), a, g), [(2, 3), (2,)], "aa")],
    "centred": [("via_var", lambda a, g: _vjp_graph(T.var(a, 1), a, g), [(2, 3), (2,)], "aa")],
    "norm_ratio_power": [
        ("via_3_norm", lambda a, g: _vjp_graph(T.linalg.vector_norm(a, 3, dim=1), a, g), [(2, 3), (2,)], "fa")
    ],
    "std_direction": [("via_std", lambda a, g: _vjp_graph(T.std(a, 1), a, g), [(2, 3), (2,)], "aa")],
    # the Hessian products: reached by the second derivative, checked to third order by gradgradcheck
    "std_curvature": [("via_std", lambda a, t: _hvp(T.std(a, 1), a, t), [(2, 3), (2, 3)], "aa")],
    "prod_partials": [
        ("via_prod", lambda a, g: _vjp_graph(T.prod(a, 1), a, g), [(2, 3), (2,)], "aa"),
        # cumprod's partials are prod's of each prefix (scans.py _prefix_partials)
        ("via_cumprod", lambda a, g: _vjp_graph(T.cumprod(a, 1), a, g), [(2, 3), (2, 3)], "aa"),
    ],
    "prod_curvature": [
        ("via_prod", lambda a, t: _hvp(T.prod(a, 1), a, t), [(2, 3), (2, 3)], "aa"),
        ("via_cumprod", lambda a, t: _hvp(T.cumprod(a, 1), a, t), [(2, 3), (2, 3)], "aa"),
    ],
    "norm_curvature": [
        ("via_3_norm", lambda a, t: _hvp(T.linalg.vector_norm(a, 3, dim=1), a, t), [(2, 3), (2, 3)], "fa"),
        ("via_2_norm", lambda a, t: _hvp(T.linalg.vector_norm(a, dim=1), a, t), [(2, 3), (2, 3)], "fa"),
    ],
    "tanh_backward": [
        ("via_tanh", lambda a, b: T.autograd.grad(a.tanh(), a, b, create_graph=True)[0], [(3,), (3,)], "aa")
    ],
    "tanh_backward_output_grad": [
        (
            "via_tanh",
            lambda a, b, c: T.autograd.grad(
                T.autograd.grad(a.tanh(), a, b, create_graph=True)[0], a, c, create_graph=True
            )[0],
            [(3,), (3,), (3,)],
            "aaa",
        )
    ],
    "sigmoid": [("unary", lambda a: a.sigmoid(), [(3,)], "a")],
    "sigmoid_backward": [
        (
            "via_sigmoid",
            lambda a, b: T.autograd.grad(a.sigmoid(), a, b, create_graph=True)[0],
            [(3,), (3,)],
            "aa",
        )
    ],
    "relu": [("times_x", lambda a: a.relu() * a, [(4,)], "f")],
    "hardswish_backward": [
        (
            "via_hardswish",
            # (2.5 a: the three pieces of hardswish_backward, -3 < x < 3 and beyond)
            lambda a, b: T.autograd.grad(T.nn.functional.hardswish(a * 2.5), a, b, create_graph=True)[0],
            [(6,), (6,)],
            "aa",
        )
    ],
    "threshold_backward": [
        (
            "via_relu",
            lambda a, b: T.autograd.grad(a.relu().sum() * 1.0, a, create_graph=True)[0] * b,
            [(4,), (4,)],
            "fa",
        )
    ],
    "abs": [("times_x", lambda a: a.abs() * a, [(4,)], "f")],
    "sign": [("times_x", lambda a: a.sign() * a, [(4,)], "f")],
    "clamp": [
        ("both", lambda a: a.clamp(-0.5, 0.5) * a, [(5,)], "f"),
        ("min_only", lambda a: T.clamp(a, min=0.2), [(5,)], "f"),
    ],
    "where": [
        ("mixed", lambda a, b: T.where(a > 0, a, b), [(4,), (4,)], "fa"),
        ("scalar", lambda a: T.where(a > 0, a * a, 0.5), [(4,)], "f"),
    ],
    "maximum": [("broadcast", lambda a, b: T.maximum(a, b), [(4,), (1,)], "ff")],
    "minimum": [("same", lambda a, b: T.minimum(a, b), [(4,), (4,)], "ff")],
    "to": [
        (
            "float32_roundtrip",
            lambda a: a.to(T.float32).to(T.float64) * 1.0,
            [(3,)],
            "a",
            {"eps": 1e-2, "atol": 1e-4},
        )
    ],  # float32 in the middle: finite differences need a larger step
    "clone": [("unary", lambda a: a.clone() * a, [(3,)], "a")],
    "copy": [("into_zeros", lambda a: _copy_into(a), [(3,)], "a")],
    "fill": [("part", lambda a: _fill_part(a), [(3,)], "a")],
    "fill_tensor": [("value_grad", lambda a, v: _fill_with(a, v[0]), [(3,), (2,)], "aa")],
    "zero": [("part", lambda a: _zero_part(a), [(3,)], "a")],
    "sum": [("all", lambda a: a.sum() * a, [(2, 3)], "a")],
    "sum_dim": [("dims", lambda a: a.sum(1, keepdim=True) * a, [(2, 3)], "a")],
    "mean": [("all", lambda a: a.mean() * a, [(2, 3, 2)], "a")],
    "mean_dim": [("dims", lambda a: a.mean((0, 2)) ** 2, [(2, 3, 2)], "a")],
    "amax": [("dim", lambda a: a.amax(1) * a.amax(), [(2, 3)], "a")],
    "amin": [("dim", lambda a: a.amin(0, keepdim=True) * a, [(2, 3)], "a")],
    "dot": [("vectors", lambda a, b: a @ b, [(3,), (3,)], "aa")],
    "mv": [
        ("matrix_vector", lambda a, b: a @ b, [(2, 3), (3,)], "aa"),
        ("folded", lambda a, b: a @ b, [(2, 2, 3), (3,)], "aa"),
    ],
    "mm": [
        ("matrices", lambda a, b: a @ b, [(2, 3), (3, 2)], "aa"),
        ("vector_matrix", lambda a, b: a @ b, [(3,), (3, 2)], "aa"),
        ("folded", lambda a, b: a @ b, [(2, 3, 4), (4, 2)], "aa"),
        ("folded_transposed", lambda a, b: a @ b, [(3, 2), (2, 2, 4)], "aa"),
    ],
    "bmm": [
        ("vec_batch", lambda a, b: a @ b, [(3,), (2, 3, 4)], "aa"),
        ("broadcast_batch", lambda a, b: a @ b, [(2, 1, 2, 3), (3, 3, 2)], "aa"),
        ("batch_vector", lambda a, b: a.transpose(0, 1) @ b, [(2, 3, 4), (4,)], "aa"),
    ],
    "softmax": [("dim1", lambda a: F.softmax(a, 1), [(2, 3)], "a")],
    "log_softmax": [("dim0", lambda a: F.log_softmax(a, 0), [(2, 3)], "a")],
    "view": [("reshape", lambda a: a.view(3, 2) * a.reshape(6).view(3, 2), [(2, 3)], "a")],
    "alias": [("ellipsis", lambda a: a[...] * a, [(2, 3)], "a")],
    "permute": [("perm", lambda a: a.permute(2, 0, 1) * 2, [(2, 3, 2)], "a")],
    "transpose": [("dims", lambda a: a.transpose(0, 2) * 2, [(2, 3, 2)], "a")],
    "t": [("matrix", lambda a: a.t() @ a, [(2, 3)], "a"), ("vector", lambda a: a.t() * a, [(3,)], "a")],
    "expand": [("expand", lambda a: a.expand(2, 3, 3) * 1.5, [(3, 1)], "a")],
    "unsqueeze": [("none", lambda a: a[None, :, None] * 2, [(3,)], "a")],
    "squeeze": [("all", lambda a: a.squeeze() * 2, [(3, 1)], "a")],
    "squeeze_dim": [("dim", lambda a: a.squeeze(1) * 2, [(3, 1)], "a")],
    "squeeze_dims": [("dims", lambda a: a.squeeze((0, 2)) * 2, [(1, 3, 1)], "a")],
    "select": [("int", lambda a: a[1] * a[0, 2], [(2, 3)], "a")],
    "slice": [("step", lambda a: a[:, ::2] * a.narrow(1, 1, 2)[:, :1], [(2, 3)], "a")],
    "diagonal": [("offset", lambda a: a.diagonal(1) * 2 + a.diagonal(-1, 0, 1).sum(), [(3, 4)], "a")],
    "as_strided": [
        ("overlap", lambda a: a.as_strided((2, 2), (1, 2), 1) * 3, [(2, 3)], "a"),
        ("of_view", lambda a: a.t().as_strided((2, 2), (2, 1), 0) ** 2, [(2, 3)], "a"),
    ],
    "unbind": [("dim1", lambda a: a.unbind(1)[2] * a.unbind(0)[0][1], [(2, 3)], "a")],
    "split": [("size", lambda a: a.split(2, 1)[1] * 2 + a.chunk(3, 1)[0], [(2, 3)], "a")],
    "split_with_sizes": [("sizes", lambda a: a.split([1, 2], 1)[1] * 2, [(2, 3)], "a")],
    "reshape_copy": [("non_viewable", lambda a: a.t().reshape(6) * 2, [(2, 3)], "a")],
    "cat": [("dim1", lambda a, b: T.cat([a, b, a], 1) * 2, [(2, 3), (2, 1)], "aa")],
    "stack": [("dim1", lambda a, b: T.stack([a, b], 1) * 2, [(2, 3), (2, 3)], "aa")],
    "take": [("via_copyslices", lambda a, b: _write_view(a, b), [(2, 3), (3,)], "aa")],
    "put": [("via_copyslices", lambda a, b: _write_view(a, b) * a.sum(), [(2, 3), (3,)], "aa")],
    "scatter_add": [
        (
            "via_select_grad",
            lambda a: T.autograd.grad((a[1] ** 2).sum(), a, create_graph=True)[0] * a,
            [(2, 3)],
            "a",
        )
    ],
    "avg_pool2d": [("ceil", lambda a: F.avg_pool2d(a, 2, 2, padding=1, ceil_mode=True), [(1, 2, 4, 3)], "a")],
    "max_pool2d": [
        ("pad", lambda a: F.max_pool2d(a, 2, 1, padding=1), [(1, 2, 3, 3)], "a"),
        ("dilation", lambda a: F.max_pool2d(a, 2, 1, dilation=2), [(2, 4, 4)], "a"),
    ],
    "batch_norm": [
        (
            "train",
            lambda a, w, b: F.batch_norm(a, None, None, w, b, training=True),
            [(3, 2, 2), (2,), (2,)],
            "aaa",
        ),
        ("eval", lambda a, w, b: F.batch_norm(a, *_rm(), w, b), [(3, 2, 2), (2,), (2,)], "aaa"),
    ],
    "batch_norm_backward": [
        (
            "train_grad_of_grad",
            lambda a, w, v: (
                T.autograd.grad(
                    F.batch_norm(a, None, None, w, None, training=True), (a, w), v, create_graph=True
                )[0]
                * 2
            ),
            [(3, 2, 2), (2,), (3, 2, 2)],
            "aaa",
        ),
        (
            "eval_grad_of_grad",
            lambda a, w, v: (
                T.autograd.grad(F.batch_norm(a, *_rm(), w, None), (a, w), v, create_graph=True)[1] ** 2
            ),
            [(3, 2, 2), (2,), (3, 2, 2)],
            "aaa",
        ),
    ],
    "dropout": [
        ("mask", lambda a: F.dropout(a, 0.5, mask=T.tensor([1.0, 0.0, 1.0], dtype=T.float64)), [(3,)], "a")
    ],
    "convolution": [
        (
            "conv1d",
            lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
            [(1, 2, 5), (3, 2, 2), (3,)],
            "aaa",
        ),
        (
            "conv2d_groups",
            lambda x, w: F.conv2d(x, w, stride=1, padding=1, dilation=1, groups=2),
            [(1, 4, 3, 3), (2, 2, 2, 2)],
            "aa",
        ),
        ("conv3d", lambda x, w: F.conv3d(x, w, padding=1), [(1, 1, 2, 2, 2), (2, 1, 2, 2, 2)], "aa"),
        (
            "conv_transpose1d",
            lambda x, w: F.conv_transpose1d(x, w, stride=2, output_padding=1),
            [(1, 2, 3), (2, 3, 2)],
            "aa",
        ),
        (
            "conv_transpose2d",
            lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1),
            [(1, 2, 2, 2), (2, 1, 3, 3), (1,)],
            "aaa",
        ),
        ("conv_transpose3d", lambda x, w: F.conv_transpose3d(x, w), [(1, 1, 2, 1, 2), (1, 2, 2, 2, 1)], "aa"),
    ],
    "convolution_backward": [
        (
            "conv2d_grad_of_grad",
            lambda x, w, g: T.autograd.grad(F.conv2d(x, w, stride=2), (x, w), g, create_graph=True)[1] * 2,
            [(1, 2, 4, 4), (2, 2, 2, 2), (1, 2, 2, 2)],
            "aaa",
        ),
    ],
}


def _copy_into(a):
    z = T.zeros(2, 3, dtype=T.float64)
    z[1].copy_(a * a)
    return z * 2


def _fill_part(a):
    b = a * a
    b[1].fill_(0.5)
    return b


def _fill_with(a, v):
    b = a * 2.0
    b[1:].fill_(v * v)
    b[0] = 0.5
    return b * a


def _zero_part(a):
    b = a * 2.0
    b[:2].zero_()
    return b * a


def _write_view(a, b):
    c = a * 1.0
    c[1].mul_(b)  # CopySlices: take/put of the view's region
    return c.exp()


def _merge_family_records():
    for name, samples in family_records().items():
        if name in OP_RECORDS:
            raise ValueError(
                f"samples for primitive {name!r} are given in op_records.py and in tests/autograd/records"
            )
        OP_RECORDS[name] = samples
    for name in RULES:
        if name not in OP_RECORDS:
            samples = record_samples(CONFORMANCE_RECORDS.get(name))
            if samples is not None:
                OP_RECORDS[name] = samples
    for name, samples in extra_samples().items():
        if name not in OP_RECORDS:
            raise ValueError(f"extra samples for {name!r}, a primitive without a record")
        OP_RECORDS[name] = list(OP_RECORDS[name]) + list(samples)


_merge_family_records()
