"""Records of the reductions (reference/ops/rules/reductions.py): long ones past the 4096 blocking
threshold tell an accumulator of the input dtype from a float32 one."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import not_fuzzed, record
from conformance.ops._conventions import Alternative, Convention, any_repeated
from conformance.ops._ties import tie_routing
from conformance.strategies import LONG_SIZES, tensor_shapes, value_kinds

FAMILY = "reductions"


@st.composite
def _sample(draw, with_dim, min_dim=0):
    if draw(st.integers(0, 5)) == 0:  # a long reduction, alone or with a short batch dim
        n = draw(st.sampled_from(LONG_SIZES))
        shape = (n,) if draw(st.booleans()) else (draw(st.integers(1, 2)), n)
    else:
        shape = draw(tensor_shapes(1 if with_dim else 0, 3, 2048, min_dim))
    params = {"values": draw(value_kinds())}
    if with_dim:
        rank = len(shape)
        dims = draw(
            st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda d: d % rank)
        )
        params["dim"] = dims[0] if len(dims) == 1 and draw(st.booleans()) else dims
        params["keepdim"] = draw(st.booleans())
    return params, {"input": shape}


@st.composite
def _bad_dim(draw):
    """The error check: a dim out of range for the input's rank (IndexError in PyTorch)."""
    shape = draw(tensor_shapes(1, 3, 256, 1))
    rank = len(shape)
    dim = draw(st.one_of(st.integers(rank, rank + 2), st.integers(-rank - 2, -rank - 1)))
    params = {"values": "normal", "dim": dim, "keepdim": draw(st.booleans()), "invalid": "dim_out_of_range"}
    return params, {"input": shape}


def _axis(dim):
    return tuple(dim) if isinstance(dim, list) else dim


for _name, _t, _j, _tf in (
    ("sum", "sum", "sum", "reduce_sum"),
    ("mean", "mean", "mean", "reduce_mean"),
):
    record(
        _name,
        FAMILY,
        sample=lambda: _sample(False),
        fn=lambda T, x, _t=_t: getattr(x, _t)(),
        jax=lambda J, x, _j=_j: getattr(J.jnp, _j)(x),
        tf=lambda tf, x, _tf=_tf: getattr(tf.math, _tf)(x),
    )
    record(
        _name + "_dim",
        FAMILY,
        sample=lambda: _sample(True),
        invalid=lambda: _bad_dim(),
        fn=lambda T, x, dim, keepdim, _t=_t: getattr(x, _t)(dim, keepdim=keepdim),
        jax=lambda J, x, dim, keepdim, _j=_j: getattr(J.jnp, _j)(x, axis=_axis(dim), keepdims=keepdim),
        tf=lambda tf, x, dim, keepdim, _tf=_tf: getattr(tf.math, _tf)(x, axis=dim, keepdims=keepdim),
    )

for _name, _j, _tf in (("amax", "max", "reduce_max"), ("amin", "min", "reduce_min")):
    record(
        _name,
        FAMILY,
        sample=lambda: _sample(True, 1),  # no empty dims: a max over nothing is an error
        invalid=lambda: _bad_dim(),
        fn=lambda T, x, dim, keepdim, _n=_name: getattr(T, _n)(x, dim, keepdim=keepdim),
        jax=lambda J, x, dim, keepdim, _j=_j: getattr(J.jnp, _j)(x, axis=_axis(dim), keepdims=keepdim),
        tf=lambda tf, x, dim, keepdim, _tf=_tf: getattr(tf.math, _tf)(x, axis=dim, keepdims=keepdim),
        note="ties share the gradient equally in all three frameworks",
    )


# ---- the other reductions of the table -------------------------------------------------------------


