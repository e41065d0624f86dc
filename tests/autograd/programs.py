"""The program machinery moved to :mod:`conformance.programs` (the conformance harness runs it too)."""

from conformance.programs import (  # noqa: F401 - re-exported for the autograd tests
    AUTOGRAD_ERRORS,
    ENDINGS,
    MULTI_OUTPUT_VIEW_ERROR,
    TORCH_REGISTER_HOOK_CRASH,
    Outcome,
    Program,
    Step,
    assert_same_outcome,
    programs,
    run,
)
