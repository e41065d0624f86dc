"""The convolution record: its cases, strategies (conformance.strategies.conv_cases), expected
values (conformance.expected) and adapter methods predate the registry and keep their own format;
the record says which table primitives they exercise."""

from conformance.ops import record

record(
    "conv",
    "conv",
    rules=("convolution", "convolution_backward"),
    checks=("forward", "vjp", "vjp_vjp", "jvp", "vmap", "vmap_vjp", "error"),
    note="conv cases (op 'conv'): the K·u·Σ|x·w| bound, the special case of the products error model",
)
