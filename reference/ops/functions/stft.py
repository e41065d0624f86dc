"""``torch.stft``: the short-time Fourier transform, a composite in PyTorch too
(``torch.functional.stft`` pads the signal when ``center``; ATen's ``stft`` is
CompositeImplicitAutograd: frames by ``as_strided``, times the window, ``_fft_r2c``/``_fft_c2c``
along the frame, transposed). Here the frames are ``Tensor.unfold`` (the same strided view), the
transforms ``fft.rfft``/``fft.fft``; the gradients, JVPs and batching are those of these ops.
"""

from __future__ import annotations

import warnings

import reference as T
from reference.autograd.tensor import Tensor
from reference.backend import is_inexact
from reference.ops import api as A
from reference.scalar_types import scalar_type_name

__all__ = ["stft"]
METHODS = ["stft"]


def stft(
    input,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
    align_to_window=None,
):
    if align_to_window is not None:
        if center:
            raise ValueError("stft align_to_window should only be set when center = False")
        raise NotImplementedError("stft: align_to_window is not supported by the reference")
    if center:
        signal_dim = input.ndim
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = int(n_fft // 2)
        input = T.nn.functional.pad(A.view(input, extended), [pad, pad], pad_mode)
        input = A.view(input, tuple(input.shape[-signal_dim:]))
    complex_input = input.dtype.kind == "c" or (isinstance(window, Tensor) and window.dtype.kind == "c")
    if return_complex is None:
        if not complex_input:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will further "
                "require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
            "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
            "Note: you can still call torch.view_as_real on the complex output to recover the old "
            "return format.",
            UserWarning,
            stacklevel=2,
        )
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied,which is known to cause "
            "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
            "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
            "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=2,
        )
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(msg):
        raise RuntimeError(
            f"{_describe(input, n_fft, hop, win, window, normalized, onesided, return_complex)} : {msg}"
        )

    if not is_inexact(input.dtype):
        fail("expected a tensor of floating point or complex values")
    if input.ndim > 2 or input.ndim < 1:
        fail("expected a 1D or 2D tensor")
    x = A.unsqueeze(input, 0) if input.ndim == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail(
            f"expected a 1D window tensor of size equal to win_length={win}, but got window with size {list(window.shape)}"
        )
    w = window
    if win < n_fft:
        left = (n_fft - win) // 2
        dt = window.dtype if window is not None else input.dtype
        inner = window if window is not None else A.ones((win,), dtype=dt)
        w = A.cat([A.zeros((left,), dtype=dt), inner, A.zeros((n_fft - win - left,), dtype=dt)])
    frames = x.unfold(-1, n_fft, hop)  # (batch, n_frames, n_fft): ATen's as_strided frames
    if w is not None:
        frames = frames * w
    complex_fft = frames.dtype.kind == "c"
    one = (not complex_fft) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    if complex_fft:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = T.fft.fft(frames, dim=-1, norm=norm)
    elif one:
        out = T.fft.rfft(frames, dim=-1, norm=norm)
    else:
        out = T.fft.fft(frames, dim=-1, norm=norm)
    out = A.transpose(out, 1, 2)
    if input.ndim == 1:
        out = A.squeeze(out, 0)
    return out if return_complex else T.view_as_real(out)


def _describe(input, n_fft, hop, win, window, normalized, onesided, return_complex):
    """ATen's stft error prefix: the call with its arguments (after the centre padding)."""

    def opt(v):
        return "None" if v is None else str(int(v))

    kind = f"torch.{scalar_type_name(input.dtype)}Tensor"
    w = "None"
    if window is not None:
        w = f"torch.{scalar_type_name(window.dtype)}Tensor{{{list(window.shape)}}}"
    return (
        f"stft({kind}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={w}, "
        f"normalized={int(bool(normalized))}, onesided={opt(onesided)}, return_complex={opt(return_complex)}, "
        "align_to_window=None)"
    )
