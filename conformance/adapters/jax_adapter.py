"""JAX: ``lax.conv_general_dilated`` with ``dimension_numbers`` and ``feature_group_count``;
``jax.vjp``/``jax.jvp``/``jax.vmap``, each check compiled as one program under ``jax.jit``.

As a JAX user writes it: NCHW/OIHW or NHWC/HWIO dimension numbers (the case's layout),
padding ``'VALID'``/``'SAME'``/``'SAME_LOWER'`` or explicit (lo, hi) pairs (negative crops). A
transposed convolution is the lhs-dilated convolution (``lhs_dilation=stride``) with the kernel
flipped and its in/out channels swapped per group, padded by ``dilation·(k-1) − lo`` and
``dilation·(k-1) − hi + output_padding``. float64 needs ``jax_enable_x64`` (set here).
"""

from __future__ import annotations

from conformance.adapters._geometry import transposed_layout
from conformance.adapters._modes import ModeCache
from conformance.adapters.base import Adapter, cpu_setup
from conformance.functional import JaxBackend, host_array, run_functional, why_not_functional
from conformance.ops import RECORDS
from conformance.ops._run import JaxNamespace, run_jax
from conformance.unsupported import Unsupported

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


class JaxAdapter(ModeCache, Adapter):
    """``jax`` = ``jax:jit``: each check one program under ``jax.jit``, one per shape signature."""

    name = "jax"
    mode = "jit"
    compiles = True
    compile_allowance = 60.0
    amp_policies = ("mixed_bfloat16", "mixed_float16")  # conformance.amp
    program_backend = "JaxBackend"  # program cases: conformance.functional.JaxBackend

    def __init__(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax import lax

        self.jax, self.jnp, self.lax = jax, jnp, lax
        self.precision = None

    def version(self) -> str:
        import jaxlib

        return f"jax {self.jax.__version__}, jaxlib {jaxlib.__version__}"

    def devices(self) -> list[str]:
        kinds = {d.platform for d in self.jax.devices()}
        return ["cpu"] + (["cuda"] if "gpu" in kinds or "cuda" in kinds else [])

    def setup(self, device="cpu", precision="highest") -> dict:
        jax = self.jax
        self.precision = self.lax.Precision.HIGHEST if precision == "highest" else None
        settings = {
            "jax_enable_x64": True,
            "conv precision argument": str(self.precision),
            "jax_default_matmul_precision": str(jax.config.jax_default_matmul_precision),
            **self.mode_settings(),
        }
        if self.compiles:
            settings["jax_compilation_cache_dir"] = str(jax.config.jax_compilation_cache_dir or "(off)")
        settings["flush_denormal"] = True  # XLA's CPU runtime runs with denormals flushed to zero (FTZ/DAZ)
        if device == "cpu":
            jax.config.update("jax_platforms", "cpu")
            return cpu_setup(self, device, precision, settings)
        if "cuda" not in self.devices():
            raise RuntimeError(f"jax: device {device!r} is not available here (devices: {self.devices()})")
        # XLA on GPU runs float32 convolutions and matrix products in TF32 unless asked for HIGHEST
        # precision: the conv spelling passes it per call, every other op takes the global default.
        if precision == "highest":
            jax.config.update("jax_default_matmul_precision", "highest")
        settings["jax_default_matmul_precision"] = str(jax.config.jax_default_matmul_precision)
        return {
            "device": device,
            "precision": precision,
            "tf32": precision != "highest",
            "gpu": str(jax.devices()[0]),
            **settings,
        }

    def unsupported(self, case, check):
        if case.kind == "program":
            return why_not_functional(case)
        p = case.params
        if p.transposed and any(op >= max(s, d) for op, s, d in zip(p.output_padding, p.stride, p.dilation)):
            return (
                "JAX has no output_padding: a transposed convolution is an lhs-dilated convolution with "
                "explicit padding, so the rule output_padding < max(stride, dilation) does not exist there"
            )
        return None

    # -- the op as a JAX user writes it -------------------------------------------------------
    def array(self, case, a):
        return None if a is None else self.jnp.asarray(a, dtype=getattr(self.jnp, case.dtype))

    def _numbers(self, case):
        s = _SPATIAL[case.params.rank]
        if case.params.layout == "channels_last":
            return (f"N{s}C", f"{s}IO", f"N{s}C")
        return (f"NC{s}", f"OI{s}", f"NC{s}")

    def _to_layout(self, case, t, kind):
        """Canonical channels-first → the user's layout (an exact transposition)."""
        if case.params.layout != "channels_last":
            return t
        r = case.params.rank
        if kind == "weight":  # (O, I, *k) -> (*k, I, O)
            return self.jnp.transpose(t, (*range(2, r + 2), 1, 0))
        return self.jnp.moveaxis(t, 1, -1)

    def conv(self, case, x, w, b):
        jnp, lax, p = self.jnp, self.lax, case.params
        r = p.rank
        kernel = w.shape[2:]
        if p.transposed:
            g = p.groups
            cin, og = w.shape[0], w.shape[1]
            w = w.reshape((g, cin // g, og, *kernel))
            w = jnp.swapaxes(w, 1, 2).reshape((g * og, cin // g, *kernel))
            w = jnp.flip(w, axis=tuple(range(2, r + 2)))
            _, crops = transposed_layout(p, x.shape[2:], kernel)
            padding = [
                (d * (k - 1) - lo, d * (k - 1) - hi) for (lo, hi), k, d in zip(crops, kernel, p.dilation)
            ]
            lhs_dilation = p.stride
            strides = (1,) * r
        else:
            padding = (
                p.padding.upper()
                if isinstance(p.padding, str)
                else [(e, e) if isinstance(e, int) else tuple(e) for e in p.padding]
            )
            lhs_dilation, strides = None, p.stride
        y = lax.conv_general_dilated(
            self._to_layout(case, x, "input"),
            self._to_layout(case, w, "weight"),
            strides,
            padding,
            lhs_dilation=lhs_dilation,
            rhs_dilation=p.dilation,
            dimension_numbers=self._numbers(case),
            feature_group_count=p.groups,
            precision=self.precision,
        )
        if b is not None:
            shape = (1,) * (r + 1) + (-1,) if p.layout == "channels_last" else (1, -1) + (1,) * r
            y = y + b.reshape(shape)
        return jnp.moveaxis(y, -1, 1) if p.layout == "channels_last" else y

    def _f(self, case, with_bias):
        if with_bias:
            return lambda x, w, b: self.conv(case, x, w, b)
        return lambda x, w: self.conv(case, x, w, None)

    def _primals(self, case, a, names=("input", "weight", "bias")):
        return tuple(self.array(case, a[n]) for n in names[: 3 if case.params.bias else 2])

    # -- checks ------------------------------------------------------------------------------
    def run(self, case, check, a):
        self._current = (case, check)
        return super().run(case, check, a)

    def _call(self, fn, *args):
        """Run a check's function as one compiled program (how JAX code runs: under jit), kept per
        shape signature (``fn`` closes over the case's parameters only, never its values)."""
        case, check = self._current
        return self._compiled(case, check, lambda: self.jax.jit(fn), lambda jitted: jitted(*args))

    def forward(self, case, a):
        return {"output": self._call(self._f(case, case.params.bias), *self._primals(case, a))}

    def _grad_names(self, case):
        return ["grad_input", "grad_weight"] + (["grad_bias"] if case.params.bias else [])

    def vjp(self, case, a):
        f = self._f(case, case.params.bias)

        def pulled(g, *primals):
            return self.jax.vjp(f, *primals)[1](g)

        grads = self._call(pulled, self.array(case, a["grad_output"]), *self._primals(case, a))
        return dict(zip(self._grad_names(case), grads))

    def vjp_vjp(self, case, a):
        f = self._f(case, case.params.bias)

        def first(g, *primals):
            return self.jax.vjp(f, *primals)[1](g)

        def second(cotangents, g, *primals):
            return self.jax.vjp(first, g, *primals)[1](cotangents)

        seconds = self._call(
            second,
            self._primals(case, a, ("gg_input", "gg_weight", "gg_bias")),
            self.array(case, a["grad_output"]),
            *self._primals(case, a),
        )
        return dict(zip(("g_grad_output", "g_input", "g_weight"), seconds))

    def jvp(self, case, a):
        f = self._f(case, case.params.bias)
        t = self._call(
            lambda p, t: self.jax.jvp(f, p, t)[1],
            self._primals(case, a),
            self._primals(case, a, ("tangent_input", "tangent_weight", "tangent_bias")),
        )
        return {"tangent_output": t}

    def _vmap_operands(self, case, a):
        over = case.vmap_over
        x = self.array(case, a["batched_input"] if "input" in over else a["input"])
        w = self.array(case, a["batched_weight"] if "weight" in over else a["weight"])
        return x, w, (0 if "input" in over else None, 0 if "weight" in over else None)

    def vmap(self, case, a):
        x, w, axes = self._vmap_operands(case, a)
        b = self.array(case, a["bias"])
        batched = self.jax.vmap(lambda x, w, b: self.conv(case, x, w, b), in_axes=(*axes, None))
        return {"output": self._call(batched, x, w, b)}

    def vmap_vjp(self, case, a):
        x, w, axes = self._vmap_operands(case, a)
        f = self._f(case, case.params.bias)
        rest = self._primals(case, a)[2:]

        def per_sample(x, w, g, *rest):
            return self.jax.vjp(f, x, w, *rest)[1](g)

        grads = self._call(
            self.jax.vmap(per_sample, in_axes=(*axes, 0) + (None,) * len(rest)),
            x,
            w,
            self.array(case, a["batched_grad_output"]),
            *rest,
        )
        return dict(zip(self._grad_names(case), grads))

    record_framework = "jax"

    def run_record(self, case, check, a):
        """An op record's check: the record's JAX spelling under jax.jit (jax.vjp, jax.jvp)."""
        try:
            return run_jax(JaxNamespace(), case, check, a, self.spelling_for(RECORDS[case.op], case))
        except (NotImplementedError, TypeError) as exc:
            # jax's LAPACK bindings have no half-precision kernels: "(KeyError(<class
            # 'numpy.float16'>), 'Unsupported dtype float16.')"; jax.scipy.special.ndtri and
            # log_ndtr refuse them by name: "TypeError: x.dtype=float16 is not supported"; JAX
            # 0.11's lax.linalg checks the dtype itself (the first GPU run, issue 35): "TypeError:
            # lu does not accept dtype float16 at position 0. Accepted dtypes at position 0 are
            # subtypes of float32, complex128, complex64, float64."
            text = str(exc).lower()
            if not any(
                refusal in text
                for refusal in (
                    f"unsupported dtype {case.dtype}",
                    f"dtype={case.dtype} is not supported",
                    f"does not accept dtype {case.dtype}",
                )
            ):
                raise
            raise Unsupported(
                f"jax has no {case.dtype} kernel for this op (Unsupported dtype {case.dtype})"
            ) from None

    def program(self, case, a):
        """The program functionalised by the reference (views as gathers, in-place as scatters into
        the base) and differentiated by jax's own autodiff (:mod:`conformance.functional`), the whole
        of it (forward, every backward, the leaves' gradients) one function under ``jax.jit``."""

        def compile(program):  # the whole functionalised program under jax.jit, kept per program text
            return lambda *xs: self._compiled(
                case, "program", lambda: self.jax.jit(program), lambda f: f(*xs)
            )

        return run_functional(
            JaxBackend(case.dtype, case.amp),
            case,
            a,
            lambda v: None if v is None else host_array(v),  # float64, complex128 for complex values
            compile,
        )


# -- execution modes (docs/conformance.md, "Execution modes") ------------------------------------
class JaxEagerAdapter(JaxAdapter):
    """``jax:eager``: every check op by op under ``jax.disable_jit()`` (the same code as ``jax:jit``,
    including the op records' and programs' ``jax.jit`` calls, run without compiling)."""

    name = "jax:eager"
    mode = "eager"
    compiles = False
    compile_allowance = 0.0

    def run(self, case, check, a):
        with self.jax.disable_jit():
            out = super().run(case, check, a)
            for k, v in out.items():  # in place: a program's outputs keep their type (PrefixOutputs)
                out[k] = None if v is None else self.jax.device_get(v)
            return out