@st.composite
def _small(draw, with_dim=True, min_dim=1, kinds=None, multi=True, max_size=256):
    """A short reduction (prod and the composite bounds loop over the reduced elements)."""
    shape = draw(tensor_shapes(1, 3, max_size, min_dim))
    params = {"values": draw(value_kinds(kinds))}
    if with_dim:
        rank = len(shape)
        if multi:
            dims = draw(
                st.lists(
                    st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda d: d % rank
                )
            )
            params["dim"] = dims[0] if len(dims) == 1 and draw(st.booleans()) else dims
        else:
            params["dim"] = draw(st.integers(-rank, rank - 1))
        params["keepdim"] = draw(st.booleans())
    return params, {"input": shape}


def _with(strategy, **extra):
    """Add drawn parameters to a sample."""

    @st.composite
    def sample(draw):
        params, shapes = draw(strategy)
        return {**params, **{k: draw(v) for k, v in extra.items()}}, shapes

    return sample()


_SELECT_KINDS = ("normal", "wide", "large", "tiny")  # no ties: frameworks split a tie's gradient differently


def _kdims(x, dim):
    return tuple(d % len(x.shape) for d in (dim if isinstance(dim, list) else [dim]))


def _tf_var(tf, x, dim, correction, keepdim):
    axes = list(_kdims(x, dim))
    n = 1
    for d in axes:
        n *= x.shape[d]
    xc = x - tf.reduce_mean(x, axis=axes, keepdims=True)
    return tf.reduce_sum(_tf_abs2(tf, xc), axis=axes, keepdims=keepdim) / max(n - correction, 0)


def _tf_abs2(tf, x):
    """|x|^2 as a TF user writes it: x * x, or x * conj(x) (real) for a complex tensor (a complex
    variance E|z - mean|^2 and a 2-norm are real)."""
    return tf.math.real(x * tf.math.conj(x)) if x.dtype.is_complex else x * x


record(
    "prod",
    FAMILY,
    rules=("prod",),
    sample=lambda: _small(False, 0, ("normal", "ties", "nonfinite"), max_size=64),
    fn=lambda T, x: T.prod(x),
    jax=lambda J, x: J.jnp.prod(x),
    tf=lambda tf, x: tf.math.reduce_prod(x),
    note="zeros (ties) exercise the gradient of a product with zero factors",
)
record(
    "prod_dim",
    FAMILY,
    sample=lambda: _small(True, 0, ("normal", "ties", "nonfinite"), multi=False, max_size=64),
    fn=lambda T, x, dim, keepdim: T.prod(x, dim, keepdim=keepdim),
    jax=lambda J, x, dim, keepdim: J.jnp.prod(x, axis=dim, keepdims=keepdim),
    tf=lambda tf, x, dim, keepdim: tf.math.reduce_prod(x, axis=dim, keepdims=keepdim),
)
for _name, _f in (("var", "var"), ("std", "std")):
    record(
        _name,
        FAMILY,
        sample=lambda: _with(
            _small(True, 1, ("normal", "wide", "large")), correction=st.sampled_from([0, 1])
        ),
        fn=lambda T, x, dim, keepdim, correction, _f=_f: getattr(T, _f)(
            x, dim, correction=correction, keepdim=keepdim
        ),
        jax=lambda J, x, dim, keepdim, correction, _f=_f: getattr(J.jnp, _f)(
            x, axis=_axis(dim), ddof=correction, keepdims=keepdim
        ),
        tf=(lambda tf, x, dim, keepdim, correction: _tf_var(tf, x, dim, correction, keepdim))
        if _f == "var"
        else (lambda tf, x, dim, keepdim, correction: tf.sqrt(_tf_var(tf, x, dim, correction, keepdim))),
        note="TensorFlow's reduce_variance has no correction: spelled as a TF user writes it (two-pass)",
    )
