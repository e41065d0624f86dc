"""A planted bug in one execution mode's compiled path only (tests/conformance/test_modes.py).

Kept apart from ``planted_adapters``, whose reproducers inline that module's source; workers import
this module by name (tests/conformance is on their PYTHONPATH).
"""

from __future__ import annotations

from conformance.adapters.jax_adapter import JaxAdapter


class JitDropsBias(JaxAdapter):
    """``jax:planted_jit``: the jit path (only) compiles the convolution without its bias, as a
    fusion pass that loses the bias add would; ``jax:eager`` runs the same adapter code uncompiled."""

    name = "jax:planted_jit"

    def _call(self, fn, *args):
        case, check = self._current
        if check == "forward" and case.params.bias:  # forward's arguments: (x, w, b)
            args = (*args[:2], self.jnp.zeros_like(args[2]))
        return super()._call(fn, *args)
