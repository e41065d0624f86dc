"""torch.fft: the reference against PyTorch 2.13 on the same program text: values, first- and
second-order gradients (complex cotangents: PyTorch's convention, docs/complex.md), including
rfft/irfft's Hermitian handling, every norm mode, n/s padding and cropping, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import reference

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.torch

_RNG = np.random.default_rng(0)
Z = _RNG.standard_normal((3, 6)) + 1j * _RNG.standard_normal((3, 6))
X = _RNG.standard_normal((3, 6))

PROGRAMS = {
    "fft": lambda F, z, x: F.fft.fft(z),
    "fft_n_pad_ortho": lambda F, z, x: F.fft.fft(z, n=8, norm="ortho"),
    "fft_n_crop_forward": lambda F, z, x: F.fft.fft(z, n=2, dim=0, norm="forward"),
    "ifft": lambda F, z, x: F.fft.ifft(z, dim=0),
    "fft_of_real": lambda F, z, x: F.fft.fft(x),
    "fft_of_int": lambda F, z, x: F.fft.fft(F.tensor([1, 2, 3])) * x[0, :3],
    "rfft": lambda F, z, x: F.fft.rfft(x),
    "rfft_n_odd_ortho": lambda F, z, x: F.fft.rfft(x, n=5, norm="ortho"),
    "rfft_n_pad": lambda F, z, x: F.fft.rfft(x, n=9, dim=0),
    "irfft": lambda F, z, x: F.fft.irfft(z),
    "irfft_n_odd_forward": lambda F, z, x: F.fft.irfft(z, n=7, norm="forward"),
    "irfft_n_crop": lambda F, z, x: F.fft.irfft(z, n=4),
    "irfft_ortho_dim0": lambda F, z, x: F.fft.irfft(z, dim=0, norm="ortho"),
    "irfft_of_rfft": lambda F, z, x: F.fft.irfft(F.fft.rfft(x), n=6),
    "hfft": lambda F, z, x: F.fft.hfft(z),
    "hfft_n_ortho": lambda F, z, x: F.fft.hfft(z, n=5, norm="ortho"),
    "ihfft": lambda F, z, x: F.fft.ihfft(x),
    "ihfft_forward": lambda F, z, x: F.fft.ihfft(x, norm="forward"),
    "hfft2": lambda F, z, x: F.fft.hfft2(z),
    "hfftn_s_ortho": lambda F, z, x: F.fft.hfftn(z, s=(2, 5), norm="ortho"),
    "ihfft2": lambda F, z, x: F.fft.ihfft2(x),
    "ihfftn_forward": lambda F, z, x: F.fft.ihfftn(x, norm="forward"),
    "fft2": lambda F, z, x: F.fft.fft2(z),
    "ifftn_s": lambda F, z, x: F.fft.ifftn(z, s=(4, 5)),
    "fftn_dim": lambda F, z, x: F.fft.fftn(z, dim=(0,), norm="ortho"),
    "rfft2_forward": lambda F, z, x: F.fft.rfft2(x, norm="forward"),
    "rfftn_s": lambda F, z, x: F.fft.rfftn(x, s=(2, 4)),
    "irfftn": lambda F, z, x: F.fft.irfftn(z),
    "irfft2_s": lambda F, z, x: F.fft.irfft2(z, s=(2, 9)),
    "fftshift": lambda F, z, x: F.fft.fftshift(z) * F.fft.fftshift(x, dim=0),
    "ifftshift": lambda F, z, x: F.fft.ifftshift(x, dim=(1,)),
    "power_spectrum": lambda F, z, x: F.fft.rfft(x).abs() ** 2,
}


def _evaluate(F, prog):
    z = F.tensor(Z, dtype=F.complex128, requires_grad=True)
    x = F.tensor(X, dtype=F.float64, requires_grad=True)
    y = prog(F, z, x)
    rng = np.random.default_rng(1)

    def randn_like(t):
        v = rng.standard_normal(tuple(t.shape))
        return F.tensor(v + 1j * rng.standard_normal(tuple(t.shape)) if t.is_complex() else v, dtype=t.dtype)

    gs = F.autograd.grad(y, (z, x), randn_like(y), allow_unused=True, create_graph=True)
    live = [g for g in gs if g is not None and g.requires_grad]
    g2 = (None, None)
    if live:
        g2 = F.autograd.grad(live, (z, x), [randn_like(g) for g in live], allow_unused=True)

    def arr(t):
        return None if t is None else t.detach().resolve_conj().numpy()

    return [(arr(y), str(y.dtype).replace("torch.", ""))] + [(arr(g), "") for g in (*gs, *g2)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fft_agrees_with_torch(name):
    got, want = _evaluate(reference, PROGRAMS[name]), _evaluate(torch, PROGRAMS[name])
    what = ["value", "grad z", "grad x", "grad of grad z", "grad of grad x"]
    for w, (a, da), (b, db) in zip(what, got, want):
        assert da == db, f"{name} {w}: dtype {da} but torch {db}"
        if a is None or b is None:
            assert a is None and b is None or np.allclose(a if a is not None else b, 0), f"{name} {w}"
            continue
        assert a.shape == b.shape, f"{name} {w}: shape {a.shape} but torch {b.shape}"
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-11, err_msg=f"{name} {w}")


def test_grad_fn_names():
    z = reference.tensor(Z, dtype=reference.complex128, requires_grad=True)
    x = reference.tensor(X, dtype=reference.float64, requires_grad=True)
    assert reference.fft.fft(z).grad_fn.name() == "FftC2CBackward0"
    assert reference.fft.rfft(x).grad_fn.name() == "FftR2CBackward0"
    assert reference.fft.irfft(z).grad_fn.name() == "FftC2RBackward0"


def _error(prog):
    try:
        prog()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split("\n")[0]
    return None


ERRORS = {
    "n_zero": lambda F: F.fft.fft(F.ones(4), n=0),
    "irfft_n_zero": lambda F: F.fft.irfft(F.ones(4), n=0),
    "norm": lambda F: F.fft.fft(F.ones(4), norm="foo"),
    "dim": lambda F: F.fft.fft(F.ones(4), dim=3),
    "rfft_of_complex": lambda F: F.fft.rfft(F.ones(3, dtype=F.complex64)),
    "s_too_long": lambda F: F.fft.fftn(F.ones(4), s=(2, 3)),
    "dims_unique": lambda F: F.fft.fftn(F.ones(2, 3), dim=(0, 0)),
    "fft2_of_1d": lambda F: F.fft.fft2(F.ones(4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_agrees_with_torch(name):
    want, got = _error(lambda: ERRORS[name](torch)), _error(lambda: ERRORS[name](reference))
    assert want is not None and got == want, f"{name}: {got} but torch raises {want}"


def test_dtypes_agree_with_torch():
    for prog in (
        lambda F: F.fft.fft(F.tensor([1, 2])),
        lambda F: F.fft.rfft(F.ones(4)),
        lambda F: F.fft.irfft(F.ones(3, dtype=F.complex64)),
        lambda F: F.fft.fftfreq(5),
        lambda F: F.fft.rfftfreq(6, d=0.5, dtype=F.float64),
    ):
        a, b = prog(reference), prog(torch)
        assert str(a.dtype) == str(b.dtype).replace("torch.", "")
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
