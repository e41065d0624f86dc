"""What the refgrad distribution ships beside its code, found through :mod:`importlib.resources`.

The curated cases, the found-case corpus (``found/``), the program cases (``programs/``) and
refgrad's own known departures (``known_departures.toml``) are package data of :mod:`refgrad`, in
``refgrad/cases/``: the same files whether refgrad runs from a checkout, an editable install or an
installed wheel. ``--cases`` defaults to :func:`cases_dir`; ``--known builtin`` (or a bare
``--known``) reads :func:`known_file`.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import refgrad

#: what ``--known`` (and ``--cases``) take for the file refgrad ships
BUILTIN = "builtin"


def version() -> str:
    """refgrad's version (the single source: ``refgrad.__version__``, read by pyproject.toml too)."""
    return refgrad.__version__


def cases_dir() -> Path:
    """The shipped cases directory (a real directory: refgrad is installed unzipped)."""
    return Path(str(resources.files("refgrad").joinpath("cases")))


def known_file() -> Path:
    """The shipped known-departures file."""
    return cases_dir() / "known_departures.toml"


def known_inputs(specs) -> list[tuple[Path, str]]:
    """The files a (repeatable) ``--known`` names, as (path, what) pairs for the output checks: an
    output may never be one of them. ``builtin`` is the shipped file."""
    return [
        (known_file() if str(spec) == BUILTIN else Path(spec), "the --known file") for spec in (specs or ())
    ]


def digest(path) -> str:
    """``sha256:`` and the first 16 hex digits of a file's bytes: which version of a file a run read."""
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
