"""Sample records of the family modules added after the table's split: one module per op family
(mirroring :mod:`reference.ops.rules`), each defining ``RECORDS = {rule name: [samples]}`` in the
format of :data:`tests.autograd.op_records.OP_RECORDS`, which merges them all. A module may also
define ``EXTRA_SAMPLES = {rule name: [samples]}``: samples appended to a primitive recorded
elsewhere (the complex128 samples of the elementwise ops, records.complex)."""

import importlib
import pkgutil


def extra_samples():
    out = {}
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not m.name.startswith("_"):
            for name, samples in getattr(
                importlib.import_module(f"{__name__}.{m.name}"), "EXTRA_SAMPLES", {}
            ).items():
                out.setdefault(name, []).extend(samples)
    return out


def family_records():
    out = {}
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if m.name.startswith("_"):
            continue
        records = importlib.import_module(f"{__name__}.{m.name}").RECORDS
        for name, samples in records.items():
            if name in out:
                raise ValueError(f"samples for primitive {name!r} are given twice (records.{m.name})")
            out[name] = samples
    return out
