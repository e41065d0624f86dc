"""refgrad's conformance harness: cases, adapters, derived tolerances, crash-safe campaigns.

``conformance run`` is the main command (see ``docs/conformance.md``). The pieces:

* :mod:`conformance.case` — the :class:`Case` model, JSON (de)serialisation, :class:`CaseError`;
* :mod:`conformance.tolerance` — the derived error bound and the judged ratio;
* :mod:`conformance.expected` — reference expectations computed from ``reference.conv``;
* :mod:`conformance.adapters` — PyTorch, TensorFlow and JAX, and the :class:`Adapter` interface;
* :mod:`conformance.runner` — worker subprocesses, campaigns, results.jsonl, resume;
* :mod:`conformance.strategies` — Hypothesis strategies for valid and invalid configurations;
* :mod:`conformance.report` — report.json and index.html; :mod:`conformance.cli` — the CLI.
"""

import conformance.ops  # noqa: F401 - registers the op records' case kind (conformance.case.register_kind)
from conformance.adapters.base import Adapter
from conformance.case import Case, CaseError, ConvParams, load_cases, save_case

__all__ = ["Adapter", "Case", "CaseError", "ConvParams", "load_cases", "save_case"]
