"""PyTorch: ``torch.nn.functional.conv{1,2,3}d`` / ``conv_transpose{1,2,3}d``, eager autograd
and ``torch.func`` (``jvp``, ``vjp``, ``vmap``).

The case is written as a PyTorch user writes it: ``padding='same'``/``'valid'``/ints where
PyTorch has them; ``F.pad`` first where it does not (SAME with a stride, SAME_LOWER,
asymmetric or negative pads); for a transposed convolution with a padding PyTorch cannot
express, the padding-free ``conv_transpose`` result cropped (or zero-extended) with ``F.pad``
and the bias added after. ``channels_last`` uses PyTorch's channels-last memory format.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re

from conformance.adapters._geometry import explicit_pads, is_symmetric, transposed_layout
from conformance.adapters._modes import ModeCache
from conformance.adapters.base import Adapter, cpu_setup
from conformance.amp import low_dtype
from conformance.ops import RECORDS, check_arrays, op_params
from conformance.ops._run import ORDER_RUN, _refuse, _run_torch, run_torch, torch_tensor
from conformance.programs import (
    ENDINGS,
    PROGRAM_FILE,
    ProgramError,
    _to_numpy,
    compile_program,
    error_line,
    execute,
    program_regions,
    reference_outcome,
    split_program,
)
from conformance.unsupported import Unsupported


class TorchAdapter(Adapter):
    name = "torch"
    amp_policies = ("mixed_bfloat16", "mixed_float16")  # conformance.amp
    program_namespace = "torch"

    def __init__(self):
        import torch

        self.torch = torch
        self.F = torch.nn.functional
        self.dev = "cpu"
        threads = os.environ.get("REFGRAD_THREADS")
        if threads:
            torch.set_num_threads(int(threads))

    def version(self) -> str:
        return self.torch.__version__

    def devices(self) -> list[str]:
        return ["cpu"] + (["cuda"] if self.torch.cuda.is_available() else [])

    def setup(self, device="cpu", precision="highest") -> dict:
        torch = self.torch
        settings = {
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "num_threads": torch.get_num_threads(),
            # the SIMD level of PyTorch's CPU kernels (DEFAULT, AVX2, AVX512, ...): their vectorised
            # math differs by level, so a departure may exist on one machine only
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        }
        if device == "cpu":
            return cpu_setup(self, device, precision, settings)
        if device != "cuda" or not torch.cuda.is_available():
            raise RuntimeError(f"torch: device {device!r} is not available here (devices: {self.devices()})")
        self.dev = "cuda"
        if precision == "highest":
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        return {
            "device": device,
            "precision": precision,
            "tf32": bool(torch.backends.cudnn.allow_tf32),
            "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
            "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "gpu": torch.cuda.get_device_name(),
            **settings,
        }

    def unsupported(self, case, check):
        if case.kind == "program":
            return None
        if case.params.layout == "channels_last" and case.params.rank == 1:
            return "torch has no channels-last memory format for 3-d tensors (rank-1 convolution)"
        if case.params.layout == "channels_last" and check in ("vmap", "vmap_vjp"):
            return "torch.func.vmap does not support the channels_last memory format (NYI inside vmap)"
        return None

    def run(self, case, check, a):
        return self._numpy(super().run(case, check, a))

    def _numpy(self, out):
        return {k: v if v is None or not hasattr(v, "detach") else self._host(v) for k, v in out.items()}

    def _host(self, v):
        """float64 NumPy, or complex128 for a complex tensor (a conjugate or negative view resolved)."""
        if v.is_complex():
            return v.detach().resolve_conj().resolve_neg().to(self.torch.complex128).cpu().numpy()
        return v.detach().to(self.torch.float64).cpu().numpy()

    record_framework = "torch"

    def run_record(self, case, check, a):
        """An op record's check: the record's PyTorch spelling, eager autograd, torch.func.jvp."""
        return run_torch(self.torch, case, check, a, self.spelling_for(RECORDS[case.op], case), self.dev)

    def program(self, case, a):
        """The program text itself with ``T=torch`` (views, in-place and autograd are PyTorch's)."""
        # conformance.amp: autocast around the forward, the backward outside it
        return execute(case.source, self.torch, a, dtype=case.dtype, forward=self._autocast(case))

    def _autocast(self, case):
        """A mixed-precision case's forward context, ``torch.autocast`` in the policy's compute dtype
        (conformance.amp), as a factory; None for a case without a policy."""
        if not case.amp:
            return None
        dtype = getattr(self.torch, low_dtype(case.amp))
        return lambda: self.torch.autocast(self.dev, dtype=dtype)

    # -- the op as a PyTorch user writes it --------------------------------------------------
    def tensor(self, case, a, requires_grad=False):
        if a is None:
            return None
        if isinstance(a, self.torch.Tensor):  # made outside a compiled region (torch:compile)
            return a.to(dtype=getattr(self.torch, case.dtype)).requires_grad_(requires_grad)
        t = self.torch.tensor(a, dtype=getattr(self.torch, case.dtype), device=self.dev)
        return t.requires_grad_(requires_grad)

    def _layout(self, case, t):
        if case.params.layout != "channels_last" or t is None or t.dim() not in (4, 5):
            return t
        fmt = self.torch.channels_last if t.dim() == 4 else self.torch.channels_last_3d
        return t.contiguous(memory_format=fmt)

    def conv(self, case, x, w, b):
        p, F = case.params, self.F
        x, w = self._layout(case, x), self._layout(case, w)
        r = p.rank
        if p.transposed:
            fn = getattr(F, f"conv_transpose{r}d")
            pad = p.padding
            if not isinstance(pad, str) and is_symmetric(explicit_pads(p, x.shape[2:], w.shape[2:])):
                lo = [lo for lo, _ in explicit_pads(p, x.shape[2:], w.shape[2:])]
                return fn(x, w, b, p.stride, lo, p.output_padding, p.groups, p.dilation)
            _, crops = transposed_layout(p, x.shape[2:], w.shape[2:])
            y = fn(x, w, None, p.stride, 0, 0, p.groups, p.dilation)
            y = F.pad(y, [-c for lo_hi in reversed(crops) for c in lo_hi])
            return y if b is None else y + b.reshape((1, -1) + (1,) * r)
        fn = getattr(F, f"conv{r}d")
        pad = p.padding
        if pad == "valid" or (pad == "same" and all(s == 1 for s in p.stride)):
            return fn(x, w, b, p.stride, pad, p.dilation, p.groups)
        pads = explicit_pads(p, x.shape[2:], w.shape[2:])
        if is_symmetric(pads):
            return fn(x, w, b, p.stride, [lo for lo, _ in pads], p.dilation, p.groups)
        x = F.pad(x, [v for lo_hi in reversed(pads) for v in lo_hi])
        return fn(x, w, b, p.stride, 0, p.dilation, p.groups)

    # -- checks ------------------------------------------------------------------------------
    def forward(self, case, a):
        return {
            "output": self.conv(
                case,
                self.tensor(case, a["input"]),
                self.tensor(case, a["weight"]),
                self.tensor(case, a["bias"]),
            )
        }

    def _grad_names(self, case):
        return ["grad_input", "grad_weight"] + (["grad_bias"] if case.params.bias else [])

    def vjp(self, case, a):
        x, w, b = (self.tensor(case, a[n], True) for n in ("input", "weight", "bias"))
        y = self.conv(case, x, w, b)
        leaves = [t for t in (x, w, b) if t is not None]
        grads = self.torch.autograd.grad(y, leaves, self.tensor(case, a["grad_output"]))
        return dict(zip(self._grad_names(case), grads))

    def vjp_vjp(self, case, a):
        torch = self.torch
        x, w, b = (self.tensor(case, a[n], True) for n in ("input", "weight", "bias"))
        g = self.tensor(case, a["grad_output"], True)
        y = self.conv(case, x, w, b)
        leaves = [t for t in (x, w, b) if t is not None]
        firsts = torch.autograd.grad(y, leaves, g, create_graph=True)
        cotangents = [self.tensor(case, a[n]) for n in ("gg_input", "gg_weight", "gg_bias")][: len(firsts)]
        seconds = torch.autograd.grad(
            firsts, [g, x, w], cotangents, allow_unused=True, materialize_grads=True
        )
        return dict(zip(("g_grad_output", "g_input", "g_weight"), seconds))

    def jvp(self, case, a):
        primals = tuple(self.tensor(case, a[n]) for n in ("input", "weight", "bias"))
        tangents = tuple(self.tensor(case, a[n]) for n in ("tangent_input", "tangent_weight", "tangent_bias"))
        if primals[2] is None:
            primals, tangents = primals[:2], tangents[:2]
        _, t = self.torch.func.jvp(
            lambda *args: self.conv(case, *args, *([None] * (3 - len(args)))), primals, tangents
        )
        return {"tangent_output": t}

    def _vmap_operands(self, case, a, names):
        over = case.vmap_over
        x = self.tensor(case, a["batched_input"] if "input" in over else a["input"])
        w = self.tensor(case, a["batched_weight"] if "weight" in over else a["weight"])
        return (x, w), (0 if "input" in over else None, 0 if "weight" in over else None)

    def vmap(self, case, a):
        (x, w), dims = self._vmap_operands(case, a, None)
        b = self.tensor(case, a["bias"])
        return {"output": self.torch.func.vmap(lambda x, w: self.conv(case, x, w, b), in_dims=dims)(x, w)}

    def vmap_vjp(self, case, a):
        func = self.torch.func
        (x, w), dims = self._vmap_operands(case, a, None)
        b = self.tensor(case, a["bias"])
        g = self.tensor(case, a["batched_grad_output"])

        def per_sample(x, w, b, g):
            if b is None:
                _, pull = func.vjp(lambda x, w: self.conv(case, x, w, None), x, w)
            else:
                _, pull = func.vjp(lambda x, w, b: self.conv(case, x, w, b), x, w, b)
            return pull(g)

        grads = func.vmap(per_sample, in_dims=(*dims, None, 0))(x, w, b, g)
        return dict(zip(self._grad_names(case), grads))


# -- execution modes (docs/conformance.md, "Execution modes") ------------------------------------
# what torch raises when a check differentiates AOTAutograd's compiled backward (create_graph=True)
AOT_NO_DOUBLE_BACKWARD = (
    "does not currently support double backward",
    "compiled with non-empty donated buffers which requires create_graph=False",
)
# the arrays a torch.func check reads (conformance.case.CHECK_ARRAYS), made outside the compiled region
_TRANSFORM_ARRAYS = {
    "jvp": ("input", "weight", "bias", "tangent_input", "tangent_weight", "tangent_bias"),
    "vmap": ("input", "weight", "bias", "batched_input", "batched_weight"),
    "vmap_vjp": ("input", "weight", "bias", "batched_input", "batched_weight", "batched_grad_output"),
}


class TorchCompileAdapter(ModeCache, TorchAdapter):
    """``torch:compile``: the op under ``torch.compile`` (Inductor's CPU C++ code generation).

    The convolution (or the op record's function) is compiled as the model a user compiles;
    ``torch.autograd.grad`` on its output runs AOTAutograd's compiled backward, double backward
    differentiates through it, and the ``torch.func`` checks (jvp, vmap, vmap_vjp) compile the
    whole transform (Dynamo traces ``torch.func``). One compiled function per shape signature;
    Dynamo's recompile limit is raised and ``fail_on_recompile_limit_hit`` set, so a guard miss
    never falls back to eager silently. ``REFGRAD_TORCH_DYNAMIC=1`` compiles with dynamic shapes
    (default off); the setting is recorded.
    """

    name = "torch:compile"
    mode = "compile"
    backend = "inductor"
    compiles = True
    compile_allowance = 300.0  # a first Inductor compile of a double backward on 2 busy cores
    needs_cxx = True

    def __init__(self):
        super().__init__()
        import torch._dynamo.config as dynamo_config

        dynamo_config.recompile_limit = 1_000_000
        dynamo_config.accumulated_recompile_limit = 1_000_000
        dynamo_config.fail_on_recompile_limit_hit = True
        if os.environ.get("REFGRAD_THREADS") and "TORCHINDUCTOR_COMPILE_THREADS" not in os.environ:
            import torch._inductor.config as inductor_config

            # a one-thread worker compiles in-process (no pool of compile subprocesses on a busy machine)
            inductor_config.compile_threads = 1
        self.dynamic = os.environ.get("REFGRAD_TORCH_DYNAMIC", "0") not in ("", "0", "false")
        self.missing = None
        self._active = None

    def _compiler(self) -> str:
        """The C++ compiler Inductor will use and its version (sets ``self.missing`` when none)."""
        import subprocess

        try:
            from torch._inductor.cpp_builder import get_cpp_compiler

            cxx = get_cpp_compiler()
            line = subprocess.check_output([cxx, "--version"], text=True).splitlines()[0]
            return f"{cxx}: {line}"
        except Exception as exc:  # noqa: BLE001 - any failure to find one is the reason reported
            self.missing = (
                f"torch:compile needs a C++ compiler for Inductor's CPU code and none was found "
                f"({type(exc).__name__}: {str(exc).strip()[:200] or 'no working g++ / $CXX'})"
            )
            return f"missing ({self.missing})"

    def setup(self, device="cpu", precision="highest") -> dict:
        settings = super().setup(device, precision)
        import torch._inductor.config as inductor_config

        settings.update(self.mode_settings())
        settings.update(
            {
                "backend": self.backend,
                "dynamic_shapes": self.dynamic,
                "recompile_limit": "1000000 (fail_on_recompile_limit_hit: never a silent eager fallback)",
                "inductor_fx_graph_cache": bool(inductor_config.fx_graph_cache),
                "inductor_compile_threads": inductor_config.compile_threads,
                "inductor_cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR", "(default, under /tmp)"),
            }
        )
        if self.needs_cxx:
            settings["cxx"] = self._compiler()
        return settings

    def why_unsupported(self, case, check):
        if self.missing:
            return self.missing
        return super().why_unsupported(case, check)

    def program(self, case, a):
        """The program's forward (every step up to ``loss = ...``: the function of the leaves to the
        variables and the loss; the template classes and functions it defines are defined outside it)
        under ``torch.compile(fullgraph=True)``, kept per program text; its
        ending (the backward / autograd.grad calls) runs on the compiled outputs, so gradients come
        from AOTAutograd's compiled backward. A graph break or a refusal (AOTAutograd's double
        backward) is ``unsupported`` in the compiler's words, never run eagerly instead."""
        torch = self.torch
        definitions_text, _, tail_text = split_program(case.source)
        tail = compile_program(tail_text, "tail")
        names = list(dict.fromkeys(re.findall(r"\bv\d+\b", case.source.splitlines()[-1])))
        penalty = _gradient_penalty(case, definitions_text)
        autocast = self._autocast(case)

        def under(fn):
            # a mixed-precision case: autocast *inside* the compiled function, as users write a
            # compiled mixed-precision step (Dynamo traces the context; conformance.amp)
            if autocast is None:
                return fn

            def amp_fn(*args):
                with autocast():
                    return fn(*args)

            return amp_fn

        def make_penalty():
            # AOTAutograd does not differentiate its compiled backward, so the gradient penalty is
            # spelled as users compile one: torch.func.grad of the forward's loss inside the compiled
            # function, which returns loss + |g|^2 to one (first-order) backward
            (region,) = program_regions(case.source)
            fn = compile_program(region.text, "region")
            leaf_names = re.findall(r"\bv\d+\b", case.source.splitlines()[0])

            def run(xs):
                env = dict(zip(leaf_names, xs))
                env.update(zip(region.outputs, fn(torch, *[env[n] for n in region.inputs])))
                return env

            def penalized(*leaves):  # (the forward under autocast, torch.func.grad's backward outside)
                g = torch.func.grad(lambda *xs: under(run)(xs)["loss"])(*leaves)
                env = under(run)(leaves)
                return (*[env[n] for n in names], env["loss"], env["loss"] + (g * g).sum())

            return torch.compile(penalized, backend=self.backend, dynamic=self.dynamic, fullgraph=True)

        def make():
            if penalty:
                return make_penalty()
            # the template classes and functions are defined outside the compiled functions (as a
            # user's module defines them: Dynamo cannot trace a class definition); the forward is one
            # compiled region, or several split where Dynamo cannot capture a statement (retain_grad,
            # a saved-tensor hook context: run between the regions, the hooked step compiled inside)
            definitions = compile_program(definitions_text, "definitions")(torch)
            parts = []
            for region in program_regions(case.source):
                fn = compile_program(region.text, "region", definitions)
                if region.kind != "eager":
                    fn = torch.compile(
                        under(functools.partial(fn, torch)),
                        backend=self.backend,
                        dynamic=self.dynamic,
                        fullgraph=True,
                    )
                else:
                    fn = functools.partial(fn, torch)
                context = (
                    compile_program(region.text, "context", definitions) if region.kind == "context" else None
                )
                parts.append((region, fn, context))

            def forward(*leaves):
                env = dict(zip(re.findall(r"\bv\d+\b", case.source.splitlines()[0]), leaves))
                for region, fn, context in parts:
                    args = [env[n] for n in region.inputs]
                    with context(torch) if context else contextlib.nullcontext():
                        env.update(zip(region.outputs, fn(*args)))
                return (*[env[n] for n in names], env["loss"])

            return forward

        def once(compiled):  # fresh leaves each run (.grad accumulates)
            leaves = [
                torch.tensor(x, dtype=getattr(torch, case.dtype)).requires_grad_(True) for x in a.values()
            ]
            try:
                if penalty:
                    *result, _, total = compiled(*leaves)
                    total.backward()
                else:
                    *values, loss = compiled(*leaves)
                    result = tail(torch, loss, *values)
            except torch._dynamo.exc.Unsupported as exc:
                raise Unsupported(
                    f"{self.name}: torch.compile(fullgraph=True) cannot capture the program's forward "
                    f"(a graph break): {_compiler_words(exc)}"
                ) from None
            except Exception as exc:
                if any(words in str(exc) for words in AOT_NO_DOUBLE_BACKWARD):
                    raise Unsupported(
                        f"{self.name}: AOTAutograd does not differentiate its compiled backward: "
                        f"{_compiler_words(exc)}"
                    ) from None
                if "is not possible to functionalize" in str(exc):  # banned in compile, its words
                    raise Unsupported(
                        f"{self.name}: torch.compile refuses a write through a view chain it would replay "
                        f"with as_strided (e.g. x.real of a complex x written under torch.func.grad): "
                        f"{_compiler_words(exc)}"
                    ) from None
                if penalty and "During a grad" in str(exc):  # torch.func's refusal of the spelling
                    raise Unsupported(
                        f"{self.name}: the gradient penalty spelled with torch.func.grad: {_compiler_words(exc)}"
                    ) from None
                line, text = error_line(exc, case.source)
                if line is None:  # raised while compiling: Dynamo quotes the user code's line
                    line, text = _quoted_line(str(exc), case.source)
                raise ProgramError(type(exc).__name__, str(exc), line, text) from None
            out = {f"result[{i}]": _to_numpy(r) for i, r in enumerate(result)}
            out.update({f"grad[{n}]": _to_numpy(t.grad) for n, t in zip(a, leaves)})
            return out

        return self._compiled(case, "program", make, once)

    def _compile(self, fn):
        return self.torch.compile(fn, backend=self.backend, dynamic=self.dynamic, fullgraph=False)

    def conv(self, case, x, w, b):
        if self._active is None:
            return TorchAdapter.conv(self, case, x, w, b)
        return self._active(x, w, b)

    def run(self, case, check, a):
        try:
            return self._run_mode(case, check, a)
        except BaseException as exc:
            _exit_leaked_dual_level(self.torch)
            # AOTAutograd's refusal of create_graph on its compiled backward: its own words, or, where
            # the backward was compiled with donated buffers (by a first-order check of the same
            # function run before), the donated-buffer check's
            if not isinstance(exc, RuntimeError) or not any(words in str(exc) for words in AOT_NO_DOUBLE_BACKWARD):
                raise
            raise Unsupported(
                f"{self.name}: torch.compile's AOTAutograd does not differentiate its compiled backward "
                f"(double backward): {str(exc).splitlines()[0][:200]}"
            ) from None

    def _run_mode(self, case, check, a):
        torch = self.torch
        if case.kind != "conv":
            return super().run(case, check, a)
        if check in ("jvp", "vmap", "vmap_vjp"):
            # compile the whole torch.func transform: a compiled function called inside torch.func
            # runs eager (Dynamo does not compile under an outer functorch transform)
            dtype = getattr(torch, case.dtype)
            tensors = {
                n: None if a[n] is None else torch.tensor(a[n], dtype=dtype, device=self.dev)
                for n in _TRANSFORM_ARRAYS[check]
            }
            method = getattr(TorchAdapter, check)

            def make():
                return self._compile(lambda t: method(self, case, t))

            return self._compiled(case, check, make, lambda compiled: self._numpy(compiled(tensors)))

        def make():
            return self._compile(lambda x, w, b: TorchAdapter.conv(self, case, x, w, b))

        def run(compiled):
            self._active = compiled
            try:
                return TorchAdapter.run(self, case, check, a)
            finally:
                self._active = None

        return self._compiled(case, check, make, run)

    def run_record(self, case, check, a):
        """The record's function under torch.compile (autograd through its compiled backward);
        the jvp, vmap, vmap_vjp and second-order (jvp_jvp, vjp_jvp, jvp_vjp, vmap_jvp_vjp) checks
        compile the whole ``torch.func`` transform (a compiled
        function called inside ``torch.func.vmap`` runs eager: Dynamo does not compile under an
        outer functorch transform)."""
        torch, fn = self.torch, self.spelling_for(RECORDS[case.op], case)
        params = op_params(case)
        # the spelling's own refusals (the compiled wrappers below carry none)
        _refuse(fn, case, check, "torch")

        def tensor(x):  # (a complex case's real arrays in the part dtype, as in the default mode)
            return torch_tensor(torch, case, x, self.dev)

        if check in ("vmap", "vmap_vjp", *ORDER_RUN):
            # the whole torch.func transform (vmap, or the second-order jvp/vjp nest) compiled; its
            # arrays are arguments
            tensors = {k: tensor(a[k]) for k in check_arrays(case, check)}

            def make():
                return self._compile(
                    lambda ts: _run_torch(torch, case, check, ts, fn, lambda x, grad=False: x)
                )

            return self._compiled(case, check, make, lambda c: {k: _dense(v) for k, v in c(tensors).items()})
        if check == "jvp":  # the whole torch.func.jvp compiled (see run)
            rec = RECORDS[case.op]
            xs = {n: tensor(a[n]) for n in rec.inputs}
            primals = tuple(xs[n] for n in rec.diff_inputs)
            tangents = tuple(tensor(a[f"tangent_{n}"]) for n in rec.diff_inputs)
            fixed = {n: x for n, x in xs.items() if n not in rec.diff_inputs}

            def make():
                def jvp(primals, tangents, fixed):
                    def g(*ps):
                        it = iter(ps)
                        return fn(
                            torch, *[fixed[n] if n in fixed else next(it) for n in rec.inputs], **params
                        )

                    return torch.func.jvp(g, primals, tangents)[1]

                return self._compile(jvp)

            return self._compiled(
                case, check, make, lambda c: {"tangent_output": _dense(c(primals, tangents, fixed))}
            )

        def make():
            return self._compile(lambda *xs: fn(torch, *xs, **params))

        def run(compiled):
            return run_torch(torch, case, check, a, lambda _torch, *xs, **_: compiled(*xs), self.dev)

        return self._compiled(case, check, make, run)


