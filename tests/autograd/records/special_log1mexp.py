"""Samples for log1mexp's derivative primitive (reference/ops/rules/special_log1mexp.py) at the
orders the checks use (its own VJP, reached by gradgradcheck of a first-order sample), on x > 0
(``p``: x >= 0.5, both sides of the split log 2 after the scale); log1mexp itself takes its samples
from its conformance record (records.record_samples)."""

from reference.ops.rules.special_log1mexp import log1mexp_derivative

RECORDS = {
    "log1mexp_derivative": [
        (f"order{k}", lambda a, k=k: log1mexp_derivative(a * 0.5, k), [(4,)], "p") for k in (1, 2)
    ],
}
