"""The check programs, written once: forward, vjp, vjp_vjp, jvp, vmap, vmap_vjp on the reference,
PyTorch, JAX and TensorFlow, and the second-order forward-mode checks (jvp_jvp, vjp_jvp, jvp_vjp,
vmap_jvp_vjp) as one program over each framework's transforms.

A leaf: it imports nothing (of refgrad or of a framework). Every function takes the framework's
module (``T``, ``torch``, ``jax``, ``tf``) and the op as a function of its tensor arguments, so the
same text serves three callers:

* the campaign's runner (``conformance.ops._run``, for an op record: ``op`` is the record's
  spelling with its params bound);
* ``refgrad.testing``'s :func:`~conformance.testing.conforms.assert_conforms` (``op`` is the user's
  function or their reference function, its inputs named ``"0"``, ``"1"``, ...);
* the standalone reproducers (``conformance.record_reproducer``), which copy these functions by
  source (``inspect.getsource``) into a script that runs without refgrad installed: so nothing here
  may name a module-level helper of this module except the ones a reproducer copies with it
  (:func:`order_check` is copied with :class:`JaxFunc`/:class:`TfFunc`, :func:`jax_check` with
  :func:`torch_convention_vjp` where a case is complex).

The arrays a check reads come as a mapping ``a`` {name: array}: the inputs by name (``names``; the
differentiated ones ``diff``), ``grad_output``, ``gg_<input>``, ``tangent_<input>``,
``batched_<input>`` and ``batched_grad_output``, the second-order seeds (:func:`order_names`); the
results are {result name: framework tensor}. What each check computes, and its array and result
names: ``conformance/ops/_run.py``'s docstring.
"""

from __future__ import annotations

#: the second-order forward-mode checks :func:`order_check` runs
ORDER_RUN = ("jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp")


# ---- the reference ------------------------------------------------------------------------------------


def reference_check(T, check, op, names, diff, dims=None):
    """(program of the reference's Tensors -> results, the names of the arrays it takes in order,
    the result names) of a first-order check (or vjp_vjp, vmap, vmap_vjp) of ``op(*inputs)``;
    ``dims`` the vmap checks' in_dims. The program is what ``reference.errors.bound_of`` runs."""

    def f(*xs):
        return op(*xs)

    def diff_of(xs):
        return [x for n, x in zip(names, xs) if n in diff]

    def zeros_if_none(g, like):
        return T.zeros_like(like) if g is None else g

    if check == "forward":
        return (lambda *xs: f(*xs)), list(names), ["output"]
    if check == "vjp":

        def vjp(*args):
            *xs, g = args
            grads = T.autograd.grad(f(*xs), diff_of(xs), g, allow_unused=True)
            return [zeros_if_none(gr, x) for gr, x in zip(grads, diff_of(xs))]

        return vjp, [*names, "grad_output"], [f"grad_{n}" for n in diff]
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
            return [zeros_if_none(s, t) for s, t in zip(seconds, [g] + leaves)]

        return (
            vjp_vjp,
            [*names, "grad_output", *[f"gg_{n}" for n in diff]],
            ["g_grad_output"] + [f"g_{n}" for n in diff],
        )
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

        return jvp, [*names, *[f"tangent_{n}" for n in diff]], ["tangent_output"]
    if check in ("vmap", "vmap_vjp"):
        arrays = [n if d is None else f"batched_{n}" for n, d in zip(names, dims)]
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

        return vmap_vjp, [*arrays, "batched_grad_output"], [f"grad_{n}" for n in diff]
    raise ValueError(f"check {check!r} has no first-order reference program")


# ---- PyTorch ------------------------------------------------------------------------------------------


