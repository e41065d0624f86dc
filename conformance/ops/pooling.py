"""Records of the window primitives (reference/ops/rules/pooling.py): 3-d pooling, padding, pixel
shuffles; and the internal backward primitives, reached through the forward records' derivatives.

Samples draw the window, stride and padding first and the input size from the output size, so
every window is valid by construction.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.ops._conventions import max_pool_gradient_at_nan
from conformance.strategies import value_kinds
from conformance.unsupported import Unsupported

FAMILY = "pooling"


@st.composite
def _pool3d(draw):
    k = tuple(draw(st.integers(1, 2)) for _ in range(3))
    s = tuple(draw(st.integers(1, 2)) for _ in range(3))
    p = tuple(draw(st.integers(0, q // 2)) for q in k)
    out = tuple(draw(st.integers(1, 3)) for _ in range(3))
    # input size with ``out`` windows, (i + 2p - k) // s + 1 == out, raised to i >= k where needed:
    # PyTorch's 3-d pools reject an input smaller than the kernel, padding aside (pool3d_shape_check)
    size = tuple(
        max((o - 1) * si + ki - 2 * pi + draw(st.integers(0, si - 1)), ki)
        for o, si, ki, pi in zip(out, s, k, p)
    )
    n, c = draw(st.integers(0, 2)), draw(st.sampled_from((1, 2, 3, 8)))
    params = {"kernel_size": list(k), "stride": list(s), "padding": list(p), "values": draw(value_kinds())}
    return params, {"input": (n, c, *size)}


def _jax_window(J, x, kernel_size, stride, padding, init, op):
    pads = [(0, 0), (0, 0)] + [(q, q) for q in padding]
    return J.lax.reduce_window(x, init, op, (1, 1, *kernel_size), (1, 1, *stride), pads)


def _tf_channels_last(tf, x, padding, value):
    nd = len(x.shape)
    x = tf.transpose(x, (0, *range(2, nd), 1))
    pads = [[0, 0]] + [[q, q] for q in padding] + [[0, 0]]
    return tf.pad(x, pads, constant_values=tf.constant(value, x.dtype))


def _tf_channels_first(tf, y):
    nd = len(y.shape)
    return tf.transpose(y, (0, nd - 1, *range(1, nd - 1)))


def _torch_avg_pool3d(T, x, kernel_size, stride, padding):
    if x.dtype in (T.bfloat16, T.float16):  # CPU: "avg_pool3d_out_frame" not implemented for BFloat16, Half
        raise Unsupported("torch (CPU) has no float16 or bfloat16 avg_pool3d kernel")
    return T.nn.functional.avg_pool3d(x, kernel_size, stride, padding)


def _tf_max_pool3d(tf, x, kernel_size, stride, padding):
    if x.dtype == tf.float64:  # MaxPool3D's T attr: half, bfloat16, float
        raise Unsupported("tf.nn.max_pool3d has no float64 kernel")
    return _tf_channels_first(
        tf, tf.nn.max_pool3d(_tf_channels_last(tf, x, padding, -float("inf")), kernel_size, stride, "VALID")
    )


record(
    "avg_pool3d",
    FAMILY,
    rules=("avg_pool3d", "avg_pool3d_backward"),
    sample=_pool3d,
    fn=lambda T, x, kernel_size, stride, padding: T.nn.functional.avg_pool3d(x, kernel_size, stride, padding),
    torch=_torch_avg_pool3d,
    jax=lambda J, x, kernel_size, stride, padding: (
        _jax_window(J, x, kernel_size, stride, padding, 0.0, J.lax.add)
        / (kernel_size[0] * kernel_size[1] * kernel_size[2])
    ),
    tf=lambda tf, x, kernel_size, stride, padding: _tf_channels_first(
        tf, tf.nn.avg_pool3d(_tf_channels_last(tf, x, padding, 0.0), kernel_size, stride, "VALID")
    ),
    note="count_include_pad=True (PyTorch's default): a window sum over the zero-padded input divided by the window volume",
)
record(
    "max_pool3d",
    FAMILY,
    sample=_pool3d,
    fn=lambda T, x, kernel_size, stride, padding: T.nn.functional.max_pool3d(x, kernel_size, stride, padding),
    jax=lambda J, x, kernel_size, stride, padding: _jax_window(
        J, x, kernel_size, stride, padding, -float("inf"), J.lax.max
    ),
    tf=_tf_max_pool3d,
    note="non-finite windows: JAX's JVP of reduce_window max gives 0 tangent at a NaN maximum, TF picks another element (found by the campaign)",
    conventions=(
        max_pool_gradient_at_nan(
            lambda T, x, kernel_size, stride, padding: T.nn.functional.max_pool3d(
                x, kernel_size, stride, padding
            )
        ),
    ),
)


# ---- padding --------------------------------------------------------------------------------------


def _pad_sample(nd, mode):
    @st.composite
    def draw_case(draw):
        size = tuple(draw(st.integers(1, 5)) for _ in range(nd))
        pad = []
        for d in reversed(size):  # F.pad lists the last dim first
            hi = d - 1 if mode == "reflect" else 3  # reflection needs pad < size
            pad += [draw(st.integers(0, hi)), draw(st.integers(0, hi))]
        n, c = draw(st.integers(0, 2)), draw(st.sampled_from((1, 2, 3)))
        params = {"pad": pad, "values": draw(value_kinds())}
        if mode == "constant":
            params["value"] = draw(st.sampled_from([0.0, 1.5, -2.0]))
        return params, {"input": (n, c, *size)}

    return draw_case


def _np_pads(x, pad):
    """F.pad's (last-dim-first) pad list as jnp.pad / tf.pad pairs for every dim."""
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)][::-1]
    return [(0, 0)] * (len(x.shape) - len(pairs)) + pairs


