"""Pytrees: nested tuples (namedtuples too), lists and dicts whose leaves are tensors (or other values).

``flatten(tree) -> (leaves, spec)`` and ``unflatten(spec, leaves)``, as ``torch.utils._pytree``:
dicts keep their insertion order, ``None`` and numbers are leaves like tensors.
"""

from __future__ import annotations

from reference.autograd import table
from reference.autograd.tensor import Tensor


class TransformError(ValueError):
    """Bad arguments to a function transform; the message names the parameter, value and rule."""


def flatten(tree):
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree, leaves):
    if isinstance(tree, (tuple, list)):
        return (type(tree), [_flatten(x, leaves) for x in tree])
    if isinstance(tree, dict):
        return (dict, [(k, _flatten(v, leaves)) for k, v in tree.items()])
    leaves.append(tree)
    return None


def unflatten(spec, leaves):
    it = iter(leaves)
    out = _unflatten(spec, it)
    rest = list(it)
    if rest:
        raise TransformError(f"unflatten: {len(rest)} leaves left over for the tree spec")
    return out


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    kind, children = spec
    if kind is dict:
        return {k: _unflatten(c, it) for k, c in children}
    items = [_unflatten(c, it) for c in children]
    if kind is list or kind is tuple:
        return kind(items)
    return kind(*items)  # a namedtuple


def tree_map(fn, tree):
    leaves, spec = flatten(tree)
    return unflatten(spec, [fn(x) for x in leaves])


def tensor_leaves(tree, name):
    """The leaves of ``tree``, checked to be tensors (``name`` is the parameter, for the error)."""
    leaves, spec = flatten(tree)
    for i, x in enumerate(leaves):
        if not isinstance(x, Tensor):
            raise TransformError(
                f"{name}: leaf {i} is a {type(x).__name__}, but every leaf must be a Tensor "
                "(pytrees are tuples, lists and dicts of Tensors)"
            )
    return leaves, spec


table.register(flatten=flatten, unflatten=unflatten)  # (a custom Function's vmap staticmethod)
