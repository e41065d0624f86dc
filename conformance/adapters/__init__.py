"""Framework adapters: the built-in ones, entry points, and loading ``module:Class`` specs.

A third-party backend registers itself through the entry point group ``refgrad.adapters``
(``name = "package.module:ClassName"``) or is named on the command line with
``conformance run --adapter package.module:ClassName``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util

from conformance.adapters.base import Adapter

BUILTIN = {
    "torch": ("torch", "conformance.adapters.torch_adapter:TorchAdapter"),
    "tensorflow": ("tensorflow", "conformance.adapters.tf_adapter:TensorFlowAdapter"),
    "jax": ("jax", "conformance.adapters.jax_adapter:JaxAdapter"),
}
ENTRY_POINT_GROUP = "refgrad.adapters"
# execution modes, ``framework:mode`` (docs/conformance.md, "Execution modes"): each mode is an
# adapter class of its own beside its framework's. A framework's default mode is the plain name.
MODES = {
    "torch": {
        "eager": None,
        "compile": "conformance.adapters.torch_adapter:TorchCompileAdapter",
        "aot_eager": "conformance.adapters.torch_adapter:TorchAotEagerAdapter",
    },
    "jax": {
        "jit": None,
        "eager": "conformance.adapters.jax_adapter:JaxEagerAdapter",
    },
    "tensorflow": {
        "eager": None,
        "function": "conformance.adapters.tf_adapter:TensorFlowFunctionAdapter",
        "xla": "conformance.adapters.tf_adapter:TensorFlowXlaAdapter",
    },
}


def mode_specs() -> dict[str, str]:
    """``framework:mode`` -> spec for every non-default built-in mode."""
    return {f"{fw}:{m}": spec for fw, modes in MODES.items() for m, spec in modes.items() if spec}


def resolve(name: str) -> str:
    """The canonical name of ``name``: ``torch:eager`` -> ``torch``; a mode stays ``framework:mode``.

    Raises :class:`AdapterError` for an unknown mode of a framework with modes (naming the valid
    ones) and for a mode of a framework that has none.
    """
    fw, sep, mode = name.partition(":")
    if not sep:
        return name
    if fw not in MODES:
        raise AdapterError(f"{fw!r} has no execution modes (frameworks with modes: {', '.join(MODES)})")
    modes = MODES[fw]
    if mode not in modes:
        raise AdapterError(
            f"{mode!r} is not an execution mode of {fw} (valid modes: {', '.join(modes)}; "
            f"{next(iter(modes))} is the default, the same as plain {fw!r})"
        )
    return fw if modes[mode] is None else name


class AdapterError(ValueError):
    """An adapter spec that cannot be loaded: names the spec and the problem."""


def installed() -> dict[str, str]:
    """name -> spec for every built-in adapter whose framework imports, plus entry points."""
    found = {name: spec for name, (module, spec) in BUILTIN.items() if importlib.util.find_spec(module)}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def installed_modes() -> dict[str, str]:
    """``framework:mode`` -> spec for the non-default modes of every installed built-in framework."""
    present = installed()
    return {name: spec for name, spec in mode_specs().items() if name.partition(":")[0] in present}


def known() -> dict[str, str]:
    """name -> spec for every built-in adapter and mode (installed or not) and entry point."""
    out = {name: spec for name, (_, spec) in BUILTIN.items()}
    out.update(mode_specs())
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, ep.value)
    return out


def load_class(spec: str) -> type:
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise AdapterError(f"adapter spec {spec!r} must have the form 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AdapterError(f"adapter spec {spec!r}: cannot import {module_name!r} ({exc})") from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise AdapterError(f"adapter spec {spec!r}: module {module_name!r} has no attribute {class_name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Adapter)):
        raise AdapterError(f"adapter spec {spec!r}: {class_name} is not a subclass of conformance.Adapter")
    return cls


def load(spec: str) -> Adapter:
    return load_class(spec)()


__all__ = [
    "Adapter",
    "AdapterError",
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "MODES",
    "installed",
    "installed_modes",
    "known",
    "load",
    "load_class",
    "mode_specs",
    "resolve",
]
