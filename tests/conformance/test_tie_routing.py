"""The tie-routing convention (conformance/ops/_ties.py): a selection (topk, sort, mode, kthvalue,
median over a dim) that returns other elements among equal ones than the reference, with each
derivative routed consistently to the element it returned, is ``convention``; a derivative routed
to an element that is not tied, split between tied elements, or routed inconsistently between two
outputs of one check is still ``fail``."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import Case
from conformance.ops import RecordParams
from conformance.ops._ties import routing, tie_labels
from conformance.ops.judge import record_verdict, run_in_process


def _case(op, data, check, **params):
    return Case(
        op,
        RecordParams.of({"values": "normal", **params}),
        {"input": tuple(np.shape(data["input"]))},
        "float64",
        0,
        (check,),
        data={k: np.asarray(v, dtype=np.float64).tolist() for k, v in data.items()},
    )


def _judge(case, check, **outputs):
    return record_verdict(case, check, "planted", {k: np.asarray(v, np.float64) for k, v in outputs.items()}, {})


# the 3 largest of x: 5 at 1, then the tied 4s at 0, 2 and 4 (the reference: 0 and 2, lowest first)
X = [4.0, 5.0, 4.0, 1.0, 4.0]
TOPK = {"dim": 0, "k": 3, "largest": True}
G = [10.0, 20.0, 30.0]  # grad_output of the 3 slots: 5, 4 (at 0), 4 (at 2)


def test_reference_routing_passes_and_another_routing_among_the_tied_is_the_convention():
    case = _case("topk", {"input": X, "grad_output": G}, "vjp", **TOPK)
    assert _judge(case, "vjp", grad_input=[20.0, 10.0, 30.0, 0.0, 0.0])["verdict"] == "pass"
    # torch.topk's partial sort may return the tied 4s at 4 and 0 (in that order)
    got = _judge(case, "vjp", grad_input=[30.0, 10.0, 0.0, 0.0, 20.0])
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "topk-routing-among-equal-values"


@pytest.mark.parametrize(
    "planted, what",
    [
        ([20.0, 10.0, 0.0, 30.0, 0.0], "a slot's gradient on the 1, which is not tied"),
        ([20.0, 10.0, 15.0, 0.0, 15.0], "a slot's gradient split between two tied elements"),
        ([20.0, 10.0, 30.0, 0.0, 30.0], "one slot's gradient given to two tied elements"),
        ([20.0, 30.0, 10.0, 0.0, 0.0], "the maximum's gradient swapped with a tied element's"),
    ],
)
def test_a_routing_that_no_permutation_among_tied_elements_gives_fails(planted, what):
    case = _case("topk", {"input": X, "grad_output": G}, "vjp", **TOPK)
    got = _judge(case, "vjp", grad_input=planted)
    assert got["verdict"] == "fail", (what, got)


def test_forward_mode_reads_the_routing_through_the_slots():
    t = [0.5, -1.0, 0.25, 7.0, 3.0]
    case = _case("topk", {"input": X, "tangent_input": t}, "jvp", **TOPK)
    assert _judge(case, "jvp", tangent_output=[-1.0, 0.5, 0.25])["verdict"] == "pass"
    # the tied 4s returned from 4 and 0: their tangents 3.0 and 0.5
    assert _judge(case, "jvp", tangent_output=[-1.0, 3.0, 0.5])["verdict"] == "convention"
    # the tangent of the untied 1 (7.0) in a slot: no routing among equal values gives it
    assert _judge(case, "jvp", tangent_output=[-1.0, 7.0, 0.5])["verdict"] == "fail"
    # one tied element's tangent in both of the tied slots
    assert _judge(case, "jvp", tangent_output=[-1.0, 3.0, 3.0])["verdict"] == "fail"


def test_the_outputs_of_one_check_must_follow_one_routing():
    # vjp_vjp: g_grad_output (slot-indexed, the seed gg_input at the returned element) and g_input (0)
    gg = [0.5, -1.0, 0.25, 7.0, 3.0]
    case = _case("topk", {"input": X, "grad_output": G, "gg_input": gg}, "vjp_vjp", **TOPK)
    zeros = [0.0] * 5
    assert _judge(case, "vjp_vjp", g_grad_output=[-1.0, 0.5, 0.25], g_input=zeros)["verdict"] == "pass"
    got = _judge(case, "vjp_vjp", g_grad_output=[-1.0, 3.0, 0.25], g_input=zeros)
    assert got["verdict"] == "convention", got
    assert _judge(case, "vjp_vjp", g_grad_output=[-1.0, 3.0, 7.0], g_input=zeros)["verdict"] == "fail"


def test_ties_in_another_slice_are_not_the_same_group():
    # two rows along dim 1: row 0 has no tie; its 4 equals row 1's 4s, which is no tie of a topk
    x = [[4.0, 5.0, 1.0], [4.0, 2.0, 4.0]]
    case = _case("topk", {"input": x, "grad_output": [[1.0], [2.0]]}, "vjp", dim=1, k=1, largest=True)
    assert _judge(case, "vjp", grad_input=[[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]])["verdict"] == "pass"
    assert _judge(case, "vjp", grad_input=[[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]])["verdict"] == "convention"
    # row 1's gradient moved into row 0's equal 4: no selection of row 1 gives it
    assert _judge(case, "vjp", grad_input=[[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])["verdict"] == "fail"


def test_an_unstable_sort_is_the_sort_convention_and_a_stable_sort_has_none():
    x, g = [3.0, 1.0, 3.0, 2.0], [1.0, 2.0, 3.0, 4.0]  # ascending: 1, 2, 3 (at 0), 3 (at 2)
    swapped = [4.0, 1.0, 3.0, 2.0]  # the tied 3s in the other order
    got = _judge(_case("sort", {"input": x, "grad_output": g}, "vjp", dim=0, descending=False), "vjp", grad_input=swapped)
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "sort-routing-among-equal-values"
    stable = _case("sort_stable", {"input": x, "grad_output": g}, "vjp", dim=0, descending=False)
    assert _judge(stable, "vjp", grad_input=swapped)["verdict"] == "fail"


def test_labels_group_equal_values_of_one_slice_and_routing_is_a_permutation():
    x = np.array([[1.0, np.nan, 1.0, -0.0], [0.0, np.nan, 2.0, np.nan]])
    labels = tie_labels(x, 1)
    assert labels[0, 0] == labels[0, 2] and labels[1, 1] == labels[1, 3]
    assert labels[0, 0] != labels[0, 3] and labels[0, 3] != labels[1, 0]  # -0.0 of row 0, 0.0 of row 1
    perm = routing(labels, lambda group: np.where(np.eye(group.size) > 0, 1.0, 0.0))  # prefers moving
    assert sorted(perm) == list(range(x.size))
    assert perm[0] == 2 and perm[2] == 0 and perm[5] == 7 and perm[7] == 5 and perm[3] == 3


def _vmap_case(x_batched, g_batched, **params):
    return Case(
        "topk",
        RecordParams.of({"values": "normal", "in_dims": [0], "vmap_size": len(x_batched), **params}),
        {"input": tuple(np.shape(x_batched)[1:])},
        "float64",
        0,
        ("vmap_vjp",),
        data={
            "batched_input": np.asarray(x_batched, np.float64).tolist(),
            "batched_grad_output": np.asarray(g_batched, np.float64).tolist(),
        },
    )


def test_each_sample_of_a_vmap_check_has_its_own_routing():
    # sample 0 keeps the reference's routing, sample 1 returns the tied 4s the other way round
    case = _vmap_case([X, X], [G, G], **TOPK)
    ref = [20.0, 10.0, 30.0, 0.0, 0.0]
    other = [30.0, 10.0, 0.0, 0.0, 20.0]
    assert _judge(case, "vmap_vjp", grad_input=[ref, ref])["verdict"] == "pass"
    got = _judge(case, "vmap_vjp", grad_input=[ref, other])
    assert got["verdict"] == "convention", got
    # sample 1's gradient of the tied 4 moved into sample 0's (the same value, another sample)
    assert _judge(case, "vmap_vjp", grad_input=[[20.0, 10.0, 30.0, 0.0, 30.0], [20.0, 10.0, 0.0, 0.0, 0.0]])[
        "verdict"
    ] == "fail"


def test_torch_topk_of_equal_values_is_judged_convention_whatever_order_its_partial_sort_gives():
    torch = pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAdapter

    # 40 elements drawn from 4 values: torch.topk's order of equal values is neither stable nor
    # reversed here (torch 2.13.0, CPU); its indices differ from the reference's
    x = np.array([float(v % 4) for v in (7 * np.arange(40) + 3) % 11])
    g = np.arange(1.0, 21.0)
    top = torch.topk(torch.tensor(x), 20, 0, True, True).indices.numpy()
    case = _case("topk", {"input": x, "grad_output": g}, "vjp", dim=0, k=20, largest=True)
    adapter = TorchAdapter()
    got = run_in_process(adapter, case, "vjp", adapter.setup())
    if (top == np.argsort(-x, kind="stable")[:20]).all():
        pytest.skip("this torch's topk returned equal values in the reference's order: no other routing to judge")
    assert got["verdict"] == "convention", (top, got)


def test_one_slot_among_many_tied_elements_is_read_through_its_seed():
    # the mode of [1, 2, 1, 2, 2] is 2; the reference returns its last occurrence (4); the tied 2s
    # that no slot returns (1, 3) must not take the element the slot did return
    x, t = [1.0, 2.0, 1.0, 2.0, 2.0], [0.5, -1.0, 0.25, 7.0, 3.0]
    case = _case("mode", {"input": x, "tangent_input": t}, "jvp", dim=0, keepdim=False)
    assert _judge(case, "jvp", tangent_output=3.0)["verdict"] == "pass"
    for returned in (1, 3):
        assert _judge(case, "jvp", tangent_output=t[returned])["verdict"] == "convention", returned
    assert _judge(case, "jvp", tangent_output=0.5)["verdict"] == "fail"  # the tangent of a 1