for _nd in (1, 2, 3):
    record(
        f"reflection_pad{_nd}d",
        FAMILY,
        rules=(f"reflection_pad{_nd}d", f"reflection_pad{_nd}d_backward"),
        sample=_pad_sample(_nd, "reflect"),
        fn=lambda T, x, pad: T.nn.functional.pad(x, pad, mode="reflect"),
        jax=lambda J, x, pad: J.jnp.pad(x, _np_pads(x, pad), mode="reflect"),
        tf=lambda tf, x, pad: tf.pad(x, [list(p) for p in _np_pads(x, pad)], mode="REFLECT"),
    )
    record(
        f"replication_pad{_nd}d",
        FAMILY,
        rules=(f"replication_pad{_nd}d", f"replication_pad{_nd}d_backward"),
        sample=_pad_sample(_nd, "replicate"),
        fn=lambda T, x, pad: T.nn.functional.pad(x, pad, mode="replicate"),
        jax=lambda J, x, pad: J.jnp.pad(x, _np_pads(x, pad), mode="edge"),
        tf="tf.pad has CONSTANT, REFLECT and SYMMETRIC modes, no edge replication (SYMMETRIC mirrors "
        "the border: equal to replication only for pads of 1)",
    )
record(
    "constant_pad_nd",
    FAMILY,
    rules=("constant_pad_nd", "constant_pad_nd_backward"),
    sample=_pad_sample(2, "constant"),
    fn=lambda T, x, pad, value: T.nn.functional.pad(x, pad, mode="constant", value=value),
    jax=lambda J, x, pad, value: J.jnp.pad(x, _np_pads(x, pad), mode="constant", constant_values=value),
    tf=lambda tf, x, pad, value: tf.pad(
        x, [list(p) for p in _np_pads(x, pad)], mode="CONSTANT", constant_values=tf.constant(value, x.dtype)
    ),
)


# ---- pixel shuffles -------------------------------------------------------------------------------


@st.composite
def _shuffle(draw):
    r = draw(st.integers(1, 3))
    # n >= 1: PyTorch returns an empty input unchanged (its shape too) from pixel_(un)shuffle, a
    # departure of its own that the campaign found (torch 2.13: F.pixel_unshuffle(empty (0,2,3,6), 3)
    # has shape (0, 2, 3, 6), not (0, 18, 1, 2))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return {"r": r, "values": draw(value_kinds())}, {"input": (n, c * r * r, h, w)}


@st.composite
def _unshuffle(draw):
    r = draw(st.integers(1, 3))
    # n >= 1: PyTorch returns an empty input unchanged (its shape too) from pixel_(un)shuffle, a
    # departure of its own that the campaign found (torch 2.13: F.pixel_unshuffle(empty (0,2,3,6), 3)
    # has shape (0, 2, 3, 6), not (0, 18, 1, 2))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return {"r": r, "values": draw(value_kinds())}, {"input": (n, c, h * r, w * r)}


