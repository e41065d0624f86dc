"""The transform levels: the stack of active ``jvp`` and ``vmap`` levels the dispatcher consults.

A *level* is one active transform (``reference.func.jvp``/``jacfwd`` open a jvp level each,
``vmap`` a vmap level, ``dual_level`` the forward-AD dual level). Levels nest like functorch's
dynamic layer stack; jvp and vmap levels interleave in one stack. A tensor's tangent at a jvp level
is kept in ``tensor._tangents[level_id]`` (a tensor without an entry has a zero tangent there); its
batched value at a vmap level in ``tensor._batched[level_id]`` (:mod:`reference.autograd.batching`).
When a primitive runs, the dispatcher asks :func:`owner` for the innermost visible level holding
one of its inputs; that level runs it with itself and every level inside it hidden
(:func:`lowered`).

This module is state only, below the dispatcher: forward mode (:mod:`reference.autograd.forward_ad`)
and batching (:mod:`reference.autograd.batching`), which run primitives at a level, sit above it.
"""

from __future__ import annotations

import itertools

_stack: list[int] = []  # active level ids, outermost first (jvp and vmap levels alike)
_visible = [0]  # how many levels of _stack the running computation sees
_ids = itertools.count(1)
_vmap_levels: dict = {}  # level id -> reference.autograd.batching.VmapLevel, for vmap levels


class VmapError(ValueError):
    """Something vmap cannot do (in-place into an unbatched tensor, data-dependent Python control
    flow); the message names the operation and the rule."""


def active():
    return _visible[0] > 0


def enter(vmap_info=None):
    """Open a new innermost level (a vmap level when ``vmap_info`` is given); returns its id."""
    if _visible[0] != len(_stack):
        raise RuntimeError("forward-AD levels must be opened at the innermost position")
    level = next(_ids)
    _stack.append(level)
    _visible[0] = len(_stack)
    if vmap_info is not None:
        _vmap_levels[level] = vmap_info
    return level


def exit(level):
    if not _stack or _stack[-1] != level:
        raise RuntimeError(f"transform level {level} exited out of order")
    _stack.pop()
    _vmap_levels.pop(level, None)
    _visible[0] = len(_stack)


class lowered:
    """Hide the level at stack position ``index`` and every level inside it."""

    def __init__(self, index):
        self.index = index

    def __enter__(self):
        self.prev = _visible[0]
        _visible[0] = self.index

    def __exit__(self, *exc):
        _visible[0] = self.prev


def tangent(t, level):
    if t is None or t._tangents is None:
        return None
    return t._tangents.get(level)


def set_tangent(t, level, tan):
    """Attach ``tan`` (copy-on-write: views and outputs never share a tangent dict)."""
    d = dict(t._tangents) if t._tangents else {}
    if tan is None:
        d.pop(level, None)
    else:
        d[level] = tan
    t._tangents = d or None


def owner(tensors):
    """Stack index of the innermost visible level at which one of ``tensors`` has a tangent (a jvp
    level) or a batched value (a vmap level)."""
    for i in range(_visible[0] - 1, -1, -1):
        level = _stack[i]
        attr = "_batched" if level in _vmap_levels else "_tangents"
        for t in tensors:
            if t is not None:
                d = getattr(t, attr)
                if d is not None and level in d:
                    return i
    return None


def vmap_level(index):
    """The VmapLevel at stack position ``index``, or None for a jvp level."""
    return _vmap_levels.get(_stack[index])


def unbatched_error(t, what):
    """Data-dependent Python on a batched tensor (``item``, ``bool``, ``numpy``) under vmap."""
    if t._batched is not None and any(level in _vmap_levels for level in t._batched):
        raise VmapError(
            f"vmap: {what} reads the values of a batched tensor, which differ per sample; "
            "data-dependent Python control flow is not supported under vmap"
        )
