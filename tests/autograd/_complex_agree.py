"""Complex-input agreement with PyTorch for one program (issue 13): values and dtypes, first- and
second-order gradients with complex cotangents (tests.autograd.test_torch_complex.agree), the JVP
against ``torch.func.jvp`` with complex tangents, and the reference's own gradcheck/gradgradcheck
(real and imaginary parts perturbed apart, docs/complex.md)."""

from __future__ import annotations

import numpy as np

import reference
from tests.autograd.test_torch_complex import agree as _agree

RTOL, ATOL = 1e-10, 1e-12


def _tensor(F, a):
    return F.tensor(a, dtype=F.complex128 if np.iscomplexobj(a) else F.float64)


def jvp_agree(prog, arrays, label=""):
    import torch

    rng = np.random.default_rng(3)
    tangents = [
        rng.standard_normal(np.shape(a))
        + (1j * rng.standard_normal(np.shape(a)) if np.iscomplexobj(a) else 0)
        for a in arrays
    ]
    outs = []
    for F, jvp in ((reference, reference.func.jvp), (torch, torch.func.jvp)):
        _, t_out = jvp(
            lambda *xs, F=F: prog(F, *xs),
            tuple(_tensor(F, a) for a in arrays),
            tuple(_tensor(F, t) for t in tangents),
        )
        t_out = t_out if isinstance(t_out, (tuple, list)) else [t_out]
        outs.append([np.asarray(t.detach().numpy() if hasattr(t, "detach") else t) for t in t_out])
    for k, (a, b) in enumerate(zip(*outs)):
        assert a.dtype == b.dtype, f"{label} tangent {k}: dtype {a.dtype} but torch gives {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=f"{label} tangent {k}")


def gradchecks(prog, arrays):
    from reference.autograd import gradcheck, gradgradcheck

    xs = [
        reference.tensor(
            a, dtype=reference.complex128 if np.iscomplexobj(a) else reference.float64, requires_grad=True
        )
        for a in arrays
    ]
    assert gradcheck(lambda *t: prog(reference, *t), xs)
    assert gradgradcheck(lambda *t: prog(reference, *t), xs)


def complex_agree(prog, arrays, order=2, label="", jvp=True, check_grads=True):
    """Values, VJPs to ``order``, the JVP (``jvp``) with PyTorch; gradcheck on the reference."""
    _agree(prog, arrays, order=order, label=label)
    if jvp:
        jvp_agree(prog, arrays, label=label)
    if check_grads:
        gradchecks(prog, arrays)
