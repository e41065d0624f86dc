"""The adapter interface: how a framework runs a :class:`~conformance.case.Case`.

A backend is one class. Subclass :class:`Adapter`, set ``name``, and implement any of the
check methods ``forward``, ``vjp``, ``vjp_vjp``, ``jvp``, ``vmap``, ``vmap_vjp``. Each takes
``(case, a)`` where ``a`` maps array names (``input``, ``weight``, ``bias``, ``grad_output``,
``tangent_*``, ``gg_*``, ``batched_*``; see :data:`conformance.case.ARRAY_NAMES`) to float64
NumPy arrays in the reference's channels-first layout whose values are exactly representable in
``case.dtype`` (``a["bias"]`` is None for a bias-free case). Cast them to ``case.dtype`` in your
framework, lay them out as your users would, run, and return a dict of NumPy arrays (any float
dtype, channels-first) named as the reference names them:

============  ==============================================================
forward       ``output``
vjp           ``grad_input``, ``grad_weight`` (and ``grad_bias`` with a bias)
vjp_vjp       ``g_grad_output``, ``g_input``, ``g_weight``
jvp           ``tangent_output``
vmap          ``output`` with the vmapped dim first
vmap_vjp      ``grad_input``, ``grad_weight`` (``grad_bias``), vmapped dim first
program       ``result[i]`` and ``grad[vi]`` (see :func:`conformance.programs.execute`)
============  ==============================================================

The ``program`` check gets a program case (``case.source``, a ``def prog(T, v0, ...)`` text) and
``a`` maps ``v0, v1, ...`` to its inputs; raise :class:`conformance.programs.ProgramError` (which
:func:`conformance.programs.execute` does) when the program raises, so the line is compared too.

A check you do not implement is reported ``unsupported`` with a reason that says so; return a
reason string from :meth:`Adapter.unsupported` for configurations your framework cannot express
(the verdict is ``unsupported: <reason>``, never a silent skip). Raising from a check method
means "the framework rejected this input": it is compared with whether the reference rejects it.
"""

from __future__ import annotations

import functools
import platform

from conformance.ops import PRIMARY, RECORDS, spelling_name

IMPLEMENTABLE_CHECKS = ("forward", "vjp", "vjp_vjp", "jvp", "vmap", "vmap_vjp", "program")