class TorchAotEagerAdapter(TorchCompileAdapter):
    """``torch:aot_eager``: the same Dynamo graphs and AOTAutograd decompositions as
    ``torch:compile``, run by eager kernels instead of Inductor's generated code. A departure in
    ``torch:compile`` that ``torch:aot_eager`` shares is in the graph capture or a decomposition;
    one it does not share is Inductor's code generation."""

    name = "torch:aot_eager"
    mode = "aot_eager"
    backend = "aot_eager"
    compile_allowance = 120.0
    needs_cxx = False


def _exit_leaked_dual_level(torch) -> None:
    """Exit the forward-AD level a failed compiled ``torch.func.jvp`` left entered.

    Where compiling a ``torch.func.jvp`` fails (Inductor's BackendCompilerFailed), torch does not exit
    the dual level the transform entered, and every later ``torch.func.jvp`` in the process raises
    "Nested forward mode AD is not supported at the moment": one failing case would fail every
    forward-mode check after it in the worker. Entering a level tells whether one is left (torch
    allows one at a time); the leaked one is level 0."""
    try:
        level = torch._C._enter_dual_level()
    except RuntimeError as exc:
        if "Nested forward mode AD" not in str(exc):
            raise
        torch._C._exit_dual_level(level=0)
    else:
        torch._C._exit_dual_level(level=level)