def torch_check(torch, check, op, names, diff, dims, a, t):
    """A first-order check (or vjp_vjp, vmap, vmap_vjp) of ``op(*inputs)`` on PyTorch: eager
    autograd (``torch.autograd.grad``) for the VJPs, ``torch.func`` for jvp and the maps;
    ``t(array, requires_grad=False)`` makes a tensor of the case's dtype."""
    xs = [t(a[n], n in diff and check != "forward") for n in names]
    leaves = [x for n, x in zip(names, xs) if n in diff]
    if check == "forward":
        return {"output": op(*xs)}
    if check == "vjp":
        grads = torch.autograd.grad(
            op(*xs), leaves, t(a["grad_output"]), allow_unused=True, materialize_grads=True
        )
        return {f"grad_{n}": g for n, g in zip(diff, grads)}
    if check == "vjp_vjp":
        g = t(a["grad_output"], True)
        firsts = torch.autograd.grad(
            op(*xs), leaves, g, create_graph=True, allow_unused=True, materialize_grads=True
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
            return op(*[fixed[n] if n in fixed else next(it) for n in names])

        _, out = torch.func.jvp(g, tuple(leaves), tuple(t(a[f"tangent_{n}"]) for n in diff))
        return {"tangent_output": out}
    if check in ("vmap", "vmap_vjp"):
        xs = [t(a[n] if d is None else a[f"batched_{n}"]) for n, d in zip(names, dims)]
        if check == "vmap":
            return {"output": torch.func.vmap(lambda *ys: op(*ys), in_dims=tuple(dims))(*xs)}

        def per_sample(*args):
            *ys, g = args
            fixed = {n: y for n, y in zip(names, ys) if n not in diff}

            def h(*ps):
                it = iter(ps)
                return op(*[fixed[n] if n in fixed else next(it) for n in names])

            return tuple(torch.func.vjp(h, *[y for n, y in zip(names, ys) if n in diff])[1](g))

        grads = torch.func.vmap(per_sample, in_dims=(*dims, 0))(*xs, t(a["batched_grad_output"]))
        return {f"grad_{n}": g for n, g in zip(diff, grads)}
    raise ValueError(check)


# ---- JAX ----------------------------------------------------------------------------------------------


def jax_check(jax, check, op, names, diff, dims, a, arr, vjp, jit):
    """A first-order check (or vjp_vjp, vmap, vmap_vjp) of ``op(*inputs)`` on JAX: ``arr(array)``
    makes a ``jnp`` array of the case's dtype, ``vjp`` is ``jax.vjp`` (or, for a complex case,
    :func:`torch_convention_vjp` bound to ``jax``), ``jit`` wraps each check's one program
    (``jax.jit``; the identity runs it op by op)."""
    fixed = {n: arr(a[n]) for n in names if n not in diff}

    def f(*ps):
        it = iter(ps)
        return op(*[fixed[n] if n in fixed else next(it) for n in names])

    primals = tuple(arr(a[n]) for n in diff)
    if check == "forward":
        return {"output": jit(f)(*primals)}
    if check == "vjp":
        grads = jit(lambda g, *p: vjp(f, *p)[1](g))(arr(a["grad_output"]), *primals)
        return {f"grad_{n}": gr for n, gr in zip(diff, grads)}
    if check == "vjp_vjp":

        def first(g, *p):
            return vjp(f, *p)[1](g)

        def second(ggs, g, *p):
            return vjp(first, g, *p)[1](ggs)

        ggs = tuple(arr(a[f"gg_{n}"]) for n in diff)
        outs = jit(second)(ggs, arr(a["grad_output"]), *primals)
        return dict(zip(["g_grad_output"] + [f"g_{n}" for n in diff], outs))
    if check == "jvp":
        tangents = tuple(arr(a[f"tangent_{n}"]) for n in diff)
        return {"tangent_output": jit(lambda p, t: jax.jvp(f, p, t)[1])(primals, tangents)}
    if check in ("vmap", "vmap_vjp"):
        xs = [arr(a[n] if d is None else a[f"batched_{n}"]) for n, d in zip(names, dims)]
        if check == "vmap":
            return {"output": jit(jax.vmap(lambda *ys: op(*ys), in_axes=tuple(dims)))(*xs)}

        def per_sample(*args):
            *ys, g = args
            fixed_ys = {n: y for n, y in zip(names, ys) if n not in diff}

            def h(*ps):
                it = iter(ps)
                return op(*[fixed_ys[n] if n in fixed_ys else next(it) for n in names])

            return vjp(h, *[y for n, y in zip(names, ys) if n in diff])[1](g)

        grads = jit(jax.vmap(per_sample, in_axes=(*dims, 0)))(*xs, arr(a["batched_grad_output"]))
        return {f"grad_{n}": g for n, g in zip(diff, grads)}
    raise ValueError(check)


def torch_convention_vjp(jax, fn, *primals):
    """``jax.vjp`` in PyTorch's (the reference's) convention: JAX's VJP transposes the JVP under the
    bilinear pairing sum(ct * y), PyTorch's is its adjoint under Re sum(conj(ct) * y), so for every
    function, holomorphic or not, reference_vjp(ct) = conj(jax_vjp(conj(ct))) (docs/complex.md;
    the identity on real arrays). Nested (vjp_vjp, jvp_vjp) it maps each level."""
    conj = jax.numpy.conj
    out, pull = jax.vjp(fn, *primals)
    return out, lambda ct: tuple(conj(g) for g in pull(jax.tree_util.tree_map(conj, ct)))


# ---- TensorFlow ---------------------------------------------------------------------------------------


def tf_check(tf, check, op, names, diff, dims, a, c):
    """A first-order check (or vjp_vjp, vmap, vmap_vjp) of ``op(*inputs)`` on TensorFlow:
    ``tf.GradientTape`` for the VJPs, ``tf.autodiff.ForwardAccumulator`` for jvp,
    ``tf.vectorized_map`` for the maps; ``c(array)`` makes a tensor of the case's dtype (and casts
    a tensor argument of a ``tf.function``). Unconnected gradients are zeros, a gather's
    ``tf.IndexedSlices`` gradient the dense tensor it stands for."""

    def dense(g):
        return tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g

    zero = tf.UnconnectedGradients.ZERO
    if check in ("vmap", "vmap_vjp"):
        # TensorFlow has no in_dims: each batched input's batch dim moved to the front, the shared
        # inputs closed over
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
            ys = [got[n] if n in got else shared[n] for n in names]
            if check == "vmap":
                return op(*ys)
            leaves = [y for n, y in zip(names, ys) if n in diff]
            with tf.GradientTape() as tape:
                tape.watch(leaves)
                y = op(*ys)
            grads = tape.gradient(y, leaves, output_gradients=batch[-1], unconnected_gradients=zero)
            return tuple(dense(g) for g in grads)

        out = tf.vectorized_map(per_sample, tuple(elems))
        if check == "vmap":
            return {"output": out}
        return {f"grad_{n}": g for n, g in zip(diff, out)}
    xs = {n: c(a[n]) for n in names}

    def f():
        return op(*[xs[n] for n in names])

    leaves = [xs[n] for n in diff]
    if check == "forward":
        return {"output": f()}
    if check == "vjp":
        with tf.GradientTape() as tape:
            tape.watch(leaves)
            y = f()
        grads = tape.gradient(y, leaves, output_gradients=c(a["grad_output"]), unconnected_gradients=zero)
        return {f"grad_{n}": dense(g) for n, g in zip(diff, grads)}
    if check == "vjp_vjp":
        g = c(a["grad_output"])
        with tf.GradientTape() as outer:
            outer.watch([g] + leaves)
            with tf.GradientTape() as inner:
                inner.watch(leaves)
                y = f()
            firsts = [
                dense(d) for d in inner.gradient(y, leaves, output_gradients=g, unconnected_gradients=zero)
            ]
        seconds = outer.gradient(
            firsts, [g] + leaves, output_gradients=[c(a[f"gg_{n}"]) for n in diff], unconnected_gradients=zero
        )
        return dict(zip(["g_grad_output"] + [f"g_{n}" for n in diff], [dense(x) for x in seconds]))
    if check == "jvp":
        with tf.autodiff.ForwardAccumulator(leaves, [c(a[f"tangent_{n}"]) for n in diff]) as acc:
            y = f()
        return {"tangent_output": acc.jvp(y, unconnected_gradients=zero)}
    raise ValueError(check)


# ---- the second-order forward-mode checks, one program for every framework ---------------------------


def order_names(diff, check):
    """(the array names a second-order forward-mode check reads, in the order of its function's
    arguments after the inputs; the result names), for the differentiated inputs ``diff``."""
    tan1 = [f"tan1_{n}" for n in diff]
    if check == "jvp_jvp":
        return tan1 + [f"tan2_{n}" for n in diff], ["tangent2_output"]
    if check == "vjp_jvp":
        return tan1 + ["cot_output"], [f"g_{n}" for n in diff] + [f"g_tan1_{n}" for n in diff]
    if check == "jvp_vjp":
        return ["cot_output", *tan1, "tan_cot_output"], [f"tangent_grad_{n}" for n in diff]
    batched = ["batched_cot_output", *[f"batched_{t}" for t in tan1], "batched_tan_cot_output"]
    return batched, [f"tangent_grad_{n}" for n in diff]


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
