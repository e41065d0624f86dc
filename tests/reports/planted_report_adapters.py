"""A test adapter whose departures are error mismatches: PyTorch that refuses every strided
convolution (a valid configuration) and accepts, with a made-up result, every configuration the
reference rejects. Workers and the reproducer generator import this module by name."""

from __future__ import annotations

from conformance.adapters.torch_adapter import TorchAdapter


class StrictAndLenient(TorchAdapter):
    name = "torch-strict-and-lenient"

    def forward(self, case, a):
        if max(case.params.stride) > 1:
            raise ValueError("strided convolutions are not implemented (planted)")
        try:
            return super().forward(case, a)
        except RuntimeError:  # torch rejected the configuration: pretend it is fine
            return {"output": self.torch.zeros(1, dtype=self.torch.float64)}