for _name, _f in (("var_mean", "var"), ("std_mean", "std")):
    record(
        _name,
        FAMILY,
        sample=lambda: _with(
            _small(True, 1, ("normal", "wide", "large")), correction=st.sampled_from([0, 1])
        ),
        fn=lambda T, x, dim, keepdim, correction, _n=_name: T.stack(
            getattr(T, _n)(x, dim, correction=correction, keepdim=keepdim)
        ),
        jax=lambda J, x, dim, keepdim, correction, _f=_f: J.jnp.stack(
            [
                getattr(J.jnp, _f)(x, axis=_axis(dim), ddof=correction, keepdims=keepdim),
                J.jnp.mean(x, axis=_axis(dim), keepdims=keepdim),
            ]
        ),
        tf=lambda tf, x, dim, keepdim, correction, _f=_f: tf.stack(
            [
                (lambda v: v if _f == "var" else tf.sqrt(v))(_tf_var(tf, x, dim, correction, keepdim)),
                tf.reduce_mean(x, axis=list(_kdims(x, dim)), keepdims=keepdim),
            ]
        ),
        note="(var or std, mean) stacked into one output",
    )
record(
    "logsumexp",
    FAMILY,
    sample=lambda: _small(True, 1, ("normal", "wide", "ties", "large")),
    fn=lambda T, x, dim, keepdim: T.logsumexp(x, dim, keepdim=keepdim),
    jax=lambda J, x, dim, keepdim: J.nn.logsumexp(x, axis=_axis(dim), keepdims=keepdim),
    tf=lambda tf, x, dim, keepdim: tf.math.reduce_logsumexp(x, axis=dim, keepdims=keepdim),
)
# jax.nn.logmeanexp: the reference's composite logsumexp(x, dim) - log n, as JAX's
record(
    "logmeanexp",
    FAMILY,
    sample=lambda: _small(True, 1, ("normal", "wide", "ties", "large")),
    fn=lambda T, x, dim, keepdim: T.nn.functional.logmeanexp(x, dim, keepdim=keepdim),
    jax=lambda J, x, dim, keepdim: J.nn.logmeanexp(x, axis=_axis(dim), keepdims=keepdim),
    tf="TensorFlow has no logmeanexp (tf.math and tf.nn: none)",
    torch="PyTorch has no logmeanexp (torch 2.13: no torch.logmeanexp nor torch.nn.functional.logmeanexp)",
    rules=("logsumexp", "log", "sub"),  # the composite's table primitives: no rule of its own
)


def _tf_norm(tf, x, ord, dim, keepdim):
    a = tf.abs(x)
    axes = list(_kdims(x, dim))
    if ord == float("inf"):
        return tf.reduce_max(a, axis=axes, keepdims=keepdim)
    if ord == 1:
        return tf.reduce_sum(a, axis=axes, keepdims=keepdim)
    if ord == 2:
        return tf.sqrt(tf.reduce_sum(_tf_abs2(tf, x), axis=axes, keepdims=keepdim))
    return tf.pow(tf.reduce_sum(tf.pow(a, ord), axis=axes, keepdims=keepdim), 1.0 / ord)


record(
    "linalg_vector_norm",
    FAMILY,
    sample=lambda: _with(
        _small(True, 1, ("normal", "wide", "ties")), ord=st.sampled_from([1, 2, 3, float("inf")])
    ),
    fn=lambda T, x, dim, keepdim, ord: T.linalg.vector_norm(x, ord, dim, keepdim),
    jax=lambda J, x, dim, keepdim, ord: J.jnp.linalg.vector_norm(
        x, ord=ord, axis=_axis(dim), keepdims=keepdim
    ),
    tf=_tf_norm,
    note="ties include zeros: the p = 1 and p = 2 gradients at 0 (PyTorch's masked formulas)",
)
for _name, _j, _tf in (("max", "max", "reduce_max"), ("min", "min", "reduce_min")):
    record(
        _name,
        FAMILY,
        sample=lambda: _small(False, 1, _SELECT_KINDS + ("ties",)),
        fn=lambda T, x, _n=_name: getattr(x, _n)(),
        jax=lambda J, x, _j=_j: getattr(J.jnp, _j)(x),
        tf=lambda tf, x, _tf=_tf: getattr(tf.math, _tf)(x),
        note="the full max/min: ties share the gradient equally in all three frameworks",
    )
    record(
        _name + "_dim",
        FAMILY,
        sample=lambda: _small(True, 1, _SELECT_KINDS, multi=False),
        fn=lambda T, x, dim, keepdim, _n=_name: getattr(x, _n)(dim, keepdim=keepdim).values,
        jax=lambda J, x, dim, keepdim, _j=_j: getattr(J.jnp, _j)(x, axis=dim, keepdims=keepdim),
        tf=lambda tf, x, dim, keepdim, _tf=_tf: getattr(tf.math, _tf)(x, axis=dim, keepdims=keepdim),
        note="no drawn ties: PyTorch's max(dim) gives a tie's gradient to the index it returns, JAX and TF "
        "split it (a declared convention; ties still come from rounding and flushing)",
        conventions=(
            Convention(
                f"{_name}-over-a-dim-gradient-at-ties",
                f"where a slice's {_name}imum is tied, which tied element gets the gradient: PyTorch's "
                f"{_name}(dim) gives it to the index it returns",
                any_repeated,
                (
                    Alternative(
                        "split-evenly",
                        lambda T, x, dim, keepdim, _a="a" + _name: getattr(T, _a)(x, dim, keepdim=keepdim),
                        f"JAX (jnp.{_j}) and TensorFlow (tf.{_tf}): shared evenly, as torch.a{_name}",
                    ),
                ),
            ),
        ),
    )


