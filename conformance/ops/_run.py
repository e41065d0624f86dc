"""Running a record's checks: on the reference (with its error bound), on PyTorch, JAX, TensorFlow.

Every check is one generic program over the record's spelling, the same for every op:

============  ==============================================================================
forward       ``output = f(*inputs)``
vjp           ``grad_<input>``: the VJP of f at the inputs for the cotangent ``grad_output``
vjp_vjp       ``g_grad_output``, ``g_<input>``: the VJP of (grad_output, *inputs) ↦ vjp for
              the cotangents ``gg_<input>``
jvp           ``tangent_output``: the JVP of f for the tangents ``tangent_<input>``
============  ==============================================================================
"""

from __future__ import annotations

import numpy as np

from conformance.ops import RECORDS, op_params

# ---- what a spelling cannot do for a check -----------------------------------------------------


def refuses(why):
    """Mark a framework spelling with ``why(case, check) -> reason | None``: the checks (or cases)
    the framework cannot run with it, each with the framework's own reason (an op its autodiff
    declares not differentiable, a derivative whose semantics are not PyTorch's)."""

    def mark(fn):
        fn.refuses = why
        return fn

    return mark


def _refuse(fn, case, check):
    why = getattr(fn, "refuses", None)
    reason = why(case, check) if why is not None else None
    if reason:
        from conformance.functional import Unsupported

        raise Unsupported(reason)


# ---- the reference, with its bound -----------------------------------------------------------


def reference_program(case, check, a):
    """(fn of Tensors -> results, the input arrays, the result names) for the reference."""
    import reference as T

    rec = RECORDS[case.op]
    params = op_params(case)
    names = rec.inputs
    diff = rec.diff_inputs

    def f(*xs):
        return rec.fn(T, *xs, **params)

    def diff_of(xs):
        return [x for n, x in zip(names, xs) if n in diff]

    if check == "forward":
        return (lambda *xs: f(*xs)), [a[n] for n in names], ["output"]
    if check == "vjp":

        def vjp(*args):
            *xs, g = args
            grads = T.autograd.grad(f(*xs), diff_of(xs), g, allow_unused=True)
            return [_zeros_if_none(T, gr, x) for gr, x in zip(grads, diff_of(xs))]

        return vjp, [a[n] for n in names] + [a["grad_output"]], [f"grad_{n}" for n in diff]
    if check == "vjp_vjp":

        def vjp_vjp(*args):
            *xs, g = args[: len(names) + 1]
            ggs = args[len(names) + 1 :]
            leaves = diff_of(xs)
            firsts = T.autograd.grad(f(*xs), leaves, g, create_graph=True, allow_unused=True)
            pairs = [(fi, gg) for fi, gg in zip(firsts, ggs) if fi is not None and fi.requires_grad]
            if not pairs:
                return [T.zeros_like(t) for t in [g] + leaves]
            seconds = T.autograd.grad(
                [p for p, _ in pairs], [g] + leaves, [gg for _, gg in pairs], allow_unused=True
            )
            return [_zeros_if_none(T, s, t) for s, t in zip(seconds, [g] + leaves)]

        arrays = [a[n] for n in names] + [a["grad_output"]] + [a[f"gg_{n}"] for n in diff]
        return vjp_vjp, arrays, ["g_grad_output"] + [f"g_{n}" for n in diff]
    if check == "jvp":

        def jvp(*args):
            xs = args[: len(names)]
            ts = args[len(names) :]
            primals = tuple(x.detach() for x in diff_of(xs))
            fixed = {n: x.detach() for n, x in zip(names, xs) if n not in diff}

            def g(*ps):
                it = iter(ps)
                return f(*[fixed[n] if n in fixed else next(it) for n in names])

            return T.func.jvp(g, primals, tuple(t.detach() for t in ts))[1]

        return jvp, [a[n] for n in names] + [a[f"tangent_{n}"] for n in diff], ["tangent_output"]
    raise ValueError(f"check {check!r} does not apply to op records")


def _zeros_if_none(T, g, like):
    return T.zeros_like(like) if g is None else g


def reference_expected(case, check, a, precision, input_errors=None):
    """{name: (value, bound)} and the tracker's record of the ops it modelled; ``input_errors``:
    {array name: absolute error} of inputs the framework may read differently (flushed subnormals)."""
    from reference.errors import bound_of

    fn, arrays, names = reference_program(case, check, a)
    errs = None
    if input_errors:
        by_id = {id(a[n]): e for n, e in input_errors.items() if n in a}
        errs = {id(x): by_id[id(x)] for x in arrays if id(x) in by_id}
    with np.errstate(all="ignore"):
        values, bounds, tracker = bound_of(fn, arrays, precision, errs)
    return {n: (v, b) for n, v, b in zip(names, values, bounds)}, tracker.used


# ---- PyTorch ---------------------------------------------------------------------------------


def run_torch(torch, case, check, a, fn, device="cpu"):
    _refuse(fn, case, check)
    dtype = getattr(torch, case.dtype)

    def t(x, grad=False):
        return torch.tensor(x, dtype=dtype, device=device).requires_grad_(grad)

    out = _run_torch(torch, case, check, a, fn, t)
    return {k: torch.zeros(v.shape, dtype=v.dtype) if v._is_zerotensor() else v for k, v in out.items()}


