"""Test adapters with planted bugs in op-record checks (vmap's in_dims, the error check).
Workers import this module by name (tests/conformance/conftest.py puts this directory on PYTHONPATH)."""

from __future__ import annotations

from dataclasses import replace

from conformance.adapters.torch_adapter import TorchAdapter
from conformance.ops import RecordParams


class IgnoresInDims(TorchAdapter):
    """A batch rule that ignores ``in_dims``: every batched input is mapped over its leading dim."""

    name = "planted-ignores-in-dims"

    def run_record(self, case, check, a):
        if check in ("vmap", "vmap_vjp"):
            p = case.params.as_dict()
            p["in_dims"] = [None if d is None else 0 for d in p["in_dims"]]
            return super().run_record(replace(case, params=RecordParams.of(p)), check, a)
        return super().run_record(case, check, a)


class WrapsDim(TorchAdapter):
    """A reduction that wraps an out-of-range dim (dim % ndim) instead of raising IndexError."""

    name = "planted-wraps-dim"

    def run_record(self, case, check, a):
        p = case.params.as_dict()
        if isinstance(p.get("dim"), int) and a["input"].ndim:
            p["dim"] = p["dim"] % a["input"].ndim
            case = replace(case, params=RecordParams.of(p))
        return super().run_record(case, check, a)
