"""Running a record's checks: on the reference (with its error bound), on PyTorch, JAX, TensorFlow.

Every check is one generic program over the record's spelling, the same for every op:

============  ==============================================================================
forward       ``output = f(*inputs)``
vjp           ``grad_<input>``: the VJP of f at the inputs for the cotangent ``grad_output``
vjp_vjp       ``g_grad_output``, ``g_<input>``: the VJP of (grad_output, *inputs) ↦ vjp for
              the cotangents ``gg_<input>``
jvp           ``tangent_output``: the JVP of f for the tangents ``tangent_<input>``
vmap          ``output``: f mapped over ``vmap_size`` samples, each input batched at its
              ``in_dims`` entry (negative counts from the end of the batched array; None: the
              input is shared), the batch dim of the output first
vmap_vjp      ``grad_<input>``: the per-sample VJP (every sample's gradient, batch dim first,
              shared inputs included) for the cotangents ``batched_grad_output``
jvp_jvp       ``tangent2_output``: forward over forward, d²f[tan1, tan2]: the JVP along
              ``tan2_<input>`` of x ↦ JVP of f at x along ``tan1_<input>``
vjp_jvp       ``g_<input>``, ``g_tan1_<input>``: reverse over forward, the VJP of
              (x, tan1) ↦ JVP of f at x along tan1 for the cotangent ``cot_output`` on that tangent
              output (w.r.t. x: cᵀ d²f[tan1, ·]; w.r.t. tan1: J(x)ᵀ c through the JVP rule)
jvp_vjp       ``tangent_grad_<input>``: forward over reverse (the Hessian-vector product as users
              write it), the JVP of (x, c) ↦ VJP of f at x for cotangent c along
              (``tan1_<input>``, ``tan_cot_output``), c = ``cot_output``: d²(c·f)[tan1] + Jᵀ tan_c
vmap_jvp_vjp  ``tangent_grad_<input>``: jvp_vjp per sample (per-sample HVPs), inputs batched as in
              vmap, ``batched_cot_output``, ``batched_tan1_<input>`` (every input, shared ones
              too) and ``batched_tan_cot_output`` at dim 0; results batch dim first
============  ==============================================================================

Every output of the op after the first is not differentiated (the cotangent and tangent outputs
compared are the first output's, as the other checks'). The second-order seeds are drawn like
inputs (zeros, ±1, small integers, tiny and huge magnitudes: ``conformance.ops._seed_draw``).

The reference maps with ``reference.func.vmap``, PyTorch with ``torch.func.vmap``, JAX with
``jax.vmap`` (``in_axes`` has PyTorch's ``in_dims`` semantics). TensorFlow has no ``in_dims``:
``tf.vectorized_map`` maps the leading dim of its ``elems``, so the harness moves each batched
input's dim to the front (``tf.experimental.numpy.moveaxis``) and closes over the shared ones; what
TensorFlow's results check is its vectorisation of the op (pfor, or its while-loop fallback), not
an ``in_dims`` argument it does not have.
"""

from __future__ import annotations

import numpy as np

import reference as T
from conformance.case import PART_DTYPE
from conformance.ops import (
    RECORDS,
    VMAP_CHECKS,
    op_params,
    record_rejects,  # noqa: F401 - its old home (conformance.ops now)
    vmap_spec,
)
from conformance.unsupported import Unsupported
from reference.errors import SMALLEST_NORMAL, bound_of

# ---- what a spelling cannot do for a check -----------------------------------------------------


def refuses(why):
    """Mark a framework spelling with ``why(case, check) -> reason | None``: the checks (or cases)
    the framework cannot run with it, each with the framework's own reason (an op its autodiff
    declares not differentiable, a derivative whose semantics are not PyTorch's)."""

    def mark(fn):
        fn.refuses = why
        return fn

    return mark


def _refuse(fn, case, check, framework=None):
    rec = RECORDS[case.op]
    if framework is not None and "invalid" in case.params.as_dict() and framework not in rec.error_frameworks:
        raise Unsupported(
            f"the {framework} spelling of {rec.name!r} does not pass the broken argument through "
            f"(the error check runs on {', '.join(rec.error_frameworks)})"
        )
    if framework in rec.vmap_refused and check in VMAP_CHECKS:
        raise Unsupported(rec.vmap_refused[framework])
    why = getattr(fn, "refuses", None)
    reason = why(case, check) if why is not None else None
    if reason:
        raise Unsupported(reason)


