"""refgrad: a reference-and-conformance harness for automatic differentiation.

The code lives in two packages, :mod:`reference` (the oracle: ``import reference as T``) and
:mod:`conformance` (the harness); this package is the stable public entry point for users'
own tests: :mod:`refgrad.testing`. It also carries the data refgrad ships: ``refgrad/cases/``
(the curated cases, the found-case corpus and ``known_departures.toml``; see
:mod:`conformance.shipped`).
"""

__version__ = "0.1.0"
