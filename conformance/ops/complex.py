"""Op records of the complex-number primitives (reference.ops.rules.complex).

The record harness draws real inputs and judges real outputs (its error model and the case
format have no complex values yet), so these primitives are not fuzzed by it; each is checked
against PyTorch (values, first- and second-order gradients, errors) in
tests/autograd/test_torch_complex.py and against JAX, with the convention mapping of
docs/complex.md, in tests/autograd/test_complex_jax.py.
"""

from conformance.ops import not_fuzzed

_REASON = (
    "complex tensors: the record harness draws and judges real values only (complex cases and "
    "error bounds are a later change); checked against torch in tests/autograd/test_torch_complex.py "
    "and against JAX in tests/autograd/test_complex_jax.py"
)

for _name in ("view_as_real", "view_as_complex", "conj", "conj_physical", "angle", "complex", "polar"):
    not_fuzzed(_name, "complex", _REASON)
not_fuzzed(
    "_neg_view",
    "complex",
    "the negative-bit view (torch._neg_view) is reached only through imag() of a conjugate view; "
    "checked against torch in tests/autograd/test_torch_conj_view.py",
)
