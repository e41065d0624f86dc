"""The public functions generated from the rule family modules' ``EXPORTS`` and ``MULTI_EXPORTS``
(issue #31: one place per op).

A family module of :mod:`reference.ops.rules` declares, beside its rules, which of them are public and
under which names: ``EXPORTS = {"tanh": Export(reference="tanh", methods="tanh tanh_", ...)}``
(:class:`reference.ops.rule.Export`) for single-input ops, ``MULTI_EXPORTS = {"add":
MultiExport(reference="add", methods="add add_ __add__ __radd__ __iadd__", call="arith", alpha=True)}``
(:class:`reference.ops.rule.MultiExport`) for binary and ternary ones. :func:`generate` makes, once
the table is loaded, each op's function and in-place twin from its rule:

* a single-input op's function ``op(input)``: the rule on ``input`` (``call="float"``: an integer or
  bool input computes in the default float dtype, PyTorch's ``unary_float_op``; ``"same"``: in its
  own dtype); its in-place twin ``op_(self)``: the rule (or ``inplace_rule``) written into ``self``;
* a binary op's ``op(input, other)`` (``*, alpha=1`` with ``alpha``) and ``op_(self, other)``, or a
  ternary one's ``op(input, tensor1, tensor2, *, value=1)``: the rule on the operands promoted by
  one of the calling conventions below (:data:`reference.ops.rule.MULTI_CALLS`: ``binary``,
  ``promoted``, ``addc``), with the Scalar overloads' rules for a number operand where declared;
  and the Python operators its ``methods`` name (``__radd__``: the operands swapped; ``__iadd__``:
  the twin, returning ``self``).

It files them by destination (:data:`DESTINATIONS`, merged by :func:`reference.ops.functions.export`
with the hand-written families' names, so ``reference``, ``Tensor``, ``reference.nn.functional`` and
``reference.special`` install them like any other), and by family (:data:`FUNCTIONS`): the family's
function module reads them as its own attributes (``A.tanh``, ``A.add`` in :mod:`reference.ops.api`
for ``elementwise``, ``P.sin``, ``P.atan2`` in :mod:`reference.ops.functions.pointwise` for
``pointwise``), as the derivative formulas call them. An op whose public function does more than
call its rule through one of these conventions (``neg``'s bool check, ``abs_``'s complex refusal,
``div``'s rounding_mode, ``fmod``'s integer division by zero) stays hand-written in its function
module, which says why; the conventions below are what those call too.
"""

from __future__ import annotations

from reference.autograd.dispatch import _NO_PARAMS, apply, apply_inplace
from reference.autograd.table import RULES
from reference.autograd.tensor import Tensor, default_dtype
from reference.backend import is_floating, is_inexact
from reference.ops.promotion import _operand, _wrap, check_broadcast, result_type
from reference.scalar_types import scalar_type_name

#: family -> {name: function}: the generated functions of each rule family module
FUNCTIONS: dict[str, dict] = {}
#: destination ("reference", "methods", "nn.functional", "special") -> {name: function}
DESTINATIONS: dict[str, dict] = {}


def unary_float(rule, x, params=None):
    """``rule`` on ``x``; an integer or bool ``x`` computes in the default float dtype."""
    return apply(rule, (x,), params or {}, cast=None if is_inexact(x.dtype) else default_dtype.value)


def inplace_result_check(self, dt):
    """PyTorch's refusal to write a floating result ``dt`` into an integer ``self``."""
    if dt != self.dtype and (is_floating(dt) and not is_floating(self.dtype)):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {scalar_type_name(self.dtype)}"
        )


def unary_inplace(rule, self, params=None):
    """``rule`` written into ``self``, refused first for an integer ``self`` (its result is float)."""
    if not is_inexact(self.dtype):
        inplace_result_check(self, default_dtype.value)
    return apply_inplace(rule, self, (), params or {})


# ---- binary and ternary ops: the calling conventions the generated functions share ---------------
# (the hand-written ones, div, pow, fmod, lerp, ..., call them too)


def binary(rule, a, b, params=None):
    """``rule`` on ``a`` and ``b`` promoted by ``result_type`` (a number is a wrapped number): the
    arithmetic operators' path (``MultiExport(call="arith")``: add, mul, maximum; div, pow)."""
    if params is None:
        params = _NO_PARAMS
    check = None
    if type(a) is Tensor:  # (each array read once: this runs on every op)
        da = a._data
        if type(b) is Tensor:
            db = b._data
            if da.shape != db.shape:
                check = lambda: check_broadcast(a, b)  # noqa: E731 - runs after the node is made
            if da.dtype == db.dtype:
                return apply(rule, (a, b), params, None, check)
        elif type(b) in (float, int) and is_floating(da.dtype):  # the common x * 0.5
            return apply(rule, (a, _wrap(b, da.dtype)), params)
    dt = result_type(a, b)
    return apply(rule, (_operand(a, dt), _operand(b, dt)), params, cast=dt, check=check)


