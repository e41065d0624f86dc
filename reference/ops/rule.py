"""The record type of the derivative table: one :class:`Rule` per primitive.

A rule says, once, everything the reference knows about a primitive (the shape of PyTorch's
``derivatives.yaml`` entries and of HIPS/autograd's ``defvjp`` calls):

* ``forward``: the array-level kernel, ``forward(*arrays, **params) -> array | tuple``
  (or, for view ops, ``view``: the output geometry ``(size, stride, offset[, dtype])`` computed
  from the input's; a dtype makes the view read the storage as that dtype, as view_as_real does);
* ``grads``: one VJP formula per tensor input, ``formula(ctx, grad) -> Tensor``, written with
  differentiable Tensor ops, so gradients of gradients need nothing more (``None``: the input
  is not differentiable, e.g. ``where``'s condition); or ``vjp(ctx, grad) -> tuple`` for
  variadic ops (``cat``, ``stack``);
* ``saves``: which tensors the formulas read, keyed by name (an input name or ``"result"``)
  with the inputs whose formula reads it; :meth:`Rule.saved_for` applies PyTorch's codegen
  guards to decide what is saved for a given set of inputs needing gradients. This decides
  which in-place writes later make backward fail, and which graphs fail on a second backward;
* ``reads``: inputs the formulas read although PyTorch does not save them (issue 38: tanh's
  exact derivative needs x where PyTorch saves only the result). The node holds a reference and
  the version the input had, not a saved tensor: no in-place error, no saved-tensor hook sees it,
  and a formula reads ``None`` for an input modified in place since (or written by the op itself,
  in place), where it must fall back to PyTorch's formula of the saved tensors;
* ``hidden``: inputs PyTorch's node does not have (the forward input a backward primitive reads
  to compute PyTorch's formula exactly): non-differentiable, left out of ``next_functions``;
* ``node``: PyTorch's ``grad_fn`` name, used in error messages;
* ``undefined_grads``: for multi-output ops, the VJP receives ``None`` for an output whose
  gradient never arrived (aten passes an undefined tensor, and e.g.
  ``_convolution_double_backward`` then leaves the gradients built from it undefined) instead
  of the zeros the other multi-output ops see;
* ``jvp``: the forward-mode rule (:mod:`reference.autograd.forward_ad`): per-input linear
  formulas, a function of all tangents, or one of the shorthands below;
* ``batch``: the vmap rule (:mod:`reference.autograd.batching`): ``batch(b, params)`` on the
  physical values, or one of the shorthands below; None: vmap's slice-loop-stack fallback.
* ``complex_grads``: how the VJP formulas treat complex tensors. ``"conjugate"`` (the default):
  the formulas are the plain (holomorphic, complex-linear) derivatives, ``g * f'(z)`` and the
  transpose of linear maps; PyTorch's convention (the gradient of a real loss is the conjugate
  Wirtinger derivative, ``grad * conj(f'(z))``, docs/complex.md) is obtained as
  ``conj(formula(conj(grad)))`` whenever a complex tensor is involved, which for any holomorphic
  op (and any real-differentiable op of real inputs) is exactly derivatives.yaml's formula.
  ``"explicit"``: the formulas are PyTorch's own complex formulas (non-holomorphic ops: abs,
  angle, sgn, conj, view_as_real...), used as they are; their ``jvp`` must then be explicit too;
* ``layout``: the strides of the result (:mod:`reference.autograd.layout`): ``"iterator"``
  (TensorIterator's rule: the layout of the inputs; the default of ``BATCH_ELEMENTWISE`` rules),
  ``"iterator_scalar"`` (the same, with the op's Python number a 0-d operand, as PyTorch wraps
  it), ``"preserve"`` (``empty_like``'s rule: ``clone``, ``to``) or ``"contiguous"`` (row-major, the
  default of every other rule, and of elementwise ops whose PyTorch kernel allocates row-major);
  ``operands``: the inputs' order as TensorIterator's operands when it differs (the first operand
  with an opinion decides the layout);
* ``complex_inputs``: the primitive accepts complex tensors (PyTorch defines it on them), declared
  here or by the family module's ``COMPLEX_INPUTS`` (:mod:`reference.ops.rules`); every other
  primitive refuses them with PyTorch's error (``reference.ops.rules.complex.refuse_complex``);
* ``error``: how rounding errors propagate through the primitive and what it adds
  (:class:`reference.errors.ErrorSpec`); None: derived (an elementwise op: its own VJP formulas
  on the input errors, one correctly rounded result). Views are exact without a declaration.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The shorthands for ``jvp`` and ``batch`` are the core's vocabulary (reference.autograd.table: the
# core implements them); the family modules import them from here with Rule.
from reference.autograd.table import (  # noqa: F401
    AUTO_ELEMENT_WISE,
    AUTO_LINEAR,
    BATCH_DIM,
    BATCH_ELEMENTWISE,
    BATCH_MATMUL,
    BATCH_REDUCE,
    BILINEAR,
    SAME_VIEW,
)

_ALL_DIFFERENTIABLE = itertools.repeat(False)  # stateless: zip() may share it


@dataclass(frozen=True)
class Export:
    """The public names of a primitive, declared in its family module's ``EXPORTS`` (``{rule name:
    Export(...)}``) and generated from there by :mod:`reference.ops.public` (issue #31: one place
    per op). Each destination lists names separated by spaces: a name is the function, or, ending in
    ``_``, its in-place twin; aliases are further names (``"asin arcsin asin_ arcsin_"``).

    * ``reference``, ``methods`` (the ``Tensor``'s), ``nn_functional``, ``special``: where they go;
    * ``call``: ``"float"`` (PyTorch's unary_float_op: an integer or bool input computes in the default
      float dtype) or ``"same"`` (the input's own dtype: relu, abs, sign, sgn);
    * ``inplace``: ``"checked"`` (an integer ``self`` refuses the float result before the kernel runs)
      or ``"kernel"`` (the dispatcher's check of the kernel's result, after it ran);
    * ``inplace_rule``: the in-place twin's primitive when it is not the op's own (``asinh_`` records
      ``asinh_inplace``, whose backward raises, as PyTorch's does).
    """

    reference: str = ""
    methods: str = ""
    nn_functional: str = ""
    special: str = ""
    call: str = "float"
    inplace: str = "checked"
    inplace_rule: str | None = None

    def __post_init__(self):
        if self.call not in ("float", "same"):
            raise ValueError(f"Export.call must be 'float' or 'same', got {self.call!r}")
        if self.inplace not in ("checked", "kernel"):
            raise ValueError(f"Export.inplace must be 'checked' or 'kernel', got {self.inplace!r}")

    def destinations(self):
        """``{destination: names}`` as :func:`reference.ops.functions.export` keys them."""
        spaces = {
            "reference": self.reference,
            "methods": self.methods,
            "nn.functional": self.nn_functional,
            "special": self.special,
        }
        return {dest: names.split() for dest, names in spaces.items() if names.split()}



#: MultiExport.call: how the generated function of a binary or ternary op treats its operands
MULTI_CALLS = {
    "arith": "PyTorch's arithmetic operators (add, sub, mul, maximum): result_type promotion, fast where "
    "nothing promotes; the in-place twin refuses a floating result in an integer self",
    "same": "result_type promotion, computed in the promoted dtype (fmax, nextafter)",
    "float": "result_type promotion, an integer or bool result computed in the default float dtype "
    "(atan2, copysign, xlogy)",
    "float_kernel": "as 'float', but a non-floating result dtype is refused first: the CPU kernel exists "
    "for floating dtypes only (hypot, logaddexp2); the in-place twin is 'float''s",
    "addc": "input, tensor1, tensor2 and the keyword value (addcmul, addcdiv): result_type promotion of "
    "the three; the in-place twin writes the rule into self unpromoted",
}


@dataclass(frozen=True)
class MultiExport:
    """The public names of a binary or ternary primitive, declared in its family module's
    ``MULTI_EXPORTS`` (``{rule name: MultiExport(...)}``) and generated by :mod:`reference.ops.public`
    as :class:`Export` does for single-input ones (the destinations and names are spelled alike).
    ``methods`` may also name the Python operators: ``__add__`` is the function, ``__radd__`` it with
    the operands swapped, ``__iadd__`` the in-place twin returning ``self``.

    * ``call``: one of :data:`MULTI_CALLS`;
    * ``alpha``: the function and its twin take ``*, alpha=1`` (a parameter of the rule when not 1);
    * ``scalar_other`` / ``scalar_self``: the rule of PyTorch's Scalar overload for ``op(tensor,
      number)`` / ``op(number, tensor)`` (the number a parameter, its own node); ``scalar_other`` is
      also the in-place twin's for a number ``other``;
    * ``check``: a function of the operands run before the function (PyTorch's refusals, such as
      sub's bool operands), and before the in-place twin unless ``check_inplace`` is False.
    """

    reference: str = ""
    methods: str = ""
    nn_functional: str = ""
    special: str = ""
    call: str = "same"
    alpha: bool = False
    scalar_other: str | None = None
    scalar_self: str | None = None
    check: Callable | None = None
    check_inplace: bool = True

    def __post_init__(self):
        if self.call not in MULTI_CALLS:
            raise ValueError(f"MultiExport.call must be one of {sorted(MULTI_CALLS)}, got {self.call!r}")
        if self.alpha and self.call != "arith":
            raise ValueError(f"MultiExport.alpha is for call='arith', got call={self.call!r}")
        if (self.scalar_other or self.scalar_self) and self.call in ("arith", "addc"):
            raise ValueError(f"MultiExport.scalar_other/scalar_self are not for call={self.call!r}")

    destinations = Export.destinations


@dataclass
class Rule:
    name: str
    node: str
    inputs: tuple
    forward: Callable | None = None
    grads: tuple | None = None
    vjp: Callable | None = None
    saves: dict = field(default_factory=dict)
    reads: tuple = ()  # inputs read unsaved (see the module docstring)
    hidden: tuple = ()  # inputs PyTorch's node does not have (see the module docstring)
    view: Callable | None = None
    outputs: int = 1
    has_aux: bool = False
    undefined_grads: bool = False
    jvp: Any = None
    batch: Any = None
    error: Any = None  # reference.errors.ErrorSpec; None: derived (elementwise ops)
    complex_grads: str = "conjugate"  # or "explicit" (see the module docstring)
    layout: str | None = None  # "iterator(_scalar)", "preserve" or "contiguous"; None: from ``batch``
    operands: tuple | None = None  # TensorIterator's operand order (input indices) when not the inputs'
    # accepts complex tensors (or the family module's COMPLEX_INPUTS says so); the family's torch
    # comparison tests check each such rule on complex input
    complex_inputs: bool = False

    def __post_init__(self):
        if self.complex_grads not in ("conjugate", "explicit"):
            raise ValueError(f"rule {self.name!r}: complex_grads must be 'conjugate' or 'explicit'")
        if self.grads is not None and len(self.grads) != len(self.inputs):
            raise ValueError(f"rule {self.name!r}: {len(self.grads)} grad formulas for inputs {self.inputs}")
        for name, users in self.saves.items():
            if not _is_result(name) and name not in self.inputs:
                raise ValueError(f"rule {self.name!r} saves {name!r}, which is not an input or 'result'")
            if any(not 0 <= u < len(self.inputs) for u in users):
                raise ValueError(f"rule {self.name!r}: saved {name!r} names a formula index out of range")
        for name in self.reads:
            if name not in self.inputs or name in self.saves:
                raise ValueError(f"rule {self.name!r} reads {name!r}: not an input, or saved as well")
        self._saved_cache = {}
        if self.layout is None:
            self.layout = "iterator" if self.batch == BATCH_ELEMENTWISE else "contiguous"
        # nondiff(i) for every input, read by dispatch on every op; an endless run of False for a
        # ``vjp`` rule (or one without gradients), whose inputs are variadic.
        self.nondiff_mask = (
            _ALL_DIFFERENTIABLE if self.grads is None else tuple(g is None for g in self.grads)
        )
        # whether the rule has a backward at all (also read by dispatch on every op)
        self.differentiable = self.grads is not None or self.vjp is not None

    def nondiff(self, i):
        return self.grads is not None and self.grads[i] is None

    def saved_for(self, needs):
        """Names of the tensors to save when the inputs needing a gradient are ``needs``.

        PyTorch's codegen guards a save only when it can: with two or more differentiable inputs,
        a tensor read by exactly one formula is saved iff that input needs a gradient; otherwise
        (one differentiable input, or a tensor read by several formulas) it is always saved.
        """
        out = self._saved_cache.get(needs)
        if out is None:
            n_diff = len(needs) if self.grads is None else sum(f is not None for f in self.grads)
            out = tuple(
                name
                for name, users in sorted(self.saves.items(), key=_unpack_order)
                if n_diff <= 1 or len(users) != 1 or needs[users[0]]
            )
            self._saved_cache[needs] = out
        return out

    def saved_inputs(self, needs):
        """``(name, input index)`` of the saved tensors that are inputs (not results), for ``needs``."""
        key = ("inputs", needs)  # in the same cache as saved_for, so that clearing one clears both
        out = self._saved_cache.get(key)
        if out is None:
            out = self._saved_cache[key] = tuple(
                (name, self.inputs.index(name)) for name in self.saved_for(needs) if not _is_result(name)
            )
        return out


def _unpack_order(item):
    """PyTorch's generated nodes save and unpack their saved inputs sorted by argument name, then
    their saved outputs (torchgen's gen_variable_type/gen_autograd_functions sort
    ``all_saved_inputs`` by name); it decides which stale tensor an error names and the order in
    which saved-tensor hooks see them (``maximum`` packs ``other`` before ``self``). Rules whose
    input names are not PyTorch's (``mv``'s ``vec`` is ``other`` here) keep the reference's order."""
    name, users = item
    return (_is_result(name), name)


def _is_result(name):
    """``result`` is the first output; ``result1``, ``result2``, ... the further outputs of a
    multi-output op (eigh's eigenvectors, svd's singular values and vectors) that its formulas read."""
    return name == "result" or (name.startswith("result") and name[6:].isdigit())