# ---- the reference, with its bound -----------------------------------------------------------


def reference_program(case, check, a, fn=None):
    """(fn of Tensors -> results, the input arrays, the result names) for the reference; ``fn``: the
    op to differentiate in place of the record's (a convention's alternative, with its signature)."""
    rec = RECORDS[case.op]
    params = op_params(case)
    names = rec.inputs
    diff = rec.diff_inputs
    op = rec.fn if fn is None else fn

    def f(*xs):
        return op(T, *xs, **params)

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
    if check in ORDER_RUN:
        return _reference_order(T, case, check, a, f)
    if check in ("vmap", "vmap_vjp"):
        _, dims = vmap_spec(case)
        arrays = [a[n] if d is None else a[f"batched_{n}"] for n, d in zip(names, dims)]
        if check == "vmap":
            return (lambda *xs: T.func.vmap(f, in_dims=tuple(dims))(*xs)), arrays, ["output"]

        def per_sample(*args):
            *xs, g = args
            fixed = {n: x for n, x in zip(names, xs) if n not in diff}

            def h(*ps):
                it = iter(ps)
                return f(*[fixed[n] if n in fixed else next(it) for n in names])

            return tuple(T.func.vjp(h, *diff_of(xs))[1](g))

        def vmap_vjp(*args):
            return list(T.func.vmap(per_sample, in_dims=(*dims, 0))(*args))

        return vmap_vjp, arrays + [a["batched_grad_output"]], [f"grad_{n}" for n in diff]
    raise ValueError(f"check {check!r} does not apply to op records")


def order_check(func, check, names, diff, dims, f, xs, seeds):
    """A second-order forward-mode check (jvp_jvp, vjp_jvp, jvp_vjp, vmap_jvp_vjp), written once for
    every framework: ``func`` has ``jvp(fn, primals, tangents)``, ``vjp(fn, *primals)`` and
    ``vmap(fn, in_dims)`` with torch.func's signatures (``reference.func``, ``torch.func``, and the
    JAX and TensorFlow namespaces below); ``f(*inputs)`` is the op (its first output is the one
    differentiated); ``xs`` {input name: array} (batched ones for vmap_jvp_vjp, at their ``dims``
    entries); ``seeds`` the arrays :func:`order_names` names, in its order. Self-contained (it names
    nothing of refgrad): reproducers carry its source. Returns the results in ``order_names`` order."""
    k = len(diff)

    def part(fixed):
        def g(*ps):
            it = iter(ps)
            y = f(*[fixed[n] if n in fixed else next(it) for n in names])
            return y[0] if isinstance(y, (tuple, list)) else y

        return g

    def jvp_vjp(fixed, ps, c, t1, tc):  # forward over reverse: d/ds VJP(x + s t1)(c + s tc)
        g = part(fixed)
        return func.jvp(lambda c_, *qs: tuple(func.vjp(g, *qs)[1](c_)), (c, *ps), (tc, *t1))[1]

    fixed = {n: xs[n] for n in names if n not in diff}
    ps = tuple(xs[n] for n in diff)
    if check == "jvp_jvp":  # forward over forward: d/ds JVP(x + s t2)(t1)
        g = part(fixed)
        t1, t2 = tuple(seeds[:k]), tuple(seeds[k:])
        return [func.jvp(lambda *qs: func.jvp(g, qs, t1)[1], ps, t2)[1]]
    if check == "vjp_jvp":  # reverse over forward: the VJP of (x, t1) -> JVP(x)(t1) for cotangent c
        g = part(fixed)
        return list(func.vjp(lambda *qs: func.jvp(g, qs[:k], qs[k:])[1], *ps, *seeds[:k])[1](seeds[k]))
    if check == "jvp_vjp":
        return list(jvp_vjp(fixed, ps, seeds[0], tuple(seeds[1 : k + 1]), seeds[k + 1]))

    def per_sample(*args):  # vmap_jvp_vjp: every input, then the cotangent and the tangents
        ys, (c, *rest) = args[: len(names)], args[len(names) :]
        own = {n: y for n, y in zip(names, ys) if n not in diff}
        return jvp_vjp(own, tuple(y for n, y in zip(names, ys) if n in diff), c, tuple(rest[:k]), rest[k])

    return list(func.vmap(per_sample, (*dims, *[0] * (k + 2)))(*[xs[n] for n in names], *seeds))


