"""torch.stft against PyTorch: values (complex and view_as_real), first- and second-order
gradients of real projections, window/center/pad_mode/onesided/normalized/hop/win_length, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.autograd._torch_agree import agree, same_error

R = np.random.default_rng(2)
X1 = R.standard_normal(40)
X2 = R.standard_normal((2, 33))
W = R.uniform(0.5, 2.0, 8)
W6 = R.uniform(0.5, 2.0, 6)


def _re(out):
    return out if not out.is_complex() else (out.real, out.imag)


CASES = [
    ("default", lambda F, x: _re(F.stft(x, 8, return_complex=True)), [X1]),
    ("real_view", lambda F, x: F.stft(x, 8, return_complex=False), [X1]),
    ("no_center_hop", lambda F, x: _re(F.stft(x, 8, hop_length=3, center=False, return_complex=True)), [X2]),
    ("window", lambda F, x, w: _re(F.stft(x, 8, window=w, return_complex=True)), [X2, W]),
    ("win_length", lambda F, x, w: _re(F.stft(x, 8, win_length=6, window=w, return_complex=True)), [X1, W6]),
    ("win_length_no_window", lambda F, x: _re(F.stft(x, 8, win_length=5, return_complex=True)), [X1]),
    (
        "two_sided_normalized",
        lambda F, x: _re(F.stft(x, 8, onesided=False, normalized=True, return_complex=True)),
        [X2],
    ),
    ("pad_constant", lambda F, x: _re(F.stft(x, 8, pad_mode="constant", return_complex=True)), [X2]),
    ("pad_replicate", lambda F, x: _re(F.stft(x, 7, pad_mode="replicate", return_complex=True)), [X1]),
    (
        "complex_input",
        lambda F, x, y: _re(F.stft(F.complex(x, y), 8, return_complex=True)),
        [X1, X1[::-1].copy()],
    ),
]


@pytest.mark.parametrize("name,prog,arrays", CASES, ids=[c[0] for c in CASES])
def test_agrees_with_torch(name, prog, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agree(prog, arrays, order=2, rtol=1e-9, atol=1e-10, label=name)


ERRORS = [
    ("no_return_complex", lambda F, x: F.stft(x, 8), [X1]),
    ("nfft_too_big", lambda F, x: F.stft(x, 64, center=False, return_complex=True), [X1]),
    ("hop_zero", lambda F, x: F.stft(x, 8, hop_length=0, return_complex=True), [X1]),
    ("win_length_big", lambda F, x: F.stft(x, 8, win_length=9, return_complex=True), [X1]),
    ("window_size", lambda F, x, w: F.stft(x, 8, window=w, return_complex=True), [X1, W6]),
    ("three_d", lambda F, x: F.stft(x.reshape(1, 2, 20), 8, center=False, return_complex=True), [X1]),
    ("onesided_complex", lambda F, x: F.stft(F.complex(x, x), 8, onesided=True, return_complex=True), [X1]),
]


@pytest.mark.parametrize("name,prog,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(prog, arrays)
