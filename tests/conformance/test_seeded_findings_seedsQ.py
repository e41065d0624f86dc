"""What `refgrad run --ops <family> --draws seeded --seed 3 --known builtin` found in gather, shape,
shape_ops, pooling, sampling and activations (and activations at seed 2) that the known file did not
yet describe: each result, as the campaign recorded it, is `known` under the shipped file, by the
entry that describes its cause (tests/conformance/test_seeded_findings_linalg_pool.py is the model)."""

from __future__ import annotations

import pytest
from test_seeded_findings_linalg_pool import _result

from conformance.known import SHIPPED, load_known

FOUND = [
    (
        # the eager case's entry, reached under tf.vectorized_map, whose GatherV2 names dim 1
        "tf-take-along-axis-empty-index-with-an-empty-dim",
        _result(
            "tensorflow",
            "gather",
            "vmap",
            "bfloat16",
            "error_mismatch",
            "tensorflow raised InvalidArgumentError: Graph execution error: Detected at node "
            "loop_body/GatherV2_1/pfor/GatherV2 defined at (most recent call last): ... line 212, in f "
            "params.shape[1]: 0 should be equal to indices.shape[1]: 1 [[{{node loop_body/GatherV2_1/pfor/"
            "GatherV2}}]] [Op:__inference_f_3324] (the reference accepts this configuration)",
            {"dim": 0, "in_dims": [0], "index": [], "ishape": [0, 0], "values": "nonfinite", "vmap_size": 3},
            {"input": [3, 7]},
        ),
    ),
]


@pytest.mark.parametrize(
    "entry_id, result", FOUND, ids=[f"{e}-{r['case']['op']}-{r['check']}" for e, r in FOUND]
)
def test_a_seeded_finding_is_known_by_the_entry_of_its_cause(entry_id, result):
    (out,), _ = load_known(SHIPPED).classify([result])
    assert out["verdict"] == "known", result["reason"]
    assert out["known"]["id"] == entry_id