def torch_convention_vjp(jax, fn, *primals):
    """``jax.vjp`` in PyTorch's (the reference's) convention: JAX's VJP transposes the JVP under the
    bilinear pairing sum(ct * y), PyTorch's is its adjoint under Re sum(conj(ct) * y), so for every
    function, holomorphic or not, reference_vjp(ct) = conj(jax_vjp(conj(ct))) (docs/complex.md;
    the identity on real arrays). Nested (vjp_vjp, jvp_vjp) it maps each level."""
    conj = jax.numpy.conj
    out, pull = jax.vjp(fn, *primals)
    return out, lambda ct: tuple(conj(g) for g in pull(jax.tree_util.tree_map(conj, ct)))


class JaxFunc:
    """``jax``'s transforms with torch.func's signatures (for :func:`order_check`); ``complex``: its
    VJPs in PyTorch's convention (:func:`torch_convention_vjp`)."""

    def __init__(self, jax, complex=False):
        self.jax = jax
        self.complex = complex

    def jvp(self, fn, primals, tangents):
        return self.jax.jvp(fn, tuple(primals), tuple(tangents))

    def vjp(self, fn, *primals):
        if self.complex:
            return torch_convention_vjp(self.jax, fn, *primals)
        return self.jax.vjp(fn, *primals)

    def vmap(self, fn, in_dims):
        return self.jax.vmap(fn, in_axes=tuple(in_dims))


class TfFunc:
    """TensorFlow's autodiff with torch.func's signatures (for :func:`order_check`): ``jvp`` is a
    ``tf.autodiff.ForwardAccumulator``, ``vjp`` a ``tf.GradientTape`` (its gradient taken when the
    VJP is applied, inside whatever accumulator or tape is then recording), ``vmap``
    ``tf.vectorized_map`` over the batched arguments, each one's batch dim moved to the front
    (TensorFlow has no in_dims), the shared ones closed over. Unconnected results are zeros, a
    gather's ``tf.IndexedSlices`` gradient the dense tensor it stands for."""

    def __init__(self, tf):
        self.tf = tf
        self.zero = tf.UnconnectedGradients.ZERO

    def dense(self, x):
        tf = self.tf
        if isinstance(x, (tuple, list)):
            return type(x)(self.dense(v) for v in x)
        return tf.convert_to_tensor(x) if isinstance(x, tf.IndexedSlices) else x

    def jvp(self, fn, primals, tangents):
        with self.tf.autodiff.ForwardAccumulator(list(primals), list(tangents)) as acc:
            out = fn(*primals)
        return out, self.dense(acc.jvp(out, unconnected_gradients=self.zero))

    def vjp(self, fn, *primals):
        tf = self.tf
        with tf.GradientTape() as tape:
            tape.watch(list(primals))
            out = fn(*primals)

        def pull(c):
            grads = tape.gradient(out, list(primals), output_gradients=c, unconnected_gradients=self.zero)
            return self.dense(tuple(grads))

        return out, pull

    def vmap(self, fn, in_dims):
        tf = self.tf

        def mapped(*args):
            shared = {i: x for i, (x, d) in enumerate(zip(args, in_dims)) if d is None}
            elems = tuple(
                tf.experimental.numpy.moveaxis(x, d, 0) for x, d in zip(args, in_dims) if d is not None
            )

            def one(batch):
                it = iter(batch)
                return tuple(fn(*[shared[i] if i in shared else next(it) for i in range(len(args))]))

            return tf.vectorized_map(one, elems)

        return mapped


def order_names(case, check):
    """(the array names a second-order forward-mode check reads, in the order of its function's
    arguments after the inputs; the result names)."""
    diff = RECORDS[case.op].diff_inputs
    tan1 = [f"tan1_{n}" for n in diff]
    if check == "jvp_jvp":
        return tan1 + [f"tan2_{n}" for n in diff], ["tangent2_output"]
    if check == "vjp_jvp":
        return tan1 + ["cot_output"], [f"g_{n}" for n in diff] + [f"g_tan1_{n}" for n in diff]
    if check == "jvp_vjp":
        return ["cot_output", *tan1, "tan_cot_output"], [f"tangent_grad_{n}" for n in diff]
    batched = ["batched_cot_output", *[f"batched_{t}" for t in tan1], "batched_tan_cot_output"]
    return batched, [f"tangent_grad_{n}" for n in diff]


