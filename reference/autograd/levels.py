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
import threading


class LevelState(threading.local):
    """The transform levels of the running thread (functorch's dynamic layer stack is thread-local):

    * ``stack``: the active level ids, outermost first (jvp and vmap levels alike);
    * ``visible``: how many levels of ``stack`` the running computation sees (read on every op);
    * ``vmap``: level id -> :class:`reference.autograd.batching.VmapLevel`, for the vmap levels.
    """

    def __init__(self):
        self.stack: list[int] = []
        self.visible = 0
        self.vmap: dict = {}


state = LevelState()
_ids = itertools.count(1)  # level ids, unique in the process


class VmapError(ValueError):
    """Something vmap cannot do (in-place into an unbatched tensor, data-dependent Python control
    flow); the message names the operation and the rule."""


def active():
    return state.visible > 0


def enter(vmap_info=None):
    """Open a new innermost level (a vmap level when ``vmap_info`` is given); returns its id."""
    if state.visible != len(state.stack):
        raise RuntimeError("forward-AD levels must be opened at the innermost position")
    level = next(_ids)
    state.stack.append(level)
    state.visible = len(state.stack)
    if vmap_info is not None:
        state.vmap[level] = vmap_info
    return level


def exit(level):
    if not state.stack or state.stack[-1] != level:
        raise RuntimeError(f"transform level {level} exited out of order")
    state.stack.pop()
    state.vmap.pop(level, None)
    state.visible = len(state.stack)


class lowered:
    """Hide the level at stack position ``index`` and every level inside it."""

    def __init__(self, index):
        self.index = index

    def __enter__(self):
        self.prev = state.visible
        state.visible = self.index

    def __exit__(self, *exc):
        state.visible = self.prev


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
    for i in range(state.visible - 1, -1, -1):
        level = state.stack[i]
        attr = "_batched" if level in state.vmap else "_tangents"
        for t in tensors:
            if t is not None:
                d = getattr(t, attr)
                if d is not None and level in d:
                    return i
    return None


def vmap_level(index):
    """The VmapLevel at stack position ``index``, or None for a jvp level."""
    return state.vmap.get(state.stack[index])


def unbatched_error(t, what):
    """Data-dependent Python on a batched tensor (``item``, ``bool``, ``numpy``) under vmap."""
    if t._batched is not None and any(level in state.vmap for level in t._batched):
        raise VmapError(
            f"vmap: {what} reads the values of a batched tensor, which differ per sample; "
            "data-dependent Python control flow is not supported under vmap"
        )