def _gradient_penalty(case, definitions_text: str) -> bool:
    """Whether a compiling mode runs the program's double-backward ending (``ENDINGS["double_backward"]``:
    ``autograd.grad(loss, [v0], create_graph=True)`` then ``(loss + (g * g).sum()).backward()``) as
    ``torch.func.grad`` inside the compiled forward: a program of one region, no template definitions
    (torch.func needs a custom Function's ``setup_context``), no gradient hooks, that the reference runs
    (an autograd-state error is PyTorch's autograd.grad's to raise, compared on the program as written)."""
    lines = case.source.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("    loss = "))
    if [line.strip() for line in lines[at + 1 : -1]] != ENDINGS["double_backward"]:
        return False
    if re.search(r"^    (class|def) ", definitions_text, re.M) or "register_hook(" in case.source:
        return False
    if [r.kind for r in program_regions(case.source)] != ["compiled"]:
        return False
    return reference_outcome(case)[0] == "ok"


def _quoted_line(message: str, source: str):
    """(line, text) of the innermost program line a compiler's message quotes (Dynamo's "from user
    code: File "<program>", line N"), or (None, "")."""
    import re

    found = re.findall(rf'File "{re.escape(PROGRAM_FILE)}", line (\d+)', message)
    lines = source.splitlines()
    if not found or int(found[-1]) > len(lines):
        return None, ""
    return int(found[-1]), lines[int(found[-1]) - 1]


def _compiler_words(exc, limit=600):
    """The compiler's own message, its first lines (Dynamo appends long hints and a user stack)."""
    text = " ".join(str(exc).strip().split("\n\n")[0].split())
    return text if len(text) <= limit else text[:limit] + " ..."


def _dense(t):
    """A zero tensor (torch's ZeroTensor from a tangent that does not reach the output) made dense."""
    import torch

    return torch.zeros(t.shape, dtype=t.dtype) if t._is_zerotensor() else t
