"""Programs with views and in-place ops, functionalised by the reference, run as pure functions.

JAX and TensorFlow have no mutable views. To run a program case there, the program text is
executed with ``T`` = a :class:`Namespace` whose tensors are *functional*: every tensor is a read
(gather) of a storage's current value at an index array, and every in-place update is a scatter
into the storage's value — the semantics CopySlices gives an in-place op on a view. The reference
runs the same program in lockstep and decides the aliasing: which storage a result lives in and
at which positions (its size, stride and storage offset), whether ``reshape`` made a view or a
copy, and so on; the framework computes every value (``exp``, ``matmul``, ``conv1d``, …) with its
own ops.

Gradients come from the framework's autodiff. A ``backward()`` (or ``autograd.grad``) call is the
k-th differentiation of the program; its gradient is the framework's gradient of *the program run
up to that call* as a function of the inputs (:meth:`Run.until`), so ``retain_graph`` and several
backward calls accumulate, and ``autograd.grad(..., create_graph=True)`` nested inside a later
backward differentiates twice. ``no_grad`` and ``detach`` are ``stop_gradient``; an in-place
update under ``no_grad`` changes the values but not the derivative (``old + stop_gradient(new -
old)``), as PyTorch's history is unchanged by it.

What has no functional counterpart is declared, not guessed: a program the reference raises on
(version counters, backward twice) and ops outside the table (:data:`VALUE_OPS`); gradient hooks and
``retain_grad`` are translated (:meth:`Run.retain_grad`, :meth:`Run.register_hook`). A functional framework cannot say "no gradient": an input whose ``.grad``
the reference leaves None is reported None when the framework's gradient is exactly zero.
"""

from __future__ import annotations

import contextlib
import functools
import re

import numpy as np

import reference
from conformance.amp import low_dtype
from conformance.case import AMP_VARIABLES
from conformance.ops import RECORDS
from conformance.ops._run import JaxNamespace
from conformance.ops.elementwise import jax_masked_fill, tf_masked_fill
from conformance.programs import (
    ProgramError,
    _in_forward,
    _policy,
    autograd_state_error,
    compile_program,
    error_line,
    prefix_case,
    reference_outcome,
)
from conformance.unsupported import Unsupported
from reference.autograd.tensor import storage_of
from reference.errors import Precision, Tracker


class _Stop(Exception):
    def __init__(self, value):
        self.value = value


#: The vocabulary's ops whose JAX and TensorFlow spellings are their op records' (``jax``, ``tf``):
#: one place per op. A name is the record called as ``op(x, *args)``, the record's inputs and params
#: in order; a function ``adapt(spell) -> op`` adapts the vocabulary's call to the records it names
#: (``spell(record)``: that record's spelling); masked_fill is its record's (:func:`record_ops`).
#: The rest of :meth:`JaxBackend.ops` and
#: :meth:`TensorFlowBackend.ops` has no record (docs/architecture.md says why, op by op).
RECORD_OPS = {
    **{
        name: name
        for name in (
            "sign",
            "exp",
            "tanh",
            "sigmoid",
            "relu",
            "abs",
            "angle",
            "conj_physical",
            "neg",
            "sqrt",
            "softmax",
            "log_softmax",
            "add",
            "sub",
            "mul",
            "div",
            "rsub",
            "clamp",
            "mean",
        )
    },
    "amax": "max",  # the vocabulary's amax takes no dim (Run.value_op): the whole max, amax(x) = max(x)
    "matmul": "mm",  # torch.matmul's spelling is mm's and bmm's: jnp.matmul, tf.linalg.matmul (any batch)
    "sum": lambda spell: (
        lambda x, dim=None: spell("sum")(x) if dim is None else spell("sum_dim")(x, dim, False)
    ),
    # the vocabulary's embedding(indices, weight): the record's (weight, indices, their shape, no
    # padding_idx, no scale_grad_by_freq)
    "embedding": lambda spell: lambda idx, w: spell("embedding")(w, idx.ravel(), idx.shape, None, False),
}


def record_ops(field: str, namespace) -> dict:
    """:data:`RECORD_OPS` as their records spell them for one framework (``field``: ``"jax"`` with
    a :class:`conformance.ops._run.JaxNamespace`, ``"tf"`` with the ``tensorflow`` module)."""

    def spell(name):
        return functools.partial(getattr(RECORDS[name], field), namespace)

    table = {op: spell(how) if isinstance(how, str) else how(spell) for op, how in RECORD_OPS.items()}
    # masked_fill with the program's mask: the function the masked_fill record spells itself with
    # (the record's mask is x > 0)
    masked_fill = {"jax": jax_masked_fill, "tf": tf_masked_fill}[field]
    return table | {"masked_fill": functools.partial(masked_fill, namespace)}


# ---- backends: the framework's own ops ---------------------------------------------------------------
class JaxBackend:
    name = "jax"

    def __init__(self, dtype="float64", amp=""):
        import jax

        jax.config.update("jax_enable_x64", True)
        self.jax, self.jnp = jax, jax.numpy
        self.dtype = getattr(jax.numpy, dtype)  # every value of the program is computed in it
        # a mixed-precision policy (conformance.amp): ``dtype`` is the variables', the casts are :meth:`amp_ops`
        self.amp = amp

    def cast(self, x, dtype: str):
        return x.astype(getattr(self.jnp, dtype))

    def amp_ops(self):
        """The policy's casts as a JAX user writes them (conformance.amp): the products of operands cast
        to the compute dtype (bfloat16, float16) with ``preferred_element_type=jnp.float32``, cast back
        to it; the loss on float32 logits."""
        jax, jnp, nn = self.jax, self.jnp, self.jax.nn
        low, f32 = getattr(jnp, low_dtype(self.amp)), jnp.float32
        return {
            "matmul": lambda a, b: jnp.matmul(
                a.astype(low), b.astype(low), preferred_element_type=f32
            ).astype(low),
            "conv1d": lambda x, w, padding: jax.lax.conv_general_dilated(
                x.astype(low), w.astype(low), (1,), [(padding, padding)], preferred_element_type=f32
            ).astype(low),
            "soft_cross_entropy": lambda x, labels: (
                -jnp.sum(labels * nn.log_softmax(x.astype(f32), axis=-1), axis=-1)
            ),
        }

    def constant(self, a):
        return self.jnp.asarray(host_array(a), dtype=self.dtype)

    def gather(self, flat, idx):
        return self.jnp.take(flat, self.jnp.asarray(idx))

    def scatter(self, flat, idx, values):  # (written in the storage's dtype, as an in-place op writes)
        values = self.jnp.reshape(self.jnp.asarray(values), (-1,)).astype(flat.dtype)
        return flat.at[self.jnp.asarray(idx.ravel())].set(values)

    def zeros(self, n, dtype=None):
        return self.jnp.zeros((n,), dtype=dtype or self.dtype)

    def stop_gradient(self, x):
        return self.jax.lax.stop_gradient(x)

    def broadcast(self, x, shape):
        return self.jnp.broadcast_to(self.jnp.asarray(x, dtype=self.dtype), shape)

    def grad(self, f, xs):
        """PyTorch's gradients: JAX's gradient of a real function of a complex input is the conjugate
        of PyTorch's (docs/complex.md, "JAX's convention"), conjugated back here."""
        grads = self.jax.grad(f, argnums=tuple(range(len(xs))))(*xs)
        return tuple(self.jnp.conj(g) if self.jnp.iscomplexobj(g) else g for g in grads)

    # complex values (programs with complex tensors): parts, pairs, conjugates
    def real(self, x):
        return self.jnp.real(x)

    def imag(self, x):
        return self.jnp.imag(x)

    def complex(self, re, im):
        return self.jax.lax.complex(re, im)

    def conj(self, x):
        return self.jnp.conj(x)

    def select(self, mask, a, b):
        return self.jnp.where(mask, a, b)

    def is_complex(self, x):
        return self.jnp.iscomplexobj(x)

    def custom(self, primal, backward, residuals):
        """``jax.custom_vjp``: the values of ``primal(*xs)[0]``, the gradient ``backward(res, gs)``.

        The forward rule returns the outputs as ``f``'s own (so a second differentiation goes through the
        template's backward again, as PyTorch's graph does) and ``residuals(res, xs, outs)``."""
        f = self.jax.custom_vjp(lambda *xs: primal(*xs)[0])

        def fwd(*xs):
            outs = f(*xs)
            return outs, residuals(primal(*xs)[1], xs, outs)

        f.defvjp(fwd, backward)
        return f

    def checkpoint(self, f):
        return self.jax.checkpoint(f)

    def ops(self):
        jnp, nn = self.jnp, self.jax.nn
        # the ops no record spells (docs/architecture.md): a comparison's value, conv1d (the conv
        # record's spelling is its adapter's), the model templates' ops (conformance.models)
        table = {
            "le": lambda x, y: jnp.less_equal(x, y).astype(self.dtype),
            "conv1d": lambda x, w, padding: self.jax.lax.conv_general_dilated(
                x, w, (1,), [(padding, padding)]
            ),
            "max_pool1d": lambda x, k: self.jax.lax.reduce_window(
                x, -jnp.inf, self.jax.lax.max, (1, 1, k), (1, 1, k), "VALID"
            ),
            "soft_cross_entropy": lambda x, labels: -jnp.sum(labels * nn.log_softmax(x, axis=-1), axis=-1),
        }
        return record_ops("jax", JaxNamespace()) | table | (self.amp_ops() if self.amp else {})


