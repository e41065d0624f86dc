"""Complex records of the fourth slice whose spellings map a convention (issue 34): lu_solve's
``adjoint=True`` solves with A^H (JAX's and TensorFlow's spellings conjugate the transpose) and
pinv's ``hermitian=True`` input is x + x^H, checked through each adapter against their VJPs and
JVPs in closed form (PyTorch's convention: the gradient G with dL = Re tr(G^H dA))."""

from __future__ import annotations

import numpy as np
import pytest
from test_complex_records import closed_form_answers  # (this directory)

pytest.importorskip("torch")

_A = np.array(
    [[2.0 + 0.5j, -0.3 + 0.2j, 0.4 - 0.1j], [0.2 - 0.7j, 1.5 + 0.1j, -0.6j], [0.3j, 0.5 + 0.5j, 2.5]]
)
_B = np.array([[0.5 - 1.0j, 0.2], [1.0j, -0.4 + 0.3j], [0.7 + 0.1j, 1.1 - 0.2j]])
_TA = np.array([[0.1 - 0.2j, 0.3, -0.5j], [0.2 + 0.1j, -0.4 + 0.3j, 0.1], [0.6, 0.2j, -0.1 - 0.1j]])
_TB = np.array([[0.3j, -0.1 + 0.4j], [0.2, 0.5j], [-0.6 - 0.2j, 0.1]])
_G = np.array([[1.0 - 0.5j, 0.25j], [-0.3, 0.8 + 0.1j], [0.4 + 0.4j, -1.0j]])


def _h(m):
    return m.conj().T


def _lu_solve_adjoint():
    """X = A^{-H} B: dX = A^{-H} (dB - dA^H X), so grad_B = A^{-1} g and grad_A = -X g^H A^{-H}."""
    inv_h = np.linalg.inv(_h(_A))
    X = inv_h @ _B
    vjp = {"A": -X @ _h(_G) @ inv_h, "B": np.linalg.inv(_A) @ _G}
    jvp = inv_h @ (_TB - _h(_TA) @ X)
    return {"left": True, "adjoint": True}, {"A": _A, "B": _B}, _G, {"A": _TA, "B": _TB}, vjp, jvp


def _lu_solve_right():
    """X A = B (left=False): X = B A^{-1}, dX = (dB - X dA) A^{-1}, so grad_B = g A^{-H} and
    grad_A = -X^H g A^{-H}."""
    B = _B.T.copy()
    inv = np.linalg.inv(_A)
    X = B @ inv
    g = _G.T.copy()
    vjp = {"A": -_h(X) @ g @ _h(inv), "B": g @ _h(inv)}
    jvp = (_TB.T - X @ _TA) @ inv
    return {"left": False, "adjoint": False}, {"A": _A, "B": B}, g, {"A": _TA, "B": _TB.T.copy()}, vjp, jvp


def _pinv_hermitian():
    """pinv(H) = H^{-1} for the invertible Hermitian H = x + x^H: dX = -X (dx + dx^H) X, so
    grad_x = -X (g + g^H) X (X is Hermitian)."""
    X = np.linalg.inv(_A + _h(_A))
    g = _G @ _B.T  # a 3 x 3 cotangent
    return (
        {"hermitian": True},
        {"input": _A},
        g,
        {"input": _TA},
        {"input": -X @ (g + _h(g)) @ X},
        -X @ (_TA + _h(_TA)) @ X,
    )


def _slogdet():
    """log|det A| is real: grad_A = g A^{-H} (g real), JVP Re tr(A^{-1} tA)."""
    inv = np.linalg.inv(_A)
    return {}, {"input": _A}, np.asarray(0.7), {"input": _TA}, {"input": 0.7 * _h(inv)}, np.real(np.trace(inv @ _TA))


FORMS = {
    "lu_solve adjoint": ("linalg_lu_solve", _lu_solve_adjoint),
    "lu_solve left=False": ("linalg_lu_solve", _lu_solve_right),
    "solve left=False": ("linalg_solve", _lu_solve_right),
    "pinv hermitian": ("linalg_pinv", _pinv_hermitian),
    # TensorFlow's log|det| of a complex matrix is complex-typed: its JVP had an imaginary part
    # (Im tr(A^{-1} tA)) and its gradients raised for a real cotangent
    "slogdet": ("linalg_slogdet", _slogdet),
}


@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_adjoint_and_hermitian_spellings_answer_the_closed_form(framework, form):
    """Before the fourth slice JAX's and TensorFlow's lu_solve spelled adjoint=True with a plain
    transpose (A^{-T} B), TensorFlow's X A = B solved with A^H (B conj(A)^{-1}) and pinv's Hermitian
    input was x + x^T in every framework: right for real matrices only."""
    from conformance.adapters import BUILTIN
    from conformance.ops import RECORDS

    pytest.importorskip(BUILTIN[framework][0])
    op, form_of = FORMS[form]
    if framework not in RECORDS[op].frameworks():
        pytest.skip(f"{op} has no {framework} spelling")
    params, inputs, g, tangents, vjp, jvp = form_of()
    if op == "linalg_solve":
        params = {"left": params["left"]}
    got, jgot = closed_form_answers(framework, op, params, inputs, g, tangents)
    for n, want in vjp.items():
        np.testing.assert_allclose(np.asarray(got[f"grad_{n}"]), want, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(np.asarray(jgot["tangent_output"]), jvp, rtol=1e-11, atol=1e-13)
