"""The reference's mode state is per thread where PyTorch's is: grad mode (``GradMode`` is
thread-local), the default device (``torch.set_default_device`` keeps it in a ``threading.local``)
and the stack of transform levels (functorch's dynamic layer stack is thread-local). A thread's
mode does not leak into another, and two threads' transforms do not share one stack.
"""

from __future__ import annotations

import threading

import numpy as np

import reference as T


def _in_thread(fn):
    """``fn()``'s result (or the error it raised) run in a new thread."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as exc:  # reported to the test
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert "error" not in out, out["error"]
    return out["value"]


def test_grad_mode_is_per_thread():
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with T.no_grad():
        # a new thread starts with grad mode on, as in PyTorch, whatever the main thread's mode
        assert _in_thread(lambda: (T.is_grad_enabled(), (x * 2).requires_grad)) == (True, True)
        assert not (x * 2).requires_grad

    def turns_it_off():
        T.set_grad_enabled(False)
        return T.is_grad_enabled()

    assert _in_thread(turns_it_off) is False
    assert T.is_grad_enabled() and (x * 2).requires_grad  # the other thread's mode stayed there


def test_the_default_device_is_per_thread():
    old = T.get_default_device()

    def sets_it():
        T.set_default_device("strict")
        return str(T.zeros(1).device)

    assert _in_thread(sets_it) == "strict"
    assert T.get_default_device() == old and T.zeros(1).device == old


def test_two_threads_transforms_keep_their_own_levels():
    """The main thread's jvp level opens first and closes while another thread's jvp level, opened
    after it, is still open: with one stack shared by the threads that was "exited out of order"."""
    x = np.array([0.5, 1.5])
    primal, tangent = T.tensor(x), T.tensor(np.ones(2))
    inside, release = threading.Event(), threading.Event()
    result = {}

    def worker():
        def g(y):
            inside.set()
            release.wait(30)
            return T.sin(y)

        result["thread"] = T.func.jvp(g, (primal,), (tangent,))[1]

    thread = threading.Thread(target=worker)

    def f(y):
        thread.start()
        inside.wait(30)
        return T.cos(y)

    try:
        main = T.func.jvp(f, (primal,), (tangent,))[1]
    finally:
        release.set()
        if thread.ident is not None:  # (started)
            thread.join(30)
    np.testing.assert_allclose(main.numpy(), -np.sin(x))
    np.testing.assert_allclose(result["thread"].numpy(), np.cos(x))
