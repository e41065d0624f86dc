"""The tables the autograd core owns and the layers above it fill (docs/architecture.md).

The core (tensor, graph, engine, dispatch, forward mode, batching) imports nothing from
``reference.ops``, ``reference.nn`` or ``reference.func`` (tests/test_import_graph.py). What it
needs from them is registered here when they are imported, as JAX's ``lax`` registers its rules
into ``ad`` and ``batching``:

* :data:`RULES`: the derivative table, one :class:`reference.ops.rule.Rule` per primitive, filled
  by :func:`reference.ops.rules.registry.rule` from the family modules;
* :data:`ops`: the few functions of the layers above that the core's own code calls (zeros,
  sum-to-shape, dtype casts, clones, views, the vmap of a custom Function), each registered once
  by the module that defines it (:func:`register`). :data:`NEEDED` names them all, so what the core
  uses from above is readable in one place.

This module imports nothing: any module may import it.
"""

from __future__ import annotations

RULES: dict = {}

# The shorthands a rule may give for ``jvp`` (forward_ad implements them; PyTorch's derivatives.yaml
# spells the first two the same way) and for ``batch`` (batching implements them).
AUTO_ELEMENT_WISE = "auto_element_wise"  # diagonal Jacobian: the VJP formulas applied to the tangent
AUTO_LINEAR = "auto_linear"  # a linear op: the op itself applied to the tangents
BILINEAR = "bilinear"  # f(t_a, b) + f(a, t_b)
SAME_VIEW = "same_view"  # a view op: the same view of the input's tangent
BATCH_ELEMENTWISE = "batch_elementwise"  # broadcasting op: batch dim first, unit dims to align ranks
BATCH_REDUCE = "batch_reduce"  # reduction over ``dim``: the dims shift by one
BATCH_DIM = "batch_dim"  # an op along ``dim`` (softmax, cat, stack): the dim shifts by one
BATCH_MATMUL = "batch_matmul"  # dot/mv/mm/bmm as one broadcasting matmul

#: What the core calls through :data:`ops`, and who registers it.
NEEDED = {
    # reference.ops.api: Tensor-level functions with PyTorch's signatures
    "alias": "reference.ops.api",
    "as_strided": "reference.ops.api",
    "check_broadcast": "reference.ops.api",
    "clone": "reference.ops.api",
    "copy_": "reference.ops.api",
    "expand": "reference.ops.api",
    "ones_like": "reference.ops.api",
    "permute": "reference.ops.api",
    "put": "reference.ops.api",
    "reshape": "reference.ops.api",
    "scatter_add": "reference.ops.api",
    "select": "reference.ops.api",
    "squeeze": "reference.ops.api",
    "stack": "reference.ops.api",
    "sum": "reference.ops.api",
    "sum_to": "reference.ops.api",
    "take": "reference.ops.api",
    "to": "reference.ops.api",
    "unsqueeze": "reference.ops.api",
    "view": "reference.ops.api",
    "zero_": "reference.ops.api",
    "zeros": "reference.ops.api",
    "zeros_like": "reference.ops.api",
    # reference.ops: a view's geometry, complex conjugation and the complex refusal
    "view_geometry": "reference.ops.kernels",
    "conj_physical": "reference.ops.functions.complex",
    "refuse_complex": "reference.ops.rules.complex",
    # reference.errors: the active error tracker (None when none is), whose bounds follow a copy
    "error_tracker": "reference.errors",
    # reference.func: what a custom Function's vmap staticmethod needs
    "vmap": "reference.func.vmap",
    "dims_per_leaf": "reference.func.vmap",
    "flatten": "reference.func.pytree",
    "unflatten": "reference.func.pytree",
    "transforms_running": "reference.func.transforms",
}


class _Ops:
    """The registered functions by name (``ops.clone(t)``); an unregistered one raises."""

    def __getattr__(self, name):  # called only for names not registered
        if name in NEEDED:
            raise RuntimeError(
                f"reference.autograd.table.ops.{name} is not registered: {NEEDED[name]} registers it "
                "when imported (import reference first)"
            )
        raise AttributeError(
            f"reference.autograd.table.ops has no {name!r}: the core needs only {sorted(NEEDED)}"
        )


ops = _Ops()


def register(**functions):
    """Register functions the core needs (each name of :data:`NEEDED`, once)."""
    for name, fn in functions.items():
        if name not in NEEDED:
            raise ValueError(f"register: {name!r} is not one of the names the core needs ({sorted(NEEDED)})")
        if name in vars(ops):
            raise ValueError(f"register: {name!r} is registered twice (its home is {NEEDED[name]})")
        setattr(ops, name, fn)


def missing():
    """The names of :data:`NEEDED` not registered yet (empty once ``reference`` is imported)."""
    return sorted(set(NEEDED) - set(vars(ops)))