def _lower_median(lib, x, dim, keepdim, sort, take):
    n = x.shape[dim]
    out = take(sort(x, dim), (n - 1) // 2, dim)
    return lib.expand_dims(out, dim) if keepdim else out


def _jax_kth(J, x, dim, keepdim, k):
    out = J.jnp.take(J.jnp.sort(x, axis=dim), k - 1, axis=dim)
    return J.jnp.expand_dims(out, dim) if keepdim else out


def _tf_kth(tf, x, dim, keepdim, k):
    out = tf.gather(tf.sort(x, axis=dim), k - 1, axis=dim % len(x.shape))
    return tf.expand_dims(out, dim) if keepdim else out


record(
    "median",
    FAMILY,
    rules=("median",),
    sample=lambda: _small(False, 1, _SELECT_KINDS),
    fn=lambda T, x: T.median(x),
    jax=lambda J, x: J.jnp.take(J.jnp.sort(J.jnp.reshape(x, (-1,))), (x.size - 1) // 2),
    tf=lambda tf, x: tf.gather(tf.sort(tf.reshape(x, (-1,))), (tf.size(x) - 1) // 2),
    note="PyTorch's median is the lower middle value (jnp.median averages the two): spelled as a sort "
    "and a take",
    conventions=(
        Convention(
            "median-gradient-at-ties",
            "where the median is tied, which tied elements get the gradient: PyTorch's full median "
            "(evenly_distribute_backward) shares it evenly among every element equal to the result",
            any_repeated,
            (
                Alternative(
                    "sorted-position",
                    lambda T, x: T.sort(T.reshape(x, (-1,)), stable=True).values[(x.numel() - 1) // 2],
                    "JAX and TensorFlow (a sort and a take: jnp.sort / tf.sort, then the lower middle "
                    "position): all of it to the tied element a stable sort puts there",
                ),
            ),
        ),
    ),
)
record(
    "nanmedian",
    FAMILY,
    sample=lambda: _small(False, 1, _SELECT_KINDS),
    fn=lambda T, x: T.nanmedian(x),
    jax=lambda J, x: J.jnp.take(J.jnp.sort(J.jnp.reshape(x, (-1,))), (x.size - 1) // 2),
    tf=lambda tf, x: tf.gather(tf.sort(tf.reshape(x, (-1,))), (tf.size(x) - 1) // 2),
    note="finite inputs (nanmedian equals median there); the NaN-skipping is checked on PyTorch by "
    "tests/autograd",
)
for _name, _f in (("median_dim", "median"), ("nanmedian_dim", "nanmedian")):
    record(
        _name,
        FAMILY,
        sample=lambda: _small(True, 1, _SELECT_KINDS, multi=False),
        fn=lambda T, x, dim, keepdim, _f=_f: getattr(T, _f)(x, dim, keepdim).values,
        jax=lambda J, x, dim, keepdim: _lower_median(
            J.jnp,
            x,
            dim,
            keepdim,
            lambda a, d: J.jnp.sort(a, axis=d),
            lambda a, i, d: J.jnp.take(a, i, axis=d),
        ),
        tf=lambda tf, x, dim, keepdim: _lower_median(
            tf,
            x,
            dim,
            keepdim,
            lambda a, d: tf.sort(a, axis=d),
            lambda a, i, d: tf.gather(a, i, axis=d % len(a.shape)),
        ),
        # which tied element a sort-and-take (JAX, TensorFlow) returns is a routing among equal values
        conventions=(tie_routing(_name, lambda T, x, dim, keepdim, _f=_f: getattr(T, _f)(x, dim, True).indices),),
    )


@st.composite
def _kth_sample(draw):
    params, shapes = draw(_small(True, 1, _SELECT_KINDS, multi=False))
    n = shapes["input"][params["dim"]]
    return {**params, "k": draw(st.integers(1, n))}, shapes


record(
    "kthvalue",
    FAMILY,
    sample=_kth_sample,
    fn=lambda T, x, dim, keepdim, k: T.kthvalue(x, k, dim, keepdim).values,
    jax=_jax_kth,
    tf=_tf_kth,
    conventions=(tie_routing("kthvalue", lambda T, x, dim, keepdim, k: T.kthvalue(x, k, dim, True).indices),),
)
record(
    "mode",
    FAMILY,
    sample=lambda: _small(True, 1, ("ties",), multi=False),
    fn=lambda T, x, dim, keepdim: T.mode(x, dim, keepdim).values,
    # torch.mode's index among the occurrences of the mode is unspecified (the reference: the last)
    conventions=(
        tie_routing("mode", lambda T, x, dim, keepdim: T.mode(x, dim, True).indices, also="the last occurrence"),
    ),
    jax="jax.numpy has no mode (scipy.stats.mode in jax.scipy has no gradient convention to compare)",
    tf="TensorFlow has no mode reduction",
)
record(
    "aminmax",
    FAMILY,
    sample=lambda: _small(True, 1, _SELECT_KINDS, multi=False),
    fn=lambda T, x, dim, keepdim: T.stack(T.aminmax(x, dim=dim, keepdim=keepdim)),
    jax=lambda J, x, dim, keepdim: J.jnp.stack(
        [J.jnp.min(x, axis=dim, keepdims=keepdim), J.jnp.max(x, axis=dim, keepdims=keepdim)]
    ),
    tf=lambda tf, x, dim, keepdim: tf.stack(
        [tf.reduce_min(x, axis=dim, keepdims=keepdim), tf.reduce_max(x, axis=dim, keepdims=keepdim)]
    ),
    note="(min, max) stacked",
)


def _tf_arg(tf, x, dim, keepdim, f):
    out = f(x, axis=dim % len(x.shape))
    return tf.expand_dims(out, dim) if keepdim else out


for _name in ("argmax", "argmin"):
    record(
        _name,
        FAMILY,
        sample=lambda: _small(True, 1, ("normal", "ties"), multi=False),
        fn=lambda T, x, dim, keepdim, _n=_name: getattr(T, _n)(x, dim, keepdim),
        jax=lambda J, x, dim, keepdim, _n=_name: getattr(J.jnp, _n)(x, axis=dim, keepdims=keepdim),
        tf=lambda tf, x, dim, keepdim, _n=_name: _tf_arg(tf, x, dim, keepdim, getattr(tf.math, _n)),
        checks=("forward",),
        note="an integer result: forward only; ties: the first index in all three",
    )
for _name, _j, _tf in (("all", "all", "reduce_all"), ("any", "any", "reduce_any")):
    record(
        _name,
        FAMILY,
        sample=lambda: _small(True, 0, ("ties",), multi=False),
        fn=lambda T, x, dim, keepdim, _n=_name: getattr(T, _n)(x, dim, keepdim),
        jax=lambda J, x, dim, keepdim, _j=_j: getattr(J.jnp, _j)(x, axis=dim, keepdims=keepdim),
        tf=lambda tf, x, dim, keepdim, _tf=_tf: getattr(tf.math, _tf)(
            tf.not_equal(x, 0), axis=dim, keepdims=keepdim
        ),
        checks=("forward",),
        note="a boolean result: forward only (ties draw zeros)",
    )
record(
    "count_nonzero",
    FAMILY,
    sample=lambda: _small(True, 0, ("ties",)),
    fn=lambda T, x, dim, keepdim: T.count_nonzero(x, dim),
    jax=lambda J, x, dim, keepdim: J.jnp.count_nonzero(x, axis=_axis(dim)),
    tf=lambda tf, x, dim, keepdim: tf.math.count_nonzero(x, axis=dim),
    checks=("forward",),
    note="an integer result: forward only (keepdim is drawn but count_nonzero has none)",
)
record(
    "nansum",
    FAMILY,
    sample=lambda: _small(True, 0, ("normal", "wide", "nonfinite")),
    fn=lambda T, x, dim, keepdim: T.nansum(x, dim, keepdim=keepdim),
    jax=lambda J, x, dim, keepdim: J.jnp.nansum(x, axis=_axis(dim), keepdims=keepdim),
    tf=lambda tf, x, dim, keepdim: tf.reduce_sum(
        tf.where(tf.math.is_nan(x), tf.zeros_like(x), x), axis=dim, keepdims=keepdim
    ),
)

not_fuzzed(
    "centred",
    FAMILY,
    "internal: x - mean(x) with the mean's rounding taken out, in var's and std's VJP and JVP (exact "
    "in float64); reached by the var, std, var_mean and std_mean records' vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "norm_ratio_power",
    FAMILY,
    "internal: x·|x|^(p - 2) / norm^(p - 1) of a p-norm's VJP and JVP, scaled (no overflow at 1e200s, "
    "no division by a subnormal norm); reached by the linalg_vector_norm record's vjp, vjp_vjp, jvp "
    "and vmap_vjp",
)
not_fuzzed(
    "logsumexp_weight",
    FAMILY,
    "internal: exp(self - result) of logsumexp's VJP and JVP, softmax(self) in float64; reached by "
    "the logsumexp record's vjp, vjp_vjp, jvp and vmap_vjp",
)
not_fuzzed(
    "std_direction",
    FAMILY,
    "internal: (x - mean)/(dof·std), std's gradient in its VJP and JVP (exact in float64, where std != 0); "
    "reached by the std and std_mean records' vjp, jvp, vmap_vjp and every second-order check",
)
not_fuzzed(
    "std_curvature",
    FAMILY,
    "internal: std's Hessian times a tangent, one primitive (the paths through x and the saved std "
    "cancel in PyTorch's double backward); reached by the std and std_mean records' vjp_vjp, jvp_jvp, "
    "vjp_jvp, jvp_vjp and vmap_jvp_vjp",
)
not_fuzzed(
    "norm_curvature",
    FAMILY,
    "internal: a p-norm's Hessian times a tangent (1 < p < inf), one primitive (the paths through x "
    "and the saved norm cancel in PyTorch's double backward); reached by the linalg_vector_norm "
    "record's vjp_vjp, jvp_jvp, vjp_jvp, jvp_vjp and vmap_jvp_vjp",
)
not_fuzzed(
    "prod_partials",
    FAMILY,
    "internal: prod's partials, the products of the other factors (float64, finite factors: no "
    "result / x, no intermediate overflow); reached by the prod and cumprod records' vjp, jvp, vmap_vjp "
    "and every second-order check (cumprod's partials are prod's of each prefix)",
)
not_fuzzed(
    "prod_curvature",
    FAMILY,
    "internal: prod's Hessian times a tangent (the products of all factors but two), one primitive; "
    "reached by the prod and cumprod records' vjp_vjp, jvp_jvp, vjp_jvp, jvp_vjp and vmap_jvp_vjp",
)
