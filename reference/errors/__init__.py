"""The error model: how rounding errors propagate through each primitive, composed in float64.

Every primitive of the derivative table declares, next to its VJP/JVP/batch rule, how it
propagates and adds rounding error (:class:`ErrorSpec`, the ``error`` field of
:class:`reference.ops.rule.Rule`). The first-order model for an output ``y`` of inputs ``x_i``
that carry absolute errors ``e_i`` is

    |err(y)| <= sum_i |dy/dx_i| . e_i  +  own(y)

``own`` is the op's own rounding: ``2·c·u·|y|`` for an op documented accurate to ``c`` ulps
(an ulp of ``y`` is at most ``2u|y|``; IEEE 754 ``+ - * / sqrt`` are correctly rounded:
``c = 0.5``), ``K·u_acc·M + u·|y|`` for a sum of ``K`` products (``M`` the same op on absolute
values; ``u_acc`` the accumulator's unit roundoff), an absolute term where an implementation's
error is not relative, and an underflow term ``eta`` (gradual underflow: half the smallest
subnormal; flush-to-zero: the smallest normal) for every rounded result.

The kinds of declaration:

* :data:`DERIVED` (the default of every rule): an elementwise op (batch rule
  ``BATCH_ELEMENTWISE``); ``|dy/dx_i|·e_i`` is its own VJP formula applied to ``e_i`` (its
  Jacobian is diagonal), and it rounds once, correctly (``c = 0.5``). An elementwise op whose
  kernel is not one correctly rounded operation declares :func:`elementwise` with its ``c``.
* :func:`exact_elementwise`: an elementwise function judged against its exact value (the
  reference computes the mathematics, issue 38) that frameworks evaluate through a formula of
  several rounded steps: its own error is that of a *mixed* (forward-backward) stable kernel,
  ``f(x (1 + d)) (1 + e)`` with ``|d|, |e| <= 2·c·u``, so the bound adds to ``2·c·u·|y|`` the
  propagation of that argument perturbation through the exact function, ``|f'(x)|·2·c·u·|x|``
  (the condition-number term; it is what keeps the bound finite-width where ``f`` has a zero and
  ``2·c·u·|y|`` alone vanishes). ``|f'|`` is the exact kernel's secant slope (no derivative
  primitive needed: the third derivative of an activation is mpmath's).
* :func:`products`: a multilinear op whose outputs are sums of products with non-negative
  coefficients (sum, mean, matmul, convolution and its backward, scatter-add, pooling):
  ``|J_i|·e_i`` is the op with input ``i`` replaced by ``e_i`` and the others by their absolute
  values (minus the same with ``e_i`` replaced by 0), ``M`` the op on absolute values and ``K``
  the op on ones (the number of terms) unless the declaration gives it.
* :data:`GATHER`: moves or selects values without arithmetic (cat, stack, take, amax, pooling's
  max): the op applied to the errors (for a max: the max of the errors of its window).
* :func:`composite`: the op's error is that of a decomposition into table primitives, run under
  the same tracker (softmax, log_softmax, batch_norm); a kernel that itself runs Tensor ops
  (``batch_norm_backward``) is tracked through them without a declaration.
* :data:`EXACT`: no rounding and no propagation beyond the identity (views never reach a kernel:
  the error of a view is the same view of its base's error, found by memory address).
* :func:`derived_bound`: an op whose bound is derived by its own analysis, written next to its
  rule (the interpolating upsamplings: weights computed from a rounded source coordinate);
  ``bound(precision, arrays, errors, params, outputs)`` returns the outputs' errors.

:class:`Tracker` composes the model: inside ``with Tracker(dtype=...)`` every table kernel that
runs (forward ops, the VJP formulas a backward records, JVP formulas, double backward) also
computes its outputs' errors from its inputs', so the error bound of any computation built from
table primitives, through any number of differentiation passes, comes out element by element.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from reference.autograd import table
from reference.autograd.grad_mode import no_grad
from reference.autograd.graph import Context
from reference.autograd.tensor import _make, complex128, float64
from reference.backend import data_ptr, is_inexact, to_numpy
from reference.errors import complex as complex_bounds

#: Unit roundoff (half an ulp of 1) of each dtype a framework computes in.
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "tf32": 2.0**-11,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}
#: The reference computes in float64: its own rounding adds to every bound (a float64 case's
#: expected value is no more exact than the framework's).
REFERENCE_U = 2.0**-53
#: The smallest positive normal number of each dtype.
SMALLEST_NORMAL = {
    "float64": 2.0**-1022,
    "float32": 2.0**-126,
    "tf32": 2.0**-126,
    "float16": 2.0**-14,
    "bfloat16": 2.0**-126,
}
#: The smallest positive float64 (a bound below it, stored in float64, would be 0).
_SMALLEST_SUBNORMAL64 = 2.0**-1074
#: The largest finite number of each dtype (a result past it is inf in that dtype).
LARGEST = {
    "float64": float(np.finfo(np.float64).max),
    "float32": float(np.finfo(np.float32).max),
    "float16": 65504.0,
    "bfloat16": float.fromhex("0x1.fep127"),
}
#: Below this magnitude a result does not round to inf in each dtype. Round to nearest overflows
#: from the largest finite number plus half its ulp, 2^(emax+1)·(1 - u) + 2^(emax+1)·u/2 (float16:
#: 65504 + 16 = 65520); a result between the two rounds to the largest finite number, within the
#: u·|y| of every rounding. A half type computed in float32 and rounded (PyTorch's opmath, XLA's
#: upcast) rounds twice: a float32 result within float32's u of the midpoint may land on it and tie
#: to inf, so the threshold is lowered by that u (float32 through float64 alike). float64's is not a
#: float64 (it rounds to inf: only an infinite result overflows).
_WIDER_U = {"float32": 2.0**-53, "float16": 2.0**-24, "bfloat16": 2.0**-24}
OVERFLOW = {
    d: (LARGEST[d] + LARGEST[d] * UNIT_ROUNDOFF[d] / 2 / (1 - UNIT_ROUNDOFF[d])) * (1 - _WIDER_U.get(d, 0.0))
    for d in LARGEST
}

IEEE = "IEEE 754-2019 §5.4: +, -, *, /, sqrt are correctly rounded (0.5 ulp)"
SLEEF_U10 = "SLEEF *_u10 (PyTorch's Vectorized<float> exp/log/tanh/erf/...): 1.0 ulp error bound"
GLIBC = "glibc manual, 'Errors in Math Functions': exp/log/expf/logf listed at <= 1-2 ulp on x86_64"


@dataclass(frozen=True)
class ErrorSpec:
    """How one primitive propagates and adds rounding error (see the module docstring)."""

    kind: str  # "derived" | "bound" | "own_bound" | "elementwise" | "products" | "gather" | "composite" | "exact"
    ulps: object = 0.5  # c: the op's accuracy in ulps of its result (or a function of its params)
    source: str = IEEE  # where c comes from
    absolute: float = 0.0  # an absolute error term, in units of u
    input_ulps: float = 0.0  # a term 2·input_ulps·u·sum_i |x_i| (selections computed as blends)
    terms: Callable | None = None  # products: K as a function of (arrays, params), else the op on ones
    decomposition: Callable | None = None  # composite: fn(*Tensors, **params) -> Tensor | tuple
    extra: dict = field(default_factory=dict)

    def describe(self) -> str:
        if self.kind in ("derived", "elementwise"):
            c = "c(params)" if callable(self.ulps) else self.ulps
            bits = f"{self.kind}: |dy/dx|·e + 2·{c}·u·|y|"
            if self.absolute:
                bits += f" + {self.absolute}·u"
            return f"{bits} ({self.source})"
        if self.kind == "products":
            return "products: |J|·e + (K·u_acc + u)·M + u·|y| + (K+1)·eta (any summation order)"
        return f"{self.kind}" + (f" ({self.source})" if self.source and self.kind != "exact" else "")


DERIVED = ErrorSpec("derived")
EXACT = ErrorSpec("exact", 0.0, "no rounding: values are moved, not computed")
GATHER = ErrorSpec("gather", 0.0, "values are selected or moved, not computed")


def elementwise(ulps, source: str, absolute: float = 0.0, input_ulps: float = 0.0) -> ErrorSpec:
    """An elementwise op accurate to ``ulps`` ulps (``source`` says who documents it)."""
    return ErrorSpec("elementwise", ulps, source, absolute, input_ulps=input_ulps)


def exact_elementwise(ulps, source: str) -> ErrorSpec:
    """An elementwise op judged against its exact value, accurate to ``ulps`` ulps in the mixed
    sense (the module docstring; :func:`_mixed_propagation` derives the term)."""
    return ErrorSpec("elementwise", ulps, source, extra={"mixed": True})


def products(terms: Callable | None = None, source: str = "sum of products, any order") -> ErrorSpec:
    """A multilinear op (sums of products); ``terms(arrays, params)``: K, default the op on ones."""
    return ErrorSpec("products", 0.5, source, terms=terms)


def derived_bound(bound: Callable, source: str) -> ErrorSpec:
    """An op's own derived bound: ``bound(precision, arrays, errors, params, outputs)`` -> the
    outputs' absolute errors (input errors are None where an input is exact); the derivation is
    written next to the rule that declares it (``source`` names it)."""
    return ErrorSpec("own_bound", 0.5, source, extra={"bound": bound})


def carried(slope, error):
    """slope·error, 0 where ``error`` is 0: an exact input carries no term, even where the slope a
    derived bound uses for it is infinite (inf·0 = nan made zeta's and the incomplete gamma
    functions' bounds nan at their poles in a parameter that was not perturbed)."""
    e = np.asarray(error, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(e == 0, 0.0, np.asarray(slope, dtype=np.float64) * e)


def finite_or_zero(a):
    """``a`` where finite, 0 where not: a condition term lnΓ(a) at a pole of Γ (lnΓ = inf) weighs
    the rounding of an exponent whose exponential exp(... - lnΓ(a)) = 0 is exact there."""
    with np.errstate(invalid="ignore"):
        a = np.asarray(a, dtype=np.float64)
        return np.where(np.isfinite(a), a, 0.0)


def jumps_within(x, slack, offset=0.0):
    """How many jump points k + offset (k an integer) of a step function lie within ``slack`` of
    ``x`` (0 where none, and where x or slack is not finite): the number of units by which an
    integer-valued step function (floor, trunc, round, div with a rounding mode) of a value known to
    within ``slack`` can differ from its value at ``x``."""
    with np.errstate(all="ignore"):
        n = np.floor(x + slack - offset) - np.ceil(x - slack - offset) + 1
    return np.where(np.isfinite(n), np.maximum(n, 0.0), 0.0)


def composite(
    decomposition: Callable, source: str, alternatives: tuple = (), opmath: bool = False
) -> ErrorSpec:
    """The error of ``decomposition`` (Tensor ops of the table) on the same inputs; with
    ``alternatives`` (other decompositions frameworks document, equal in real arithmetic), the
    element-wise largest of their errors: each formula rounds and underflows in its own places.

    ``opmath``: the kernel is one fused loop that computes in the accumulator the framework promises
    (PyTorch's ``at::opmath_type``: float32 for float16/bfloat16, :attr:`Precision.accumulate`) and
    rounds each result once to the dtype. The decomposition's steps then round, underflow and
    overflow in the accumulator's arithmetic, and the result adds one rounding to the dtype (and the
    dtype's overflow). Without an accumulator (JAX's and TensorFlow's half types) nothing changes: the
    steps are the dtype's (where (x - mean)² of a float16 variance overflows, its bound is infinite)."""
    extra = {"alternatives": tuple(alternatives)} if alternatives else {}
    if opmath:
        extra["opmath"] = True
    return ErrorSpec("composite", 0.5, source, decomposition=decomposition, extra=extra)


def bound(fn: Callable, source: str) -> ErrorSpec:
    """A bound derived for the op itself (a solve, a factorization: Higham's backward-error bounds
    carried to the outputs by first-order perturbation theory), with its derivation next to ``fn``.
    ``fn(arrays, errs, params, outs, u)`` returns one float64 error array per output (None for an
    integer output): ``errs`` are the inputs' errors (None: exact), ``u`` the unit roundoff to use
    (the framework's plus the reference's own)."""
    return ErrorSpec("bound", 0.5, source, extra={"bound": fn})


# ---- the tracker ----------------------------------------------------------------------------


@dataclass
class Precision:
    """The framework's arithmetic a bound is derived for."""

    dtype: str = "float64"  # the dtype results are rounded to
    accumulate: str | None = None  # the accumulator dtype of sums (None: the dtype itself)
    tf32: bool = False  # float32 products of matmul/conv in TF32
    flush: bool = False  # subnormal results may be flushed to zero (and subnormal inputs read as 0)

    @property
    def u(self) -> float:
        return UNIT_ROUNDOFF[self.dtype]

    @property
    def u_acc(self) -> float:
        return UNIT_ROUNDOFF[self.accumulate or self.dtype]

    @property
    def u_products(self) -> float:
        """Relative error of one product before it is summed (TF32 rounds both factors)."""
        return 2 * UNIT_ROUNDOFF["tf32"] if self.tf32 and self.dtype == "float32" else 0.0

    @property
    def eta(self) -> float:
        """Absolute error of rounding a tiny result: half the smallest subnormal, or the smallest
        normal when the framework flushes subnormals to zero."""
        tiny = SMALLEST_NORMAL[self.dtype]
        if self.flush:
            return tiny
        # float64's half subnormal 2^-1075 is no float64 (tiny·u rounds to 0, and every underflow
        # term of a float64 bound with it: a subnormal partial product's rounding times a factor of
        # 1e300 was bounded by 0); a bound rounds up, to the smallest subnormal 2^-1074
        return max(tiny * self.u, _SMALLEST_SUBNORMAL64)

    def terms(self) -> dict:
        return {
            "dtype": self.dtype,
            "u": self.u,
            "accumulator": self.accumulate or self.dtype,
            "u_acc": self.u_acc,
            "tf32": self.tf32,
            "underflow": "flush-to-zero" if self.flush else "gradual",
            "eta": self.eta,
        }


_ACTIVE: list = []


def active():
    return _ACTIVE[-1] if _ACTIVE else None


class Tracker:
    """Inside ``with Tracker(precision):`` every table kernel also computes its outputs' errors.

    Errors are float64 arrays kept by the memory of the array they belong to, so a view's error
    is the same view of its base's; an array the tracker never saw (an input, a constant) is
    exact unless :meth:`set_error` says otherwise.
    """

    def __init__(self, precision: Precision | None = None, **kwargs):
        self.p = precision or Precision(**kwargs)
        self._roots = []  # (start, end, array kept alive, flat error)
        # the same by memory for overflow flags: 1.0 where an infinite value is a float64 overflow of
        # a finite exact value (not an exact infinity: a pole, a -inf constant); see _overflows
        self._overflow_roots = []
        # the same for dtype overflows: 1.0 where a finite float64 result lies past the dtype's range
        # and its error before the overflow leaves the framework's value past LARGEST/2 of the dtype
        # with the same sign (_flag_dtype_overflows; an elementwise op carries the tail, _dtype_tail)
        self._dtype_tail_roots = []
        self._suspended = 0
        self._saved = {}
        self.used = {}  # rule name -> spec description, for the record of a bound's terms
        # a mixed-precision cast policy (conformance.amp.CastPolicy): per kernel, the precision it
        # runs in and the cast roundings of its inputs; None: every kernel runs in ``self.p``
        self.policy = None

    # -- installing -------------------------------------------------------------------------
    def __enter__(self):
        _ACTIVE.append(self)
        if len(_ACTIVE) == 1:
            for rule in table.RULES.values():
                if rule.forward is not None:
                    self._saved[rule.name] = rule.forward
                    rule.forward = _wrap(rule, rule.forward)
        return self

    def __exit__(self, *exc):
        _ACTIVE.pop()
        if not _ACTIVE:
            for name, fn in self._saved.items():
                table.RULES[name].forward = fn
        self._saved = {}

    # -- errors by memory -------------------------------------------------------------------
    def _register(self, arr, err, roots=None):
        # a complex array: bounds on |error|; a boolean array: 1.0 where its value is undecided;
        # ``roots``: another store kept by memory the same way (the overflow flags)
        if arr.size == 0 or not (is_inexact(arr.dtype) or arr.dtype.kind == "b"):
            return
        roots = self._roots if roots is None else roots
        start = data_ptr(arr)
        err = np.broadcast_to(np.asarray(err, dtype=np.float64), arr.shape)
        if arr.flags.c_contiguous:
            roots.append((start, start + arr.nbytes, arr, np.ascontiguousarray(err).reshape(-1)))
            return
        # Not row-major (a result given PyTorch's strides, a transposed or expanded view): the
        # flat error follows the array's *memory* order, as _lookup reads it, element for element.
        steps = [s // arr.itemsize for s in arr.strides]
        low = sum(st * (n - 1) for st, n in zip(steps, arr.shape) if st < 0)
        high = sum(st * (n - 1) for st, n in zip(steps, arr.shape) if st > 0)
        flat = np.zeros(high - low + 1)
        np.lib.stride_tricks.as_strided(flat[-low:], arr.shape, [st * 8 for st in steps])[...] = err
        start += low * arr.itemsize
        roots.append((start, start + flat.size * arr.itemsize, arr, flat))

    def set_error(self, tensor_or_array, err):
        arr = getattr(tensor_or_array, "_data", tensor_or_array)
        self._register(arr, err)

    def carry(self, src, dst, write=False, storage=None):
        """``dst`` holds ``src``'s values: moved to new storage for a layout, or an in-place op's
        result written into a region of ``storage`` (``write``: under a cast policy, rounded to the
        storage's dtype); its bound is ``src``'s. A written region's bound is set inside the whole
        storage's (a bound is found by the memory an array starts at: a root for the region alone
        would answer for the storage's other elements too)."""
        if self._suspended:
            return
        err = np.array(np.broadcast_to(self.error_of(src), tuple(dst.shape)), dtype=np.float64)
        if self.policy is not None:
            err = self.policy.carry(src, dst, err, write)
        (flag,) = self._overflow_flags([src])
        flag = np.zeros(tuple(dst.shape)) if flag is None else np.array(np.broadcast_to(flag, tuple(dst.shape)))
        if storage is None or not storage.flags.c_contiguous:
            self._register(dst, err)
            if flag.any() or self._lookup(dst, self._overflow_roots) is not None:
                self._register(dst, flag, self._overflow_roots)
            return
        offset = (data_ptr(dst) - data_ptr(storage)) // storage.itemsize if dst.size else 0
        strides = tuple(s // storage.itemsize * 8 for s in dst.strides)
        whole = np.array(self.error_of(storage), dtype=np.float64).reshape(-1)
        np.lib.stride_tricks.as_strided(whole[offset:], dst.shape, strides)[...] = err
        self._register(storage, whole)
        # the written region's overflow flags are the source's (cleared where it has none)
        old = self._lookup(storage, self._overflow_roots)
        if flag.any() or old is not None:
            flags = np.zeros(storage.size) if old is None else np.array(old, dtype=np.float64).reshape(-1)
            np.lib.stride_tricks.as_strided(flags[offset:], dst.shape, strides)[...] = flag
            self._register(storage, flags.reshape(storage.shape), self._overflow_roots)

    def grad_errors(self, old, new):
        """The errors of a leaf's ``.grad`` (None if unset) and of the gradient about to be added,
        and their overflow flags (AccumulateGrad copies or adds in place outside the table: see
        :meth:`accumulated`)."""
        old_err = None if old is None else np.array(self.error_of(old))
        flags = [None if t is None else self._overflow_flags([getattr(t, "_data", t)])[0] for t in (old, new)]
        return (old_err, np.array(self.error_of(new)), *[None if f is None else np.array(f) for f in flags])

    def accumulated(self, grad, old, new, old_flags=None, new_flags=None):
        """``grad`` is now ``old_grad + new`` (or a copy of ``new`` when ``old`` is None): its error
        is the sum of the two errors plus the addition's own rounding (the copy adds none); its
        infinities that read an overflowed one keep its state, UNBOUNDED after a sum (``.grad`` of
        e^355·e^355 read back by 1/x: the flag is what gives that a tail term, as through
        autograd.grad)."""
        if self._suspended or grad is None:
            return
        data = np.asarray(to_numpy(grad._data))
        err = new if old is None else old + new + self._own(DERIVED, data, {})
        self._register(grad._data, self._finish(err, data))
        if is_inexact(data.dtype) and data.size:
            with np.errstate(invalid="ignore"):
                flag = np.where(np.isinf(data), _reached_state([old_flags, new_flags], data.shape, True), 0.0)
            if old is not None:  # a sum may cancel below the floor (the operands are gone: not re-tested)
                flag = np.where(flag > 0, UNBOUNDED, 0.0)
            if flag.any() or self._lookup(grad._data, self._overflow_roots) is not None:
                self._register(grad._data, flag, self._overflow_roots)

    def error_of(self, tensor_or_array):
        """The absolute error bound of an array (or a Tensor's data); zeros if never seen."""
        arr = getattr(tensor_or_array, "_data", tensor_or_array)
        arr = arr if _is_device(arr) else np.asarray(arr)
        found = self._lookup(arr)
        return np.zeros(arr.shape) if found is None else found

    def _lookup(self, arr, roots=None):
        if not (is_inexact(arr.dtype) or arr.dtype.kind == "b") or arr.size == 0:
            return None
        ptr = data_ptr(arr)
        for start, end, root, flat in reversed(self._roots if roots is None else roots):
            if not start <= ptr < end:
                continue
            if root.itemsize == arr.itemsize and root.dtype.kind == arr.dtype.kind:
                offset = (ptr - start) // root.itemsize
                strides = tuple(s // root.itemsize * 8 for s in arr.strides)
                return np.lib.stride_tricks.as_strided(flat[offset:], arr.shape, strides)
            if root.dtype.kind == "c" and arr.dtype.kind == "f" and root.itemsize == 2 * arr.itemsize:
                # a real view of complex storage (view_as_real, .real, .imag): |d re|, |d im| <= |dz|
                offset = (ptr - start) // arr.itemsize
                strides = tuple(s // arr.itemsize * 8 for s in arr.strides)
                return np.lib.stride_tricks.as_strided(np.repeat(flat, 2)[offset:], arr.shape, strides)
            if root.dtype.kind == "f" and arr.dtype.kind == "c" and arr.itemsize == 2 * root.itemsize:
                # view_as_complex of float pairs: |dz| <= |d re| + |d im|
                offset = (ptr - start) // root.itemsize
                strides = tuple(s // root.itemsize * 8 for s in arr.strides)
                # (of overflow flags, states: the larger of the two)
                joined = np.maximum if roots is self._overflow_roots else np.add
                pairs = np.append(joined(flat[:-1], flat[1:]), 0.0)
                return np.lib.stride_tricks.as_strided(pairs[offset:], arr.shape, strides)
        return None

    # -- one kernel ---------------------------------------------------------------------------
    def kernel(self, rule, fn, arrays, params):
        if self._suspended:
            return fn(*arrays, **params)
        res = fn(*arrays, **params)
        aux = None
        if rule.has_aux:
            res, aux = res
        multi = rule.outputs != 1
        outs = list(res) if multi else [res]
        if any(_is_device(a) for a in list(arrays) + outs):
            res = self._device_kernel(rule, arrays, params, outs, aux)
            return (res, aux) if rule.has_aux else res
        outs = [np.asarray(o) if isinstance(o, (np.generic, float, int)) else o for o in outs]
        fresh = []
        for o in outs:
            if isinstance(o, np.ndarray):
                tracked = self._lookup(o) if is_inexact(o.dtype) else None
                if tracked is not None and not any(
                    isinstance(a, np.ndarray) and np.may_share_memory(o, a) for a in arrays
                ):
                    fresh.append((o, None))  # computed by tracked Tensor ops inside the kernel
                    continue
                if not (o.flags.c_contiguous and o.flags.writeable and o.flags.owndata):
                    o = np.array(o, copy=True, order="C")
            fresh.append((o, "new"))
        outs = [o for o, _ in fresh]
        need = [i for i, (o, how) in enumerate(fresh) if how == "new" and isinstance(o, np.ndarray)]
        if need:
            errs, base = None, self.p
            if self.policy is not None:  # the kernel's own precision, its inputs' casts (mixed precision)
                self.p, errs = self.policy.kernel(self, rule, arrays, outs, self._errs(arrays))
            try:
                errs = self._propagate(rule, arrays, params, outs, aux, errs=errs)
            finally:
                kernel_p, self.p = self.p, base
                if self.policy is not None:
                    self.policy.produced(self, [outs[i] for i in need], kernel_p)
            extra = self._selection(rule, arrays, params, outs)
            if extra is not None:
                errs = [errs[0] + extra] + list(errs[1:])
            in_errs, elementwise = self._errs(arrays), _elementwise_rule(rule)
            for i in need:
                o = outs[i]
                if is_inexact(o.dtype) and o.size:
                    overflowed = _infinite_inputs(in_errs, o.shape, elementwise)
                    self._flag_dtype_overflow(o, errs[i])
                    box = functools.partial(self._box_top, rule, fn, arrays, params, in_errs, elementwise, i)
                    self._register(o, self._finish(errs[i], o, overflowed, box))
            self._flag_overflows(rule, fn, arrays, params, [outs[i] for i in need], [outs[i] for i in need])
        self.used.setdefault(rule.name, _spec(rule).describe())
        res = tuple(outs) if multi else outs[0]
        return (res, aux) if rule.has_aux else res

    def _device_kernel(self, rule, arrays, params, outs, aux):
        """A kernel that ran on a device (CuPy, strict): its outputs' bounds are host-side
        bookkeeping, computed from host copies of its operands and results by the same model,
        and kept by the device arrays' addresses (a view's bound is the same view of its base's).
        The steps are the NumPy path's (kernel), with addresses for ``may_share_memory``."""
        errs = self._errs(arrays)  # by device address
        fresh = []
        for k, o in enumerate(outs):
            if not _is_device(o):
                fresh.append(False)
                continue
            tracked = self._lookup(o) if is_inexact(o.dtype) else None
            start = data_ptr(o) if o.size else None
            aliases = start is not None and any(
                _is_device(a) and a.size and data_ptr(a) <= start < data_ptr(a) + a.nbytes for a in arrays
            )
            if tracked is not None and not aliases:
                fresh.append(False)  # computed by tracked Tensor ops inside the kernel
                continue
            if not (o.flags.c_contiguous and o.flags.owndata):
                outs[k] = o.copy(order="C")  # a fresh C-contiguous array of its own, as _make keeps it
            fresh.append(True)
        if any(fresh):
            host_in = [to_numpy(a) if _is_device(a) else a for a in arrays]
            host_out = [to_numpy(o) if _is_device(o) else o for o in outs]
            host_params = {k: _host(v) for k, v in params.items()}  # (index arrays among them)
            host_errs = self._propagate(
                rule, host_in, host_params, host_out, _host(aux), errs=errs, overflowed=self._overflow_flags(arrays)
            )
            extra = self._selection(rule, arrays, params, outs)  # (flags by device address)
            if extra is not None:
                host_errs = [host_errs[0] + extra] + list(host_errs[1:])
            for o, h, e, new in zip(outs, host_out, host_errs, fresh):
                if new and is_inexact(o.dtype) and o.size:
                    overflowed = _infinite_inputs(errs, h.shape, _elementwise_rule(rule))
                    self._register(o, self._finish(e, h, overflowed))
            new = [k for k, f in enumerate(fresh) if f]
            self._flag_overflows(
                rule, rule_forward(rule), arrays, params, [outs[k] for k in new], [host_out[k] for k in new],
                host_in=host_in, host_params=host_params,
            )
        self.used.setdefault(rule.name, _spec(rule).describe())
        return tuple(outs) if rule.outputs != 1 else outs[0]

    # -- overflows ------------------------------------------------------------------------------
    # A float64 computation that overflows (e^355·e^355 = inf) leaves a finite exact value behind:
    # 1/(e^355·e^355) is 4.48e-309 exactly, the reference's 0. Such an infinity carries its (infinite)
    # error on into what reads it, where an exact infinity (a pole: log(0), 1/0; a -inf constant
    # that masks an exponent) carries none (its result is a convention, judged as such). The tracker
    # flags the overflows by memory, like the comparison flags: an infinite result element is one
    # where the same kernel in a wider exponent range (long double, 15 exponent bits on x86-64) is
    # finite, or that read a flagged element. A kernel that cannot run in long double (one that casts
    # to float64, or calls SciPy or mpmath) flags nothing: its overflows stay exact, as before.
    # A flag is a state: FLOORED (the exact value lies past LARGEST/2: the kernel's operands, moved
    # by their bounded errors, still overflow past it in long double) or UNBOUNDED (they may not:
    # (t + 1e18) - 1e18 = 384 for t = 340, exp of it overflows where exp(340) does not).
    def _overflow_flags(self, arrays):
        """Per array: its overflow flags (per element 0, FLOORED or UNBOUNDED, by memory), or None
        where it has none."""
        flags = []
        for a in arrays:
            f = (
                self._lookup(a, self._overflow_roots)
                if (isinstance(a, np.ndarray) or _is_device(a)) and is_inexact(a.dtype)
                else None
            )
            flags.append(None if f is None or not f.any() else np.asarray(f, dtype=np.float64))
        return flags

    def _flag_overflows(self, rule, fn, arrays, params, outs, host_outs, host_in=None, host_params=None):
        """Flag the overflowed elements of a kernel's new results ``outs`` (their host values
        ``host_outs``); clear a stale flag left at a result's memory."""
        flags_in = self._overflow_flags(arrays)
        wider = kept = None
        for k, (o, h) in enumerate(zip(outs, host_outs)):
            if not (is_inexact(o.dtype) and o.size):
                continue
            stale = self._lookup(o, self._overflow_roots) is not None
            with np.errstate(invalid="ignore"):
                inf = np.isinf(np.asarray(h))
            elementwise = _elementwise_rule(rule)
            ins = arrays if host_in is None else host_in
            kernel_params = params if host_params is None else host_params
            flag = np.where(inf, _reached_state(flags_in, h.shape, elementwise), 0.0)
            inherited = inf & (flag == FLOORED)
            if inherited.any():
                if kept is None:
                    kept = self._floor_kept(rule, fn, ins, kernel_params, elementwise, flags_in, self._errs(arrays))
                stays = kept is not None and np.shape(kept[k]) == h.shape
                flag = np.where(inherited & ~(kept[k] if stays else False), UNBOUNDED, flag)
            if (inf & (flag == 0)).any():
                if wider is None:
                    wider = self._wider_range(rule, fn, ins, kernel_params)
                    floor = None if wider is None else self._past_floor(
                        rule, fn, ins, kernel_params, elementwise, self._errs(arrays))
                if wider is not None and wider[k].shape == h.shape:
                    known = floor is not None and np.shape(floor[k]) == h.shape
                    state = np.where(floor[k], FLOORED, UNBOUNDED) if known else UNBOUNDED
                    flag = np.where(inf & (flag == 0) & np.isfinite(wider[k]), state, flag)
            if flag.any() or stale:
                self._register(o, flag, self._overflow_roots)

    def _floor_kept(self, rule, fn, arrays, params, elementwise, flags, errs):
        """Per result, where an infinity read from a FLOORED input still lies past LARGEST/2: the
        kernel, with the flagged infinities at the floor ±LARGEST/2 (where their exact values begin)
        and its other operands at the corners of their error boxes, still reaches it (the op
        monotone over the tail, as :func:`_overflow_tail` assumes). An op that shrinks the value
        does not keep the floor: (e^355·e^355)·1e-10 is 1.6e298, a mean of it and two zeros a third
        of it, so a FLOORED flag passed on unchecked gave 1/x a tail term of 2/LARGEST where the
        exact value is 4.5e-299. None: not known (the flag becomes UNBOUNDED)."""
        moved, moved_errs = list(arrays), list(errs)
        for j, f in enumerate(flags):
            if f is None or not isinstance(arrays[j], np.ndarray) or arrays[j].dtype.kind != "f":
                continue
            at_floor = (f > 0) & np.isinf(arrays[j])
            moved[j] = _to_floor(arrays[j], f)
            if moved_errs[j] is not None:
                e = np.asarray(to_numpy(errs[j]) if _is_device(errs[j]) else errs[j], dtype=np.float64)
                moved_errs[j] = np.where(at_floor, 0.0, e)
        return self._past_floor(rule, fn, moved, params, elementwise, moved_errs)

    def _past_floor(self, rule, fn, arrays, params, elementwise, errs):
        """Per result, where its exact value lies past LARGEST/2 (None: nowhere known). With exact
        operands, where the long double result does (the kernel's own few ulps are far below a factor
        of 2); with bounded errors, for an elementwise kernel, where it does at every corner of the
        operands' error box (first order: the kernel monotone across the box); else nowhere. ``errs``:
        the operands' bounds (:meth:`_errs`)."""
        moved = [j for j, e in enumerate(errs) if e is not None and np.any(e)]
        if moved and (not elementwise or len(moved) > 3
                      or any(not (isinstance(arrays[j], np.ndarray) and arrays[j].dtype.kind == "f") for j in moved)):
            return None
        corners = [()]
        for _ in moved:
            corners = [c + (sign,) for c in corners for sign in (-1.0, 1.0)]
        floor = None
        for corner in corners:
            shifted = list(arrays)
            for j, sign in zip(moved, corner):
                a, e = arrays[j], np.asarray(to_numpy(errs[j]) if _is_device(errs[j]) else errs[j], dtype=np.float64)
                with np.errstate(all="ignore"):
                    shifted[j] = np.where(np.isfinite(a), a + sign * e, a)
            wide = self._wider_range(rule, fn, shifted, params)
            if wide is None:
                return None
            past = [np.asarray(w >= _OVERFLOW_FLOOR) for w in wide]
            floor = past if floor is None else [f & q for f, q in zip(floor, past)]
        return floor

    def _wider_range(self, rule, fn, arrays, params):
        """The kernel's results in long double (None where it does not run there)."""
        wide = [
            a.astype(np.clongdouble if a.dtype.kind == "c" else np.longdouble)
            if isinstance(a, np.ndarray) and a.dtype in (np.float64, np.complex128)
            else a
            for a in arrays
        ]
        self._suspended += 1
        try:
            with np.errstate(all="ignore"):
                r = fn(*wide, **params)
            r = r[0] if rule.has_aux else r
            r = list(r) if rule.outputs != 1 else [r]
            return [np.asarray(np.abs(v), dtype=np.longdouble) if v is not None else np.zeros(()) for v in r]
        except Exception:  # a kernel bound to float64 (SciPy, mpmath, a dtype check)
            return None
        finally:
            self._suspended -= 1

    def _flag_dtype_overflow(self, out, err):
        """Flag the elements of a real result ``out`` that overflow the dtype (:data:`OVERFLOW`, where
        :meth:`_finish` makes their error infinite) from a known place: the error ``err`` before the
        overflow is finite and at most |out| - LARGEST/2, so the framework's value before its
        rounding lies past LARGEST/2 of the dtype with out's sign, and after it in [LARGEST/2, inf]
        (float16's x - max(x) = -65504 - 65504: -inf, or -131008 in a float32 accumulator). An
        elementwise op carries such an input as the tail it lies in (:func:`_dtype_tail`); any other
        op reads its infinite error. A stale flag at the result's memory is cleared."""
        if not (isinstance(out, np.ndarray) and out.dtype.kind == "f"):
            return
        largest = LARGEST.get(self.p.dtype, np.inf)
        with np.errstate(invalid="ignore"):
            mag = np.abs(np.asarray(out, dtype=np.float64))
            err = np.broadcast_to(np.asarray(err, dtype=np.float64), out.shape)
            flag = np.isfinite(mag) & (mag >= OVERFLOW.get(self.p.dtype, np.inf)) & (err <= mag - largest / 2)
        if flag.any() or self._lookup(out, self._dtype_tail_roots) is not None:
            self._register(out, flag.astype(np.float64), self._dtype_tail_roots)

    def _dtype_tails(self, arrays):
        """Per array: its dtype-overflow flags (:meth:`_flag_dtype_overflow`), or None where none."""
        flags = []
        for a in arrays:
            f = self._lookup(a, self._dtype_tail_roots) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else None
            flags.append(None if f is None or not f.any() else np.asarray(f) > 0)
        return flags

    def _box_top(self, rule, fn, arrays, params, errs, elementwise, k):
        """Per element of the kernel's result ``k``, the largest magnitude its value may have before
        the dtype's last rounding: the kernel at the corners of its operands' error boxes, each
        operand kept within the dtype's finite range (what the framework holds is a finite value of
        the dtype; an infinite one carries its own infinite error), plus the kernel's own error
        beyond the last rounding ((2c - 1)·u·|y| for a c-ulp op); 0 for a composite whose steps
        ran in the dtype (each step decided). The linear bound alone cannot see
        that range: x - y at x = -LARGEST (1 ulp off) and y = 0.5 reached past OVERFLOW, where no
        finite x can. None where not known: not elementwise, more than three operands with errors,
        an operand not a real array, a kernel not of one declared accuracy (first order: the
        kernel monotone across the box, as :meth:`_past_floor`)."""
        spec = _spec(rule)
        if spec.kind == "composite" and not (spec.extra.get("opmath") and self.p.accumulate) and self.policy is None:
            # its steps ran in the dtype, each result decided here (a step's error infinite where
            # it may overflow): the composite's error adds no rounding of its own to decide
            return np.zeros(())
        moved = [j for j, e in enumerate(errs) if e is not None and np.any(e)]
        if (
            not elementwise or len(moved) > 3 or spec.kind not in ("elementwise", "derived")
            or spec.extra.get("mixed") or rule.outputs != 1
            or any(not (isinstance(arrays[j], np.ndarray) and arrays[j].dtype.kind == "f") for j in moved)
        ):
            return None
        largest = LARGEST.get(self.p.dtype, np.inf)
        ulps = spec.ulps(params) if callable(spec.ulps) else spec.ulps
        corners = [()]
        for _ in moved:
            corners = [c + (sign,) for c in corners for sign in (-1.0, 1.0)]
        top = None
        self._suspended += 1
        try:
            with np.errstate(all="ignore"):
                for corner in corners:
                    shifted = list(arrays)
                    for j, sign in zip(moved, corner):
                        a, e = arrays[j], np.asarray(errs[j], dtype=np.float64)
                        shifted[j] = np.where(np.isfinite(a), np.clip(a + sign * e, -largest, largest), a)
                    r = fn(*shifted, **params)
                    r = np.abs(np.asarray(r[0] if rule.has_aux else r, dtype=np.float64))
                    top = r if top is None else np.fmax(top, r)
        except Exception:  # a kernel that does not take the moved operands (a dtype check, SciPy)
            return None
        finally:
            self._suspended -= 1
        return top * (1 + max(2 * ulps - 1, 0.0) * self.p.u)

    def _finish(self, err, out, overflowed=False, box=None):
        """Overflow: a result the framework may round to inf in the dtype is inf there (any error).
        It may where the value it rounds can reach :data:`OVERFLOW`: the exact value ``out`` moved by
        the bound's part before that last rounding, ``err`` less the rounding's own u·|out| (every
        model's own term holds it for a result stored in the dtype). float16 exp's vjp g·e^x at
        65514.9 is inf in PyTorch (g times e^x already rounded up) and right: a correctly rounded
        result of exact operands in [65504, 65520) is not. ``overflowed`` (per element,
        :func:`_infinite_inputs`): the element read an input with an infinite error (one that may
        have overflowed in the framework): a nan error there is inf (an honest "any value": 0·inf
        of a zero slope times that error is nan, and so is the framework's 0·inf), so that a nan
        bound means only what the judge reads it as, the model losing track
        (conformance.tolerance.known). ``box``: where given, a function for :meth:`_box_top`, which
        decides the elements the linear reach marks (its operands cannot leave the dtype's range)."""
        err = np.broadcast_to(np.asarray(err, dtype=np.float64), out.shape)
        threshold = OVERFLOW.get(self.p.dtype, np.inf)
        with np.errstate(invalid="ignore", over="ignore"):
            magnitude = np.abs(out)
            before_rounding = np.maximum(err - self.p.u * magnitude, 0.0)
            reach = magnitude + np.where(np.isnan(before_rounding), 0.0, before_rounding)
            reached = (reach >= threshold) & (magnitude < threshold)
        if box is not None and reached.any():
            top = box()
            if top is not None and np.broadcast_shapes(np.shape(top), out.shape) == out.shape:
                reached &= ~(np.broadcast_to(top, out.shape) < threshold)
        big = (magnitude >= threshold) | reached | (overflowed & np.isnan(err))
        return np.where(big, np.inf, err)

    def _errs(self, arrays):
        return [
            self._lookup(a) if (isinstance(a, np.ndarray) or _is_device(a)) and a.dtype.kind != "b" else None
            for a in arrays
        ]

    # -- selections near ties -----------------------------------------------------------------
    # A comparison of values that carry rounding errors is undecided where they differ by no more
    # than their errors (and are not the same value): the framework, rounding differently, may
    # decide either way (pairwise_distance's |a - b + 1e-6| in float16, where the 1e-6 vanishes:
    # two entries that differ by 2e-6 in the reference tie in the framework, and the inf-norm's
    # gradient splits between them). The boolean result keeps a flag there, by memory like an
    # error; the ops that consume a boolean carry the flip into their bound: a cast to a number
    # (it may be 0 or 1), where / masked_fill (the distance between the two branches), logical
    # and / or / not (undecided where an operand is). Equal values are decided: the same value
    # computed the same way rounds the same way in the framework.
    def flag_comparison(self, out, a, b):
        """Flag the undecided elements of ``out = compare(a, b)`` (arrays of one dtype)."""
        if self._suspended or not is_inexact(a.dtype):
            return
        ea, eb = self._lookup(a), self._lookup(b)
        if (ea is None or not ea.any()) and (eb is None or not eb.any()):
            return
        ha, hb = (to_numpy(x) if _is_device(x) else np.asarray(x) for x in (a, b))
        with np.errstate(invalid="ignore", over="ignore"):
            gap = np.abs(ha.astype(np.complex128 if ha.dtype.kind == "c" else np.float64) - hb)
            undecided = (ha != hb) & (gap <= (0.0 if ea is None else ea) + (0.0 if eb is None else eb))
        undecided = np.broadcast_to(undecided, out.shape)
        if undecided.any():
            self._register(out, undecided.astype(np.float64))

    def flag_logical(self, out, *operands):
        """``out`` = a logical op of boolean ``operands``: undecided where any operand is."""
        if self._suspended:
            return
        flags = [
            self._lookup(x) for x in operands if getattr(x, "dtype", None) is not None and x.dtype.kind == "b"
        ]
        flags = [f for f in flags if f is not None and f.any()]
        if flags:
            self._register(out, np.broadcast_to(np.maximum.reduce(np.broadcast_arrays(*flags)), out.shape))

    def _flags(self, a):
        if not ((isinstance(a, np.ndarray) or _is_device(a)) and a.dtype.kind == "b"):
            return None
        f = self._lookup(a)
        return None if f is None or not f.any() else f

    def _selection(self, rule, arrays, params, outs):
        """The bound a selection on undecided booleans adds to its output (None: none)."""
        if rule.name == "to":
            return self._flags(arrays[0])  # 0 or 1
        if rule.name == "where":
            flags, x, y = self._flags(arrays[0]), arrays[1], arrays[2]
        elif rule.name in ("masked_fill", "masked_fill_tensor"):
            flags, x = self._flags(arrays[1]), arrays[0]
            y = arrays[2] if rule.name == "masked_fill_tensor" else params["value"]
        else:
            return None
        if flags is None:
            return None
        with np.errstate(invalid="ignore", over="ignore"):
            dist = np.abs(_as_float(x) - _as_float(y))
        return flags * np.where(np.isnan(dist), np.inf, dist)

    def _own(self, spec, out, params, arrays=(), underflow=True):
        """The op's own rounding; ``underflow=False``: without the underflow term ``eta``."""
        p = self.p
        u = p.u + REFERENCE_U  # the framework's rounding and the float64 reference's own
        ulps = spec.ulps(params) if callable(spec.ulps) else spec.ulps
        own = 2 * ulps * u * np.abs(out) + spec.absolute * u + (p.eta if underflow else 0.0)
        if spec.input_ulps:
            for a in arrays:
                if _is_float(a):
                    own = own + 2 * spec.input_ulps * u * _finite_magnitude(np.broadcast_to(a, np.shape(out)))
        return own

    def _propagate(self, rule, arrays, params, outs, aux, errs=None, overflowed=None):
        spec = _spec(rule)
        errs = self._errs(arrays) if errs is None else errs
        overflowed = self._overflow_flags(arrays) if overflowed is None else overflowed
        kind = spec.kind
        if kind == "derived" and rule.batch != "batch_elementwise":
            raise NotImplementedError(
                f"primitive {rule.name!r} declares no error model and is not elementwise; declare "
                "its `error` next to its rule (reference.errors)"
            )
        self._suspended += 1
        try:
            if kind == "elementwise" and spec.extra.get("mixed"):
                c = spec.ulps(params) if callable(spec.ulps) else spec.ulps
                return [
                    _mixed_propagation(rule, arrays, errs, params, c * (self.p.u + REFERENCE_U), overflowed)
                    + self._own(spec, outs[0], params, arrays)
                ]
            if kind in ("derived", "elementwise"):
                own, underflows = self._own(spec, outs[0], params, arrays, underflow=False), 1
                if complex_bounds.is_complex(arrays, outs):  # complex arithmetic: reference/errors/complex.py
                    own, underflows = complex_bounds.complex_own(
                        rule.name, outs[0], own, self.p.u + REFERENCE_U
                    )
                    if rule.name in complex_bounds.COMPLEX_BOUNDS:
                        self.used.setdefault(
                            f"{rule.name} (complex)", complex_bounds.COMPLEX_BOUNDS[rule.name].source
                        )
                tails = (self.p.dtype, self._dtype_tails(arrays))
                prop = _elementwise(rule, arrays, errs, params, outs, aux, overflowed, tails)
                return [prop + own + underflows * self.p.eta * _may_underflow(outs[0], prop + own)]
            if kind == "products":
                return self._products(rule, spec, arrays, errs, params, outs)
            if kind == "gather":
                return _gather(rule, arrays, errs, params, outs, overflowed)
            if kind == "exact":
                return [np.zeros(o.shape) if isinstance(o, np.ndarray) else None for o in outs]
            if kind == "bound":
                u = self.p.u + REFERENCE_U
                res = spec.extra["bound"](arrays, errs, params, outs, u)
                return [
                    None if r is None else np.asarray(r, dtype=np.float64) + u * np.abs(o) + self.p.eta
                    for r, o in zip(res, outs)
                ]
            if kind == "own_bound":
                return spec.extra["bound"](self.p, arrays, errs, params, outs)
        finally:
            self._suspended -= 1
        if kind == "composite":
            return self._composite(rule, spec, arrays, params, outs, errs, overflowed)
        raise ValueError(f"unknown error kind {kind!r} of {rule.name!r}")

    def _products(self, rule, spec, arrays, errs, params, outs):
        p = self.p

        def f(*xs):
            r = rule_forward(rule)(*xs, **params)
            r = r[0] if rule.has_aux else r
            return [np.asarray(v, dtype=np.float64) for v in (r if rule.outputs != 1 else [r])]

        absx = [np.abs(a) if _is_float(a) else a for a in arrays]
        magnitude = f(*absx)
        prop = [np.zeros(o.shape) for o in outs]
        for i, e in enumerate(errs):
            if e is None or not np.any(e):
                continue
            with_e = f(*[np.asarray(e) if j == i else a for j, a in enumerate(absx)])
            without = f(*[np.zeros_like(absx[i]) if j == i else a for j, a in enumerate(absx)])
            prop = [pr + np.maximum(w - wo, 0) for pr, w, wo in zip(prop, with_e, without)]
        if spec.terms is not None:
            k = spec.terms(arrays, params)
            K = [np.asarray(k, dtype=np.float64)] * len(outs)
        else:
            K = f(*[np.ones_like(a, dtype=np.float64) if _is_float(a) else a for a in arrays])
        out = []
        u, u_acc = p.u + REFERENCE_U, p.u_acc + REFERENCE_U  # the reference's own rounding too
        if complex_bounds.is_complex(arrays, outs):  # sqrt(2)·gamma_(K+2): reference/errors/complex.py
            K = [complex_bounds.products_terms(k) for k in K]
            self.used.setdefault(f"{rule.name} (complex)", complex_bounds.PRODUCTS_SOURCE)
        for pr, m, k, o in zip(prop, magnitude, K, outs):
            # K roundings of the accumulator; each product may be rounded to the dtype before it is
            # summed (a product materialised as a tensor); the result's rounding; every product and
            # partial sum may underflow (eta each)
            own = (k * u_acc + u + p.u_products) * m + u * np.abs(o)
            out.append(pr + own + (k + 1) * p.eta * _may_underflow(o, pr + m))
        return out

    def _composite(self, rule, spec, arrays, params, outs, errs=None, overflowed=None):
        wrapped = [_make(np.array(a, copy=True)) if isinstance(a, np.ndarray) else a for a in arrays]
        overflowed = self._overflow_flags(arrays) if overflowed is None else overflowed
        for w, e, f in zip(wrapped, self._errs(arrays) if errs is None else errs, overflowed):
            if e is not None and hasattr(w, "_data"):
                self._register(w._data, e)
            if f is not None and hasattr(w, "_data"):
                self._register(w._data, f, self._overflow_roots)
        out = None
        opmath = spec.extra.get("opmath") and self.p.accumulate and self.policy is None
        outer = self.p
        for decomposition in (spec.decomposition, *spec.extra.get("alternatives", ())):
            if opmath:  # the steps in the accumulator's arithmetic (composite's ``opmath``)
                self.p = Precision(dtype=outer.accumulate, flush=outer.flush)
            try:
                with no_grad():
                    res = decomposition(*wrapped, **params)
            finally:
                self.p = outer
            res = list(res) if isinstance(res, (tuple, list)) else [res]
            errs = [self.error_of(r) if r is not None else 0.0 for r in res]
            out = errs if out is None else [np.maximum(a, b) for a, b in zip(out, errs)]
        if opmath:  # each result rounded once from the accumulator to the dtype (its overflow: _finish)
            u = outer.u + REFERENCE_U
            out = [
                e
                if not isinstance(o, np.ndarray)
                else e + u * _finite_magnitude(o) + outer.eta * _may_underflow(o, e)
                for e, o in zip(out, outs)
            ]
        return out


def _infinite_inputs(errs, shape, elementwise):
    """Where an output element of ``shape`` may have read an overflowed input (an infinite error; None:
    exact): for an elementwise op, element by element (each input error broadcast to the output);
    for any other (a reduction, a matmul: an output element mixes its input's elements), everywhere
    once some input's error is infinite somewhere."""
    return _reaches([None if e is None else np.isinf(np.asarray(e)) for e in errs], shape, elementwise)


def _reaches(masks, shape, elementwise):
    """Where an output element of ``shape`` may read an input element marked in ``masks`` (per
    input, a boolean array or None): as :func:`_reached_state` (element by element for an
    elementwise op, everywhere for any other once some input is marked somewhere)."""
    return _reached_state([None if m is None else np.asarray(m, dtype=np.float64) for m in masks], shape, elementwise) > 0


def _reached_state(flags, shape, elementwise):
    """The overflow state an output element of ``shape`` reads from inputs flagged in ``flags`` (per
    input, states or None): element by element for an elementwise op, the largest anywhere for any
    other (as :func:`_reaches`)."""
    marked = [f for f in flags if f is not None and f.any()]
    if not marked:
        return np.zeros(shape)
    try:
        if elementwise:
            return np.maximum.reduce([np.broadcast_to(f, shape) for f in marked])
    except ValueError:  # an input that does not broadcast to the output: it mixes, as a reduction
        pass
    return np.full(shape, max(float(f.max()) for f in marked))


def _elementwise_rule(rule) -> bool:
    return rule.batch == "batch_elementwise"


def _finite(a):
    """True where ``a`` (an array or a Python number) is finite; True for a non-float."""
    if not _is_float(a):
        return np.True_
    with np.errstate(invalid="ignore"):
        return np.isfinite(np.asarray(a))


def _finite_magnitude(a):
    """|a| where finite, 0 where not: a rounding term relative to an input that is infinite or nan
    bounds nothing (where(c, x, -inf) selects x exactly; its 0.5-ulp blend term of |-inf| made the
    bound infinite at every element)."""
    with np.errstate(invalid="ignore"):
        m = np.abs(np.asarray(a))
    return np.where(np.isfinite(m), m, 0.0)


def _may_underflow(out, window):
    """1.0 where a result element may be a rounded tiny value (the underflow term ``eta`` applies),
    0.0 where it is an exact zero: the element is 0 and so is ``window``, the bound on how far the
    framework's exact result (of its own inputs) and every partial result of its kernel can be from
    0 (the propagated error, and for an elementwise op its own relative and absolute terms; for a
    sum of products the magnitude sum |x|·|y|). There every partial result is 0 (a complex product
    or quotient is 0 only where a factor or the dividend is, and then so is each of its partial
    products), nothing is rounded, and nothing can be flushed: an eta there, carried through a
    derivative as large as 1/z^2 at a tiny z, bounded a second derivative of log at z = 6.27e-308i
    by 7.75e306 where its value is -0.46 (log-c956da8796b6, a zero cotangent)."""
    with np.errstate(invalid="ignore"):
        exact_zero = (np.abs(out) == 0) & (np.asarray(window) == 0)
    return np.where(exact_zero, 0.0, 1.0)


def _as_float(x):
    """A selection branch's values for a distance: float64, or complex128 for complex ones."""
    x = to_numpy(x) if _is_device(x) else np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _is_float(a):
    """A floating array, real or complex (a complex value's magnitude bounds propagate like a real one's)."""
    return isinstance(a, np.ndarray) and is_inexact(a.dtype)


def rule_forward(rule):
    """The rule's kernel itself (not the tracker's wrapper)."""
    fn = rule.forward
    return getattr(fn, "__wrapped_kernel__", fn)


def _wrap(rule, fn):
    def kernel(*arrays, **params):
        tracker = active()
        if tracker is None:
            return fn(*arrays, **params)
        return tracker.kernel(rule, fn, arrays, params)

    kernel.__wrapped_kernel__ = fn
    return kernel


def _spec(rule) -> ErrorSpec:
    if rule.view is not None:
        return EXACT
    return rule.error if rule.error is not None else DERIVED


def _elementwise(rule, arrays, errs, params, outs, aux, overflowed=None, tails=None):
    """sum_i |dy/dx_i|·e_i through the rule's own VJP formulas (diagonal Jacobian: J·e = VJP(e));
    ``overflowed``: per input, its overflow flags (None: none; Tracker._flag_overflows); ``tails``:
    (the dtype, per input its dtype-overflow flags or None; Tracker._flag_dtype_overflow)."""
    overflowed = overflowed or [None] * len(arrays)
    dtype, tails = tails or (None, [None] * len(arrays))
    out = outs[0]
    total = np.zeros(out.shape)
    if not any(e is not None and np.any(e) for e in errs):
        return total
    inputs = list(rule.inputs)
    ctx = Context(
        dict(params),
        tuple(getattr(a, "shape", None) for a in arrays),
        tuple(getattr(a, "dtype", None) for a in arrays),
        tuple(True for _ in arrays),
        aux,
    )
    for name, a in zip(inputs, arrays):
        setattr(ctx, name, _make(np.array(a, copy=True)) if isinstance(a, np.ndarray) else a)
    ctx.result = _make(np.array(out, copy=True))
    with no_grad():
        for i, e in enumerate(errs):
            if e is None or not np.any(e):
                continue
            formula = rule.grads[i] if rule.grads is not None else None
            if formula is None:
                continue
            g = _make(np.array(np.broadcast_to(e, out.shape), dtype=np.float64, order="C"))
            with np.errstate(all="ignore"):
                d = np.abs(np.asarray(formula(ctx, g)._data)).astype(np.float64)
                # an input that is exactly 0 in error, or not finite, carries no term: a non-finite
                # value is not a rounded one (its result is a convention, judged as such), and its
                # error (infinite, from a relative term) times a zero derivative is 0·inf = nan
                # (logcumsumexp's backward masks its exponents with -inf before exp: its bound was
                # inf or nan everywhere, a check that could not fail). An overflowed infinity is a
                # rounded value (of a finite exact one): it carries the tail term (_overflow_tail)
                carries = (np.broadcast_to(e, out.shape) != 0) & np.broadcast_to(_finite(arrays[i]), out.shape)
                d = np.where(carries, np.broadcast_to(d, out.shape), 0.0)
                lost = carries & ~np.isfinite(d) & _all_finite(arrays, out.shape)
                if lost.any():
                    wide = _wide_term(formula, inputs, arrays, params, out, e)
                    d = d if wide is None else np.where(lost, wide, d)
            if overflowed[i] is not None:
                d = d + _overflow_tail(rule, arrays, params, out, i, overflowed[i])
            if tails[i] is not None:
                d = _dtype_tail(rule, arrays, params, out, i, tails, LARGEST[dtype], d)
            total = total + d
    return total


def _all_finite(arrays, shape):
    """Where every array operand of an elementwise rule is finite (numbers and None count as finite)."""
    ok = np.ones(shape, dtype=bool)
    for a in arrays:
        if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
            ok &= np.broadcast_to(np.isfinite(a), shape)
    return ok


def _wide_term(formula, names, arrays, params, out, e):
    """|dy/dx_i|·e_i in long double where float64 lost it, or None where the formula does not run on
    NumPy arrays (it calls the reference's ops). The slope of a finite term may overflow float64
    although the term does not: div's -g·((a/b)/b) at a = 0.27, b = 3.3e-308 (log10's gradient at a
    subnormal z) forms (a/b)/b = 7.6e614, inf - inf i in complex128, and e·(inf - inf i) is nan, where
    the term, 0.27·3.5e-323/|b|^2, is 8.8e291 (a nan bound is judged as 0: the element had to match to
    the last bit). Long double (x86's 80-bit format: exponents to 1e4932) holds the slope; where it is
    float64 itself the term stays lost."""
    def wide(a):
        if isinstance(a, np.ndarray) and a.dtype in (np.float64, np.complex128):
            return a.astype(np.clongdouble if a.dtype.kind == "c" else np.longdouble)
        return a

    ctx = type("WideContext", (), {})()
    ctx.params = dict(params)
    for name, a in zip(names, arrays):
        setattr(ctx, name, wide(a))
    ctx.result = wide(out)
    g = np.asarray(np.broadcast_to(e, out.shape), dtype=np.longdouble)
    try:
        with np.errstate(all="ignore"):
            term = np.abs(np.asarray(formula(ctx, g)))
    except Exception:  # a formula written in the reference's ops (apply, Tensor methods)
        return None
    if term.dtype.kind not in "fc":
        return None
    return np.broadcast_to(np.asarray(term, dtype=np.float64), out.shape)


#: Where the exact value of a float64 overflow lies: past half the largest float64. Its operands are
#: finite float64 values whose bounded errors are relative ones far below a factor of 2 (a bound that
#: loses a factor of 2 is infinite already), so the exact value is beyond LARGEST/2 in magnitude.
_OVERFLOW_FLOOR = LARGEST["float64"] / 2
#: overflow flag states (Tracker._overflow_flags)
FLOORED, UNBOUNDED = 1.0, 2.0


def _overflow_tail(rule, arrays, params, out, i, flags):
    """The error an overflowed input ``i`` (its flagged elements, ``flags``) carries into an
    elementwise op's result ``out``: the exact input lies in [LARGEST/2, inf) (with its sign), where
    the op moves from f(±LARGEST/2) to f(±inf), the reference's value; the term is their distance
    (inf where either is not finite). That is the op's whole range over the tail where f is monotone
    there, as the table's elementwise ops are (1/x, exp(-x), tanh, a product with a finite factor);
    exp(-(e^355)^2) is 0 in both, so erf's derivative e^(-x²) at x = 1e155 keeps its bound, and
    1/(e^355·e^355) is within 2/LARGEST of 0. Elsewhere 0."""
    x = np.asarray(arrays[i])
    flags = np.where(np.isinf(x), np.broadcast_to(flags, x.shape), 0.0)  # (a stale flag on a finite element: none)
    moved = list(arrays)
    with np.errstate(all="ignore"):
        if np.iscomplexobj(x):  # each infinite part moves to the floor on its own
            moved[i] = _to_floor(x.real, flags) + 1j * _to_floor(x.imag, flags)
        else:
            moved[i] = _to_floor(x, flags)
        moved[i] = moved[i].astype(x.dtype)
        r = rule_forward(rule)(*moved, **params)
        r = r[0] if rule.has_aux else r
        gap = np.abs(np.asarray(r) - np.asarray(out)).astype(np.float64)
    gap = np.where(np.isnan(gap) | (np.broadcast_to(flags, out.shape) >= UNBOUNDED), np.inf, gap)
    return np.where(np.broadcast_to(flags, out.shape) > 0, np.broadcast_to(gap, out.shape), 0.0)


def _dtype_tail(rule, arrays, params, out, i, tails, largest, d):
    """``d``, the term of input ``i``, with the tail term at its dtype-flagged elements (``tails``:
    per input, flags or None): the framework's value of x_i there lies in [L/2, inf] with x_i's sign
    (L = ``largest``, the dtype's; Tracker._flag_dtype_overflow), and so does the exact one (|x_i| is
    past the dtype's overflow threshold, above L); an op monotone on that tail moves between
    f(±L/2) and f(±inf) there, which bounds |f(framework) - f(exact)| (|f'|·inf was nan or inf:
    exp(x - max) at x - max = -131008 in float16 is 0 either way, and softmax's bound was infinite).
    The other inputs stay at their values: an element where another input is flagged too is
    unbounded (the tails of two arguments are not one monotone range)."""
    x = np.asarray(arrays[i])
    flagged = np.broadcast_to(tails[i], x.shape) & np.isfinite(x)
    if not flagged.any():
        return d
    others = [np.broadcast_to(t, out.shape) for j, t in enumerate(tails) if j != i and t is not None]
    fn = rule_forward(rule)

    def at(v):
        args = list(arrays)
        args[i] = np.where(flagged, v, x).astype(x.dtype)
        r = fn(*args, **params)
        return np.asarray(r[0] if rule.has_aux else r, dtype=np.float64)

    with np.errstate(all="ignore"):
        gap = np.abs(at(np.copysign(largest / 2, x)) - at(np.copysign(np.inf, x)))
    gap = np.where(np.isnan(gap), np.inf, gap)
    if others:
        gap = np.where(np.logical_or.reduce(others), np.inf, gap)
    return np.where(np.broadcast_to(flagged, out.shape), np.broadcast_to(gap, out.shape), d)


def _to_floor(x, flags):
    """``x`` with its flagged infinite elements at ±LARGEST/2."""
    return np.where((flags > 0) & np.isinf(x), np.copysign(_OVERFLOW_FLOOR, x), x)


#: the secant step of :func:`_mixed_propagation`, relative to max(|x|, 1): wide enough that the
#: float64 kernels' few-ulp errors change the slope by a negligible 2^-26 relative (of |f|/|x|),
#: narrow enough that the secant is the derivative to first order (the activations vary on a
#: scale of 1 or of |x|)
_SECANT = 2.0**-26


def _mixed_propagation(rule, arrays, errs, params, cu, overflowed=None):
    """sum_i |df/dx_i|·(e_i + 2·cu·|x_i|): the inputs' errors and the framework's own argument
    perturbation (a c-ulp mixed-stable kernel computes f(x (1 + d)), |d| <= 2·c·u) carried by the
    exact function. Derivation: |f(x + t) - f(x)| <= |f'(x)|·|t| to first order (the model's order
    everywhere); |f'(x)| is the larger of the two one-sided secant slopes of the rule's own exact
    float64 kernel over a step h = 2^-26·max(|x|, 1), which is f'(x) to first order in h, found
    without the next derivative primitive (an mpmath differentiation for a second derivative).
    Non-finite inputs carry no term (the value there is a convention, not a rounding), except an
    overflowed one (``overflowed``: per input, its flags or None): it carries an infinite one."""
    fn = rule_forward(rule)
    overflowed = overflowed or [None] * len(arrays)
    total = 0.0
    for i, a in enumerate(arrays):
        if not _is_float(a):
            continue
        x = np.asarray(a, dtype=np.float64)
        spread = 2 * cu * np.abs(x) + (0.0 if errs[i] is None else np.asarray(errs[i], dtype=np.float64))
        h = _SECANT * np.maximum(np.abs(x), 1.0)

        def at(v, i=i):
            args = [v if j == i else b for j, b in enumerate(arrays)]
            return np.asarray(fn(*args, **params), dtype=np.float64)

        with np.errstate(all="ignore"):
            y = at(x)
            right, left = np.abs(at(x + h) - y) / h, np.abs(y - at(x - h)) / h
            # at an end of the function's real domain (2F1 at its branch point x = 1: nan past it)
            # one side is nan: the other side's slope is the derivative there only where that
            # derivative is finite (2F1 at x = 1 for c - a - b > 1). Where it is not (0 < c - a - b
            # < 1: f' ~ (1 - x)^(c-a-b-1)) the secant over h is far below the move of a few ulps
            # (16x at x = 1 - 2^-40 for a = b = 0.25, c = 1; found by review): so the one-sided
            # slope is kept only where the same side's secant over h/16 agrees within 1% (a finite
            # derivative: they differ by f''·h relative, 2^-26; a singular one of exponent s - 1 by
            # 16^(1-s)); elsewhere, and with nan on both sides, no slope: inf
            one_sided = np.isnan(right) != np.isnan(left)
            slope = np.fmax(right, left)
            if np.any(one_sided):
                h16 = h / 16
                right16 = np.abs(at(x + h16) - y) / h16
                left16 = np.abs(y - at(x - h16)) / h16
                finer = np.where(np.isnan(right), left16, right16)
                stable = np.abs(finer - slope) <= 0.01 * np.fmax(finer, slope)
                slope = np.where(one_sided & ~stable, np.inf, slope)
            carries = np.isfinite(x)
            slope = np.where(carries, np.nan_to_num(slope, nan=np.inf), 0.0)
            if overflowed[i] is not None:
                # (a flag on a finite element, the other part of a flagged complex root's real
                # view, is no overflow of this element)
                flagged = (np.broadcast_to(overflowed[i], slope.shape) > 0) & np.broadcast_to(np.isinf(x), slope.shape)
                slope, carries = np.where(flagged, np.inf, slope), carries | flagged
            # an exact infinity carries no term: its spread (2·cu·|x|, and its error) is infinite,
            # and 0·inf was nan (softplus' at the -inf of a glu gate: every derivative of the gate
            # read as unbounded, issue 38)
            total = total + np.where(carries, slope * spread, 0.0)
    return total


def _gather(rule, arrays, errs, params, outs, overflowed=None):
    """The op applied to the errors (a max: the largest error that could be selected). An input
    element that is not finite and not an overflow (``overflowed``: per input, its flags or None)
    is moved as it is, not rounded: its error (infinite, from a relative term u·|inf| upstream) is
    no perturbation of the values the op selects among (:func:`_moved_errors`)."""
    overflowed = overflowed or [None] * len(arrays)
    e_in = [
        _moved_errors(a, e, f) if e is not None else (np.zeros(a.shape) if _is_float(a) else a)
        for a, e, f in zip(arrays, errs, overflowed)
    ]
    fn = rule_forward(rule)
    if rule.error is not None and "window" in rule.error.extra:
        return rule.error.extra["window"](e_in, params, outs)
    r = fn(*e_in, **params)
    r = r[0] if rule.has_aux else r
    r = list(r) if rule.outputs != 1 else [r]
    return [np.abs(np.asarray(v)).astype(np.float64) if v is not None else None for v in r]


def _moved_errors(a, e, flags):
    """``a``'s errors for a selection or a move: 0 at an exact infinity or a nan (an element not
    finite and not flagged as a float64 overflow), ``e`` elsewhere. The framework holds the same
    infinity there (it is an input, a pole, a convention), so a move carries it exactly and a
    selection either picks it (the result is not finite: judged by exact match, and _finish makes
    its error infinite again) or not (it moved nothing). Its error, inf from the u·|y| of the op
    that produced it, made amax's largest error over the window infinite: softmax's max over a
    column [0.23, 0, -inf] had an infinite bound, and so had every element of its column and of
    every derivative after it (issue 38). An overflowed infinity (a finite exact value) keeps its
    error, as it does in an elementwise op (:func:`_elementwise`)."""
    e = np.asarray(e)
    if not _is_float(a) or e.shape != np.shape(a):
        return e
    with np.errstate(invalid="ignore"):
        exact = ~np.isfinite(a)
    if flags is not None:
        exact &= ~(np.broadcast_to(flags, exact.shape) > 0)
    return np.where(exact, 0.0, e) if exact.any() else e


def _host(v):
    """Device arrays (in tuples and lists too) as host copies: the tracker's bookkeeping is NumPy."""
    if _is_device(v):
        return to_numpy(v)
    if isinstance(v, (tuple, list)):
        return type(v)(_host(x) for x in v)
    return v


def _is_device(a):
    """An array on a device (CuPy, the strict test namespace): bounds are kept on the host."""
    return hasattr(a, "shape") and not isinstance(a, (np.ndarray, np.generic)) and hasattr(a, "get")


def _value(a):
    """A result as float64, or complex128 for a complex one."""
    return np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64)


#: ``reference.tensor``, which :func:`bound_of` makes its inputs with. The op layer sits above this
#: module (its functions report to the active tracker, its rules declare their errors here), so
#: ``reference.ops.api`` registers its constructor when it is imported (:func:`register_tensor`).
_op_layer: dict = {}


def register_tensor(tensor):
    """Register ``reference.tensor`` (by reference.ops.api), for :func:`bound_of`."""
    _op_layer["tensor"] = tensor


def bound_of(fn, inputs, precision: Precision, input_errors=None, device=None):
    """Run ``fn(*tensors)`` under a tracker; return (results, per-result error bounds, tracker).

    ``inputs``: float64 arrays (exact in the framework's dtype), made Tensors requiring grad;
    ``fn`` returns a Tensor or a tuple/list of Tensors (None allowed). ``device``: where the
    computation runs (None: the CPU); the bounds are computed on the host either way.
    """
    tensor = _op_layer["tensor"]
    with Tracker(precision) as tr:
        tensors = [
            tensor(a, dtype=complex128 if np.iscomplexobj(a) else float64, device=device, requires_grad=True)
            if a is not None
            else None
            for a in inputs
        ]
        for t, a in zip(tensors, inputs):
            if t is None:
                continue
            err = np.zeros(a.shape)
            if input_errors is not None and input_errors.get(id(a)) is not None:
                err = err + input_errors[id(a)]
            tr.set_error(t, err)
        res = fn(*tensors)
        multi = isinstance(res, (tuple, list))
        res = list(res) if multi else [res]
        values = [None if r is None else _value(to_numpy(r.detach()._data)) for r in res]
        bounds = [None if r is None else np.array(tr.error_of(r), dtype=np.float64) for r in res]
    return values, bounds, tr


__all__ = [
    "DERIVED",
    "EXACT",
    "GATHER",
    "ErrorSpec",
    "Precision",
    "Tracker",
    "bound",
    "bound_of",
    "composite",
    "derived_bound",
    "elementwise",
    "exact_elementwise",
    "products",
]


table.register(error_tracker=active)  # (reference.autograd.layout keeps a copy's error bound)