def _run_torch(torch, case, check, a, fn, t):
    rec = RECORDS[case.op]
    params = op_params(case)
    names, diff = rec.inputs, rec.diff_inputs
    xs = [t(a[n], n in diff and check != "forward") for n in names]
    leaves = [x for n, x in zip(names, xs) if n in diff]
    if check == "forward":
        return {"output": fn(torch, *xs, **params)}
    if check == "vjp":
        grads = torch.autograd.grad(
            fn(torch, *xs, **params), leaves, t(a["grad_output"]), allow_unused=True, materialize_grads=True
        )
        return {f"grad_{n}": g for n, g in zip(diff, grads)}
    if check == "vjp_vjp":
        g = t(a["grad_output"], True)
        firsts = torch.autograd.grad(
            fn(torch, *xs, **params), leaves, g, create_graph=True, allow_unused=True, materialize_grads=True
        )
        pairs = [(f, t(a[f"gg_{n}"])) for f, n in zip(firsts, diff) if f.requires_grad]
        if not pairs:
            return {
                "g_grad_output": torch.zeros_like(g),
                **{f"g_{n}": torch.zeros_like(x) for n, x in zip(diff, leaves)},
            }
        seconds = torch.autograd.grad(
            [p for p, _ in pairs],
            [g] + leaves,
            [c for _, c in pairs],
            allow_unused=True,
            materialize_grads=True,
        )
        return dict(zip(["g_grad_output"] + [f"g_{n}" for n in diff], seconds))
    if check == "jvp":
        fixed = {n: x for n, x in zip(names, xs) if n not in diff}

        def g(*ps):
            it = iter(ps)
            return fn(torch, *[fixed[n] if n in fixed else next(it) for n in names], **params)

        _, out = torch.func.jvp(g, tuple(leaves), tuple(t(a[f"tangent_{n}"]) for n in diff))
        return {"tangent_output": out}
    raise ValueError(check)


# ---- JAX ---------------------------------------------------------------------------------------


class JaxNamespace:
    def __init__(self):
        import jax
        import jax.numpy as jnp
        from jax import lax

        self.jax, self.jnp, self.lax, self.nn = jax, jnp, lax, jax.nn


def run_jax(J, case, check, a, fn):
    _refuse(fn, case, check)
    rec = RECORDS[case.op]
    params = op_params(case)
    jax, jnp = J.jax, J.jnp
    dtype = getattr(jnp, case.dtype)
    names, diff = rec.inputs, rec.diff_inputs

    def arr(x):
        return jnp.asarray(x, dtype=dtype)

    fixed = {n: arr(a[n]) for n in names if n not in diff}

    def f(*ps):
        it = iter(ps)
        return fn(J, *[fixed[n] if n in fixed else next(it) for n in names], **params)

    primals = tuple(arr(a[n]) for n in diff)
    if check == "forward":
        return {"output": jax.jit(f)(*primals)}
    if check == "vjp":
        grads = jax.jit(lambda g, *p: jax.vjp(f, *p)[1](g))(arr(a["grad_output"]), *primals)
        return {f"grad_{n}": gr for n, gr in zip(diff, grads)}
    if check == "vjp_vjp":

        def first(g, *p):
            return jax.vjp(f, *p)[1](g)

        def second(ggs, g, *p):
            return jax.vjp(first, g, *p)[1](ggs)

        ggs = tuple(arr(a[f"gg_{n}"]) for n in diff)
        outs = jax.jit(second)(ggs, arr(a["grad_output"]), *primals)
        return dict(zip(["g_grad_output"] + [f"g_{n}" for n in diff], outs))
    if check == "jvp":
        tangents = tuple(arr(a[f"tangent_{n}"]) for n in diff)
        return {"tangent_output": jax.jit(lambda p, t: jax.jvp(f, p, t)[1])(primals, tangents)}
    raise ValueError(check)


# ---- TensorFlow ----------------------------------------------------------------------------------


def run_tf(tf, case, check, a, fn):
    _refuse(fn, case, check)
    rec = RECORDS[case.op]
    params = op_params(case)
    dtype = getattr(tf, case.dtype)
    names, diff = rec.inputs, rec.diff_inputs

    def c(x):  # a tensor argument of a tf.function (tensorflow:function / :xla modes) is cast
        return tf.cast(x, dtype) if tf.is_tensor(x) else tf.constant(x, dtype=dtype)

    xs = {n: c(a[n]) for n in names}

    def f():
        return fn(tf, *[xs[n] for n in names], **params)

    leaves = [xs[n] for n in diff]
    zero = tf.UnconnectedGradients.ZERO
    if check == "forward":
        return {"output": f()}
    if check == "vjp":
        with tf.GradientTape() as tape:
            tape.watch(leaves)
            y = f()
        grads = tape.gradient(y, leaves, output_gradients=c(a["grad_output"]), unconnected_gradients=zero)
        return {f"grad_{n}": _dense(tf, g) for n, g in zip(diff, grads)}
    if check == "vjp_vjp":
        g = c(a["grad_output"])
        with tf.GradientTape() as outer:
            outer.watch([g] + leaves)
            with tf.GradientTape() as inner:
                inner.watch(leaves)
                y = f()
            firsts = [
                _dense(tf, f)
                for f in inner.gradient(y, leaves, output_gradients=g, unconnected_gradients=zero)
            ]
        seconds = outer.gradient(
            firsts, [g] + leaves, output_gradients=[c(a[f"gg_{n}"]) for n in diff], unconnected_gradients=zero
        )
        return dict(zip(["g_grad_output"] + [f"g_{n}" for n in diff], [_dense(tf, x) for x in seconds]))
    if check == "jvp":
        with tf.autodiff.ForwardAccumulator(leaves, [c(a[f"tangent_{n}"]) for n in diff]) as acc:
            y = f()
        return {"tangent_output": acc.jvp(y, unconnected_gradients=zero)}
    raise ValueError(check)


def _dense(tf, g):
    """A gather's gradient comes back as tf.IndexedSlices: the dense tensor it stands for."""
    return tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
