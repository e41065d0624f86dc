"""TensorFlow: ``tf.nn`` convolutions, gradients through ``GradientTape`` (TF's raw
``Conv*BackpropInput``/``BackpropFilter`` ops), ``tf.autodiff.ForwardAccumulator`` and
``tf.vectorized_map``.

As TensorFlow users write it: NHWC inputs and HWIO filters (whatever the case's layout: TF's
CPU kernels are NHWC-only, so both layouts run NHWC); a depthwise 2-d convolution through
``tf.nn.depthwise_conv2d`` with its ``(kh, kw, C, multiplier)`` filter; ``'SAME'``/``'VALID'``
padding, explicit 2-d paddings through ``tf.nn.conv2d``'s explicit padding (which reaches the
asymmetric-padding path of the input gradient), ``tf.pad``/slicing otherwise; a transposed
convolution through ``tf.nn.conv_transpose`` with ``output_shape``.
"""

from __future__ import annotations

import os

import numpy as np

from conformance.adapters._geometry import explicit_pads, is_symmetric, transposed_layout
from conformance.adapters._modes import ModeCache
from conformance.adapters.base import Adapter, cpu_setup
from conformance.case import arrays_for
from conformance.functional import TensorFlowBackend, host_array, run_functional, why_not_functional
from conformance.ops import RECORDS
from conformance.ops._run import run_tf
from conformance.unsupported import Unsupported


def _to_nhwc(a, batch_dims=0):
    return None if a is None else np.moveaxis(a, 1 + batch_dims, -1)


def _from_nhwc(a, batch_dims=0):
    return None if a is None else np.moveaxis(np.asarray(a, dtype=np.float64), -1, 1 + batch_dims)


#: How TensorFlow says it has no kernel for a dtype (on this device), by phase: op lookup at run
#: time, graph construction (a tf.function or tf.vectorized_map body), argument checking.
_NO_KERNEL = (
    "no opkernel was registered",
    "could not find device for node",
    "is not in the list of allowed values",
    "not in list of allowed values",
)


def _onednn_enabled() -> bool | None:
    """TensorFlow's own answer (IsMklEnabled: oneDNN built in and enabled for this process), or
    None where this TensorFlow does not say."""
    try:
        from tensorflow.python.util import _pywrap_util_port
    except ImportError:
        return None
    return bool(_pywrap_util_port.IsMklEnabled())


def _no_kernel_for(exc, dtype) -> bool:
    """``exc`` (or a line of its message) says TensorFlow has no kernel for ``dtype``: the case is
    unsupported, not a departure (the reference computes every dtype)."""
    text = str(exc).lower()
    names = {"float16": ("half", "float16"), "bfloat16": ("bfloat16",), "float32": ("float",)}
    named = any(n in text for n in names.get(dtype, (dtype,)))
    return named and (any(k in text for k in _NO_KERNEL) or ("kernel" in text and "not found" in text))


