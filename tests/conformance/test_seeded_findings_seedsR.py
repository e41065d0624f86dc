"""What `refgrad run --ops activations --draws seeded --seed 3 --known builtin` (and seed 2) reached
outside the regions the known file's entries named (seedsR): each result, as the campaign recorded
it, is `known` under the shipped file, by the entry that describes its cause
(tests/conformance/test_seeded_findings_linalg_pool.py is the model)."""

from __future__ import annotations

import pytest
from test_seeded_findings_linalg_pool import _result

from conformance.known import SHIPPED, load_known

FOUND = [
    (
        "torch-inplace-elu-gradient-from-the-result-cancels",
        _result(
            "torch",
            "elu",
            "jvp_jvp",
            "float64",
            "fail",
            "tangent2_output[0,0]=0.0 but reference says -216295.1079311154 (7.43e+15 ulps of float64; ratio 5.36e+12 > bound 1)",
            {"alpha": 2.0, "spelling_tensorflow": "keras.ops.elu", "spelling_torch": "F.elu(inplace=True)", "values": "large"},
            {"input": [1, 2]},
        ),
    ),
    (
        "torch-inplace-elu-gradient-from-the-result-cancels",
        _result(
            "torch",
            "celu",
            "vjp_vjp",
            "float64",
            "fail",
            "g_input[]=2.4101598840408765e-10 but reference says 2.410159933560725e-10 (9.58e+07 ulps of float64; ratio 1.24e+06 > bound 1)",
            {"alpha": 2.0, "spelling_tensorflow": "keras.ops.celu", "spelling_torch": "F.celu(inplace=True)", "values": "large"},
            {"input": []},
        ),
    ),
    (
        "torch-elu-backward-at-nan-vectorised",
        _result(
            "torch",
            "celu",
            "vjp_vjp",
            "float16",
            "fail",
            "g_input[46,0]=nan but reference says 0.0 (inf ulps of float16; ratio inf > bound 1)",
            {"alpha": 2.0, "spelling_torch": "F.celu(inplace=True)", "values": "special"},
            {"input": [65, 1]},
        ),
    ),
    (
        "torch-elu-backward-at-nan-vectorised",
        _result(
            "torch",
            "celu",
            "vjp_jvp",
            "bfloat16",
            "fail",
            "g_input[0,25,0]=nan but reference says 0.0 (inf ulps of bfloat16; ratio inf > bound 1)",
            {"alpha": 0.5, "values": "special"},
            {"input": [1, 65, 1]},
        ),
    ),
    (
        "tf-derivatives-at-non-numbers-seeded",
        _result(
            "tensorflow",
            "prelu",
            "jvp_jvp",
            "float16",
            "fail",
            "tangent2_output[0,0,0,0]=nan but reference says 0.09871374350041151 (inf ulps of float16; ratio inf > bound 1)",
            {"values": "nonfinite"},
            {"input": [2, 1, 17, 1], "weight": [1]},
        ),
    ),
    (
        "tf-derivatives-at-non-numbers-seeded",
        _result(
            "tensorflow",
            "elu",
            "jvp_jvp",
            "bfloat16",
            "fail",
            "tangent2_output[]=nan but reference says 0.0 (inf ulps of bfloat16; ratio inf > bound 1)",
            {"alpha": 0.5, "values": "nonfinite"},
            {"input": []},
        ),
    ),
    (
        "tf-derivatives-at-non-numbers-seeded",
        _result(
            "tensorflow",
            "prelu",
            "jvp_jvp",
            "float64",
            "fail",
            "tangent2_output[0,1,0,2]=nan but reference says -3.2626172982806283 (inf ulps of float64; ratio inf > bound 1)",
            {"values": "special"},
            {"input": [1, 3, 1, 3], "weight": [3]},
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
