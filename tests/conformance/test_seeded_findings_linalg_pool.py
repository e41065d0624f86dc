"""What `refgrad run --draws seeded --seed 0` found outside the elementwise families (conv, nn,
pooling, gather, indexing, copies, linear algebra, products): each result, as the campaign
recorded it, is `known` under the shipped known-departures file, by the entry that describes its
cause; each fails (stays `fail`/`error_mismatch`) on the file before those entries."""

from __future__ import annotations

import pytest

from conformance.case import Case
from conformance.known import SHIPPED, load_known


def _result(framework, op, check, dtype, verdict, reason, params, shapes):
    case = Case.from_dict({"op": op, "params": params, "shapes": shapes, "dtype": dtype, "seed": 1})
    return {
        "case_id": f"{op}-{framework}-{check}",
        "framework": framework,
        "version": {"torch": "2.13.0+cpu", "jax": "0.10.2", "tensorflow": "2.21.0"}[framework],
        "check": check,
        "dtype": dtype,
        "verdict": verdict,
        "reason": reason,
        "case": case.to_dict(),
    }


FOUND = [
    (
        "torch-cholesky-inverse-jvp-matmul-order",
        _result(
            "torch",
            "cholesky_inverse",
            "jvp",
            "float32",
            "fail",
            "tangent_output[2,2]=-0.045006648 but reference says -0.09446043734246694 (6.64e+06 ulps of float32; ratio 4.55e+03 > bound 1)",
            {"upper": True, "values": "normal"},
            {"input": [3, 3]},
        ),
    ),
    (
        "torch-cholesky-inverse-jvp-matmul-order",
        _result(
            "torch",
            "cholesky_inverse",
            "vjp_jvp",
            "float64",
            "fail",
            "g_tan1_input[0,3,1]=-5.940635331340743e+74 but reference says -6.790411427072985e+74 (8.46e+14 ulps of float64; ratio 1.63e+11 > bound 1)",
            {"upper": True, "values": "normal"},
            {"input": [1, 5, 5]},
        ),
    ),
    (
        "tf-max-pool3d-grad-grad-rejects-an-empty-batch",
        _result(
            "tensorflow",
            "max_pool3d",
            "vjp_jvp",
            "float32",
            "error_mismatch",
            "tensorflow raised InvalidArgumentError: Graph execution error: Detected at node gradient_tape/gradient_tape/MaxPool3DGradGrad received empty tensor tensor_in: Tensor<type: float shape: [0,2,3,1,1] values: >",
            {"kernel_size": [2, 2, 1], "padding": [0, 0, 0], "stride": [1, 1, 1], "values": "special"},
            {"input": [0, 1, 2, 3, 1]},
        ),
    ),
    (
        "jax-max-pool-derivative-with-nan-in-the-window",
        _result(
            "jax",
            "max_pool3d",
            "vjp_vjp",
            "bfloat16",
            "fail",
            "g_grad_output[0,0,1,0,1]=1.88 but reference says 0.84765625 (265 ulps of bfloat16; ratio 265 > bound 1)",
            {"kernel_size": [2, 1, 2], "padding": [0, 0, 1], "stride": [2, 2, 1], "values": "special"},
            {"input": [2, 1, 6, 5, 2]},
        ),
    ),
    (
        "tf-forward-over-forward-nan-at-infinite-inputs",
        _result(
            "tensorflow",
            "index_select",
            "jvp_jvp",
            "float64",
            "fail",
            "tangent2_output[0,0]=nan but reference says 0.0 (inf ulps of float64; ratio inf > bound 1)",
            {"dim": 1, "index": [0, 0, 0, 0, 0, 0], "values": "nonfinite"},
            {"input": [1, 1]},
        ),
    ),
    (
        "tf-forward-over-forward-nan-at-infinite-inputs",
        _result(
            "tensorflow",
            "dot",
            "jvp_jvp",
            "bfloat16",
            "fail",
            "tangent2_output[]=nan but reference says -1.046875 (inf ulps of bfloat16; ratio inf > bound 1)",
            {"values": "nonfinite"},
            {"input": [1], "other": [1]},
        ),
    ),
    (
        "tf-forward-over-forward-nan-at-infinite-inputs",
        _result(
            "tensorflow",
            "unsafe_split",
            "jvp_jvp",
            "float16",
            "fail",
            "tangent2_output[0,0,0]=nan but reference says 0.0 (inf ulps of float16; ratio inf > bound 1)",
            {"dim": 0, "values": "nonfinite"},
            {"input": [8, 7, 2]},
        ),
    ),
    (
        "tf-take-along-axis-empty-index-with-an-empty-dim",
        _result(
            "tensorflow",
            "gather",
            "jvp_vjp",
            "float16",
            "error_mismatch",
            "tensorflow raised InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} params.shape[0]: 0 should be equal to indices.shape[0]: 58 [Op:GatherV2] name: (the reference accepts this configuration)",
            {"dim": -2, "index": [], "ishape": [58, 0, 0], "values": "ties"},
            {"input": [64, 1, 2]},
        ),
    ),
    (
        "jax-det-through-exp-of-log",
        _result(
            "jax",
            "linalg_det",
            "vmap",
            "bfloat16",
            "fail",
            "output[0]=-4080.0 but reference says -4000.0 (5 ulps of bfloat16; ratio 1.69 > bound 1)",
            {"in_dims": [2], "values": "wide", "vmap_size": 1},
            {"input": [1, 1]},
        ),
    ),
    (
        "torch-eig-reverse-over-forward-gauge-check",
        _result(
            "torch",
            "linalg_eig",
            "vjp_jvp",
            "float64",
            "error_mismatch",
            "torch raised RuntimeError: linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined. (the reference accepts this configuration)",
            {"values": "wide"},
            {"input": [3, 2, 2, 2]},
        ),
    ),
    (
        "tf-resize-bicubic-forward-over-forward",
        _result(
            "tensorflow",
            "upsample_bicubic2d",
            "vmap_jvp_vjp",
            "float32",
            "error_mismatch",
            "tensorflow raised StagingError: in user code: LookupError: gradient registry has no entry for: ResizeBicubicGrad (the reference accepts this configuration)",
            {
                "align_corners": True,
                "in_dims": [-1],
                "mode": "bicubic",
                "size": [1, 1],
                "values": "positive",
                "vmap_size": 3,
            },
            {"input": [0, 1, 2, 1]},
        ),
    ),
    (
        "jax-conv-patches-nan-from-an-infinite-input",
        _result(
            "jax",
            "im2col",
            "forward",
            "bfloat16",
            "fail",
            "output[0,0,0]=nan but reference says 0.0 (inf ulps of bfloat16; ratio inf > bound 1)",
            {
                "dilation": [1, 2],
                "kernel_size": [2, 1],
                "padding": [1, 0],
                "stride": [2, 2],
                "values": "special",
            },
            {"input": [1, 2, 5, 3]},
        ),
    ),
    (
        "tf-extract-patches-gradient-of-empty-batch",
        _result(
            "tensorflow",
            "im2col",
            "jvp_vjp",
            "float32",
            "error_mismatch",
            "tensorflow raised InvalidArgumentError: {{function_node __wrapped__UnsortedSegmentSum_device_/job:localhost/replica:0/task:0/device:CPU:0}} data.shape = [6,0] does not start with segment_ids.shape = [3] [Op:UnsortedSegmentSum] name: (the reference accepts this configuration)",
            {
                "dilation": [1, 1],
                "kernel_size": [3, 1],
                "padding": [0, 0],
                "stride": [2, 1],
                "values": "tiny",
            },
            {"input": [0, 2, 4, 1]},
        ),
    ),
    (
        "tf-tile-second-order-past-rank-2",
        _result(
            "tensorflow",
            "repeat",
            "jvp_jvp",
            "float32",
            "error_mismatch",
            "tensorflow raised UnimplementedError: Graph execution error: Broadcast between [1,1,1,2,1,5,1,3] and [3,1,3,2,2,5,3,3] is not supported yet. [[{{node gradient_tape/gradient_tape/BroadcastTo}}]] (the reference accepts this configuration)",
            {"repeats": [3, 3, 2, 3], "values": "ties"},
            {"input": [2, 5, 3]},
        ),
    ),
    (
        "tf-forward-accumulator-relaxed-shapes-eigh",
        _result(
            "tensorflow",
            "linalg_eigh",
            "jvp_jvp",
            "float32",
            "error_mismatch",
            "tensorflow raised InvalidArgumentError: Graph execution error: Input to reshape is a tensor with 5 values, but the requested shape has 25 [[{{node gradients/gradients/gradient_tape/gradient_tape/Reshape_1_grad/Reshape_grad/Reshape}}]] (the reference accepts this configuration)",
            {"UPLO": "U", "values": "wide"},
            {"input": [5, 5]},
        ),
    ),
    (
        "tf-max-pool2d-skips-nan",
        _result(
            "tensorflow",
            "max_pool2d",
            "vmap",
            "float32",
            "fail",
            "output[0,1,1,0,1]=-0.22717702 but reference says nan (inf ulps of float32; ratio inf > bound 1)",
            {
                "in_dims": [-3],
                "kernel_size": [1, 2],
                "padding": [0, 0],
                "stride": [3, 2],
                "values": "nonfinite",
                "vmap_size": 2,
            },
            {"input": [2, 2, 3, 4]},
        ),
    ),
    (
        "tf-rfft-gradient-of-a-cropping-fft-length-of-one",
        _result(
            "tensorflow",
            "rfft",
            "vjp_vjp",
            "complex128",
            "fail",
            "g_grad_output[0,0,0]=-1.919650155307196 but reference says 0.0 (inf ulps of float64; ratio 4.31e+307 > bound 1)",
            {"dim": 0, "n": 1, "norm": "ortho", "values": "tiny"},
            {"input": [5, 1]},
        ),
    ),
    (
        "tf-rfft-gradient-of-a-cropping-fft-length-of-one",
        _result(
            "tensorflow",
            "rfft",
            "vmap_jvp_vjp",
            "complex64",
            "fail",
            "tangent_grad_input[0,1]=-6020111400.0 but reference says 0.0 (4.3e+54 ulps of float32; ratio 5.12e+47 > bound 1)",
            {"dim": -1, "in_dims": [-2], "n": 1, "norm": "forward", "values": "tiny", "vmap_size": 3},
            {"input": [4]},
        ),
    ),
    (
        "tf-max-pool-forward-over-reverse-with-nan-in-the-window",
        _result(
            "tensorflow",
            "max_pool2d",
            "vmap_jvp_vjp",
            "bfloat16",
            "fail",
            "tangent_grad_input[0,1,6,1,2]=2700000000.0 but reference says 0.0 (2.94e+49 ulps of bfloat16; ratio 2.28e+47 > bound 1)",
            {
                "in_dims": [4],
                "kernel_size": [3, 2],
                "padding": [0, 1],
                "stride": [3, 3],
                "values": "nonfinite",
                "vmap_size": 3,
            },
            {"input": [2, 16, 3, 3]},
        ),
    ),
    (
        "tf-vectorized-map-max-pool-padding-reads-zero-in-forward-over-reverse",
        _result(
            "tensorflow",
            "max_pool2d",
            "vmap_jvp_vjp",
            "float32",
            "fail",
            "tangent_grad_input[1,0,0,0,0]=0.0 but reference says -1.5620115995407104 (1.31e+07 ulps of float32; ratio 3.18e+06 > bound 1)",
            {
                "in_dims": [-4],
                "kernel_size": [1, 3],
                "padding": [0, 1],
                "stride": [3, 2],
                "values": "normal",
                "vmap_size": 3,
            },
            {"input": [1, 1, 9, 1]},
        ),
    ),
    (
        "tf-forward-accumulator-nan-at-infinite-inputs-of-addr-and-baddbmm",
        _result(
            "tensorflow",
            "addr",
            "jvp",
            "float32",
            "fail",
            "tangent_output[0,3]=nan but reference says 2.3653762735186064 (inf ulps of float32; ratio inf > bound 1)",
            {"alpha": 2.0, "beta": 0.5, "values": "nonfinite"},
            {"input": [5], "mat1": [16], "mat2": [5]},
        ),
    ),
    (
        "tf-forward-accumulator-nan-at-infinite-inputs-of-addr-and-baddbmm",
        _result(
            "tensorflow",
            "baddbmm",
            "vjp_jvp",
            "float32",
            "fail",
            "g_mat1[0,0,0]=nan but reference says -3168535084.299263 (inf ulps of float32; ratio inf > bound 1)",
            {"alpha": -1.5, "beta": 0.0, "values": "nonfinite"},
            {"input": [1, 9, 9], "mat1": [1, 9, 3], "mat2": [1, 3, 9]},
        ),
    ),
    (
        "torch-cumprod-reverse-over-forward-float16-overflows-dividing-by-a-small-input",
        _result(
            "torch",
            "cumprod",
            "vjp_jvp",
            "float16",
            "fail",
            "g_input[0,3]=-inf but reference says 0.5130427700933069 (inf ulps of float16; ratio inf > bound 1)",
            {"dim": -2, "spelling_jax": "lax.cumprod", "values": "normal"},
            {"input": [4, 4]},
        ),
    ),
    (
        "tf-cumprod-reverse-over-forward-float16-overflows-dividing-by-a-small-input",
        _result(
            "tensorflow",
            "cumprod",
            "vjp_jvp",
            "float16",
            "fail",
            "g_input[0,3]=-inf but reference says 0.5130427700933069 (inf ulps of float16; ratio inf > bound 1)",
            {"dim": -2, "spelling_jax": "lax.cumprod", "values": "normal"},
            {"input": [4, 4]},
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
