"""Functions PyTorch exports at top level whose reference implementations exist only as Tensor
methods: ``torch.abs_(x)`` is ``x.abs_()`` (in place, returns ``x``), ``torch.numel(x)``,
``torch.detach(x)``... Each is the method called on its first argument, so the semantics (and the
errors) are the method's; tests/autograd/test_torch_api_gaps.py compares them with torch."""

from __future__ import annotations

from reference.autograd.tensor import Tensor

NAMES = (
    "abs_ neg_ exp_ log_ sqrt_ tanh_ sigmoid_ relu_ clamp_ fill_ ldexp_ conj_physical_ addmv_ "
    "detach detach_ numel as_strided_ index_put_"
).split()


def _from_method(name):
    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``."
    return fn


globals().update({n: _from_method(n) for n in NAMES})
__all__ = list(NAMES)