def _order_inputs(case, check, a):
    """The input arrays of a second-order check: batched ones (at their in_dims) for vmap_jvp_vjp."""
    names = RECORDS[case.op].inputs
    if check != "vmap_jvp_vjp":
        return [a[n] for n in names]
    return [a[n] if d is None else a[f"batched_{n}"] for n, d in zip(names, vmap_spec(case)[1])]


def order_args(case, check):
    """(names, diff, in_dims) of :func:`order_check` for a case."""
    rec = RECORDS[case.op]
    return rec.inputs, rec.diff_inputs, (vmap_spec(case)[1] if check == "vmap_jvp_vjp" else None)


#: the checks :func:`order_check` runs
ORDER_RUN = ("jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp")


def _run_order(func, case, check, a, make, f):
    """A second-order check on a framework whose arrays ``make(array)`` makes (eager, or inside the
    mode's compiled function)."""
    names, diff, dims = order_args(case, check)
    seeds, results = order_names(case, check)
    xs = {n: make(x) for n, x in zip(names, _order_inputs(case, check, a))}
    return dict(zip(results, order_check(func, check, names, diff, dims, f, xs, [make(a[n]) for n in seeds])))


def _reference_order(T, case, check, a, f):
    names, diff, dims = order_args(case, check)
    seeds, results = order_names(case, check)

    def program(*args):
        # the seeds are data, not variables of an outer differentiation: detached like the jvp check's
        xs = {n: x.detach() for n, x in zip(names, args[: len(names)])}
        return order_check(T.func, check, names, diff, dims, f, xs, [s.detach() for s in args[len(names) :]])

    return program, _order_inputs(case, check, a) + [a[n] for n in seeds], results


def _zeros_if_none(T, g, like):
    return T.zeros_like(like) if g is None else g


def seed_underflow_errors(case, check, a, precision) -> dict:
    """{seed name: error} of the second-order checks' seeds whose contribution a framework may lose
    to underflow in an evaluation order the reference does not take (docs/conformance.md, "Seeds
    near the underflow threshold").

    The result of a second-order check is multilinear in its seeds (jvp_jvp in tan1 and tan2;
    jvp_vjp and vjp_jvp in the cotangent and tan1), and a framework may multiply a seed into any
    partial product: ``(c·(1/y))·(1/y)·t`` where the reference forms ``c·((t/y)/y)``. A partial
    product below the smallest normal number loses at most its own value (all of it when
    subnormals are flushed, FTZ), so that term of the result loses at most ``|seed|·|rest|``, which
    is the seed's own contribution: the error the tracker propagates from an input error ``|s|`` on
    that seed element. A seed element can make a partial product underflow through factors no
    smaller than ``u`` (a factor below ``u`` is below the rounding the reference's own order already
    carries for it) only when ``|s| < tiny/u``: those elements carry ``|s|``, the others 0."""
    if check not in ORDER_RUN:
        return {}
    limit = SMALLEST_NORMAL[precision.dtype] / precision.u
    out = {}
    for n in order_names(case, check)[0]:
        mag = np.abs(a[n])
        near = (mag > 0) & (mag < limit)
        if near.any():
            out[n] = np.where(near, mag, 0.0)
    return out


def reference_expected(case, check, a, precision, input_errors=None, fn=None):
    """{name: (value, bound)} and the tracker's record of the ops it modelled; ``input_errors``:
    {array name: absolute error} of inputs the framework may read differently (flushed subnormals);
    ``fn``: the op in place of the record's (a convention's alternative)."""
    fn, arrays, names = reference_program(case, check, a, fn)
    errs = None
    lost = seed_underflow_errors(case, check, a, precision)
    if lost:
        input_errors = dict(input_errors or {})
        for n, e in lost.items():
            input_errors[n] = e + input_errors[n] if n in input_errors else e
    if input_errors:
        by_id = {id(a[n]): e for n, e in input_errors.items() if n in a}
        errs = {id(x): by_id[id(x)] for x in arrays if id(x) in by_id}
    with np.errstate(all="ignore"):
        values, bounds, tracker = bound_of(fn, arrays, precision, errs)
    return {n: (v, b) for n, v, b in zip(names, values, bounds)}, tracker.used


# ---- PyTorch ---------------------------------------------------------------------------------


def torch_tensor(torch, case, x, device="cpu"):
    """Array ``x`` of ``case`` as a torch tensor of the case's dtype; a complex case's real array (a
    real input, a cotangent or tangent of a real output) in the part dtype (``float32`` for
    ``complex64``). Every torch mode makes its tensors here."""
    dtype = getattr(torch, case.dtype)
    if case.dtype in PART_DTYPE and not np.iscomplexobj(x):
        dtype = getattr(torch, PART_DTYPE[case.dtype])
    return torch.tensor(x, dtype=dtype, device=device)