def _xp_pixel_shuffle(reshape, transpose, x, r):
    n, c, h, w = x.shape
    y = reshape(x, (n, c // (r * r), r, r, h, w))
    return reshape(transpose(y, (0, 1, 4, 2, 5, 3)), (n, c // (r * r), h * r, w * r))


def _xp_pixel_unshuffle(reshape, transpose, x, r):
    n, c, h, w = x.shape
    y = reshape(x, (n, c, h // r, r, w // r, r))
    return reshape(transpose(y, (0, 1, 3, 5, 2, 4)), (n, c * r * r, h // r, w // r))


_DEPTH_TO_SPACE = (
    "; tf.nn.depth_to_space/space_to_depth order channels differently (NHWC, depth-minor), so the "
    "spelling is PyTorch's documented reshape/transpose"
)
record(
    "pixel_shuffle",
    FAMILY,
    rules=("pixel_shuffle", "pixel_shuffle_backward"),
    sample=_shuffle,
    fn=lambda T, x, r: T.nn.functional.pixel_shuffle(x, r),
    jax=lambda J, x, r: _xp_pixel_shuffle(J.jnp.reshape, J.jnp.transpose, x, r),
    tf=lambda tf, x, r: _xp_pixel_shuffle(tf.reshape, tf.transpose, x, r),
    note="JAX has no pixel shuffle" + _DEPTH_TO_SPACE,
)
record(
    "pixel_unshuffle",
    FAMILY,
    rules=("pixel_unshuffle", "pixel_unshuffle_backward"),
    sample=_unshuffle,
    fn=lambda T, x, r: T.nn.functional.pixel_unshuffle(x, r),
    jax=lambda J, x, r: _xp_pixel_unshuffle(J.jnp.reshape, J.jnp.transpose, x, r),
    tf=lambda tf, x, r: _xp_pixel_unshuffle(tf.reshape, tf.transpose, x, r),
    note="JAX has no pixel unshuffle" + _DEPTH_TO_SPACE,
)


# ---- internal primitives: reached through another op's derivative ---------------------------------

for _name, _op in (
    ("avg_pool2d_backward", "avg_pool2d"),
    ("avg_pool3d_backward", "avg_pool3d"),
    ("constant_pad_nd_backward", "constant_pad_nd"),
    *((f"reflection_pad{d}d_backward", f"reflection_pad{d}d") for d in (1, 2, 3)),
    *((f"replication_pad{d}d_backward", f"replication_pad{d}d") for d in (1, 2, 3)),
    ("pixel_shuffle_backward", "pixel_shuffle"),
    ("pixel_unshuffle_backward", "pixel_unshuffle"),
):
    not_fuzzed(
        _name,
        FAMILY,
        f"internal: {_op}'s VJP; reached by the {_op} record's vjp and vjp_vjp checks",
        rules=(_name,),
    )
for _name in ("max_pool_select", "max_pool_scatter"):
    not_fuzzed(
        _name,
        FAMILY,
        "internal: the VJP (max_pool_scatter) and its VJP/JVP (max_pool_select) of max_pool3d, the "
        "adaptive and fractional max pools; reached by the max_pool3d record's vjp, vjp_vjp and jvp checks",
    )


@st.composite
def _channel_shuffle(draw):
    g = draw(st.integers(1, 3))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3)) * g
    spatial = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2))))  # torch: > 2 dims
    return {"groups": g, "values": draw(value_kinds())}, {"input": (n, c, *spatial)}


def _xp_channel_shuffle(reshape, transpose, x, groups):
    n, c, *rest = x.shape
    y = reshape(x, (n, groups, c // groups, *rest))
    perm = (0, 2, 1, *range(3, len(rest) + 3))
    return reshape(transpose(y, perm), tuple(x.shape))


record(
    "channel_shuffle",
    FAMILY,
    rules=("channel_shuffle", "channel_shuffle_backward"),
    sample=_channel_shuffle,
    fn=lambda T, x, groups: T.nn.functional.channel_shuffle(x, groups),
    jax=lambda J, x, groups: _xp_channel_shuffle(J.jnp.reshape, J.jnp.transpose, x, groups),
    tf=lambda tf, x, groups: _xp_channel_shuffle(tf.reshape, tf.transpose, x, groups),
    note="neither JAX nor TF has a channel shuffle: spelled as its definition, reshape (n, g, c/g, ...), "
    "swap the two channel axes, reshape back",
)
not_fuzzed(
    "channel_shuffle_backward",
    FAMILY,
    "internal: channel_shuffle's VJP; reached by the channel_shuffle record's vjp and vjp_vjp checks",
)


# ---- adaptive and fractional pooling, max unpooling -----------------------------------------------
# JAX and TensorFlow have none of these: each spelling is the op's definition, a stack of window
# reductions over slices (PyTorch's windows: adaptive [floor(i·in/out), ceil((i+1)·in/out)),
# fractional [seq[i], seq[i] + k) with PyTorch's generate_intervals sequence), so the frameworks'
# slicing, mean/max and their gradients are what is judged.


def _adaptive_windows(n_in, n_out):
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _window_stack(xp_stack, reduce, x, windows):
    """Stack over the output grid of ``reduce`` of x's slice (windows: per output position, per
    spatial axis, (start, end)); ``x`` is (N, C, *spatial)."""
    import itertools

    nd = len(windows)
    flat = []
    for pos in itertools.product(*[range(len(w)) for w in windows]):
        sl = tuple(slice(*windows[a][pos[a]]) for a in range(nd))
        flat.append(reduce(x[(slice(None), slice(None), *sl)], tuple(range(2, 2 + nd))))
    out = xp_stack(flat, -1)
    return out, [len(w) for w in windows]


def _adaptive_sample(nd, kinds=None):
    @st.composite
    def draw_case(draw):
        size = [draw(st.integers(1, 6)) for _ in range(nd)]
        out = [draw(st.integers(1, 4)) for _ in range(nd)]
        n, c = draw(st.integers(0, 2)), draw(st.sampled_from((1, 2, 3, 8)))
        return {"output_size": out, "values": draw(value_kinds(kinds))}, {"input": (n, c, *size)}

    return draw_case


def _xp_adaptive(stack, reshape, reduce, x, output_size):
    windows = [_adaptive_windows(i, o) for i, o in zip(x.shape[2:], output_size)]
    y, grid = _window_stack(stack, reduce, x, windows)
    return reshape(y, (*x.shape[:2], *grid))


def _jax_first_max(J, v, axes):
    """Each window's maximum as PyTorch's CPU kernels select it, by argmax, so that its gradient goes
    to that element alone: the first strict maximum, or the last NaN of a window that holds NaNs."""
    flat = v.reshape(v.shape[0], v.shape[1], -1)  # windows and batches are never empty here
    nan = J.jnp.isnan(flat)
    first = J.jnp.argmax(J.jnp.where(nan, -J.jnp.inf, flat), axis=-1)
    last_nan = flat.shape[-1] - 1 - J.jnp.argmax(nan[..., ::-1], axis=-1)
    i = J.jnp.where(nan.any(-1), last_nan, first)
    return J.jnp.take_along_axis(flat, i[..., None], axis=-1)[..., 0]


def _tf_first_max(tf, v, axes):
    n, c = v.shape[0], v.shape[1]
    flat = tf.reshape(v, (n, c, -1))
    nan = tf.math.is_nan(flat)
    first = tf.argmax(tf.where(nan, tf.constant(-float("inf"), v.dtype), flat), axis=-1)
    last_nan = flat.shape[-1] - 1 - tf.argmax(tf.cast(nan[..., ::-1], tf.int32), axis=-1)
    i = tf.where(tf.reduce_any(nan, -1), last_nan, first)
    return tf.gather(flat, i, batch_dims=2)


def _jax_adaptive(how):
    def spelled(J, x, output_size):
        if x.shape[0] == 0:
            return J.jnp.zeros((*x.shape[:2], *output_size), x.dtype)
        red = (lambda v, ax: J.jnp.mean(v, ax)) if how == "avg" else (lambda v, ax: _jax_first_max(J, v, ax))
        return _xp_adaptive(J.jnp.stack, J.jnp.reshape, red, x, output_size)

    return spelled


def _tf_adaptive(how):
    def spelled(tf, x, output_size):
        if x.shape[0] == 0:
            return tf.zeros((*x.shape[:2], *output_size), x.dtype)
        red = (
            (lambda v, ax: tf.reduce_mean(v, ax))
            if how == "avg"
            else (lambda v, ax: _tf_first_max(tf, v, ax))
        )
        return _xp_adaptive(tf.stack, tf.reshape, red, x, output_size)

    return spelled


# No "tiny" inputs: under denormals-are-zero (TF, XLA on CPU) flushed subnormals compare as tied
# zeros while moved values keep them, so which one a framework selects is its hardware's choice.
# Ties otherwise go to the first maximum (PyTorch's), by argmax in the JAX/TF spellings.
_NO_TIES = ("normal", "wide", "ties", "large", "nonfinite")
for _nd in (2, 3):
    record(
        f"adaptive_avg_pool{_nd}d",
        FAMILY,
        rules=(f"adaptive_avg_pool{_nd}d", f"adaptive_avg_pool{_nd}d_backward"),
        sample=_adaptive_sample(_nd),
        fn=lambda T, x, output_size: getattr(T.nn.functional, f"adaptive_avg_pool{len(output_size)}d")(
            x, output_size
        ),
        jax=_jax_adaptive("avg"),
        tf=_tf_adaptive("avg"),
        note="JAX/TF: the definition (mean over PyTorch's adaptive windows)",
    )
    record(
        f"adaptive_max_pool{_nd}d",
        FAMILY,
        sample=_adaptive_sample(_nd, _NO_TIES),
        fn=lambda T, x, output_size: getattr(T.nn.functional, f"adaptive_max_pool{len(output_size)}d")(
            x, output_size
        ),
        jax=_jax_adaptive("max"),
        tf=_tf_adaptive("max"),
        note="JAX/TF: the definition (the first maximum over PyTorch's adaptive windows, by argmax)",
    )
    not_fuzzed(
        f"adaptive_avg_pool{_nd}d_backward",
        FAMILY,
        f"internal: adaptive_avg_pool{_nd}d's VJP; reached by its record's vjp and vjp_vjp checks",
    )


# fractional max pooling: PyTorch draws one sample in [0, 1) per plane and axis; a record passes
# them (``_random_samples``), multiples of 1/8, and output sizes with out - 1 in {1, 2, 4}, so the
# interval sequence floor((i + u)·alpha) - floor(u·alpha), alpha = (in - k)/(out - 1), is exact in
# every dtype a kernel may compute it in.


def _intervals(sample, n_in, n_out, k):
    if n_out == 1:
        return [n_in - k]
    alpha = (n_in - k) / (n_out - 1)
    return [int((i + sample) * alpha) - int(sample * alpha) for i in range(n_out - 1)] + [n_in - k]


def _fractional_sample(nd):
    @st.composite
    def draw_case(draw):
        k = [draw(st.integers(1, 3)) for _ in range(nd)]
        out = [draw(st.sampled_from((1, 2, 3, 5))) for _ in range(nd)]
        # PyTorch's 3-d kernel needs out + k - 1 < in (its 2-d kernel <=)
        size = [o + ki - 1 + draw(st.integers(nd == 3, 4)) for o, ki in zip(out, k)]
        n, c = draw(st.integers(1, 2)), draw(st.sampled_from((1, 2, 3)))
        samples = [draw(st.integers(0, 7)) / 8 for _ in range(n * c * nd)]
        params = {
            "kernel_size": k,
            "output_size": out,
            "samples": samples,
            "values": draw(value_kinds(_NO_TIES)),
        }
        return params, {"input": (n, c, *size)}

    return draw_case


def _fractional(T, x, kernel_size, output_size, samples):
    nd = len(kernel_size)
    s = T.tensor(np.asarray(samples).reshape(x.shape[0], x.shape[1], nd), dtype=x.dtype)
    f = getattr(T.nn.functional, f"fractional_max_pool{nd}d")
    return f(x, kernel_size, output_size=output_size, _random_samples=s)


def _xp_fractional(stack, reshape, reduce, x, kernel_size, output_size, samples):
    nd = len(kernel_size)
    n, c = x.shape[0], x.shape[1]
    u = np.asarray(samples).reshape(n * c, nd)
    planes = []
    for p in range(n * c):
        # PyTorch's sample order: 2-d (width, height), 3-d (time, height, width)
        us = [u[p][nd - 1 - a] if nd == 2 else u[p][a] for a in range(nd)]
        windows = [
            [(s, s + k) for s in _intervals(us[a], x.shape[2 + a], output_size[a], kernel_size[a])]
            for a, k in enumerate(kernel_size)
        ]
        xp = reshape(x[p // c, p % c], (1, 1, *x.shape[2:]))
        y, grid = _window_stack(stack, reduce, xp, windows)
        planes.append(reshape(y, tuple(grid)))
    return reshape(stack(planes, 0), (n, c, *output_size))


for _nd in (2, 3):
    record(
        f"fractional_max_pool{_nd}d",
        FAMILY,
        sample=_fractional_sample(_nd),
        fn=_fractional,
        jax=lambda J, x, **p: _xp_fractional(
            J.jnp.stack, J.jnp.reshape, lambda v, a: _jax_first_max(J, v, a), x, **p
        ),
        tf=lambda tf, x, **p: _xp_fractional(
            tf.stack, tf.reshape, lambda v, a: _tf_first_max(tf, v, a), x, **p
        ),
        note="samples passed as _random_samples (tf.nn.fractional_max_pool draws its own sequence, so "
        "JAX/TF are spelled by the definition, selecting PyTorch's maximum by argmax)",
    )


# max_unpool: each input value lands at its index in the output plane (distinct per plane: a
# duplicate's winner is unspecified), zeros elsewhere.


def _unpool_sample(nd):
    @st.composite
    def draw_case(draw):
        k = [draw(st.integers(1, 3)) for _ in range(nd)]
        s = [draw(st.integers(1, 3)) for _ in range(nd)]
        size = [draw(st.integers(1, 3)) for _ in range(nd)]
        out = [(i - 1) * si + ki for i, si, ki in zip(size, s, k)]
        # n >= 1: the reference's max_unpool fails on an empty batch (a reshape of 0 elements to
        # (0, -1) in its index table), reported to the reference's owner
        n, c = draw(st.integers(1, 2)), draw(st.sampled_from((1, 2, 3)))
        m, vol = int(np.prod(size)), int(np.prod(out))
        if m > vol:
            size, m = [1] * nd, 1
        index = []
        for _ in range(n * c):
            index += draw(st.lists(st.integers(0, vol - 1), min_size=m, max_size=m, unique=True))
        params = {"kernel_size": k, "stride": s, "index": index, "values": draw(value_kinds())}
        return params, {"input": (n, c, *size)}

    return draw_case


def _unpool_out(x, kernel_size, stride):
    return [(i - 1) * s + k for i, s, k in zip(x.shape[2:], stride, kernel_size)]


def _max_unpool(T, x, kernel_size, stride, index):
    nd = len(kernel_size)
    idx = T.tensor(np.asarray(index, dtype=np.int64).reshape(tuple(x.shape)))
    return getattr(T.nn.functional, f"max_unpool{nd}d")(x, idx, kernel_size, stride)


def _unpool_coords(x, kernel_size, stride, index):
    n, c = x.shape[0], x.shape[1]
    m = int(np.prod(x.shape[2:]))
    planes = np.repeat(np.arange(n * c), m)
    return (
        np.stack([planes, np.asarray(index, dtype=np.int64)], axis=-1),
        n * c,
        int(np.prod(_unpool_out(x, kernel_size, stride))),
    )


def _jax_unpool(J, x, kernel_size, stride, index):
    coords, planes, vol = _unpool_coords(x, kernel_size, stride, index)
    flat = J.jnp.zeros((planes, vol), x.dtype).at[coords[:, 0], coords[:, 1]].set(x.reshape(-1))
    return flat.reshape(*x.shape[:2], *_unpool_out(x, kernel_size, stride))


def _tf_unpool(tf, x, kernel_size, stride, index):
    coords, planes, vol = _unpool_coords(x, kernel_size, stride, index)
    flat = tf.scatter_nd(coords, tf.reshape(x, (-1,)), (planes, vol))
    return tf.reshape(flat, (*x.shape[:2], *_unpool_out(x, kernel_size, stride)))


for _nd in (2, 3):
    record(
        f"max_unpool{_nd}d",
        FAMILY,
        rules=(f"max_unpool{_nd}d", f"max_unpool{_nd}d_backward"),
        sample=_unpool_sample(_nd),
        fn=_max_unpool,
        jax=_jax_unpool,
        tf=_tf_unpool,
        note="distinct indices per plane; JAX/TF as a scatter into zeros (neither has an unpool)",
    )
    not_fuzzed(
        f"max_unpool{_nd}d_backward",
        FAMILY,
        f"internal: max_unpool{_nd}d's VJP (a gather at the indices); reached by its record's vjp and vjp_vjp checks",
    )
