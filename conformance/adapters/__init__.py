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


class AdapterError(ValueError):
    """An adapter spec that cannot be loaded: names the spec and the problem."""


def installed() -> dict[str, str]:
    """name -> spec for every built-in adapter whose framework imports, plus entry points."""
    found = {name: spec for name, (module, spec) in BUILTIN.items() if importlib.util.find_spec(module)}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.value)
    return found


def known() -> dict[str, str]:
    """name -> spec for every built-in adapter (installed or not) and entry point."""
    out = {name: spec for name, (_, spec) in BUILTIN.items()}
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
    "installed",
    "known",
    "load",
    "load_class",
]