def binary_inplace(rule, self, other, params=None):
    """``rule`` on ``self`` and ``other`` written into ``self`` (``call="arith"``'s twin)."""
    dt = result_type(self, other)
    inplace_result_check(self, dt)
    other = _operand(other, dt)
    cast = None if self.dtype == other.dtype == dt else dt
    return apply_inplace(rule, self, (other,), params or {}, cast=cast)


def float_dtype(dt):
    """``dt``, or the default float dtype for an integer or bool ``dt``."""
    return dt if is_inexact(dt) else default_dtype.value


def broadcast_check(a, b):
    """The deferred shape check of two tensors of different shapes (None otherwise)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.shape != b.shape:
        return lambda: check_broadcast(a, b)
    return None


def promoted(rule, a, b, params=None, floating=False):
    """PyTorch's binary TensorIterator (``call="same"``, ``"float"``: ``floating``): promote, wrap
    numbers, check broadcasting; at least one operand is a tensor."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{rule.name}(): expected at least one Tensor argument")
    dt = result_type(a, b)
    if floating:
        dt = float_dtype(dt)
    x, y = _operand(a, dt), _operand(b, dt)
    cast = None if x.dtype == y.dtype == dt else dt
    return apply(rule, (x, y), params or {}, cast=cast, check=broadcast_check(x, y))


def promoted_inplace(rule, self, other, params=None, floating=False, scalar_rule=None):
    """``promoted``'s in-place twin; a number ``other`` runs ``scalar_rule`` when given."""
    dt = result_type(self, other)
    if floating:
        dt = float_dtype(dt)
    inplace_result_check(self, dt)
    if scalar_rule is not None and not isinstance(other, Tensor):  # the op's Scalar overload
        return apply_inplace(scalar_rule, self, (), {"other": other})
    other = _operand(other, dt)
    cast = None if self.dtype == other.dtype == dt else dt
    return apply_inplace(rule, self, (other,), params or {}, cast=cast)


def scalar_other(rule, input, other, floating=False):
    """``op(tensor, number)``: PyTorch's Scalar overload (its own node), the number a parameter."""
    dt = result_type(input, other)
    if floating:
        dt = float_dtype(dt)
    return apply(rule, (input,), {"other": other}, cast=None if dt == input.dtype else dt)


def scalar_self(rule, input, other, floating=False):
    """``op(number, tensor)``: PyTorch's Scalar_Tensor overload, the number the parameter ``self``."""
    dt = result_type(input, other)
    if floating:
        dt = float_dtype(dt)
    return apply(rule, (other,), {"self": input}, cast=None if dt == other.dtype else dt)


def float_kernel_only(name, *operands):
    """Refuse a non-floating result dtype: ops whose CPU kernel exists for floating dtypes only."""
    dt = result_type(*operands)
    if not is_floating(dt):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{scalar_type_name(dt)}'")


def check_broadcast3(a, b, c):
    """The shape check of three tensors, pairwise."""
    check_broadcast(a, b)
    check_broadcast(a, c)
    check_broadcast(b, c)


def addc(rule, input, tensor1, tensor2, value, check=None):
    """addcmul/addcdiv (``call="addc"``): ``check`` runs once the result dtype is known."""
    dt = result_type(input, tensor1, tensor2)
    if check is not None:
        check(input, tensor1, tensor2)
    same = input.dtype == tensor1.dtype == tensor2.dtype == dt
    return apply(
        rule,
        (input, tensor1, tensor2),
        {"value": value},
        cast=None if same else dt,
        check=lambda: check_broadcast3(input, tensor1, tensor2),
    )


def _function(rule, call):
    if call == "float":

        def op(input):
            return unary_float(rule, input)

    else:

        def op(input):
            return apply(rule, (input,))

    return op


def _inplace(rule, kind):
    if kind == "checked":

        def op_(self):
            return unary_inplace(rule, self)

    else:

        def op_(self):
            return apply_inplace(rule, self, ())

    return op_


def _multi_function(name, export, rules):
    """The function of a binary or ternary op (:class:`reference.ops.rule.MultiExport`)."""
    rule, call, check = rules[name], export.call, export.check
    if call == "addc":

        def op(input, tensor1, tensor2, *, value=1):
            return addc(rule, input, tensor1, tensor2, value, check)

    elif call == "arith" and export.alpha:

        def op(input, other, *, alpha=1):
            if check is not None:
                check(input, other)
            return binary(rule, input, other, {"alpha": alpha} if alpha != 1 else None)

    elif call == "arith":

        def op(input, other):
            if check is not None:
                check(input, other)
            return binary(rule, input, other)

    else:
        floating = call != "same"
        other_rule = rules[export.scalar_other] if export.scalar_other else None
        self_rule = rules[export.scalar_self] if export.scalar_self else None

        def op(input, other):
            if check is not None:
                check(input, other)
            if call == "float_kernel":
                float_kernel_only(name, input, other)
            if other_rule is not None and isinstance(input, Tensor) and not isinstance(other, Tensor):
                return scalar_other(other_rule, input, other, floating)
            if self_rule is not None and not isinstance(input, Tensor) and isinstance(other, Tensor):
                return scalar_self(self_rule, input, other, floating)
            return promoted(rule, input, other, floating=floating)

    return op


