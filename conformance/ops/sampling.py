"""Records of the resampling and rearranging window maps (reference/ops/rules/pooling.py):
``interpolate`` (the ``upsample_*`` primitives), ``unfold``/``fold`` (im2col, col2im) and
``embedding``; their backward primitives are reached through the forward records' derivatives.

Spellings use a framework's own resize where its semantics are PyTorch's (checked against
PyTorch's formulas: ``jax.image.resize`` / ``scale_and_translate`` without antialiasing are
half-pixel linear interpolation with edge weights renormalised, which for the two-tap triangle
kernel equals PyTorch's clamped source coordinate; TensorFlow's ``tf.image.resize`` bilinear is
half-pixel with clamped taps, the v1 ``resize_*(align_corners=True)`` kernels are PyTorch's
``align_corners=True``); otherwise the string says why there is none.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance.ops import VALUES, not_fuzzed, record
from conformance.ops._run import refuses
from conformance.strategies import value_kinds
from conformance.unsupported import Unsupported

FAMILY = "sampling"


def _unsupported(why):
    raise Unsupported(why)


# ---- interpolate ---------------------------------------------------------------------------------


def _kinds(mode):
    """No non-finite inputs for the interpolating modes: where a tap reads inf or nan, the
    reference multiplies every tap by its weight (0·inf = nan) and PyTorch's, JAX's and TF's
    kernels each give another non-finite pattern (torch 2.13: F.interpolate([[[1, inf, 2]]],
    size=3, mode="linear", align_corners=True) is [1, nan, 2], the reference's [nan, inf, 2]); the
    reference does not model PyTorch's pattern, so such a case would judge the reference. Values
    'special' hold infinities and NaNs too (torch 2.13, trilinear, float64: 0.5 where a zero-weight
    tap reads one and the reference says nan), so they are left out as well."""
    if mode in ("nearest", "nearest-exact"):
        return None
    return tuple(v for v in VALUES if v not in ("nonfinite", "special"))


def _upsample_sample(nd, mode):
    @st.composite
    def draw_case(draw):
        size_in = [draw(st.integers(1, 5)) for _ in range(nd)]
        size_out = [draw(st.integers(1, 7)) for _ in range(nd)]
        n, c = draw(st.integers(0, 2)), draw(st.sampled_from((1, 2, 3, 8)))
        params = {"size": size_out, "mode": mode, "values": draw(value_kinds(_kinds(mode)))}
        if mode in ("linear", "bilinear", "bicubic", "trilinear"):
            params["align_corners"] = draw(st.booleans())
        return params, {"input": (n, c, *size_in)}

    return draw_case


def _interpolate(T, x, size, mode, align_corners=None):
    return T.nn.functional.interpolate(x, size=size, mode=mode, align_corners=align_corners)


def _jax_resize(J, x, size, mode, align_corners=None):
    nd = len(size)
    shape = (*x.shape[:2], *size)
    method = "nearest" if mode == "nearest-exact" else ("cubic" if mode == "bicubic" else "linear")
    if not align_corners:
        return J.jax.image.resize(x, shape, method, antialias=False)
    # align_corners: src = o·(in-1)/(out-1); scale_and_translate samples (o + 1/2 - t)/s - 1/2
    ins = x.shape[2:]
    if any(i == 1 or o == 1 for i, o in zip(ins, size)):
        _unsupported("jax.image.scale_and_translate needs a non-zero scale: align_corners with a size of 1")
    # the scale in the input's precision (float32 for the half types): a float32 scale moved float64
    # results by ~1e-8 relative (seed-2 campaign, upsample_linear1d/bilinear2d align_corners in float64)
    wide = J.jnp.float64 if x.dtype == J.jnp.float64 else J.jnp.float32
    scale = J.jnp.asarray([(o - 1) / (i - 1) for i, o in zip(ins, size)], dtype=wide)
    trans = 0.5 - 0.5 * scale
    dims = tuple(range(2, 2 + nd))
    return J.jax.image.scale_and_translate(x, shape, dims, scale, trans, method=method, antialias=False)


def _tf_no_second_order(case, check):
    if check in ("vjp_vjp", "jvp"):
        return (
            "TensorFlow's resize gradients have no gradient of their own (image_grad.py: "
            "NotDifferentiable('ResizeBilinearGrad'); ResizeNearestNeighborGrad and ResizeBicubicGrad "
            "are not registered), so no second derivative and no ForwardAccumulator JVP"
        )
    return None


@refuses(_tf_no_second_order)
def _tf_resize2d(tf, x, size, mode, align_corners=None):
    """tf.image on NHWC; a 1-d case is a 2-d one of height 1 (an identity along it)."""
    nd = len(size)
    if nd == 1:
        x = tf.expand_dims(x, 2)
        size = [1, *size]
    if x.dtype != tf.float32 and mode not in ("nearest", "nearest-exact"):
        _unsupported("tf.image's bilinear and bicubic kernels compute in float32 and return float32")
    y = tf.transpose(x, (0, 2, 3, 1))
    if mode == "nearest":  # floor(o·in/out), PyTorch's legacy nearest
        y = tf.compat.v1.image.resize_nearest_neighbor(y, size, align_corners=False, half_pixel_centers=False)
    elif mode == "nearest-exact":
        y = tf.image.resize(y, size, method="nearest")
    elif mode == "bicubic":
        if not align_corners:
            _unsupported(
                "TF's half-pixel bicubic uses Keys' a = -0.5 (PyTorch A = -0.75); its A = -0.75 kernel "
                "has only the legacy and align_corners coordinates"
            )
        y = tf.compat.v1.image.resize_bicubic(y, size, align_corners=True)
    elif align_corners:
        y = tf.compat.v1.image.resize_bilinear(y, size, align_corners=True)
    else:
        y = tf.image.resize(y, size, method="bilinear", antialias=False)
    y = tf.cast(y, x.dtype)
    y = tf.transpose(y, (0, 3, 1, 2))
    return y[:, :, 0] if nd == 1 else y


_NO_JAX_NEAREST = (
    "jax.image.resize's nearest is half-pixel (PyTorch's nearest-exact); PyTorch's legacy nearest, "
    "floor(o·in/out), has no JAX spelling"
)
_NO_JAX_CUBIC = (
    "jax.image.resize's cubic kernel is Keys' with a = -0.5 and renormalised edge weights; "
    "PyTorch's bicubic is A = -0.75 with clamped taps"
)
_NO_TF_3D = "tf.image resizes 2-d images only (NHWC); a 3-d resize has no TensorFlow spelling"

for _nd, _mode, _name in (
    (1, "linear", "upsample_linear1d"),
    (2, "bilinear", "upsample_bilinear2d"),
    (2, "bicubic", "upsample_bicubic2d"),
    (3, "trilinear", "upsample_trilinear3d"),
    *((d, "nearest", f"upsample_nearest{d}d") for d in (1, 2, 3)),
    *((d, "nearest-exact", f"upsample_nearest_exact{d}d") for d in (1, 2, 3)),
):
    record(
        _name,
        FAMILY,
        rules=(_name, _name + "_backward"),
        sample=_upsample_sample(_nd, _mode),
        fn=_interpolate,
        jax=_NO_JAX_NEAREST if _mode == "nearest" else (_NO_JAX_CUBIC if _mode == "bicubic" else _jax_resize),
        tf=_NO_TF_3D if _nd == 3 else _tf_resize2d,
        note=f"F.interpolate(mode={_mode!r}), sizes up and down",
    )
    not_fuzzed(
        _name + "_backward",
        FAMILY,
        f"internal: {_name}'s VJP; reached by the {_name} record's vjp and vjp_vjp checks",
    )


# ---- unfold / fold (im2col / col2im) -------------------------------------------------------------


@st.composite
def _im2col_sample(draw, fold=False):
    k = [draw(st.integers(1, 3)) for _ in range(2)]
    d = [draw(st.integers(1, 2)) for _ in range(2)]
    p = [draw(st.integers(0, 1)) for _ in range(2)]
    s = [draw(st.integers(1, 2)) for _ in range(2)]
    out = [draw(st.integers(1, 3)) for _ in range(2)]
    # the input size with ``out`` blocks: (i + 2p - d(k-1) - 1) // s + 1 == out
    size = [
        max((o - 1) * si + di * (ki - 1) + 1 - 2 * pi + draw(st.integers(0, si - 1)), 1)
        for o, si, di, ki, pi in zip(out, s, d, k, p)
    ]
    blocks = [(i + 2 * pi - di * (ki - 1) - 1) // si + 1 for i, pi, di, ki, si in zip(size, p, d, k, s)]
    if min(blocks) < 1:  # the raise to 1 left no block: widen the input
        size = [i + 2 for i in size]
        blocks = [(i + 2 * pi - di * (ki - 1) - 1) // si + 1 for i, pi, di, ki, si in zip(size, p, d, k, s)]
    n, c = draw(st.integers(0, 2)), draw(st.sampled_from((1, 2, 3)))
    params = {"kernel_size": k, "dilation": d, "padding": p, "stride": s, "values": draw(value_kinds())}
    if fold:
        params["output_size"] = size
        return params, {"input": (n, c * k[0] * k[1], blocks[0] * blocks[1])}
    return params, {"input": (n, c, *size)}


def _jax_patches(J, x, kernel_size, dilation, padding, stride):
    y = J.lax.conv_general_dilated_patches(
        x, tuple(kernel_size), tuple(stride), [(q, q) for q in padding], rhs_dilation=tuple(dilation)
    )
    return y.reshape(y.shape[0], y.shape[1], y.shape[2] * y.shape[3])  # no -1: the batch may be empty


def _jax_fold(J, x, output_size, kernel_size, dilation, padding, stride):
    n, ck, _ = x.shape
    c = ck // (kernel_size[0] * kernel_size[1])
    proto = J.jax.ShapeDtypeStruct((n, c, *output_size), x.dtype)

    def unfold(v):
        return _jax_patches(J, v, kernel_size, dilation, padding, stride)

    return J.jax.linear_transpose(unfold, proto)(x)[0]


def _tf_unfold(tf, x, kernel_size, dilation, padding, stride):
    n, c = x.shape[0], x.shape[1]
    y = tf.pad(x, [[0, 0], [0, 0], [padding[0]] * 2, [padding[1]] * 2])
    y = tf.transpose(y, (0, 2, 3, 1))
    y = tf.image.extract_patches(y, [1, *kernel_size, 1], [1, *stride, 1], [1, *dilation, 1], "VALID")
    oh, ow = y.shape[1], y.shape[2]
    k = kernel_size[0] * kernel_size[1]
    y = tf.reshape(y, (n, oh * ow, k, c))  # patches' depth: (kh, kw, c), c fastest
    return tf.reshape(tf.transpose(y, (0, 3, 2, 1)), (n, c * k, oh * ow))


record(
    "im2col",
    FAMILY,
    rules=("im2col", "im2col_backward"),
    sample=_im2col_sample,
    fn=lambda T, x, kernel_size, dilation, padding, stride: T.nn.functional.unfold(
        x, kernel_size, dilation, padding, stride
    ),
    jax=_jax_patches,
    tf=_tf_unfold,
    note="F.unfold; JAX's conv_general_dilated_patches (C slowest), TF's extract_patches (C fastest) reordered",
)
record(
    "col2im",
    FAMILY,
    rules=("col2im", "col2im_backward"),
    sample=lambda: _im2col_sample(fold=True),
    fn=lambda T, x, output_size, kernel_size, dilation, padding, stride: T.nn.functional.fold(
        x, output_size, kernel_size, dilation, padding, stride
    ),
    jax=_jax_fold,
    tf="TensorFlow has no fold (col2im): only extract_patches, whose transpose it exposes only as a gradient",
    note="F.fold; JAX's spelling is the linear transpose of its patch extraction (fold is unfold's adjoint)",
)
for _name, _op in (("im2col_backward", "im2col"), ("col2im_backward", "col2im")):
    not_fuzzed(_name, FAMILY, f"internal: {_op}'s VJP; reached by the {_op} record's vjp and vjp_vjp checks")


# ---- embedding -----------------------------------------------------------------------------------


@st.composite
def _embedding_sample(draw):
    num, dim = draw(st.integers(1, 6)), draw(st.sampled_from((1, 2, 3, 8, 17)))
    # no empty index: torch 2.13's embedding double backward raises on one ("cannot reshape tensor of
    # 0 elements into shape [0, -1]", a departure of its own, docs/conformance.md)
    ishape = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2)))]
    size = int(np.prod(ishape))
    index = draw(st.lists(st.integers(0, num - 1), min_size=size, max_size=size))  # duplicates add
    params = {
        "index": index,
        "ishape": ishape,
        "padding_idx": draw(st.one_of(st.none(), st.integers(-num, num - 1))),
        "scale_grad_by_freq": draw(st.booleans()),
        "values": draw(value_kinds()),
    }
    return params, {"weight": (num, dim)}


def _embedding(T, w, index, ishape, padding_idx, scale_grad_by_freq):
    idx = T.tensor(np.asarray(index, dtype=np.int64).reshape(ishape))
    return T.nn.functional.embedding(idx, w, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)


def _masked_rows(stop, where, rows, idx, num, padding_idx):
    """Rows read at ``padding_idx`` get no gradient (PyTorch's padding_idx)."""
    if padding_idx is None:
        return rows
    p = padding_idx % num
    return where((idx == p)[..., None], stop(rows), rows)


def _padding_jvp(case, check):
    if check == "jvp" and case.params.as_dict().get("padding_idx") is not None:
        return (
            "PyTorch's padding_idx masks the VJP only (embedding's JVP is the unmasked lookup of the "
            "tangent, derivatives.yaml auto_linear); a stop_gradient spelling masks the JVP as well"
        )
    return None


@refuses(_padding_jvp)
def _jax_embedding(J, w, index, ishape, padding_idx, scale_grad_by_freq):
    if scale_grad_by_freq:
        _unsupported(
            "scale_grad_by_freq (gradient rows divided by the index's frequency) has no JAX spelling"
        )
    idx = np.asarray(index, dtype=np.int32).reshape(ishape)
    rows = J.jnp.take(w, J.jnp.asarray(idx), axis=0)
    return _masked_rows(J.lax.stop_gradient, J.jnp.where, rows, idx, w.shape[0], padding_idx)


@refuses(_padding_jvp)
def _tf_embedding(tf, w, index, ishape, padding_idx, scale_grad_by_freq):
    if scale_grad_by_freq:
        _unsupported("scale_grad_by_freq (gradient rows divided by the index's frequency) has no TF spelling")
    idx = np.asarray(index, dtype=np.int64).reshape(ishape)
    rows = tf.nn.embedding_lookup(w, idx)
    return _masked_rows(tf.stop_gradient, tf.where, rows, idx, w.shape[0], padding_idx)


record(
    "embedding",
    FAMILY,
    rules=("embedding", "embedding_backward"),
    inputs=("weight",),
    sample=_embedding_sample,
    fn=_embedding,
    jax=_jax_embedding,
    tf=_tf_embedding,
    note="duplicate indices add in the VJP; padding_idx rows get no gradient",
)
not_fuzzed(
    "embedding_backward",
    FAMILY,
    "internal: embedding's VJP (embedding_dense_backward); reached by the embedding record's vjp and vjp_vjp checks",
)