def run_torch(torch, case, check, a, fn, device="cpu"):
    _refuse(fn, case, check, "torch")

    def t(x, grad=False):
        return torch_tensor(torch, case, x, device).requires_grad_(grad)

    out = _run_torch(torch, case, check, a, fn, t)
    return {k: torch.zeros(v.shape, dtype=v.dtype) if v._is_zerotensor() else v for k, v in out.items()}


def _run_torch(torch, case, check, a, fn, t):
    rec = RECORDS[case.op]
    params = op_params(case)
    names, diff = rec.inputs, rec.diff_inputs
    if check in ORDER_RUN:
        return _run_order(torch.func, case, check, a, t, lambda *ys: fn(torch, *ys, **params))
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
    if check in ("vmap", "vmap_vjp"):
        _, dims = vmap_spec(case)
        xs = [t(a[n] if d is None else a[f"batched_{n}"]) for n, d in zip(names, dims)]
        if check == "vmap":
            return {"output": torch.func.vmap(lambda *ys: fn(torch, *ys, **params), in_dims=tuple(dims))(*xs)}

        def per_sample(*args):
            *ys, g = args
            fixed = {n: y for n, y in zip(names, ys) if n not in diff}

            def h(*ps):
                it = iter(ps)
                return fn(torch, *[fixed[n] if n in fixed else next(it) for n in names], **params)

            return tuple(torch.func.vjp(h, *[y for n, y in zip(names, ys) if n in diff])[1](g))

        grads = torch.func.vmap(per_sample, in_dims=(*dims, 0))(*xs, t(a["batched_grad_output"]))
        return {f"grad_{n}": g for n, g in zip(diff, grads)}
    raise ValueError(check)


# ---- JAX ---------------------------------------------------------------------------------------


class JaxNamespace:
    def __init__(self):
        import jax
        import jax.numpy as jnp
        from jax import lax

        self.jax, self.jnp, self.lax, self.nn = jax, jnp, lax, jax.nn


def run_jax(J, case, check, a, fn):
    _refuse(fn, case, check, "jax")
    rec = RECORDS[case.op]
    params = op_params(case)
    jax, jnp = J.jax, J.jnp
    dtype = getattr(jnp, case.dtype)
    part = getattr(jnp, PART_DTYPE.get(case.dtype, case.dtype))
    names, diff = rec.inputs, rec.diff_inputs

    def arr(x):  # (a complex case's real array, a cotangent of a real output: the part dtype)
        return jnp.asarray(x, dtype=part if dtype != part and not np.iscomplexobj(x) else dtype)

    fixed = {n: arr(a[n]) for n in names if n not in diff}

    def f(*ps):
        it = iter(ps)
        return fn(J, *[fixed[n] if n in fixed else next(it) for n in names], **params)

    primals = tuple(arr(a[n]) for n in diff)
    complex_case = case.dtype.startswith("complex")
    # JAX's cotangents and gradients mapped to PyTorch's convention (docs/complex.md); jvp is as is
    vjp = (lambda g_, *p: torch_convention_vjp(jax, g_, *p)) if complex_case else jax.vjp
    if check in ORDER_RUN:
        seeds, results = order_names(case, check)
        names_, diff_, dims = order_args(case, check)

        def whole(xs, ss):
            return order_check(
                JaxFunc(jax, complex_case),
                check,
                names_,
                diff_,
                dims,
                lambda *ys: fn(J, *ys, **params),
                xs,
                ss,
            )

        xs = dict(zip(names, (arr(x) for x in _order_inputs(case, check, a))))
        return dict(zip(results, jax.jit(whole)(xs, [arr(a[n]) for n in seeds])))
    if check == "forward":
        return {"output": jax.jit(f)(*primals)}
    if check == "vjp":
        grads = jax.jit(lambda g, *p: vjp(f, *p)[1](g))(arr(a["grad_output"]), *primals)
        return {f"grad_{n}": gr for n, gr in zip(diff, grads)}
    if check == "vjp_vjp":

        def first(g, *p):
            return vjp(f, *p)[1](g)

        def second(ggs, g, *p):
            return vjp(first, g, *p)[1](ggs)

        ggs = tuple(arr(a[f"gg_{n}"]) for n in diff)
        outs = jax.jit(second)(ggs, arr(a["grad_output"]), *primals)
        return dict(zip(["g_grad_output"] + [f"g_{n}" for n in diff], outs))
    if check == "jvp":
        tangents = tuple(arr(a[f"tangent_{n}"]) for n in diff)
        return {"tangent_output": jax.jit(lambda p, t: jax.jvp(f, p, t)[1])(primals, tangents)}
    if check in ("vmap", "vmap_vjp"):
        _, dims = vmap_spec(case)
        xs = [arr(a[n] if d is None else a[f"batched_{n}"]) for n, d in zip(names, dims)]

        def whole(*ys):
            return fn(J, *ys, **params)

        if check == "vmap":
            return {"output": jax.jit(jax.vmap(whole, in_axes=tuple(dims)))(*xs)}

        def per_sample(*args):
            *ys, g = args
            fixed_ys = {n: y for n, y in zip(names, ys) if n not in diff}

            def h(*ps):
                it = iter(ps)
                return fn(J, *[fixed_ys[n] if n in fixed_ys else next(it) for n in names], **params)

            return vjp(h, *[y for n, y in zip(names, ys) if n in diff])[1](g)

        grads = jax.jit(jax.vmap(per_sample, in_axes=(*dims, 0)))(*xs, arr(a["batched_grad_output"]))
        return {f"grad_{n}": g for n, g in zip(diff, grads)}
    raise ValueError(check)


