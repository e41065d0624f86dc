"""Test adapters whose planted bug is in an op record's spelling (``Adapter.spelling``): the record
reproducers (conformance/record_reproducer.py) carry a spelling, so their scripts show the bug.
Workers import this module by name (tests/conformance/conftest.py puts this directory on PYTHONPATH)."""

from __future__ import annotations

from conformance.adapters.jax_adapter import JaxAdapter
from conformance.adapters.tf_adapter import TensorFlowAdapter
from conformance.adapters.torch_adapter import TorchAdapter

#: the planted error: results scaled by this (1.6 %, far outside any bound of these dtypes)
SCALE = 1 + 2**-6


def _scaled_sum(T, x, dim, keepdim):
    """sum over ``dim`` (PyTorch's spelling), scaled: forward, VJP and the vmapped versions are off;
    an int dim wrapped (dim % ndim): an out-of-range dim is accepted where PyTorch raises IndexError."""
    if isinstance(dim, int):
        dim = dim % max(x.ndim, 1)
    return T.sum(x, dim, keepdim=keepdim) * SCALE


class TorchScaledOps(TorchAdapter):
    """PyTorch with tanh and sum_dim spelled off by SCALE (a module-level helper and a lambda)."""

    name = "torch-scaled-ops"

    def spelling(self, rec):
        if rec.name == "sum_dim":
            return _scaled_sum
        if rec.name == "tanh":
            return lambda T, x: T.tanh(x) * SCALE
        return super().spelling(rec)


class JaxScaledTanh(JaxAdapter):
    name = "jax-scaled-tanh"

    def spelling(self, rec):
        return (lambda J, x: J.jnp.tanh(x) * SCALE) if rec.name == "tanh" else super().spelling(rec)


class TensorFlowScaledTanh(TensorFlowAdapter):
    name = "tensorflow-scaled-tanh"

    def spelling(self, rec):
        return (lambda tf, x: tf.math.tanh(x) * SCALE) if rec.name == "tanh" else super().spelling(rec)


# A planted bug in the second derivative only: tanh spelled through its linearisation at a point the
# autodiff cannot see (x.detach() / stop_gradient): the forward is tanh(x) exactly (x - x.detach() is
# 0), the first derivative 1 - tanh(x)**2 exactly (PyTorch's own tanh_backward formula), but the JVP
# of the VJP (and of the JVP) is 0 where it is -2·tanh(x)·(1 - tanh(x)**2): a derivative rule whose
# own derivative is wrong, which only the second-order checks run.
class TorchLinearisedTanh(TorchAdapter):
    name = "torch-linearised-tanh"

    def spelling(self, rec):
        if rec.name == "tanh":
            return lambda T, x: T.tanh(x.detach()) + (x - x.detach()) * (1 - T.tanh(x.detach()) ** 2)
        return super().spelling(rec)


class JaxLinearisedTanh(JaxAdapter):
    name = "jax-linearised-tanh"

    def spelling(self, rec):
        if rec.name == "tanh":
            return lambda J, x: (
                J.jnp.tanh(J.lax.stop_gradient(x))
                + (x - J.lax.stop_gradient(x)) * (1 - J.jnp.tanh(J.lax.stop_gradient(x)) ** 2)
            )
        return super().spelling(rec)


def _scaled_by(path, scale):
    """A spelling made inside a function, as the record helpers make theirs (pointwise.py's
    ``_simple``): the lambda reads ``path`` and ``scale`` from closure cells, not from globals."""

    def get(J, dotted):
        obj = J
        for part in dotted.split("."):
            obj = getattr(obj, part)
        return obj

    return lambda J, x: get(J, path)(x) * scale


class JaxScaledLog1p(JaxAdapter):
    name = "jax-scaled-log1p"

    def spelling(self, rec):
        return _scaled_by("jnp.log1p", SCALE) if rec.name == "log1p" else super().spelling(rec)