class TensorFlowBackend:
    name = "tensorflow"

    def __init__(self, dtype="float64", amp=""):
        import tensorflow as tf

        self.tf = tf
        self.dtype = getattr(tf, dtype)  # every value of the program is computed in it
        # a mixed-precision policy (conformance.amp): ``dtype`` is the variables', the casts are :meth:`amp_ops`
        self.amp = amp

    def cast(self, x, dtype: str):
        return self.tf.cast(x, getattr(self.tf, dtype))

    def amp_ops(self):
        """The Keras policy's casts (``mixed_bfloat16``, ``mixed_float16``), applied explicitly to raw
        TensorFlow (conformance.amp): the products in the compute dtype (its operands cast), the loss
        on float32 logits."""
        tf, low = self.tf, getattr(self.tf, low_dtype(self.amp))
        return {
            "matmul": lambda a, b: tf.linalg.matmul(tf.cast(a, low), tf.cast(b, low)),
            "conv1d": lambda x, w, padding: self._conv1d(tf.cast(x, low), tf.cast(w, low), padding),
            "soft_cross_entropy": lambda x, labels: tf.nn.softmax_cross_entropy_with_logits(
                labels, tf.cast(x, tf.float32)
            ),
        }

    def _promoting(self, fn):
        """``fn`` with PyTorch's type promotion made explicit (TensorFlow has none: a bfloat16 and a
        float32 operand raise): floating tensor operands cast to the widest of their dtypes."""
        tf = self.tf
        rank = {tf.bfloat16: 0, tf.float16: 0, tf.float32: 1, tf.float64: 2}

        def promoted(*args):
            dts = [a.dtype for a in args if isinstance(a, (tf.Tensor, tf.Variable)) and a.dtype in rank]
            if len(set(dts)) < 2:
                return fn(*args)
            wide = max(dts, key=rank.get)
            return fn(*[tf.cast(a, wide) if getattr(a, "dtype", None) in rank else a for a in args])

        return promoted

    def constant(self, a):
        return self.tf.cast(self.tf.constant(host_array(a)), self.dtype)  # exact: a is

    def gather(self, flat, idx):
        return self.tf.gather(flat, self.tf.constant(idx, dtype=self.tf.int64))

    def scatter(self, flat, idx, values):  # (written in the storage's dtype, as an in-place op writes)
        tf = self.tf
        return tf.tensor_scatter_nd_update(
            flat, tf.constant(idx.reshape(-1, 1), tf.int64), tf.cast(tf.reshape(values, [-1]), flat.dtype)
        )

    def zeros(self, n, dtype=None):
        return self.tf.zeros((n,), dtype=dtype or self.dtype)

    def stop_gradient(self, x):
        return self.tf.stop_gradient(x)

    def broadcast(self, x, shape):
        return self.tf.broadcast_to(self.tf.cast(x, self.dtype), shape)

    def grad(self, f, xs):
        tf = self.tf
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        return tape.gradient(y, list(xs), unconnected_gradients=tf.UnconnectedGradients.ZERO)

    # complex values (TensorFlow's gradient of a real function of a complex input is PyTorch's)
    def real(self, x):
        return self.tf.math.real(x)

    def imag(self, x):
        return self.tf.math.imag(x)

    def complex(self, re, im):
        return self.tf.complex(re, im)

    def conj(self, x):
        return self.tf.math.conj(x)

    def select(self, mask, a, b):
        return self.tf.where(self.tf.constant(mask), a, b)

    def is_complex(self, x):
        return self.tf.as_dtype(x.dtype).is_complex

    def _complex_promoting(self, fn):
        """``fn`` with PyTorch's promotion of a real operand beside a complex one (TensorFlow has none):
        a real tensor becomes complex of its width, a Python complex number meets a complex tensor."""
        tf = self.tf
        wide = {tf.float32: tf.complex64, tf.float64: tf.complex128}

        def promoted(*args):
            tensors = [a for a in args if isinstance(a, (tf.Tensor, tf.Variable))]
            targets = [a.dtype for a in tensors if a.dtype.is_complex]
            if any(isinstance(a, complex) for a in args):
                targets += [wide[a.dtype] for a in tensors if a.dtype in wide]
            if not targets:
                return fn(*args)
            to = max(targets, key=lambda d: d.size)
            return fn(*[tf.cast(a, to) if isinstance(a, (tf.Tensor, tf.Variable)) else a for a in args])

        return promoted

    def custom(self, primal, backward, residuals):
        """``tf.custom_gradient``: the values of ``primal(*xs)[0]``, the gradient ``backward(res, gs)``.

        TensorFlow runs a custom_gradient's function with the tape stopped, so residuals computed
        there would be constants to an outer tape (no second order through them, where PyTorch and
        JAX have one). They are computed first, recorded, and the gradient function closes over them.
        """
        tf = self.tf

        def apply(*xs):
            cell = {}

            @tf.custom_gradient
            def f(*ys):
                outs, _ = primal(*ys)

                def grad(*gs):
                    gs = [tf.zeros_like(o) if g is None else g for g, o in zip(gs, outs)]
                    return list(backward(cell["res"], tuple(gs)))

                return list(outs), grad

            outs = tuple(f(*xs))
            cell["res"] = residuals(primal(*xs)[1], xs, outs)  # recorded, outside f
            return outs

        return apply

    def checkpoint(self, f):
        return self.tf.recompute_grad(f)

    def _conv1d(self, x, w, padding):
        tf = self.tf
        x = tf.pad(tf.transpose(x, [0, 2, 1]), [[0, 0], [padding, padding], [0, 0]])  # NWC
        y = tf.nn.conv1d(x, tf.transpose(w, [2, 1, 0]), stride=1, padding="VALID")  # filter (W, in, out)
        return tf.transpose(y, [0, 2, 1])

    def ops(self):
        tf = self.tf
        table = record_ops("tf", tf) | {  # and the ops no record spells, as JaxBackend.ops
            "le": lambda x, y: tf.cast(tf.less_equal(x, tf.cast(y, x.dtype)), x.dtype),
            "conv1d": self._conv1d,
            "max_pool1d": lambda x, k: tf.transpose(  # (TensorFlow's CPU pooling is channels-last)
                tf.nn.max_pool1d(tf.transpose(x, [0, 2, 1]), k, k, "VALID"), [0, 2, 1]
            ),
            "soft_cross_entropy": lambda x, labels: tf.nn.softmax_cross_entropy_with_logits(labels, x),
        }
        if self.dtype.is_complex:  # a complex program: real operands promoted as PyTorch does
            for name in ("add", "sub", "mul", "div", "rsub"):
                table[name] = self._complex_promoting(table[name])
        if not self.amp:
            return table
        table.update(self.amp_ops())
        return {name: self._promoting(fn) for name, fn in table.items()}