# ---- TensorFlow ----------------------------------------------------------------------------------


def run_tf(tf, case, check, a, fn):
    _refuse(fn, case, check, "tensorflow")
    rec = RECORDS[case.op]
    params = op_params(case)
    dtype = getattr(tf, case.dtype)
    part = getattr(tf, PART_DTYPE.get(case.dtype, case.dtype))
    names, diff = rec.inputs, rec.diff_inputs

    def c(x):  # a tensor argument of a tf.function (tensorflow:function / :xla modes) is cast
        # (a complex case's real array, a cotangent of a real output: the part dtype)
        d = dtype
        if dtype != part and not (x.dtype.is_complex if tf.is_tensor(x) else np.iscomplexobj(x)):
            d = part
        return tf.cast(x, d) if tf.is_tensor(x) else tf.constant(x, dtype=d)

    if check in ORDER_RUN:
        return _run_order(TfFunc(tf), case, check, a, c, lambda *ys: fn(tf, *ys, **params))
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
    if check in ("vmap", "vmap_vjp"):
        return _tf_vmap(tf, case, check, a, fn, c, params)
    raise ValueError(check)


def _tf_vmap(tf, case, check, a, fn, c, params):
    """tf.vectorized_map over the batched inputs, each one's batch dim moved to the front by the
    harness (TensorFlow has no in_dims); the shared inputs are closed over."""
    rec = RECORDS[case.op]
    names, diff = rec.inputs, rec.diff_inputs
    _, dims = vmap_spec(case)
    shared = {n: c(a[n]) for n, d in zip(names, dims) if d is None}
    mapped = [n for n, d in zip(names, dims) if d is not None]
    elems = [
        tf.experimental.numpy.moveaxis(c(a[f"batched_{n}"]), d, 0)
        for n, d in zip(names, dims)
        if d is not None
    ]
    if check == "vmap_vjp":
        elems.append(c(a["batched_grad_output"]))

    def per_sample(batch):
        got = dict(zip(mapped, batch))
        xs = [got[n] if n in got else shared[n] for n in names]
        if check == "vmap":
            return fn(tf, *xs, **params)
        leaves = [x for n, x in zip(names, xs) if n in diff]
        with tf.GradientTape() as tape:
            tape.watch(leaves)
            y = fn(tf, *xs, **params)
        grads = tape.gradient(
            y, leaves, output_gradients=batch[-1], unconnected_gradients=tf.UnconnectedGradients.ZERO
        )
        return tuple(_dense(tf, g) for g in grads)

    out = tf.vectorized_map(per_sample, tuple(elems))
    if check == "vmap":
        return {"output": out}
    return {f"grad_{n}": g for n, g in zip(diff, out)}


def _dense(tf, g):
    """A gather's gradient comes back as tf.IndexedSlices: the dense tensor it stands for."""
    return tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g


# ---- the error check -----------------------------------------------------------------------------


# record_rejects (the reference's rejection of an error case) lives in conformance.ops, beside the
# record's other answers to the harness (RecordCase.rejects); imported above, so its old name here holds.
