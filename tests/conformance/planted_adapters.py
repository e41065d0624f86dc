"""Test adapters: PyTorch with one planted bug each, plus a worker that aborts or hangs.

The harness must flag each planted bug ``fail`` (and shrink it), record the abort as
``crash`` and the hang as ``timeout``. Workers import this module by name, so the tests put
this directory on PYTHONPATH.
"""

from __future__ import annotations

import os
import time

from conformance.adapters._geometry import explicit_pads
from conformance.adapters.torch_adapter import TorchAdapter
from conformance.case import round_to_dtype


class SamePadWrongSide(TorchAdapter):
    """SAME padding with the odd pad at the start instead of the end (TF's rule puts it last)."""

    name = "torch-same-wrong-side"

    def conv(self, case, x, w, b):
        p = case.params
        if p.transposed or p.padding != "same":
            return super().conv(case, x, w, b)
        pads = [(hi, lo) for lo, hi in explicit_pads(p, x.shape[2:], w.shape[2:])]
        x = self.F.pad(x, [v for pair in reversed(pads) for v in pair])
        return getattr(self.F, f"conv{p.rank}d")(x, w, b, p.stride, 0, p.dilation, p.groups)


class DroppedGroup(TorchAdapter):
    """A grouped convolution whose last group's output is never computed (left at zero)."""

    name = "torch-dropped-group"

    def conv(self, case, x, w, b):
        y = super().conv(case, x, w, b)
        g = case.params.groups
        if g == 1 or case.params.transposed:
            return y
        keep = self.torch.ones(y.shape[1], dtype=y.dtype)
        keep[-(y.shape[1] // g) :] = 0
        return y * keep.reshape((1, -1) + (1,) * case.params.rank)


class UnflippedInputGradient(TorchAdapter):
    """The input gradient computed with the kernel not flipped (a correlation, not its adjoint)."""

    name = "torch-unflipped-dgrad"

    def conv(self, case, x, w, b):
        p = case.params
        if p.transposed or isinstance(p.padding, str) or not all(isinstance(v, int) for v in p.padding):
            return super().conv(case, x, w, b)
        torch, grad = self.torch, self.torch.nn.grad
        r = p.rank
        conv = getattr(self.F, f"conv{r}d")
        conv_input, conv_weight = getattr(grad, f"conv{r}d_input"), getattr(grad, f"conv{r}d_weight")
        spatial = tuple(range(2, r + 2))

        class Conv(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return conv(x, w, None, p.stride, p.padding, p.dilation, p.groups)

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                gx = conv_input(x.shape, w.flip(spatial), g, p.stride, p.padding, p.dilation, p.groups)
                gw = conv_weight(x, w.shape, g, p.stride, p.padding, p.dilation, p.groups)
                return gx, gw

        y = Conv.apply(x, w)
        return y if b is None else y + b.reshape((1, -1) + (1,) * r)


class RoundsToTF32(TorchAdapter):
    """float32 inputs rounded to TF32 (10 mantissa bits) before the convolution, on any device."""

    name = "torch-rounds-to-tf32"

    def tensor(self, case, a, requires_grad=False):
        if a is not None and case.dtype == "float32":
            a = round_to_dtype(a, "tf32")
        return super().tensor(case, a, requires_grad)


#: what AbortsOnCue writes to file descriptor 2 just before it aborts
ABORT_LINE = "F0000 planted.cc:1] Check failed: the planted abort"


class AbortsOnCue(TorchAdapter):
    """On cases whose id starts with 'abort', writes ABORT_LINE to file descriptor 2 and calls
    os.abort() (SIGABRT), as a failed C++ check does (absl's LOG(FATAL) writes its line, then aborts);
    on those starting with 'abort-long', a 4 kB stack trace after the line, as absl does."""

    name = "torch-aborts"

    def forward(self, case, a):
        if case.id.startswith("abort"):
            trace = "*** Check failure stack trace: ***\n" + "    @ 0x7f0000000000  a_frame()\n" * 100
            os.write(2, (ABORT_LINE + "\n" + (trace if case.id.startswith("abort-long") else "")).encode())
            os.abort()
        return super().forward(case, a)


class _SleepsOnCue(TorchAdapter):
    """Sleeps ``seconds`` before a forward on cases whose id starts with ``cue``."""

    cue, seconds = "", 0.0

    def forward(self, case, a):
        if case.id.startswith(self.cue):
            time.sleep(self.seconds)
        return super().forward(case, a)


class HangsOnCue(_SleepsOnCue):
    """Sleeps far past any timeout on cases whose id starts with 'hang'."""

    name = "torch-hangs"
    cue, seconds = "hang", 3600.0


#: the environment variable naming HangsOnceOnCue's marker file
HANG_MARKER = "PLANTED_HANG_MARKER"


class HangsOnceOnCue(TorchAdapter):
    """On cases whose id starts with 'hang-once', hangs far past any timeout the first time (it
    creates the marker file named by $PLANTED_HANG_MARKER first) and answers normally once the
    marker exists: a check that a loaded machine pushed past the limit once."""

    name = "torch-hangs-once"

    def forward(self, case, a):
        marker = os.environ.get(HANG_MARKER)
        if case.id.startswith("hang-once") and marker and not os.path.exists(marker):
            open(marker, "w").close()
            time.sleep(3600.0)
        return super().forward(case, a)


class SlowOnCue(_SleepsOnCue):
    """Takes 2.5 s on cases whose id starts with 'slow' (over a 2 s limit, then answers)."""

    name = "torch-slow"
    cue, seconds = "slow", 2.5


class DeclaresTF32(RoundsToTF32):
    """The same TF32 rounding, declared by setup() as a GPU with TF32 on would: not a bug then."""

    name = "torch-declares-tf32"

    def setup(self, device="cpu", precision="default"):
        return {**super().setup(device, precision), "tf32": True, "note": "TF32 emulated on CPU for a test"}


class UninitialisedOnCue(TorchAdapter):
    """On cases whose id starts with 'garbage', the forward's first element is whatever memory held
    (a fresh random number at each call, as an uninitialised read gives); on those starting with
    'wrong', it is off by 1 the same way at every call (a deterministic bug)."""

    name = "torch-uninitialised"

    def forward(self, case, a):
        out = super().forward(case, a)
        if case.id.startswith(("garbage", "wrong")):
            y = out["output"].detach().clone()
            off = 1.0 + int.from_bytes(os.urandom(4), "little") if case.id.startswith("garbage") else 1.0
            y.view(-1)[0] += off
            out = {**out, "output": y}
        return out
