"""Primitives whose samples still fail on the strict device: the code path not yet converted
from NumPy to the data's namespace (file:line and the call), as the strict run reports it.

Strict xfails (tests/autograd/test_strict_namespace.py): only the namespace errors (TypeError,
BackendError, the device-mismatch RuntimeError) count as the expected failure; a wrong value
still fails, and a primitive that starts passing must be removed from the list. Regenerate with
``python -m tests.autograd.strict_survey --write`` after merging or converting a family (the
reasons are the innermost reference frames of the failure). Empty: every record passes.
"""

# forward, VJP, JVP (test_strict_matches_numpy)
STRICT_XFAIL: dict = {}

# vmap (test_strict_vmap_matches_numpy)
STRICT_XFAIL_VMAP: dict = {}

# the error tracker (test_strict_error_bounds_match_numpy)
STRICT_XFAIL_BOUNDS: dict = {}