class TensorFlowAdapter(Adapter):
    name = "tensorflow"
    amp_policies = ("mixed_bfloat16", "mixed_float16")  # conformance.amp
    program_backend = "TensorFlowBackend"  # program cases: conformance.functional.TensorFlowBackend

    def __init__(self):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf

        threads = os.environ.get("REFGRAD_THREADS")
        if threads:
            tf.config.threading.set_intra_op_parallelism_threads(int(threads))
            tf.config.threading.set_inter_op_parallelism_threads(int(threads))
        self.tf = tf

    def version(self) -> str:
        return self.tf.__version__

    def devices(self) -> list[str]:
        return ["cpu"] + (["cuda"] if self.tf.config.list_physical_devices("GPU") else [])

    def setup(self, device="cpu", precision="highest") -> dict:
        tf = self.tf
        if precision == "highest":
            tf.config.experimental.enable_tensor_float_32_execution(False)
        settings = {
            "tensor_float_32_execution": tf.config.experimental.tensor_float_32_execution_enabled(),
            "TF_ENABLE_ONEDNN_OPTS": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "(default)"),
            # whether TensorFlow's CPU kernels run through oneDNN here: on by default on x86 CPUs
            # with AVX-512/AMX-class features, off elsewhere, so it differs between machines with
            # the same wheel (known departures that only oneDNN kernels have name it)
            "onednn": _onednn_enabled(),
            "data_format": "NHWC",
            # kernel by kernel, no XLA (tensorflow:xla reports True): known entries of TensorFlow's
            # own kernels name it to stay off XLA's lowerings
            "jit_compile": False,
        }
        settings["flush_denormal"] = (
            True  # TensorFlow's CPU executor threads flush denormals to zero (port::ScopedFlushDenormal)
        )
        if device == "cpu":
            tf.config.set_visible_devices([], "GPU")
            return cpu_setup(self, device, precision, settings)
        if "cuda" not in self.devices():
            raise RuntimeError(
                f"tensorflow: device {device!r} is not available here (devices: {self.devices()})"
            )
        return {
            "device": device,
            "precision": precision,
            "tf32": settings["tensor_float_32_execution"],
            **settings,
        }

    record_framework = "tensorflow"

    def run_record(self, case, check, a):
        """An op record's check: the record's TF spelling, GradientTape, ForwardAccumulator."""
        try:
            return self._run_tf(case, check, a, self.spelling_for(RECORDS[case.op], case))
        except (self.tf.errors.NotFoundError, self.tf.errors.InvalidArgumentError, TypeError) as exc:
            if not _no_kernel_for(exc, case.dtype):
                raise
            first = next(
                (line for line in str(exc).splitlines() if _no_kernel_for(line, case.dtype)), str(exc)
            )
            raise Unsupported(f"tensorflow has no {case.dtype} kernel here: {first.strip()[:300]}") from None

    def _run_tf(self, case, check, a, fn):
        return run_tf(self.tf, case, check, a, fn)

    # -- what TF cannot express ------------------------------------------------------------------
    def unsupported(self, case, check):
        if case.kind == "program":
            return why_not_functional(case)
        p = case.params
        if p.transposed and p.groups > 1:
            return "tensorflow has no grouped transposed convolution (tf.nn.conv_transpose takes no groups)"
        if any(s > 1 for s in p.stride) and any(d > 1 for d in p.dilation):
            if self._depthwise(case):
                return (
                    "tf.nn.depthwise_conv2d documents that strides must be 1 when dilations > 1; it does not "
                    "enforce it: it silently ignores the stride (wrong output shape) and its gradient raises"
                )
            return (
                "tf.nn.convolution rejects strides > 1 together with dilations > 1, and TF's CPU "
                "Conv*DBackprop* kernels have no dilation"
            )
        if p.transposed and any(op >= s for op, s in zip(p.output_padding, p.stride)):
            return (
                "tf.nn.conv_transpose derives the output size from output_shape through the forward "
                "convolution; output_padding >= stride (legal in PyTorch when < dilation) has no output_shape"
            )
        if p.transposed and any(d > 1 for d in p.dilation) and "cuda" not in self.devices():
            return (
                "TF's CPU Conv*DBackpropInput/Filter kernels, which conv_transpose and its gradients run "
                "on, have no dilation rates > 1"
            )
        if p.rank == 3 and p.groups > 1 and not p.transposed:
            return "tensorflow's Conv3D has no groups (input and filter must have the same depth)"
        if self._depthwise(case) and p.stride[0] != p.stride[1]:
            return "tf.nn.depthwise_conv2d needs equal strides in both spatial dimensions"
        channels, filter_in = case.shapes["input"][1], case.shapes["weight"][1]
        if not p.transposed and (filter_in == 0 or channels % filter_in or channels // filter_in != p.groups):
            return (
                f"tensorflow has no groups argument: it infers groups = input channels / filter in-channels "
                f"({channels} / {filter_in}), so groups={p.groups} cannot be expressed"
            )
        grouped = not p.transposed and p.groups > 1 and not self._depthwise(case)
        if grouped and check in ("vjp", "vjp_vjp", "vmap_vjp") and "cuda" not in self.devices():
            return "tensorflow has no gradients of grouped (non-depthwise) convolutions on CPU"
        return None

    def _depthwise(self, case):
        p = case.params
        return not p.transposed and p.rank == 2 and p.groups > 1 and p.groups == case.shapes["input"][1]

    # -- the op as a TF user writes it ------------------------------------------------------
    def const(self, case, a):
        return None if a is None else self.tf.constant(a, dtype=getattr(self.tf, case.dtype))

    def _pad(self, x, pads):
        """Pad (positive) or crop (negative) the spatial dims of an NHWC tensor."""
        tf = self.tf
        x = tf.pad(x, [[0, 0]] + [[max(lo, 0), max(hi, 0)] for lo, hi in pads] + [[0, 0]])
        begin = [0] + [max(-lo, 0) for lo, _ in pads] + [0]
        size = [-1] + [x.shape[1 + i] - max(-lo, 0) - max(-hi, 0) for i, (lo, hi) in enumerate(pads)] + [-1]
        return tf.slice(x, begin, size)

    def weight(self, case, w):
        """Canonical weight (numpy) → the filter a TF user holds."""
        if self._depthwise(case):  # (C*M, 1, kh, kw) -> (kh, kw, C, M)
            c = case.shapes["input"][1]
            return w.reshape(c, w.shape[0] // c, *w.shape[2:]).transpose(2, 3, 0, 1)
        # conv: (O, I, *k) -> (*k, I, O); conv_transpose: (in, out, *k) -> (*k, out, in)
        r = case.params.rank
        return w.transpose(*range(2, r + 2), 1, 0)

    def weight_back(self, case, w, batch_dims=0):
        w = np.asarray(w, dtype=np.float64)
        lead = tuple(range(batch_dims))
        r = case.params.rank
        if self._depthwise(case):
            kh, kw, c, m = w.shape[batch_dims:]
            w = np.transpose(w, (*lead, *(batch_dims + i for i in (2, 3, 0, 1))))
            return w.reshape(*w.shape[:batch_dims], c * m, 1, kh, kw)
        return np.transpose(w, (*lead, *(batch_dims + i for i in (r + 1, r, *range(r)))))

    def conv(self, case, x, w, b):
        """x NHWC, w as :meth:`weight` made it, b (O,) — all tf tensors."""
        tf, p = self.tf, case.params
        r = p.rank
        if p.transposed:
            in_size = x.shape[1:-1]
            kernel = w.shape[:r]
            out_size, crops = transposed_layout(p, in_size, kernel)
            batch, out_ch = tf.shape(x)[0], w.shape[r]
            native = (
                isinstance(p.padding, str)
                and p.padding in ("same", "valid")
                or (r == 2 and is_symmetric(crops) and not isinstance(p.padding, str))
            )
            if native:
                padding = (
                    p.padding.upper()
                    if isinstance(p.padding, str)
                    else [[0, 0], *[[lo, hi] for lo, hi in explicit_pads(p, out_size, kernel)], [0, 0]]
                )
                y = tf.nn.conv_transpose(
                    x,
                    w,
                    tf.stack([batch, *out_size, out_ch]),
                    [1, *p.stride, 1],
                    padding=padding,
                    dilations=[1, *p.dilation, 1],
                )
            else:  # the padding-free result, cropped or zero-extended as the case says
                full = [y + lo + hi for y, (lo, hi) in zip(out_size, crops)]
                y = tf.nn.conv_transpose(
                    x,
                    w,
                    tf.stack([batch, *full, out_ch]),
                    [1, *p.stride, 1],
                    padding="VALID",
                    dilations=[1, *p.dilation, 1],
                )
                y = self._pad(y, [(-lo, -hi) for lo, hi in crops])
        else:
            kernel = w.shape[:r]
            strides, dilations = [1, *p.stride, 1], [1, *p.dilation, 1]
            if isinstance(p.padding, str) and p.padding != "same_lower":
                padding = p.padding.upper()
            else:
                pads = explicit_pads(p, x.shape[1:-1], kernel)
                if r == 2 and all(v >= 0 for pair in pads for v in pair):
                    padding = [[0, 0], *[list(pair) for pair in pads], [0, 0]]
                else:
                    x, padding = self._pad(x, pads), "VALID"
            dilated = any(d > 1 for d in p.dilation)
            if self._depthwise(case):
                y = tf.nn.depthwise_conv2d(x, w, strides, padding, dilations=p.dilation)
            elif r == 1 or dilated:  # tf.nn.convolution dilates by space-to-batch, which has CPU gradients
                if not isinstance(padding, str):
                    x, padding = self._pad(x, [tuple(pair) for pair in padding[1:-1]]), "VALID"
                y = tf.nn.convolution(x, w, p.stride, padding, dilations=p.dilation)
            elif r == 2:
                y = tf.nn.conv2d(x, w, strides, padding, dilations=dilations)
            else:  # tf.nn.convolution's own 3-d path loses data_format and its gradient raises (TF 2.21)
                y = tf.nn.conv3d(x, w, strides, padding, data_format="NDHWC", dilations=dilations)
        return y if b is None else tf.nn.bias_add(y, b)

    def _operands(self, case, a, names=("input", "weight", "bias"), batch_dims=0):
        x, w, b = (a[n] for n in names)
        if batch_dims:
            w = None if w is None else np.stack([self.weight(case, wi) for wi in w])
        else:
            w = self.weight(case, w)
        return self.const(case, _to_nhwc(x, batch_dims)), self.const(case, w), self.const(case, b)

    def _grads_back(self, case, grads, batch_dims=0):
        gx, gw, gb = (list(grads) + [None])[:3]
        out = {
            "grad_input": _from_nhwc(gx.numpy(), batch_dims),
            "grad_weight": self.weight_back(case, gw.numpy(), batch_dims),
        }
        if case.params.bias:
            out["grad_bias"] = gb.numpy()
        return out

    # -- checks ------------------------------------------------------------------------------
    # Each check makes its tensors eagerly, runs its tensor computation through :meth:`_graph`
    # (eager here; a cached tf.function in the tensorflow:function / tensorflow:xla modes) and
    # converts the results back to NumPy outside it.
    def _graph(self, case, check, fn, *args):
        """``fn(*args)``: the check's tensor computation, as this mode runs it (eager here)."""
        return fn(*args)

    def forward(self, case, a):
        y = self._graph(case, "forward", lambda x, w, b: self.conv(case, x, w, b), *self._operands(case, a))
        return {"output": _from_nhwc(y.numpy())}

    def vjp(self, case, a):
        tf = self.tf

        def vjp(x, w, b, g):
            leaves = [t for t in (x, w, b) if t is not None]
            with tf.GradientTape() as tape:
                tape.watch(leaves)
                y = self.conv(case, x, w, b)
            return tape.gradient(y, leaves, output_gradients=g)

        g = self.const(case, _to_nhwc(a["grad_output"]))
        return self._grads_back(case, self._graph(case, "vjp", vjp, *self._operands(case, a), g))

    def vjp_vjp(self, case, a):
        tf = self.tf

        def vjp_vjp(x, w, b, g, ggx, ggw, ggb):
            leaves = [t for t in (x, w, b) if t is not None]
            with tf.GradientTape() as outer:
                outer.watch([g, x, w])
                with tf.GradientTape() as inner:
                    inner.watch(leaves)
                    y = self.conv(case, x, w, b)
                firsts = inner.gradient(y, leaves, output_gradients=g)
            cotangents = [ggx, ggw, ggb][: len(firsts)]
            return outer.gradient(
                firsts,
                [g, x, w],
                output_gradients=cotangents,
                unconnected_gradients=tf.UnconnectedGradients.ZERO,
            )

        g = self.const(case, _to_nhwc(a["grad_output"]))
        gg, gx, gw = self._graph(
            case,
            "vjp_vjp",
            vjp_vjp,
            *self._operands(case, a),
            g,
            *self._operands(case, a, ("gg_input", "gg_weight", "gg_bias")),
        )
        return {
            "g_grad_output": _from_nhwc(gg.numpy()),
            "g_input": _from_nhwc(gx.numpy()),
            "g_weight": self.weight_back(case, gw.numpy()),
        }

    def jvp(self, case, a):
        def jvp(primals, tangents):
            with self.tf.autodiff.ForwardAccumulator(primals, tangents) as acc:
                y = self.conv(case, *primals, *([None] * (3 - len(primals))))
            return acc.jvp(y)

        primals = [t for t in self._operands(case, a) if t is not None]
        tangents = [
            t
            for t in self._operands(case, a, ("tangent_input", "tangent_weight", "tangent_bias"))
            if t is not None
        ]
        return {"tangent_output": _from_nhwc(self._graph(case, "jvp", jvp, primals, tangents).numpy())}

    def _vmap_operands(self, case, a, extra=()):
        over = case.vmap_over
        x = self.const(case, _to_nhwc(a["batched_input"], 1)) if "input" in over else None
        w = (
            self.const(case, np.stack([self.weight(case, wi) for wi in a["batched_weight"]]))
            if "weight" in over
            else None
        )
        shared_x, shared_w, b = self._operands(case, a)
        elems = tuple(t for t in (x, w, *extra) if t is not None)
        return elems, (shared_x, shared_w, b)

    @staticmethod
    def _unpack(case, e, shared):
        e = list(e)
        shared_x, shared_w, _ = shared
        xi = e.pop(0) if "input" in case.vmap_over else shared_x
        wi = e.pop(0) if "weight" in case.vmap_over else shared_w
        return xi, wi, e

    def vmap(self, case, a):
        def vmap(elems, shared):
            def one(e):
                xi, wi, _ = self._unpack(case, e, shared)
                return self.conv(case, xi, wi, shared[2])

            return self.tf.vectorized_map(one, elems)

        elems, shared = self._vmap_operands(case, a)
        return {"output": _from_nhwc(self._graph(case, "vmap", vmap, elems, shared).numpy(), 1)}

    def vmap_vjp(self, case, a):
        tf = self.tf

        def vmap_vjp(elems, shared):
            b = shared[2]

            def one(e):
                xi, wi, (gi,) = self._unpack(case, e, shared)
                leaves = [t for t in (xi, wi, b) if t is not None]
                with tf.GradientTape() as tape:
                    tape.watch(leaves)
                    y = self.conv(case, xi, wi, b)
                return tuple(tape.gradient(y, leaves, output_gradients=gi))

            return tf.vectorized_map(one, elems)

        g = self.const(case, _to_nhwc(a["batched_grad_output"], 1))
        elems, shared = self._vmap_operands(case, a, (g,))
        return self._grads_back(case, self._graph(case, "vmap_vjp", vmap_vjp, elems, shared), batch_dims=1)

    def program(self, case, a):
        """The program functionalised by the reference (views as gathers, in-place as scatters into
        the base) and differentiated by tensorflow's own autodiff (:mod:`conformance.functional`)."""
        return run_functional(
            TensorFlowBackend(case.dtype, case.amp),
            case,
            a,
            lambda v: None if v is None else host_array(v),  # float64, complex128 for complex values
        )


# -- execution modes (docs/conformance.md, "Execution modes") ------------------------------------
class TensorFlowFunctionAdapter(ModeCache, TensorFlowAdapter):
    """``tensorflow:function``: each check's whole tensor computation (the convolution, its
    ``GradientTape`` or ``ForwardAccumulator``, ``vectorized_map``) as one ``tf.function``, as a
    user's training step runs; one traced function per shape signature (inputs are arguments,
    never constants baked into the graph)."""

    name = "tensorflow:function"
    mode = "function"
    jit_compile = False
    compiles = True
    compile_allowance = 60.0

    def __init__(self):
        super().__init__()
        self.missing = None

    def setup(self, device="cpu", precision="highest") -> dict:
        settings = super().setup(device, precision)
        settings.update(self.mode_settings())
        settings["jit_compile"] = self.jit_compile
        settings["reduce_retracing"] = False
        if self.jit_compile:
            built = bool(self.tf.test.is_built_with_xla())
            settings["xla"] = "built in" if built else "missing"
            settings["TF_XLA_FLAGS"] = os.environ.get("TF_XLA_FLAGS", "(unset)")
            if not built:
                self.missing = (
                    "tensorflow:xla needs TensorFlow built with XLA (tf.test.is_built_with_xla() is False)"
                )
        return settings

    def why_unsupported(self, case, check):
        if self.missing:
            return self.missing
        return super().why_unsupported(case, check)

    def program(self, case, a):
        """The functionalised program (:mod:`conformance.functional`: the reference decides the aliasing
        while it is traced) as one ``tf.function`` (``jit_compile`` in ``tensorflow:xla``): forward,
        every ``GradientTape`` of its backward calls, the leaves' gradients; kept per program text."""

        def compile(program):
            return lambda *xs: self._compiled(
                case, "program", lambda: self._function(program), lambda f: f(*xs)
            )

        return run_functional(
            TensorFlowBackend(case.dtype, case.amp),
            case,
            a,
            lambda v: None if v is None else host_array(v),  # float64, complex128 for complex values
            compile,
        )

    def _function(self, fn):
        return self.tf.function(fn, jit_compile=self.jit_compile, autograph=False)

    def _graph(self, case, check, fn, *args):
        return self._compiled(case, check, lambda: self._function(fn), lambda f: f(*args))

    def _run_tf(self, case, check, a, fn):
        """The record's check (``run_tf``: the op, GradientTape, ForwardAccumulator) as one function,
        its arrays passed as arguments."""
        tf = self.tf
        tensors = {n: tf.constant(a[n]) for n in arrays_for(case, check)}
        return self._compiled(
            case,
            check,
            lambda: self._function(lambda t: run_tf(tf, case, check, t, fn)),
            lambda f: f(tensors),
        )


class TensorFlowXlaAdapter(TensorFlowFunctionAdapter):
    """``tensorflow:xla``: the same functions with ``jit_compile=True`` (XLA's CPU compiler)."""

    name = "tensorflow:xla"
    mode = "xla"
    jit_compile = True
    compile_allowance = 180.0

    def run(self, case, check, a):
        """As ``tensorflow:function``; an op XLA has no kernel for (tf2xla's "Detected unsupported
        operations ...: No registered 'MatrixDeterminant' OpKernel for XLA_CPU_JIT devices") cannot
        be compiled at all, so the check is ``unsupported`` with the ops XLA lacks named, as eager
        TensorFlow's missing dtype kernels are. Any other compile or run error stays an error."""
        try:
            return super().run(case, check, a)
        except self.tf.errors.InvalidArgumentError as exc:
            reason = xla_missing_kernels(str(exc))
            if reason is None:
                raise
            raise Unsupported(f"{self.name}: {reason}") from None


def xla_missing_kernels(message: str) -> str | None:
    """The reason of a tf2xla refusal to compile an op it has no XLA kernel for (None otherwise):
    the op names and whether a kernel exists for other attributes (e.g. another dtype)."""
    import re

    if "Detected unsupported operations" not in message:
        return None
    parts = re.split(r"No registered '(\w+)' OpKernel for (\w+) devices", message)
    if len(parts) < 4:
        return None
    ops = []
    for op, after in zip(parts[1::3], parts[3::3]):
        wanted = re.search(r"attributes didn't match\) Requested Attributes: T=DT_(\w+)", after)
        ops.append(f"{op} in {wanted.group(1).lower()} (only other types have one)" if wanted else op)
    device = parts[2]
    return (
        f"XLA has no {device} kernel for {', '.join(sorted(set(ops)))}: tf.function(jit_compile=True) refuses to "
        "compile the check (tf2xla: Detected unsupported operations)"
    )
