"""Samples for the window rules of :mod:`reference.ops.rules.pooling` (pooling, padding,
resampling, im2col/col2im, shuffles, max-unpooling, embedding): each op, and its backward through
a gradient taken with ``create_graph`` (so gradgradcheck reaches the backward's own VJP)."""

from __future__ import annotations

import numpy as np

import reference as T

F = T.nn.functional

_UNPOOL2 = T.tensor(np.array([[[[0, 3], [9, 14]], [[5, 2], [8, 15]]]]))
_UNPOOL3 = T.tensor(np.array([[[[[0, 3], [9, 14]], [[21, 18], [40, 63]]]]]))
_EMB = T.tensor(np.array([[0, 2, 3], [2, 1, 1]]))

# rule -> (label, program of one input, input shape, output shape)
LINEAR = {
    "avg_pool3d": (
        "ceil_exclude_pad",
        lambda a: F.avg_pool3d(a, 2, 2, 1, True, False),
        (1, 1, 3, 4, 3),
        (1, 1, 2, 3, 2),
    ),
    "adaptive_avg_pool2d": (
        "overlapping",
        lambda a: F.adaptive_avg_pool2d(a, (3, 2)),
        (1, 2, 5, 3),
        (1, 2, 3, 2),
    ),
    "adaptive_avg_pool3d": (
        "mixed",
        lambda a: F.adaptive_avg_pool3d(a, (2, 3, 1)),
        (1, 2, 3, 4, 2),
        (1, 2, 2, 3, 1),
    ),
    "constant_pad_nd": ("value_and_crop", lambda a: F.pad(a, (1, -1, 2, 0), value=0.5), (2, 3, 3), (2, 5, 3)),
    "reflection_pad1d": ("both", lambda a: F.pad(a, (2, 1), mode="reflect"), (2, 4), (2, 7)),
    "reflection_pad2d": (
        "both",
        lambda a: F.pad(a, (1, 2, 2, 0), mode="reflect"),
        (1, 1, 3, 3),
        (1, 1, 5, 6),
    ),
    "reflection_pad3d": (
        "all",
        lambda a: F.pad(a, (1, 0, 0, 1, 1, 1), mode="reflect"),
        (1, 2, 2, 2, 2),
        (1, 2, 4, 3, 3),
    ),
    "replication_pad1d": ("both", lambda a: F.pad(a, (3, 1), mode="replicate"), (1, 2, 3), (1, 2, 7)),
    "replication_pad2d": ("both", lambda a: F.pad(a, (1, 2, 0, 1), mode="replicate"), (2, 2, 3), (2, 3, 6)),
    "replication_pad3d": (
        "all",
        lambda a: F.pad(a, (1, 1, 1, 0, 0, 1), mode="replicate"),
        (1, 1, 2, 2, 2),
        (1, 1, 3, 3, 4),
    ),
    "upsample_nearest1d": ("fraction", lambda a: F.interpolate(a, 5), (1, 2, 3), (1, 2, 5)),
    "upsample_nearest2d": (
        "scale",
        lambda a: F.interpolate(a, scale_factor=(1.5, 2)),
        (1, 1, 2, 3),
        (1, 1, 3, 6),
    ),
    "upsample_nearest3d": ("down", lambda a: F.interpolate(a, (1, 2, 3)), (1, 1, 2, 3, 4), (1, 1, 1, 2, 3)),
    "upsample_nearest_exact1d": (
        "fraction",
        lambda a: F.interpolate(a, 5, mode="nearest-exact"),
        (1, 2, 3),
        (1, 2, 5),
    ),
    "upsample_nearest_exact2d": (
        "scale",
        lambda a: F.interpolate(a, scale_factor=1.7, mode="nearest-exact"),
        (1, 1, 2, 3),
        (1, 1, 3, 5),
    ),
    "upsample_nearest_exact3d": (
        "size",
        lambda a: F.interpolate(a, (3, 2, 2), mode="nearest-exact"),
        (1, 1, 2, 3, 2),
        (1, 1, 3, 2, 2),
    ),
    "upsample_linear1d": (
        "align",
        lambda a: F.interpolate(a, 5, mode="linear", align_corners=True),
        (1, 2, 3),
        (1, 2, 5),
    ),
    "upsample_bilinear2d": (
        "half_pixel",
        lambda a: F.interpolate(a, (3, 5), mode="bilinear"),
        (1, 1, 2, 3),
        (1, 1, 3, 5),
    ),
    "upsample_bicubic2d": (
        "half_pixel",
        lambda a: F.interpolate(a, (4, 5), mode="bicubic"),
        (1, 1, 3, 3),
        (1, 1, 4, 5),
    ),
    "upsample_trilinear3d": (
        "align",
        lambda a: F.interpolate(a, (3, 3, 2), mode="trilinear", align_corners=True),
        (1, 1, 2, 2, 3),
        (1, 1, 3, 3, 2),
    ),
    "im2col": ("pad_stride", lambda a: F.unfold(a, 2, padding=1, stride=2), (1, 2, 3, 3), (1, 8, 4)),
    "col2im": ("overlap", lambda a: F.fold(a, (3, 3), 2), (1, 8, 4), (1, 2, 3, 3)),
    "pixel_shuffle": ("r2", lambda a: F.pixel_shuffle(a, 2), (1, 8, 2, 1), (1, 2, 4, 2)),
    "pixel_unshuffle": ("r2", lambda a: F.pixel_unshuffle(a, 2), (1, 1, 2, 4), (1, 4, 1, 2)),
    "channel_shuffle": ("g2", lambda a: F.channel_shuffle(a, 2), (1, 4, 2), (1, 4, 2)),
    "max_unpool2d": ("k2", lambda a: F.max_unpool2d(a, _UNPOOL2, 2), (1, 2, 2, 2), (1, 2, 4, 4)),
    "max_unpool3d": ("k2", lambda a: F.max_unpool3d(a, _UNPOOL3, 2), (1, 1, 2, 2, 2), (1, 1, 4, 4, 4)),
    "embedding": ("repeated_rows", lambda a: F.embedding(_EMB, a), (4, 2), (2, 3, 2)),
}