class Adapter:
    """Base class of every backend adapter (see the module docstring)."""

    name = "adapter"
    # the module a program case runs with as ``T`` (named in its reproducer); None: not by name
    program_namespace: str | None = None
    # the mixed-precision policies (conformance.case.AMP_POLICIES) whose program cases it runs as the
    # policy says (conformance.amp); a case under another is unsupported, never run without its casts
    amp_policies: tuple = ()

    def version(self) -> str:
        """The framework's version string, recorded with every result."""
        return "unknown"

    def devices(self) -> list[str]:
        """Devices this backend can run on here (``cpu``, ``cuda``)."""
        return ["cpu"]

    def setup(self, device: str = "cpu", precision: str = "highest") -> dict:
        """Select the device and precision; return the settings in effect.

        ``precision`` is ``highest`` (TF32 off) or ``default`` (the framework's default).
        The returned dict is recorded with the results; its ``tf32`` entry (bool) says whether
        float32 products run in TF32, which changes the unit roundoff of the bound.
        """
        if device != "cpu":
            raise RuntimeError(f"{self.name} adapter runs on cpu only, not {device!r}")
        return {
            "device": device,
            "precision": precision,
            "tf32": False,
            "note": "TF32 does not exist on CPU: --precision has no effect",
        }

    def unsupported(self, case, check: str) -> str | None:
        """Why this framework cannot run ``check`` on ``case`` (None when it can)."""
        return None

    # -- execution modes (conformance.adapters._modes): compile caching and timing -------------
    #: seconds added to the per-check time limit when a request compiles first
    compile_allowance = 0.0

    def will_compile(self, case, check: str) -> bool:
        """Whether running (case, check) compiles first (the runner then allows ``compile_allowance``)."""
        return False

    def start_request(self) -> None:
        """Called by the worker before each check (a mode adapter forgets the last request's timing)."""

    def timing(self) -> dict:
        """The last check's ``compile_seconds`` and ``cache`` state (empty: nothing compiled)."""
        return {}

    # -- dispatch ---------------------------------------------------------------------------
    # -- op records (conformance.ops): one generic program per check over the record's spelling --
    #: which spelling of an op record this adapter runs (``torch``, ``jax``, ``tensorflow``)
    record_framework: str | None = None
    run_record = None  # run_record(case, check, a) -> dict, in the built-in adapters

    def spelling(self, rec):
        """The function this adapter runs for op record ``rec`` (or why it has none, a str): its
        primary spelling. An adapter may override it (a planted bug, another backend's spelling)."""
        if self.record_framework is None:
            return f"the {self.name} adapter runs no op records"
        return rec.spelling(self.record_framework)

    def spelling_for(self, rec, case):
        """The function this adapter runs for ``case`` of ``rec``: the other public spelling the case
        names (``params["spelling_<framework>"]``), else :meth:`spelling`."""
        if self.record_framework is not None and spelling_name(case, self.record_framework) != PRIMARY:
            return rec.spelling(self.record_framework, case)
        return self.spelling(rec)

    def unsupported_record(self, case, check: str) -> str | None:
        """Why this framework cannot run ``check`` on an op record's case (None when it can)."""
        return None

    def _why_record(self, case, check):
        rec = RECORDS[case.op]
        if check not in rec.checks:
            return f"the {check} check does not apply to the {rec.name} record (its checks: {', '.join(rec.checks)})"
        if getattr(type(self), "run_record", None) is None:
            return f"the {self.name} adapter runs no op records"
        spelled = self.spelling_for(rec, case)
        if isinstance(spelled, str):
            return spelled
        return self.unsupported_record(case, check)

    def why_unsupported(self, case, check: str) -> str | None:
        if case.kind == "record":
            return self._why_record(case, check)
        method = "forward" if check == "error" else check
        if check not in IMPLEMENTABLE_CHECKS + ("error",):
            return f"unknown check {check!r}"
        if (check == "program") != (case.kind == "program"):
            return f"the {check} check does not apply to a {case.op} case"
        if getattr(type(self), method, None) is None:
            return f"the {self.name} adapter does not implement the {method} check"
        if case.kind == "program" and case.amp and case.amp not in self.amp_policies:
            return (
                f"the {self.name} adapter does not declare the {case.amp!r} mixed-precision policy "
                f"(its amp_policies: {list(self.amp_policies)}; conformance.amp)"
            )
        return self.unsupported(case, check)

    def run(self, case, check: str, a) -> dict:
        """Run one check (``error`` runs ``forward``: only whether it raises matters)."""
        if case.kind == "record":
            return self.run_record(case, "forward" if check == "error" else check, a)
        return getattr(self, "forward" if check == "error" else check)(case, a)

    forward = vjp = vjp_vjp = jvp = vmap = vmap_vjp = program = None


@functools.cache
def cpu_flags() -> frozenset | None:
    """The processor's feature flags as Linux lists them (/proc/cpuinfo), None where unknown."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def cpu_setup(adapter: Adapter, device: str, precision: str, settings: dict) -> dict:
    """The settings record of a CPU-only run (shared by the built-in adapters)."""
    flags = cpu_flags()
    return {
        "device": device,
        "precision": precision,
        "tf32": False,
        "machine": platform.machine(),
        # native float16 arithmetic (x86 AVX512-FP16): oneDNN, inside PyTorch and TensorFlow, runs
        # float16 kernels of its own on such a processor (its AVX512_CORE_FP16 ISA), converting
        # through float32 elsewhere, so a float16 departure may exist on these machines only
        "avx512_fp16": None if flags is None else "avx512_fp16" in flags,
        "note": "CPU: TF32 does not exist here, --precision has no effect",
        **settings,
    }
