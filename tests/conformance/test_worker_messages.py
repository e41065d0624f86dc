"""A framework's error reaches the record with the words that name it.

The worker shortens a long message to its head and tail (1,500 characters). A torch.compile error
that wraps the error its tracing hit puts that error in the middle, after the fake tensors' reprs and
before Dynamo's trailer (generic hints and the user's stack, the harness's own code): the trailer goes
first, so a known entry's reason pattern (``vmap over torch.allclose``) can see the wrapped error.
"""

from __future__ import annotations

import pytest

from conformance.worker import without_dynamo_trailer


def test_a_compiled_vmap_of_complex_svd_gradients_keeps_the_error_its_tracing_hit():
    torch = pytest.importorskip("torch")

    def loss(a):
        U, S, Vh = torch.linalg.svd(a, full_matrices=False)
        return (U @ Vh).abs().sum() + S.sum()

    a = torch.randn(1, 2, 2, dtype=torch.complex128, generator=torch.Generator().manual_seed(0))
    with pytest.raises(Exception) as raised:
        torch.compile(lambda x: torch.func.vmap(torch.func.grad(loss))(x), backend="aot_eager")(a)
    whole = str(raised.value)
    assert "from user code:" in whole and len(whole) > 1500  # the worker would shorten it
    kept = without_dynamo_trailer(whole)
    assert len(kept) < 1500  # sent whole
    assert "RuntimeError when making fake tensor call" in kept
    assert "vmap over torch.allclose isn't supported yet" in kept
    assert "from user code:" not in kept and "Hint:" not in kept


def test_other_messages_are_left_whole():
    jax_like = "TypeError: grad requires real-valued outputs\n  Hint: use holomorphic=True\nfrom user code: x"
    assert without_dynamo_trailer(jax_like) == jax_like  # no Dynamo: its words are not Dynamo's trailer
    compiled = "BackendCompilerFailed: Cannot access storage of TensorWrapper Set TORCHDYNAMO_VERBOSE=1"
    assert without_dynamo_trailer(compiled) == compiled  # no trailer to cut
