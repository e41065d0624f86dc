"""Forward-mode AD: dual levels and the JVP step the dispatcher takes for every primitive.

A *level* is one active ``jvp`` (``reference.func.jvp``/``jacfwd`` open one each). A tensor's
tangent at a level is kept in ``tensor._tangents[level_id]``; a tensor without an entry has a zero
tangent there. Levels nest like functorch's dynamic layer stack (:mod:`reference.autograd.levels`
keeps it): when a primitive runs, the dispatcher asks ``levels.owner`` for the innermost visible
level at which some input has a tangent; that level computes the primal and the tangent with itself
(and every level inside it) hidden (``levels.lowered``), so the ops the JVP rule runs are seen, and differentiated, by the outer levels
and by reverse mode. That is what makes ``jacfwd(jacfwd(f))``, ``jacfwd(jacrev(f))`` and
``grad(jvp)`` compose.

The tangent of an op comes from its table rule's ``jvp`` field (:mod:`reference.ops.rules`):

* ``AUTO_ELEMENT_WISE``, ``AUTO_LINEAR``, ``BILINEAR``, ``SAME_VIEW``: derivatives.yaml's
  shorthands (see :mod:`reference.ops.rule`);
* a tuple with one linear formula per input, ``formula(c, t) -> Tensor`` (``c``: primal inputs
  by name, ``result``, the op's parameters; ``t``: that input's tangent), summed over the inputs
  that have a tangent (derivatives.yaml's ``result: self_t * other_p + other_t * self_p``);
  ``None`` for a non-differentiable input;
* a callable ``jvp(c, ts) -> Tensor | tuple``, given every input's tangent (None: zero), for
  variadic and multi-output ops;

A primitive without a ``jvp`` raises :class:`MissingRuleError` naming it: forward mode is never
derived from two VJPs, so it is an independent check on the reverse mode.
"""

from __future__ import annotations

from reference.autograd import levels
from reference.autograd.dispatch import apply, apply_view, replay_view
from reference.autograd.dual import (  # torch.autograd.forward_ad's public API (T.autograd.forward_ad.make_dual)
    UnpackedDualTensor,  # noqa: F401
    dual_level,  # noqa: F401
    enter_dual_level,  # noqa: F401
    exit_dual_level,  # noqa: F401
    in_layout_of,
    make_dual,  # noqa: F401
    unpack_dual,  # noqa: F401
)
from reference.autograd.levels import lowered, set_tangent, tangent
from reference.autograd.table import AUTO_ELEMENT_WISE, AUTO_LINEAR, BILINEAR, ops, register
from reference.autograd.tensor import _geometry, storage_like
from reference.backend import is_inexact


class MissingRuleError(NotImplementedError):
    """A transform met a primitive whose table entry lacks the rule it needs."""

    def __init__(self, primitive, field, transform):
        self.primitive, self.field = primitive, field
        super().__init__(
            f"primitive {primitive!r} has no {field!r} rule in reference.ops.rules, "
            f"so {transform} cannot run through it"
        )


class JvpContext:
    """What a JVP formula sees: primal inputs by name, ``result``, parameters, input shapes."""

    def __init__(self, rule, inputs, result, params):
        if rule.inputs == ("tensors",):  # variadic: cat, stack
            self.tensors = inputs
        else:
            self.__dict__.update(zip(rule.inputs, inputs))
        self.__dict__.update(params)
        self.rule, self.params, self.result = rule, params, result
        self.shapes = tuple(None if t is None else t.shape for t in inputs)


def output_tangents(rule, inputs, tangents, result, params):
    """The tangent(s) of ``rule``'s output(s) (None: zero), from the rule's ``jvp`` field."""
    spec = rule.jvp
    if spec is None:
        raise MissingRuleError(rule.name, "jvp", "forward-mode AD (jvp, jacfwd)")
    if spec == AUTO_LINEAR or spec == BILINEAR:
        return _linear(rule, inputs, tangents, params, spec == BILINEAR)
    c = JvpContext(rule, inputs, result, params)
    if spec == AUTO_ELEMENT_WISE:
        spec = rule.grads
    elif callable(spec):
        return spec(c, tangents)
    out = None
    outs = result if isinstance(result, tuple) else (result,)
    for formula, t in zip(spec, tangents):
        if t is None or formula is None:
            continue
        term = formula(c, t)
        if term.shape != outs[0].shape:
            term = ops.expand(term, outs[0].shape)
        out = term if out is None else out + term
    return out


def _linear(rule, inputs, tangents, params, bilinear):
    """AUTO_LINEAR: the op on the tangents (zero where an input has none). BILINEAR: the op with
    one input replaced by its tangent, summed over the inputs that have one."""
    if not bilinear:
        args = [
            t if t is not None else (None if x is None else ops.zeros_like(x))
            for x, t in zip(inputs, tangents)
        ]
        return apply(rule, tuple(args), params)
    out = None
    for i, t in enumerate(tangents):
        if t is not None:
            term = apply(rule, inputs[:i] + (t,) + inputs[i + 1 :], params)
            out = term if out is None else out + term
    return out


