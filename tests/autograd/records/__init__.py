"""Sample records of the family modules added after the table's split: one module per op family
(mirroring :mod:`reference.ops.rules`), each defining ``RECORDS = {rule name: [samples]}`` in the
format of :data:`tests.autograd.op_records.OP_RECORDS`, which merges them all. A module may also
define ``EXTRA_SAMPLES = {rule name: [samples]}``: samples appended to a primitive recorded
elsewhere (the complex128 samples of the elementwise ops, records.complex).

A primitive with no samples here gets them from its conformance record (:func:`record_samples`):
a new elementwise op needs no tuple of its own (issue #31: one record per primitive)."""

import importlib
import inspect
import pkgutil

import reference as T
from reference.ops import RULES
from reference.ops.rule import BATCH_ELEMENTWISE

#: a record domain's gate placement (conformance.ops._domains) -> the gradcheck draw that stays in it
_KINDS = {"any": "a", "pos": "p", "unit": "f"}


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


def record_samples(record):
    """Gradcheck samples derived from a conformance record (conformance.ops.OpRecord), or None: a
    fuzzed, differentiated (``vjp``) record of an elementwise primitive (its rule batches
    elementwise), without parameters, whose inputs (``input``, ``other``) are all differentiated: its ``fn`` on (2, 3)
    float64 tensors drawn inside each input's domain (its gate placement: "any" -> ``a``, "pos" ->
    ``p``, "unit" -> ``f``; another placement: None)."""
    if record is None or record.fn is None or record.not_fuzzed is not None or record.nondiff:
        return None
    if RULES[record.rules[0]].batch != BATCH_ELEMENTWISE or "vjp" not in record.checks:
        return None
    if not set(record.inputs) <= {"input", "other"}:  # (the elementwise records' operands broadcast)
        return None
    if len(inspect.signature(record.fn).parameters) != 1 + len(record.inputs):  # (T, *inputs): no params
        return None
    kinds = ""
    for name in record.inputs:
        domain = record.domains.get(name, "any")
        gate = domain if isinstance(domain, str) else domain.gate
        if not isinstance(gate, str) or gate not in _KINDS:
            return None
        kinds += _KINDS[gate]
    sample = ("record", lambda *xs: record.fn(T, *xs), [(2, 3)] * len(record.inputs), kinds)
    if "vjp_vjp" not in record.checks:
        sample += ({"first_order_only": f"the record of {record.name} checks first order only"},)
    return [sample]