def _backward(fn):
    """The op's backward applied to ``g`` (a leaf of its own where ``a`` is not one, as under vmap)."""

    def prog(a, g):
        a = a if a.requires_grad else a.clone().requires_grad_()
        return T.autograd.grad(fn(a), a, g, create_graph=True)[0] * 2

    return prog


RECORDS = {}
for _name, (_label, _fn, _in, _out) in LINEAR.items():
    RECORDS[_name] = [(_label, _fn, [_in], "a")]
    RECORDS[_name + "_backward"] = [(f"via_{_name}_grad", _backward(_fn), [_in, _out], "aa")]
# padding_idx: PyTorch's gradient leaves that row out (not the derivative of the forward, so only
# the backward, which is linear and has its own transpose, can be checked by finite differences)
RECORDS["embedding_backward"].append(
    ("padding_idx", _backward(lambda a: F.embedding(_EMB, a, padding_idx=1)), [(4, 2), (2, 3, 2)], "aa")
)
RECORDS["avg_pool2d_backward"] = [
    (
        "via_grad",
        _backward(lambda a: F.avg_pool2d(a, 3, 2, 1, count_include_pad=False)),
        [(1, 1, 4, 4), (1, 1, 2, 2)],
        "aa",
    )
]


def _max_scatter(a, g):
    a = a if a.requires_grad else a.clone().requires_grad_()
    return T.autograd.grad(F.max_pool3d(a, 2, 1, 1), a, g, create_graph=True)[0] * 2


def _max_select(a, v):
    a = a if a.requires_grad else a.clone().requires_grad_()
    g = T.zeros(1, 2, 2, 2, 3, dtype=T.float64, requires_grad=True)
    gx = T.autograd.grad(F.adaptive_max_pool3d(a, (2, 2, 3)), a, g, create_graph=True)[0]
    return T.autograd.grad(gx, g, v, create_graph=True)[0] * 2


RECORDS["max_pool_scatter"] = [
    ("via_max_pool3d_grad", _max_scatter, [(1, 1, 2, 3, 2), (1, 1, 3, 4, 3)], "fa")
]
RECORDS["max_pool_select"] = [("via_double_grad", _max_select, [(1, 2, 3, 3, 4), (1, 2, 3, 3, 4)], "fa")]
RECORDS["max_pool3d"] = [
    ("pad_ceil", lambda a: F.max_pool3d(a, 2, 2, 1, ceil_mode=True), [(1, 1, 3, 3, 4)], "f")
]
RECORDS["adaptive_max_pool2d"] = [("overlap", lambda a: F.adaptive_max_pool2d(a, (3, 2)), [(2, 5, 3)], "f")]
RECORDS["adaptive_max_pool3d"] = [
    ("mixed", lambda a: F.adaptive_max_pool3d(a, (2, 1, 2)), [(1, 1, 3, 2, 3)], "f")
]
del _name, _label, _fn, _in, _out

_FRAC2 = T.tensor(np.array([[[0.3, 0.8], [0.55, 0.1]]]))
_FRAC3 = T.tensor(np.array([[[0.3, 0.8, 0.2]]]))
RECORDS["fractional_max_pool2d"] = [
    (
        "explicit_samples",
        lambda a: F.fractional_max_pool2d(a, 2, (3, 2), _random_samples=_FRAC2),
        [(1, 2, 5, 4)],
        "f",
    )
]
RECORDS["fractional_max_pool3d"] = [
    (
        "explicit_samples",
        lambda a: F.fractional_max_pool3d(a, 2, (2, 3, 2), _random_samples=_FRAC3),
        [(1, 1, 4, 5, 4)],  # PyTorch's 3-d rule: out + k - 1 < in
        "f",
    )
]
