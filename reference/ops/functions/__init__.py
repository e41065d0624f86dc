"""PyTorch-facing functions beyond the core of :mod:`reference.ops.api`, one module per op family.

Each module here is a family of Tensor-level functions (PyTorch's names, signatures, defaults and
errors) over rules of :mod:`reference.ops.rules`, and says where its names go:

* ``__all__``: functions of ``reference`` itself (``T.erf``, ``T.cumsum``);
* ``METHODS``: those that are also ``Tensor`` methods of the same name (in-place ``*_`` variants
  included); a ``dict`` maps method names to functions where they differ;
* ``NN_FUNCTIONAL``: names (or ``name -> function``) of ``reference.nn.functional``;
* ``NAMESPACES``: ``{"linalg": {...}, "special": {...}, "fft": {...}, "masked": {...}}``, functions of
  ``reference.linalg``, ``reference.special``, ``reference.fft``, ``reference.masked``.

:func:`export` collects them, with the functions :mod:`reference.ops.public` generates from the rule
family modules' ``EXPORTS`` (family ``"public"`` below); ``reference/__init__``, :mod:`reference.ops.methods` and
:mod:`reference.nn.functional` install them. A new family is a new module here, nothing else to
edit; a name exported twice is an error naming both modules.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from reference.ops import public

FAMILIES = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")))


def _modules():
    return [importlib.import_module(f"{__name__}.{name}") for name in FAMILIES]


@functools.cache
def export():
    """``{"reference": {...}, "methods": {...}, "nn.functional": {...}, "linalg": {...}, ...}``:
    every name each family module exports, by destination."""
    if not public.FUNCTIONS:
        raise RuntimeError(
            "reference.ops.functions.export() before reference.ops generated the public functions"
        )
    out: dict[str, dict] = {}
    owners: dict[tuple, str] = {}
    for family, dests in [("public", public.DESTINATIONS)] + [_exports(m) for m in _modules()]:
        for dest, names in dests.items():
            table = out.setdefault(dest, {})
            for name, fn in names.items():
                if name in table and table[name] is not fn:
                    raise ValueError(
                        f"{dest} name {name!r} is exported by family {owners[dest, name]!r} and by {family!r}"
                    )
                table[name] = fn
                owners[dest, name] = family
    return out


def _exports(module):
    """``(family, {destination: {name: function}})``: what a family module exports."""
    dests = {"reference": {n: getattr(module, n) for n in getattr(module, "__all__", ())}}
    for key, attr in (("methods", "METHODS"), ("nn.functional", "NN_FUNCTIONAL")):
        names = getattr(module, attr, ())
        dests[key] = dict(names) if isinstance(names, dict) else {n: getattr(module, n) for n in names}
    for space, names in getattr(module, "NAMESPACES", {}).items():
        dests[space] = dict(names) if isinstance(names, dict) else {n: getattr(module, n) for n in names}
    return module.__name__.rsplit(".", 1)[-1], dests