def _multi_inplace(name, export, rules):
    """The in-place twin of a binary or ternary op."""
    rule, call = rules[name], export.call
    check = export.check if export.check_inplace else None
    if call == "addc":

        def op_(self, tensor1, tensor2, *, value=1):
            if check is not None:
                check(self, tensor1, tensor2)
            return apply_inplace(rule, self, (tensor1, tensor2), {"value": value})

    elif call == "arith" and export.alpha:

        def op_(self, other, *, alpha=1):
            if check is not None:
                check(self, other)
            return binary_inplace(rule, self, other, {"alpha": alpha} if alpha != 1 else None)

    elif call == "arith":

        def op_(self, other):
            if check is not None:
                check(self, other)
            return binary_inplace(rule, self, other)

    else:
        floating = call != "same"
        other_rule = rules[export.scalar_other] if export.scalar_other else None

        def op_(self, other):
            if check is not None:
                check(self, other)
            return promoted_inplace(rule, self, other, floating=floating, scalar_rule=other_rule)

    return op_


def reflected(fn):
    """``fn`` with its two operands swapped (``__radd__``)."""
    def op(self, other):
        return fn(other, self)

    return op


def inplace_operator(twin):
    """``twin`` returning ``self`` (``__iadd__``)."""
    def op(self, other):
        twin(self, other)
        return self

    return op


def _operator(name, names, function, twin):
    """A Python operator among a MultiExport's methods: ``__add__`` the function, ``__radd__`` the
    function on swapped operands, ``__iadd__`` the twin returning ``self`` (the latter two when
    ``__add__`` is declared beside them)."""
    stem = name[2:-2]
    if stem[0] == "r" and f"__{stem[1:]}__" in names:
        return _named(reflected(function), name)
    if stem[0] == "i" and f"__{stem[1:]}__" in names:
        return _named(inplace_operator(twin), name)
    return function


def _is_operator(name):
    return name.startswith("__") and name.endswith("__")


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}``, generated from its rule's export declaration (reference.ops.public)."
    return fn


def build(exports, multi_exports=None, rules=RULES):
    """``(functions, destinations)`` for ``exports`` (``{family: {rule name: Export}}``, the family
    modules' ``EXPORTS``) and ``multi_exports`` (their ``MULTI_EXPORTS``, ``{family: {rule name:
    MultiExport}}``): :data:`FUNCTIONS` and :data:`DESTINATIONS` as :func:`generate` files them.
    A name exported twice to one destination is an error naming it."""
    functions: dict[str, dict] = {}
    destinations: dict[str, dict] = {}
    made = []
    for family, declared in exports.items():
        for rule_name, export in declared.items():
            function = _named(_function(rules[rule_name], export.call), rule_name)
            twin = _named(_inplace(rules[export.inplace_rule or rule_name], export.inplace), rule_name + "_")
            made.append((family, rule_name, export, function, twin))
    for family, declared in (multi_exports or {}).items():
        for rule_name, export in declared.items():
            function = _named(_multi_function(rule_name, export, rules), rule_name)
            twin = _named(_multi_inplace(rule_name, export, rules), rule_name + "_")
            made.append((family, rule_name, export, function, twin))
    for family, rule_name, export, function, twin in made:
        home = functions.setdefault(family, {})
        for dest, names in export.destinations().items():
            table = destinations.setdefault(dest, {})
            for name in names:
                if name in table:
                    raise ValueError(
                        f"{dest} name {name!r} is exported twice (again by rule {rule_name!r} of {family!r})"
                    )
                if _is_operator(name):
                    table[name] = _operator(name, names, function, twin)
                    continue
                fn = table[name] = twin if name.endswith("_") else function
                if dest != "special" or name == rule_name:  # (not torch.special's own spellings: expit)
                    home.setdefault(name, fn)
    return functions, destinations


def generate(exports, multi_exports=None):
    """Make and file the functions of ``exports`` and ``multi_exports`` (:func:`build`). Runs once,
    when :mod:`reference.ops` has loaded the table."""
    if FUNCTIONS:
        raise RuntimeError("reference.ops.public.generate runs once (the table is loaded once)")
    functions, destinations = build(exports, multi_exports)
    FUNCTIONS.update(functions)
    DESTINATIONS.update(destinations)


def family_function(family, name):
    """The generated function ``name`` of ``family`` (what its function module's ``__getattr__`` reads)."""
    try:
        return FUNCTIONS[family][name]
    except KeyError:
        raise AttributeError(name) from None
