"""What a user's own pytest suite needs from refgrad.

* :func:`assert_conforms`: judge a PyTorch, JAX or TensorFlow function against a reference
  function (``import reference as T``) with the harness's derived bounds (no hand-set tolerance).
* :class:`ConformanceError`: what it raises (an ``AssertionError``).
* Hypothesis strategies for ``@given`` tests: :func:`conv_cases` (convolution geometries, valid by
  construction), :func:`invalid_conv_cases`, :func:`program_cases` (random autograd programs over
  views and in-place ops), :func:`record_cases` (the samples of an op record), and
  :func:`case_data` (a case's input arrays).
* The pytest plugin (``--refgrad-report DIR``) is registered as the ``refgrad`` entry point.
"""

from conformance.case import case_data
from conformance.strategies import conv_cases, invalid_conv_cases, program_cases, record_cases
from conformance.testing.conforms import CHECKS, ConformanceError, assert_conforms

__all__ = [
    "CHECKS",
    "ConformanceError",
    "assert_conforms",
    "case_data",
    "conv_cases",
    "invalid_conv_cases",
    "program_cases",
    "record_cases",
]