# ---- the functional tensor ------------------------------------------------------------------------------
# method name -> (table op, how the arguments map); in-place names map to their out-of-place op
VALUE_OPS = {*RECORD_OPS, "masked_fill", "le", "resolve_conj", "resolve_neg", "clone", "to"}
INPLACE = {f"{n}_" for n in ("exp", "tanh", "sigmoid", "relu", "neg", "add", "sub", "mul", "div", "clamp")}
INPLACE |= {"zero_", "fill_", "copy_"}
_BINARY = {
    "__add__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__matmul__": "matmul",
    "__truediv__": "div",
    "__le__": "le",
    "__rsub__": "rsub",
    "__radd__": "add",
    "__rmul__": "mul",
}


def host_array(a) -> np.ndarray:
    """A NumPy array of the program's values: float64, complex128 for complex ones. Converted in
    one step: a TensorFlow bfloat16 tensor's __array__ gives no array without a dtype."""
    return np.asarray(a, dtype=np.complex128 if _complex_values(a) else np.float64)


def _complex_values(a) -> bool:
    dtype = getattr(a, "dtype", None)
    if dtype is None:
        return np.iscomplexobj(a)
    if hasattr(dtype, "is_complex"):  # a TensorFlow DType
        return bool(dtype.is_complex)
    try:
        return np.dtype(dtype).kind == "c"
    except TypeError:
        return False


class Storage:
    def __init__(self, value, alias_of=None, base_idx=None, is_complex=False):
        self.value = value  # a flat framework array
        # a complex storage; a real view of it (view_as_real, .real, .imag) reads parts, and a real
        # storage viewed as complex (view_as_complex) reads pairs of elements (FTensor.mode)
        self.is_complex = is_complex
        self.generation = 0  # in-place writes so far
        self.size = int(value.shape[0])
        self.base_idx = base_idx  # the positions of the storage's base (the tensor it was made for)
        self.last_event = None  # the write that made the base's current autograd node (Run.event)
        # a custom Function's output that is a view of an input: its own values (the Function's, with
        # its gradient) at the positions of the input's storage ``alias_of`` as it was (generation)
        self.alias_of = alias_of
        self.alias_generation = alias_of.generation if alias_of is not None else 0


def _address(storage) -> int:
    """The memory address of a reference storage (a NumPy array): a complex storage and its real view
    (view_as_real, .real, .imag), or a real one and its complex view, start at the same address."""
    return storage.__array_interface__["data"][0]


def _index(r) -> np.ndarray:
    """The flat storage positions of a reference tensor's elements (offset + Σ i_k·stride_k)."""
    shape, stride = tuple(r.shape), r.stride()
    idx = np.full(shape, r.storage_offset(), dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, stride)):
        idx += (np.arange(n, dtype=np.int64) * s).reshape([-1 if j == k else 1 for j in range(len(shape))])
    return idx


