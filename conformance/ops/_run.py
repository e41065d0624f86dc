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
from conformance.checks import (
    ORDER_RUN,
    JaxFunc,
    TfFunc,
    jax_check,
    order_check,
    reference_check,
    tf_check,
    torch_check,
    torch_convention_vjp,
)
from conformance.checks import order_names as _order_names
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
    op to differentiate in place of the record's (a convention's alternative, with its signature).
    The programs are :mod:`conformance.checks`' (``reference_check``, ``order_check``)."""
    rec = RECORDS[case.op]
    params = op_params(case)
    op = rec.fn if fn is None else fn

    def f(*xs):
        return op(T, *xs, **params)

    if check in ORDER_RUN:
        return _reference_order(T, case, check, a, f)
    dims = vmap_spec(case)[1] if check in ("vmap", "vmap_vjp") else None
    program, arrays, results = reference_check(T, check, f, rec.inputs, rec.diff_inputs, dims)
    return program, [a[n] for n in arrays], results


def order_names(case, check):
    """(the array names a second-order forward-mode check reads, in the order of its function's
    arguments after the inputs; the result names): :func:`conformance.checks.order_names` of the
    case's record."""
    return _order_names(RECORDS[case.op].diff_inputs, check)


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

    # the spellings make tensors of their own (an index, a mask, a target, T.eye): on the case's
    # device too (torch.device as a context sets the factories' default; on the GPU runs they were
    # made on the CPU, and 336 results of 21 records were "Expected all tensors to be on the same
    # device")
    with torch.device(device):
        out = _run_torch(torch, case, check, a, fn, t)
    return {k: torch.zeros(v.shape, dtype=v.dtype) if v._is_zerotensor() else v for k, v in out.items()}


def _run_torch(torch, case, check, a, fn, t):
    rec = RECORDS[case.op]
    params = op_params(case)

    def op(*ys):
        return fn(torch, *ys, **params)

    if check in ORDER_RUN:
        return _run_order(torch.func, case, check, a, t, op)
    dims = vmap_spec(case)[1] if check in ("vmap", "vmap_vjp") else None
    return torch_check(torch, check, op, rec.inputs, rec.diff_inputs, dims, a, t)


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

    def op(*ys):
        return fn(J, *ys, **params)

    complex_case = case.dtype.startswith("complex")
    if check in ORDER_RUN:
        seeds, results = order_names(case, check)
        names_, diff_, dims = order_args(case, check)

        def whole(xs, ss):
            return order_check(JaxFunc(jax, complex_case), check, names_, diff_, dims, op, xs, ss)

        xs = dict(zip(names, (arr(x) for x in _order_inputs(case, check, a))))
        return dict(zip(results, jax.jit(whole)(xs, [arr(a[n]) for n in seeds])))
    # JAX's cotangents and gradients mapped to PyTorch's convention (docs/complex.md); jvp is as is
    vjp = (lambda g_, *p: torch_convention_vjp(jax, g_, *p)) if complex_case else jax.vjp
    dims = vmap_spec(case)[1] if check in ("vmap", "vmap_vjp") else None
    return jax_check(jax, check, op, names, diff, dims, a, arr, vjp, jax.jit)


# ---- TensorFlow ----------------------------------------------------------------------------------


def run_tf(tf, case, check, a, fn):
    _refuse(fn, case, check, "tensorflow")
    rec = RECORDS[case.op]
    params = op_params(case)
    dtype = getattr(tf, case.dtype)
    part = getattr(tf, PART_DTYPE.get(case.dtype, case.dtype))

    def c(x):  # a tensor argument of a tf.function (tensorflow:function / :xla modes) is cast
        # (a complex case's real array, a cotangent of a real output: the part dtype)
        d = dtype
        if dtype != part and not (x.dtype.is_complex if tf.is_tensor(x) else np.iscomplexobj(x)):
            d = part
        return tf.cast(x, d) if tf.is_tensor(x) else tf.constant(x, dtype=d)

    def op(*ys):
        return fn(tf, *ys, **params)

    if check in ORDER_RUN:
        return _run_order(TfFunc(tf), case, check, a, c, op)
    dims = vmap_spec(case)[1] if check in ("vmap", "vmap_vjp") else None
    return tf_check(tf, check, op, rec.inputs, rec.diff_inputs, dims, a, c)


# ---- the error check -----------------------------------------------------------------------------


# record_rejects (the reference's rejection of an error case) lives in conformance.ops, beside the
# record's other answers to the harness (RecordCase.rejects); imported above, so its old name here holds.