def forward_through(fn, inputs, tangents):
    """The tangent(s) of ``fn(*inputs)`` by forward mode through the primitives ``fn`` runs, in a
    temporary level just inside the visible ones (for composite formulas such as batch norm's
    backward, whose forward is itself written with Tensor ops)."""
    saved_stack, saved_visible = list(levels.state.stack), levels.state.visible
    level = next(levels._ids)
    del levels.state.stack[saved_visible:]
    levels.state.stack.append(level)
    levels.state.visible = len(levels.state.stack)
    try:
        duals = []
        for x, t in zip(inputs, tangents):
            if x is not None and t is not None:
                x = ops.alias(x)
                set_tangent(x, level, t)
            duals.append(x)
        outs = fn(*duals)
        single = not isinstance(outs, (tuple, list))
        got = [None if o is None else tangent(o, level) for o in ((outs,) if single else outs)]
        return got[0] if single else tuple(got)
    finally:
        levels.state.stack[:] = saved_stack
        levels.state.visible = saved_visible


def _fresh(tan, out, input_tangents):
    """A tangent the output owns: its dtype and layout (``in_layout_of``: svd's Vh is row-major, the
    tangent its rule computes was not, and reshape(-1) of the dual raised), not another tensor's
    tangent (so an in-place write on the output can update its tangent in place)."""
    if tan.dtype != out.dtype:
        tan = ops.to(tan, out.dtype)
    elif (tan._base is not None or any(tan is t for t in input_tangents)) and tan.stride() == out.stride():
        return ops.clone(tan)
    return in_layout_of(out, tan) if tuple(tan.shape) == tuple(out.shape) else tan


def jvp_apply(index, rule, inputs, params, run):
    """Run ``run()`` (the primitive, lower down) and attach the level's tangents to its outputs."""
    level = levels.state.stack[index]
    with lowered(index):
        result = run()
        outs = result if isinstance(result, tuple) else (result,)
        if not any(is_inexact(o._data.dtype) for o in outs):
            return result
        tans = [tangent(t, level) for t in inputs]
        got = output_tangents(rule, inputs, tans, result, params)
        got = got if isinstance(got, (tuple, list)) else (got,)
        for o, tan in zip(outs, got):
            if tan is not None and is_inexact(o._data.dtype):
                set_tangent(o, level, _fresh(tan, o, tans))
    return result


def jvp_view(index, rule, src, params, run):
    """A view op: the output's tangent is the same view of the input's tangent."""
    level = levels.state.stack[index]
    with lowered(index):
        result = run()
        if rule.jvp is None:
            raise MissingRuleError(rule.name, "jvp", "forward-mode AD (jvp, jacfwd)")
        tan = apply_view(rule, tangent(src, level), params)
        outs, tans = (result, tan) if isinstance(result, tuple) else ((result,), (tan,))
        fw_base = getattr(src, "_fw_base", None)  # views of a make_dual result (reference.autograd.dual)
        for o, t in zip(outs, tans):
            set_tangent(o, level, t)
            if fw_base is not None:
                o._fw_base = fw_base
    return result


def jvp_inplace(index, rule, self, others, params, run):
    """``self.op_(*others)`` under a level: the new tangent is the op's JVP at the old value of
    ``self``; it is written into ``self``'s tangent in place (into its base's tangent for a view,
    made zero first if the base had none), so every view of the storage sees it."""
    level = levels.state.stack[index]
    inputs = (self,) + tuple(others)
    with lowered(index):
        tans = [tangent(t, level) for t in inputs]
        old = ops.clone(self) if any(t is not None for t in tans) else None
        run()
        if old is None:
            return self
        new = output_tangents(rule, (old,) + tuple(others), tans, self, params)
        if new is None:
            new = ops.zeros_like(self)
        base, fw_base = self._base, getattr(self, "_fw_base", None)
        if fw_base is not None:  # a make_dual result is the forward-grad base of its views (PyTorch)
            base = None if fw_base is self else fw_base
        if base is not None:
            bt = tangent(base, level)
            if bt is None:
                bt = ops.zeros_like(base)
                set_tangent(base, level, bt)
            # (a view of a make_dual result: its steps start from the dual, which has the geometry
            # of the primal's storage, so they remake it on the dual's tangent laid out the same way)
            replay = self._view.replay if self._view is not None else None
            if replay is not None:  # a conjugate / negative / view_as_real view: remade on the tangent
                if (bt.shape, bt.stride(), bt._offset) != (base.shape, base.stride(), base._offset):
                    bt = storage_like(*_geometry(base), bt)  # (the steps name positions in base's storage)
                    set_tangent(base, level, bt)
                target = replay_view(bt, replay)
            else:
                target = ops.as_strided(
                    bt, self.shape, self.stride(), self._offset - base._offset + bt._offset
                )
            ops.copy_(target, new)
            set_tangent(self, level, target)
        elif tans[0] is not None and tans[0]._base is None:
            ops.copy_(tans[0], new)
        else:
            set_tangent(self, level, _fresh(new, self, tans))
    return self


# The dispatcher sits below forward mode (the JVP rules run primitives through it, one level down),
# so it reaches a jvp level's steps through the core's table (reference.autograd.table).
register(jvp_apply=jvp_apply, jvp_view=jvp_view, jvp_inplace=jvp_inplace)