class FTensor:
    """A functional tensor: the reference's tensor ``r`` (geometry) and a storage (values)."""

    def __init__(self, run, r, storage, detached=None):
        self._run, self._r, self._storage, self._idx = run, r, storage, _index(r)
        self.detached = detached
        # None: the tensor's elements are the storage's; "parts": a real view of a complex storage
        # (positions count real parts: element p // 2, its real part when p is even); "pairs": a complex
        # view of a real storage (element q is the pair 2q, 2q + 1)
        self.mode = None
        if bool(r.is_complex()) != storage.is_complex:
            self.mode = "parts" if storage.is_complex else "pairs"
        # the views this one was made through, itself included: (number, positions) of each (Run.view)
        self.lineage = ()
        self.generation = storage.generation  # its storage's in-place writes when it was made

    # geometry, answered by the reference
    @property
    def shape(self):
        return self._r.shape

    def stride(self, *a):
        return self._r.stride(*a)

    def storage_offset(self):
        return self._r.storage_offset()

    def dim(self):
        return self._r.dim()

    @property
    def ndim(self):
        return self._r.ndim

    @property
    def dtype(self):  # the reference's (float64): ``T.zeros(..., dtype=v0.dtype)`` makes the geometry
        return self._r.dtype

    def value(self):
        alias = self._storage.alias_of
        if alias is not None and alias.generation != self._storage.alias_generation:
            raise Unsupported(
                "reading a custom Function's view output after its input was written in place: PyTorch's "
                "output shares the input's memory (it sees the write), a functional value cannot"
            )
        B, deltas = self._run.B, self._run.view_deltas
        v = self._read()
        for number, idx in self.lineage:  # a retained view's perturbation, read through it (Run.view)
            if number in deltas:
                if self.mode or self._r.is_conj() or self._r.is_neg():
                    raise Unsupported(
                        "retain_grad of a view read through a conjugate, negative or complex/real view"
                    )
                v = v + B.gather(B.scatter(B.zeros(self._storage.size), idx, deltas[number]), self._idx)
        return B.stop_gradient(v) if self.detached else v

    def _read(self):
        """The tensor's values from its storage: through its mode, then its conj and negative bits."""
        B, flat, idx = self._run.B, self._storage.value, self._idx
        if self.mode == "parts":
            g = B.gather(flat, idx // 2)
            v = B.select(idx % 2 == 0, B.real(g), B.imag(g))
        elif self.mode == "pairs":
            v = B.complex(B.gather(flat, 2 * idx), B.gather(flat, 2 * idx + 1))
        else:
            v = B.gather(flat, idx)
        if self._r.is_neg():
            v = -v
        return B.conj(v) if self._r.is_conj() else v

    def write(self, new):
        """The storage's value with ``new`` (the tensor's shape) written at the tensor's elements: the
        inverse of :meth:`_read` (a conjugate view stores the conjugate, a part its part)."""
        B, flat, idx = self._run.B, self._storage.value, self._idx
        if self._r.is_conj():
            new = B.conj(new)
        if self._r.is_neg():
            new = -new
        if self.mode is None:
            return B.scatter(flat, idx, new)
        new = _reshape(B, new, (-1,))
        if self.mode == "pairs":
            flat = B.scatter(flat, 2 * idx, B.real(new))
            return B.scatter(flat, 2 * idx + 1, B.imag(new))
        positions = idx.ravel()
        parts = [B.real(flat), B.imag(flat)]
        for k in (0, 1):
            at = np.nonzero(positions % 2 == k)[0]
            if at.size:
                parts[k] = B.scatter(parts[k], positions[at] // 2, B.gather(new, at))
        return B.complex(*parts)

    @property
    def real(self):
        return self._run.view(self._r.real, self)

    @property
    def imag(self):
        return self._run.view(self._r.imag, self)

    @property
    def data(self):  # an alias of the same storage whose reads carry no gradient (as ``detach()``)
        return FTensor(self._run, self._r.data, self._storage, detached="data")

    # -- ops -------------------------------------------------------------------------------------------
    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._run.call(self, name, args, kwargs)

    def __getitem__(self, key):
        return self._run.call(self, "__getitem__", (key,), {})

    def __setitem__(self, key, value):
        view = self[key]
        self._run.inplace(
            view, "copy_", (value,), {}, ref=lambda: self._r.__setitem__(key, self._run.ref(value))
        )

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        self._r.backward(retain_graph=retain_graph, create_graph=create_graph)
        self._run.differentiate(self, None)

    # -- gradient state (Run.retain_grad, Run.register_hook) -----------------------------------------
    def retain_grad(self):
        self._r.retain_grad()  # the reference's own checks (requires_grad) and state
        self._run.retain_grad(self)

    def register_hook(self, hook):
        handle = self._r.register_hook(hook)
        self._run.register_hook(self, hook)
        return handle

    @property
    def grad(self):
        """The ``.grad`` the program reads: a leaf's accumulated gradient, a retained tensor's, else None."""
        return self._run.grad_of(self)


def _binary_method(name):
    def method(self, other):
        return self._run.call(self, name, (other,), {})

    method.__name__ = name
    return method


for _name in _BINARY:  # x + y, x @ y, 1 - x, ...: the value ops of _BINARY
    setattr(FTensor, _name, _binary_method(_name))


class Constant:
    """An integer or boolean tensor the program text makes (class targets, an embedding's indices, an
    attention mask): no gradient, no storage of values to write; the reference's tensor and its array."""

    def __init__(self, r):
        self._r = r
        self.array = np.asarray(r.numpy() if hasattr(r, "numpy") else r)

    @property
    def shape(self):
        return self._r.shape

    def __getattr__(self, name):  # its own methods (triu, bool, ...): another constant
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: Constant(getattr(self._r, name)(*args, **kwargs))


class _Grad:
    """A ``.grad`` read by the program (only returned: its value is the accumulated gradient)."""

    def __init__(self, value):
        self._value = value

    def value(self):
        return self._value


class Run:
    """One execution of the program text with T = a functional namespace over backend ``B``."""

    def __init__(self, B, source, inputs, concrete, stop_at=None, wraps=None, view_deltas=None, hooks=()):
        self.B, self.source, self.concrete, self.stop_at = B, source, concrete, stop_at
        # gradient state, translated (retain_grad, register_hook): writes and views are numbered in
        # program order (the same in every re-run); ``wraps``: write number -> functions applied to the
        # values that write gave its base (a retained tensor's zero perturbation, a hook's custom
        # gradient); ``view_deltas``: view number -> the zero perturbation of a retained view's reads
        self.events = 0
        self.views = 0
        self.wraps = dict(wraps or {})
        self.view_deltas = dict(view_deltas or {})
        self.hooks = list(hooks)  # (differentiation calls made before it, write number, hook function)
        self.retained = []  # retained non-leaf tensors (top-level run): [tensor, accumulated gradient]
        self.reference = reference
        self.table = B.ops()
        self.calls = 0  # differentiation calls so far (backward, autograd.grad)
        self.storages = {}  # id(reference storage) -> Storage
        self.addresses = {}  # the reference storage's memory address -> Storage (its complex/real views)
        self.keep = []  # the reference storages, alive so that their ids stay unique
        self.grads = None if stop_at is not None else [None] * len(inputs)
        self.inner = 0  # > 0 inside a custom Function's forward/backward or a checkpointed block
        self.functions = {}  # program class -> the reference Function running the same methods
        refs = [
            reference.tensor(
                host_array(a),
                dtype=reference.complex128 if np.iscomplexobj(a) else reference.float64,
                requires_grad=True,
            )
            for a in concrete
        ]
        self.leaves = [self.fresh(r, B.broadcast(x, tuple(r.shape))) for r, x in zip(refs, inputs)]
        self.inputs = inputs

    # -- storages ----------------------------------------------------------------------------------
    def fresh(self, r, value):
        """A tensor in a new storage holding ``value`` at ``r``'s positions."""

        base = storage_of(r)
        self.keep.append(base)
        idx = _index(r)
        # in the value's dtype (a mixed-precision program's storages are float32 or bfloat16)
        zeros = self.B.zeros(base.size, getattr(value, "dtype", None))
        storage = Storage(
            self.B.scatter(zeros, idx, value) if idx.size else zeros,
            base_idx=idx,
            is_complex=np.iscomplexobj(base),
        )
        self.storages[id(base)] = storage
        self.addresses[_address(base)] = storage
        self.event(storage)
        return FTensor(self, r, storage)

    def event(self, storage):
        """A write that gives the storage's base a new autograd node (its making, an in-place update
        with gradients on, through any view: CopySlices); applies the wraps asked for this write."""
        if (
            self.inner
        ):  # a template's forward/backward or a checkpointed block: traced a varying number of times
            return
        number, self.events = self.events, self.events + 1
        storage.last_event = number
        B, idx = self.B, storage.base_idx
        for fn in self.wraps.get(number, ()):
            storage.value = B.scatter(storage.value, idx, fn(B.gather(storage.value, idx)))

    def wrap(self, r, value=None):
        """``r`` as a functional tensor: a view of a known storage, or a new one holding ``value``."""

        storage = self.storages.get(id(storage_of(r)))
        if storage is None and value is None:  # view_as_real, view_as_complex, .real, .imag: the same memory
            storage = self.addresses.get(_address(storage_of(r)))
        if storage is not None and value is None:
            return FTensor(self, r, storage)
        if value is None:
            raise Unsupported("an op that is neither a view of a known tensor nor in the value table")
        if not self.reference.is_grad_enabled():
            value = self.B.stop_gradient(value)
        return self.fresh(r, value)

    def ref(self, x):
        if isinstance(x, (FTensor, Constant)):
            return x._r
        if isinstance(x, (list, tuple)):
            return type(x)(self.ref(v) for v in x)
        return x

    def val(self, x):
        if isinstance(x, Constant):
            return x.array
        return x.value() if isinstance(x, FTensor) else x

    # -- ops ---------------------------------------------------------------------------------------
    def call(self, t, name, args, kwargs):
        if name in INPLACE:
            return self.inplace(t, name, args, kwargs)
        out = getattr(t._r, name)(*self.ref(args), **self.ref(kwargs))
        op = _BINARY.get(name, name)
        if op == "detach":  # an alias of the same storage whose reads carry no gradient
            return FTensor(self, out, t._storage, detached="detach")
        if op in VALUE_OPS:
            return self.wrap(out, self.value_op(op, t, args, kwargs))
        if isinstance(out, (list, tuple)):
            return type(out)(self.view(o, t) for o in out)
        if id(storage_of(out)) not in self.storages and name in ("reshape", "flatten"):  # a copy
            return self.wrap(out, _reshape(self.B, t.value(), tuple(out.shape)))
        return self.view(out, t)

    def view(self, r, source):
        if storage_of(r) is storage_of(source._r):  # the source's storage (a custom Function's view
            view = FTensor(self, r, source._storage)  # output has its own over its input's positions)
        else:
            view = self.wrap(r)
        if not self.inner:  # numbered: a retained view's perturbation is read through it and its views
            view.lineage = source.lineage + ((self.views, view._idx),)
            self.views += 1
        # a view of a detached alias is one too; a view made under no_grad has no history
        view.detached = source.detached or (None if self.reference.is_grad_enabled() else "no_grad")
        return view

    def value_op(self, op, t, args, kwargs):
        x, a = t.value(), [self.val(v) for v in args]
        if op in ("clone", "to", "resolve_conj", "resolve_neg"):  # values are float64 throughout (a
            return x  # comparison's are 0.0 and 1.0); a conjugate or negative view's value is resolved
        if kwargs or (op in ("mean", "amax") and a):
            raise Unsupported(f"{op} with arguments {args} {kwargs}")
        return self.table[op](x, *a)

    def inplace(self, t, name, args, kwargs, ref=None):
        if t.detached == "detach" or (t.detached == "data" and not self.inner):
            raise Unsupported("an in-place op on a detached alias (its own history, its base's values)")
        (ref or (lambda: getattr(t._r, name)(*self.ref(args), **self.ref(kwargs))))()
        shape = tuple(t._r.shape)
        op = name[:-1]
        if op == "zero":
            new = self.B.broadcast(0.0, shape)
        elif op == "fill":
            new = self.B.broadcast(self.val(args[0]), shape)
        elif op == "copy":
            new = self.B.broadcast(self.val(args[0]), shape)
        else:
            new = self.value_op(op, t, args, kwargs)
        if not t._r.is_complex() and self.B.is_complex(new):  # (a complex program's broadcast constant)
            new = self.B.real(new)
        storage = t._storage
        updated = t.write(new)
        if not self.reference.is_grad_enabled():  # new values, the old history
            updated = _keep_history(self.B, storage.value, updated)
        storage.value = updated
        storage.generation += 1
        if self.reference.is_grad_enabled():
            self.event(storage)
        return t

    # -- custom Functions and checkpoint -------------------------------------------------------------
    def shadow(self, r, value):
        """A tensor of an inner run: the geometry of reference tensor ``r`` (shape, strides, offset) in a
        storage of its own holding ``value``; its reference shadow is a fresh, gradient-free tensor."""

        size = storage_of(r).size if r is not None else int(np.prod(np.shape(value)))
        dtype = self.reference.complex128 if self.B.is_complex(value) else self.reference.float64
        with self.reference.no_grad():
            base = self.reference.zeros((max(size, 1),), dtype=dtype)
            if r is None:
                geometry = base[: int(np.prod(np.shape(value)))].reshape(tuple(np.shape(value)))
            else:
                geometry = base.as_strided(tuple(r.shape), r.stride(), r.storage_offset())
        self.inner += 1  # not a write of the program (made a varying number of times: not numbered)
        try:
            return self.fresh(geometry, value)
        finally:
            self.inner -= 1

    def custom_apply(self, cls, args):
        """``cls.apply(*args)``: the reference applies its own Function running the program's methods
        (values, aliasing, errors); the framework computes the outputs with the template's ``forward``
        and differentiates them with its ``backward`` (``jax.custom_vjp`` / ``tf.custom_gradient``)."""

        ref_cls = self.functions.get(cls)
        if ref_cls is None:
            methods = {k: v for k, v in vars(cls).items() if k in ("forward", "backward", "setup_context")}
            if "setup_context" in methods or "jvp" in vars(cls) or "vjp" in vars(cls):
                raise Unsupported("a custom Function with setup_context, jvp or vjp (no template has one)")
            ref_cls = self.functions[cls] = type(cls.__name__, (self.reference.autograd.Function,), methods)
        refs = [self.ref(a) for a in args]
        out_r = ref_cls.apply(*refs)
        single = not isinstance(out_r, tuple)
        outs_r = (out_r,) if single else out_r
        tensors = [k for k, a in enumerate(args) if isinstance(a, FTensor)]
        if not all(isinstance(o, self.reference.Tensor) for o in outs_r):
            raise Unsupported("a custom Function with a non-tensor output")
        info = {}

        def primal(*values):
            inner = list(args)
            for k, v in zip(tensors, values):
                inner[k] = self.shadow(args[k]._r, v)
            ctx = _Ctx(self, [args[k]._r.requires_grad for k in tensors])
            self.inner += 1  # (not under no_grad as in PyTorch: residuals keep their own derivative)
            try:
                outs = cls.forward(ctx, *inner)
            finally:
                self.inner -= 1
            outs = outs if isinstance(outs, tuple) else (outs,)
            info["dirty"] = [next(j for j, k in enumerate(tensors) if inner[k] is d) for d in ctx.dirty]
            info["nondiff"] = [j for j, o in enumerate(outs) if any(o is n for n in ctx.nondiff)]
            info["saved"] = [None if t is None else t._r for t in ctx.saved]
            # what a saved tensor is to a second differentiation (PyTorch's SavedVariable): an input keeps
            # its history, an output the Function's node; anything else was made under no_grad: a constant
            info["kinds"] = [
                ("input", [inner[k] for k in tensors].index(t))
                if any(t is inner[k] for k in tensors)
                else ("output", [id(o) for o in outs].index(id(t)))
                if any(t is o for o in outs)
                else ("other", None)
                for t in ctx.saved
            ]
            res = tuple(None if t is None else t.value() for t in ctx.saved)
            return tuple(o.value() for o in outs), res

        def residuals(res, xs, outs):
            return tuple(
                None
                if v is None
                else xs[j]
                if kind == "input"
                else outs[j]
                if kind == "output"
                else self.B.stop_gradient(v)
                for v, (kind, j) in zip(res, info["kinds"])
            )

        def backward(res, gs):
            ctx = _Ctx(self, [args[k]._r.requires_grad for k in tensors])
            ctx.saved = [None if v is None else self.shadow(r, v) for r, v in zip(info["saved"], res)]
            self.inner += 1
            try:
                grads = cls.backward(ctx, *[self.shadow(o, g) for o, g in zip(outs_r, gs)])
            finally:
                self.inner -= 1
            grads = grads if isinstance(grads, tuple) else (grads,)
            out = []
            for k in tensors:
                g = grads[k] if k < len(grads) else None
                shape = tuple(args[k]._r.shape)
                out.append(
                    self.B.broadcast(0.0, shape) if g is None else self.B.broadcast(self.val(g), shape)
                )
            return tuple(out)

        values = self.B.custom(primal, backward, residuals)(*[args[k].value() for k in tensors])
        results = []
        for j, (r, v) in enumerate(zip(outs_r, values)):
            if j in info["nondiff"]:
                v = self.B.stop_gradient(v)
            dirty = [args[tensors[d]] for d in info["dirty"] if args[tensors[d]]._r is r]
            if dirty:  # mark_dirty: the input itself, its storage rewritten (rebased onto the node)
                t = dirty[0]
                updated = self.B.scatter(t._storage.value, t._idx, v)
                if not self.reference.is_grad_enabled():
                    updated = _keep_history(self.B, t._storage.value, updated)
                t._storage.value = updated
                t._storage.generation += 1
                if self.reference.is_grad_enabled():
                    self.event(t._storage)
                results.append(t)
            elif id(storage_of(r)) in self.storages:  # a view of an input, not marked dirty (Identity)
                base = self.storages[id(storage_of(r))]
                own = Storage(self.B.scatter(self.B.zeros(storage_of(r).size), _index(r), v), alias_of=base)
                results.append(FTensor(self, r, own))
            else:
                results.append(
                    self.fresh(r, v if self.reference.is_grad_enabled() else self.B.stop_gradient(v))
                )
        return results[0] if single else tuple(results)

    def checkpoint(self, function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
        """``T.utils.checkpoint.checkpoint``: the reference runs its own checkpoint (values, aliasing,
        errors); the framework runs the block under ``jax.checkpoint`` / ``tf.recompute_grad``."""

        if kwargs or not all(isinstance(a, FTensor) for a in args):
            raise Unsupported("checkpoint with keyword arguments for the block or non-tensor arguments")
        refs = [a._r for a in args]
        out_r = self.reference.utils.checkpoint.checkpoint(
            function, *refs, use_reentrant=use_reentrant, preserve_rng_state=preserve_rng_state
        )
        single = not isinstance(out_r, tuple)
        outs_r = (out_r,) if single else out_r
        if any(id(storage_of(r)) in self.storages for r in outs_r):
            raise Unsupported("a checkpointed block returning a view of its input")

        def block(*values):
            self.inner += 1
            try:
                outs = function(*[self.shadow(r, v) for r, v in zip(refs, values)])
            finally:
                self.inner -= 1
            outs = outs if isinstance(outs, tuple) else (outs,)
            return tuple(o.value() for o in outs)

        values = self.B.checkpoint(block)(*[a.value() for a in args])
        grad = self.reference.is_grad_enabled()
        results = [self.fresh(r, v if grad else self.B.stop_gradient(v)) for r, v in zip(outs_r, values)]
        return results[0] if single else tuple(results)

    # -- gradient state ------------------------------------------------------------------------------
    # PyTorch keeps a retained gradient and a gradient hook on the tensor's autograd node. A non-view
    # tensor's node is made by a write of its storage (its making, or an in-place update through it or a
    # view of it, with gradients on): the node's gradient is the gradient with respect to a zero added
    # to the values that write gave the base; a hook (kept by the node it was registered on, as
    # PyTorch's are across later in-place updates) is a custom gradient wrapped around those values. A
    # view's node is its view op until its storage is written in place (then PyTorch regenerates it):
    # the zero is added where the view and the views made from it are read.
    def retain_grad(self, t):
        if (
            t in self.leaves or self.stop_at is not None
        ):  # a leaf keeps its .grad anyway; a re-run returns none
            return
        if t._storage.alias_of is not None:
            raise Unsupported("retain_grad of a custom Function's output that is a view of its input")
        if any(t is r[0] for r in self.retained):
            return
        self.retained.append([t, None])

    def register_hook(self, t, hook):
        if t._r._base is not None or t._storage.alias_of is not None:
            raise Unsupported("a gradient hook on a view (its node is regenerated from its base's)")
        if t._storage.last_event is None:
            raise Unsupported("a gradient hook on a tensor no write of the program made")
        if self.stop_at is None:  # (a re-run is given the hooks registered before its call)
            self.hooks.append((self.calls, t._storage.last_event, hook))

    def _hook(self, hook):
        """``values -> values`` with the gradient ``hook(g)`` (a custom gradient run on functional tensors)."""

        def backward(res, gs):
            g = self.shadow(None, gs[0])
            self.inner += 1
            try:
                out = hook(g)
            finally:
                self.inner -= 1
            if out is None:
                return (gs[0],)
            new = self.B.broadcast(self.val(out), tuple(np.shape(gs[0])))
            return (new if self.B.is_complex(gs[0]) or not self.B.is_complex(new) else self.B.real(new),)

        custom = self.B.custom(lambda x: ((x,), ()), backward, lambda res, xs, outs: ())
        return lambda x: custom(x)[0]

    def grad_of(self, t):
        if t in self.leaves:
            g = self.grads[self.leaves.index(t)] if self.grads is not None else None
        else:
            g = next((r[1] for r in self.retained if r[0] is t), None)
        return None if g is None else _Grad(g)

    def _retained_keys(self):
        """Where each retained tensor's node is now: ('write', number, positions) or ('view', number)."""
        keys = []
        for t, _ in self.retained:
            if t._r._base is None:
                keys.append(("write", t._storage.last_event, t._storage.base_idx))
            elif t._storage.generation != t.generation:
                raise Unsupported(
                    "retain_grad of a view whose storage was written in place after it was made: PyTorch "
                    "regenerates the view's node from its base's (the retained gradient moves to it)"
                )
            elif not t.lineage:
                raise Unsupported("retain_grad of a view made inside a template")
            else:
                keys.append(("view", t.lineage[-1][0], t._idx))
        return keys

    # -- differentiation -----------------------------------------------------------------------------
    def differentiate(self, loss, wrt):
        """The k-th backward/autograd.grad call: stop here (inside :meth:`until`) or take the gradient."""
        k = self.calls
        self.calls += 1
        if self.stop_at == k:
            raise _Stop(loss.value())
        if wrt is None and self.stop_at is not None:
            return None  # a backward inside a re-run only sets .grad, which this run does not return
        keys = self._retained_keys() if self.stop_at is None else []
        zeros = [self.B.broadcast(0.0, idx.shape) for *_, idx in keys]
        zeros = [  # a real tensor of a complex program: a real perturbation
            z if r[0]._r.is_complex() or not self.B.is_complex(z) else self.B.real(z)
            for z, r in zip(zeros, self.retained)
        ]
        n = len(self.inputs)
        grads = self.B.grad(
            lambda *xs: _sum(self.B, self.until(k, xs[:n], list(zip(keys, xs[n:])))),
            list(self.inputs) + zeros,
        )
        grads, node_grads = grads[:n], grads[n:]
        for r, g in zip(self.retained, node_grads):
            r[1] = g if r[1] is None else r[1] + g
        if wrt is None:
            self.grads = [g if old is None else old + g for g, old in zip(grads, self.grads)]
            return None
        return grads

    def until(self, k, xs, deltas=None):
        """The program re-run up to its k-th differentiation call (the loss's value there) from inputs
        ``xs``, with the hooks registered before that call and the retained nodes' perturbations."""
        wraps, view_deltas = {}, {}
        for (kind, number, _), d in deltas or ():
            if kind == "view":
                view_deltas[number] = d
            else:
                wraps.setdefault(number, []).append(lambda v, d=d: v + d)
        for calls, number, hook in self.hooks:
            if calls <= k:
                wraps.setdefault(number, []).append(self._hook(hook))
        run = Run(
            self.B,
            self.source,
            xs,
            self.concrete,
            stop_at=k,
            wraps=wraps,
            view_deltas=view_deltas,
            hooks=[h for h in self.hooks if h[0] <= k],
        )
        try:
            run.execute()
        except _Stop as stop:
            return stop.value
        raise Unsupported(f"differentiation call {k} was not reached again")

    def autograd_grad(self, outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, **kw):
        outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        if len(outs) != 1 or grad_outputs is not None or kw:
            raise Unsupported("autograd.grad with several outputs, grad_outputs or other options")
        rs = self.reference.autograd.grad(
            [o._r for o in outs], [i._r for i in inputs], retain_graph=retain_graph, create_graph=create_graph
        )
        positions = [self.leaves.index(i) if i in self.leaves else None for i in inputs]
        if None in positions:
            raise Unsupported("autograd.grad with respect to a tensor that is not an input")
        grads = self.differentiate(outs[0], inputs)
        out = []
        for r, p in zip(rs, positions):
            g = grads[p] if create_graph else self.B.stop_gradient(grads[p])
            out.append(self.fresh(r, g))
        return tuple(out)

    def execute(self):
        if not self.B.amp:
            return compile_program(self.source)(Namespace(self), *self.leaves)
        # a mixed-precision program: the lockstep reference makes the policy's casts explicit in the
        # forward, as the reference's own run does (conformance.amp; the tracker knows each array's dtype)
        with Tracker(Precision(AMP_VARIABLES)) as tracker, np.errstate(all="ignore"):
            return _in_forward(self.source, _policy(tracker, self.B.amp))(Namespace(self), *self.leaves)


class _Ctx:
    """The ``ctx`` of a custom Function's forward/backward in a functional run."""

    def __init__(self, run, needs):
        self._run = run
        self.needs_input_grad = tuple(needs)
        self.saved, self.dirty, self.nondiff = [], [], []

    def save_for_backward(self, *tensors):
        self.saved = list(tensors)

    @property
    def saved_tensors(self):
        return tuple(self.saved)

    def mark_dirty(self, *tensors):
        self.dirty = list(tensors)

    def mark_non_differentiable(self, *tensors):
        self.nondiff = list(tensors)

    def set_materialize_grads(self, value):
        raise Unsupported(
            "ctx.set_materialize_grads: JAX and TensorFlow always hand a custom rule a zero cotangent for an "
            "unused output; 'no gradient' (None) has no counterpart"
        )


def _keep_history(B, old, new):
    """``new``'s values with ``old``'s derivative: ``stop_gradient(new) + (old - stop_gradient(old))``
    (``old - old`` is exactly 0, so the values are ``new``'s exactly, in any dtype)."""
    return B.stop_gradient(new) + (old - B.stop_gradient(old))


def _sum(B, x):
    return B.ops()["sum"](x)


def _reshape(B, x, shape):
    if B.name == "jax":
        return B.jnp.reshape(x, shape)
    return B.tf.reshape(x, shape)


#: Programs with complex tensors (issue 34): a complex storage is one complex array; its real views
#: (view_as_real, .real, .imag) read and write its parts, a real storage's complex view
#: (view_as_complex) pairs of its elements, and PyTorch's lazy conjugate view (the conj bit; jnp.conj
#: and tf.math.conj copy) and negative view read and store conjugated / negated values
#: (:attr:`FTensor.mode`, :meth:`FTensor.write`), all as functional reads and scatters. ``polar`` is
#: outside the value table.
COMPLEX_STORAGE_OPS = ("polar",)
COMPLEX_STORAGE_REASON = (
    "complex tensors in a program: T.polar has no functional translation here (outside the value table)"
)


class Namespace:
    """``T`` for a functional run: the names the program text uses."""

    def __init__(self, run):
        self._run = run
        ref = run.reference
        self.float64 = ref.float64
        self.no_grad = ref.no_grad
        self.autograd = _Autograd(run)
        self.nn = _NN(run)
        self.utils = _Utils(run)

    def zeros(self, shape, dtype=None):
        r = self._run.reference.zeros(shape, dtype=dtype)
        return self._run.fresh(r, self._run.B.broadcast(0.0, tuple(r.shape)))

    def ones(self, *shape, dtype=None):
        r = self._run.reference.ones(*shape, dtype=dtype)
        if np.dtype(r.dtype).kind in "biu":  # integer or boolean: a constant
            return Constant(r)
        return self._run.fresh(r, self._run.B.broadcast(1.0, tuple(r.shape)))

    def tensor(self, data, dtype=None):
        r = self._run.reference.tensor(data, dtype=dtype)
        if np.dtype(r.dtype).kind in "biu":  # integer or boolean: a constant
            return Constant(r)
        return self._run.fresh(r, self._run.B.constant(np.asarray(data, dtype=np.float64)))

    def view_as_real(self, x):
        return self._run.view(self._run.reference.view_as_real(x._r), x)

    def view_as_complex(self, x):
        return self._run.view(self._run.reference.view_as_complex(x._r), x)

    def complex(self, re, im):
        run = self._run
        r = run.reference.complex(re._r, im._r)
        return run.wrap(r, run.B.complex(re.value(), im.value()))

    def __getattr__(self, name):  # dtypes (T.bool, T.long, ...): the reference's
        if name in COMPLEX_STORAGE_OPS:
            raise Unsupported(COMPLEX_STORAGE_REASON)
        if name.startswith("_") or name not in ("bool", "long", "int64", "float32", "bfloat16", "float16"):
            raise AttributeError(name)
        return getattr(self._run.reference, name)


class _Autograd:
    def __init__(self, run):
        self.grad = run.autograd_grad
        self.Function = type("Function", (_Function,), {"_run": run})
        self.graph = _Graph()


class _Function:
    """``T.autograd.Function`` of a functional run: ``apply`` is :meth:`Run.custom_apply`."""

    _run = None

    @classmethod
    def apply(cls, *args):
        return cls._run.custom_apply(cls, args)


class _Graph:
    """``T.autograd.graph``: the saved-tensor hook contexts run their step without the hooks. JAX's
    and TensorFlow's autodiff keep their residuals to themselves, so nothing can run a pack/unpack
    pair there; the program templates' pairs (HOOK_PAIRS: x2 then /2, a detached copy) and
    ``save_on_cpu`` restore what is saved exactly, so the step's values and gradients are the
    same without them (the reference's own run of the program runs them: a program they make raise is
    not run here, see why_not_functional)."""

    def saved_tensors_hooks(self, pack_hook, unpack_hook):
        return contextlib.nullcontext()

    def save_on_cpu(self, pin_memory=False, device_type="cuda"):
        return contextlib.nullcontext()

    def __getattr__(self, name):
        raise Unsupported(f"torch.autograd.graph.{name} has no JAX/TensorFlow counterpart")


class _Utils:
    def __init__(self, run):
        self.checkpoint = _Checkpoint(run)


class _Checkpoint:
    def __init__(self, run):
        self.checkpoint = run.checkpoint


class _NN:
    def __init__(self, run):
        self.functional = _Functional(run)


class _Functional:
    def __init__(self, run):
        self._run = run

    def softmax(self, x, dim):
        return self._run.call(x, "softmax", (dim,), {})

    def conv1d(self, x, w, padding=0):
        run = self._run
        out = run.reference.nn.functional.conv1d(x._r, w._r, padding=padding)
        return run.wrap(out, run.table["conv1d"](x.value(), w.value(), padding))

    def batch_norm(self, x, running_mean, running_var, training=False, eps=1e-5):
        run = self._run
        if running_mean is not None or running_var is not None or not training:
            raise Unsupported("batch_norm with running statistics")
        out = run.reference.nn.functional.batch_norm(x._r, None, None, training=True, eps=eps)
        v, dtype = _amp_input(run.B, x.value())
        axes = [0] + list(range(2, len(x.shape)))
        mean = _mean(run.B, v, axes)
        var = _mean(run.B, (v - mean) * (v - mean), axes)
        return run.wrap(out, _amp_output(run.B, (v - mean) / _sqrt(run.B, var + eps), dtype))

    # -- the model templates' layers (conformance.models) --------------------------------------------
    def layer_norm(self, x, normalized_shape, weight=None, bias=None, eps=1e-5):
        """Normalised over the trailing ``normalized_shape`` axes, as a JAX/TensorFlow user writes it
        (there is no layer_norm op in either's core: mean and biased variance, then scale and shift)."""
        run = self._run
        out = run.reference.nn.functional.layer_norm(
            x._r, normalized_shape, run.ref(weight), run.ref(bias), eps
        )
        v, dtype = _amp_input(run.B, x.value())
        axes = list(range(len(x.shape) - len(normalized_shape), len(x.shape)))
        mean = _mean(run.B, v, axes)
        y = (v - mean) / _sqrt(run.B, _mean(run.B, (v - mean) * (v - mean), axes) + eps)
        if weight is not None:
            y = y * weight.value()
        if bias is not None:
            y = y + bias.value()
        return run.wrap(out, _amp_output(run.B, y, dtype))

    def log_softmax(self, x, dim):
        return self._run.call(x, "log_softmax", (dim,), {})

    def max_pool1d(self, x, kernel_size):
        run = self._run
        out = run.reference.nn.functional.max_pool1d(x._r, kernel_size)
        return run.wrap(out, run.table["max_pool1d"](x.value(), kernel_size))

    def embedding(self, idx, weight):
        run = self._run
        out = run.reference.nn.functional.embedding(idx._r, weight._r)
        return run.wrap(out, run.table["embedding"](idx.array, weight.value()))

    def cross_entropy(self, x, target, ignore_index=-100, label_smoothing=0.0):
        """Class-index targets, mean over the targets not ``ignore_index``, PyTorch's label smoothing
        (the target distribution ``(1 - e) one_hot + e / C``): the smoothed labels as a constant and the
        framework's softmax cross entropy with probability labels (``tf.nn.softmax_cross_entropy_with_logits``;
        JAX: ``-sum(labels * log_softmax)``), averaged over the kept rows."""
        run = self._run
        out = run.reference.nn.functional.cross_entropy(
            x._r, target._r, ignore_index=ignore_index, label_smoothing=label_smoothing
        )
        if len(x.shape) != 2:
            raise Unsupported("cross_entropy of logits other than (batch, classes)")
        t = target.array
        keep = t != ignore_index
        classes = x.shape[1]
        labels = np.eye(classes)[np.where(keep, t, 0)] * (1 - label_smoothing) + label_smoothing / classes
        per_row = run.table["soft_cross_entropy"](x.value(), run.B.constant(labels))
        weights = run.B.constant(keep / max(int(keep.sum()), 1))
        return run.wrap(out, _sum(run.B, per_row * weights))


def _amp_input(B, v):
    """A normalisation's input under a mixed-precision policy: computed in float32 (the variables'
    dtype, as PyTorch's CPU kernels do inside), its dtype kept for :func:`_amp_output`."""
    if not B.amp:
        return v, None
    return B.cast(v, "float32"), v.dtype


def _amp_output(B, y, dtype):
    """The output in the input's dtype (what PyTorch 2.13's layer_norm/batch_norm return under autocast,
    conformance.amp.INPUT_DTYPE)."""
    return y if dtype is None else (y.astype(dtype) if B.name == "jax" else B.tf.cast(y, dtype))


def _mean(B, x, axes):
    if B.name == "jax":
        return B.jnp.mean(x, axis=tuple(axes), keepdims=True)
    return B.tf.reduce_mean(x, axis=axes, keepdims=True)


def _sqrt(B, x):
    return B.ops()["sqrt"](x)


# ---- the adapter side ----------------------------------------------------------------------------------
#: the saved-tensor hook pairs of the program templates (conformance.programs.HOOK_PAIRS): each
#: restores what it packs exactly, so a step runs the same without them (see _Graph)
_EXACT_HOOKS = {("pack_scaled", "unpack_scaled"), ("pack_copy", "unpack_copy")}


def why_not_functional(case) -> str | None:
    """Why a program case has no functional counterpart (None when it has one)."""
    if (
        "register_hook(" in case.source or "retain_grad()" in case.source
    ) and "autograd.grad(" in case.source:
        return (
            "the program uses gradient hooks or retain_grad with autograd.grad: which nodes a (double) "
            "backward reaches, and so where a hook fires, follows the tensors PyTorch's backward formulas "
            "save; a functional gradient has no such nodes"
        )
    hooks = re.findall(r"saved_tensors_hooks\((\w+), (\w+)\)", case.source)
    if any(pair not in _EXACT_HOOKS for pair in hooks):
        return (
            "the program uses saved_tensors_hooks with a pair other than the templates' exact ones: saved-tensor "
            "hooks have no JAX/TensorFlow counterpart (their autodiff keeps its residuals to itself)"
        )
    if "set_materialize_grads(" in case.source:
        return (
            "the program uses ctx.set_materialize_grads: JAX and TensorFlow always give a custom rule a zero "
            "cotangent for an unused output ('no gradient' has no counterpart)"
        )
    status, value = reference_outcome(case)
    if status == "raises":
        prefix = prefix_case(case, value)
        if prefix is not None:
            return why_not_functional(prefix)
        where = f"the reference raises {value.type_name} at line {value.line} ({value.text.strip()!r})"
        if autograd_state_error(value):
            return f"{where} before any step ran: an autograd-state error has no functional counterpart"
        return f"{where}: the program's error is compared on PyTorch"
    return None


class PrefixOutputs(dict):
    """A program's outputs computed up to the statement the reference raises at (``judged_to``: its
    line and text): JAX and TensorFlow have no autograd state (version counters, freed graphs, leaves)
    to raise PyTorch's errors, so what they are judged on is the program before that statement."""

    judged_to: dict = {}


def run_functional(B, case, arrays: dict, to_numpy, compile=None) -> dict:
    """Outputs named as :func:`conformance.programs.execute` names them, computed by backend ``B``.

    ``compile``: a function-compiling transform (``jax.jit``, ``tf.function``) applied to the whole
    functionalised program, a pure function of the input arrays to the results and the leaves'
    gradients (the reference's lockstep run decides the aliasing while it is traced); None runs it
    op by op."""
    status, error = reference_outcome(case)
    if status == "raises":  # run the program up to the statement that raises (why_not_functional)
        outputs = PrefixOutputs(run_functional(B, prefix_case(case, error), arrays, to_numpy, compile))
        outputs.judged_to = {
            "line": error.statement,
            "text": case.source.splitlines()[error.statement - 1],
        }
        return outputs
    concrete = list(arrays.values())

    def program(*inputs):
        run = Run(B, case.source, list(inputs), concrete)
        result = run.execute()
        items = result if isinstance(result, (list, tuple)) else [result]
        return [None if r is None else r.value() for r in items], list(run.grads)

    try:
        values, grads = (compile(program) if compile else program)(*[B.constant(a) for a in concrete])
    except Unsupported:
        raise
    except Exception as exc:
        line, text = error_line(exc, case.source)
        if type(exc).__name__ == "AutogradError" and re.search(
            r"saved_tensors_hooks\(|save_on_cpu\(", case.source
        ):
            raise Unsupported(  # the lockstep reference runs the hooked steps without their hooks (_Graph)
                f"the reference runs the program, but without its saved-tensor hooks it raises at line {line} "
                f"({text.strip()!r}): {str(exc)[:160]}; a hook decides whether a saved tensor's version check "
                "fires (a detached copy is never stale), and JAX/TensorFlow have no hooks to run"
            ) from None
        raise ProgramError(type(exc).__name__, str(exc), line, text) from None
    expected = error
    out = {}
    for i, v in enumerate(
        values
    ):  # a retained .grad the reference leaves None: zero is all a framework can say
        v = None if v is None else to_numpy(v)
        if v is not None and expected.get(f"result[{i}]") is None and not np.any(v):
            v = None
        out[f"result[{i}]"] = v
    for name, g in zip(arrays, grads):
        g = None if g is None else to_numpy(g)
        if g is not None and expected.get(f"grad[{name}]") is None and not np.any(g):
            g = None  # no gradient, as the reference says; a functional framework can only say zero
        out[f"grad[{name}]"] = g
    return out


__all__ = [
    "JaxBackend",
    "PrefixOutputs",
    "TensorFlowBackend",
    "Unsupported",
    "run_functional",
    "why_not_functional",
]
