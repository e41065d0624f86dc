"""Planted semantic bugs in a *copy* of the reference engine: the harness must catch each one.

:func:`mutant` copies the ``reference`` package's source into a cache directory as a package of
another name (``refgrad_mutant_<bug>``), rewrites its imports to that name, applies one planted bug
(an exact text replacement; a missing anchor raises :class:`MutantError`, so an edit of the
engine cannot silently turn a planted bug into no bug) and imports it. ``reference`` itself is
never touched. :class:`MutantAdapter` runs program cases with a mutant as ``T``, so a campaign
judges the mutant against the real reference exactly as it judges PyTorch.
"""

from __future__ import annotations

import atexit
import importlib
import re
import shutil
import sys
import tempfile
from pathlib import Path

from conformance.adapters.base import Adapter, cpu_setup
from conformance.programs import execute

REFERENCE = Path(__file__).resolve().parents[2] / "reference"

# bug name -> (file under reference/, exact text, replacement, what the bug is)
BUGS = {
    "view_no_version_bump": (
        "autograd/tensor.py",
        "    out._vc = src._vc\n    out._base = src._base",
        "    out._vc = list(src._vc)\n    out._base = src._base",
        "a view gets its own version counter, so an in-place write through it does not bump its base's",
    ),
    "copyslices_keeps_base_grad": (
        "autograd/graph.py",
        "out[0] = ops.put(g, self.index, res[0]) if res[0] is not None else ops.put(g, self.index, 0.0)",
        "out[0] = g",
        "CopySlices passes the base's gradient through without rewriting the view's region",
    ),
    "leaf_grad_overwritten": (
        "autograd/graph.py",
        "            var.grad = var.grad + new\n",
        "            var.grad = new.clone()\n",
        "AccumulateGrad overwrites a leaf's .grad instead of accumulating into it",
    ),
    "checkpoint_stale_inputs": (
        "utils/checkpoint.py",
        "        for i, s in zip(self.tensor_idx, self.saved_inputs):\n            args[i] = s.unpack()\n",
        "        for i, s in zip(self.tensor_idx, self.saved_inputs):\n"
        "            args[i] = self.args[i] if s.tensor is not None else s.unpack()\n",
        "a non-reentrant checkpoint recomputes from its inputs as they are at backward, unchecked: an input "
        "modified in place after the forward is used as modified (PyTorch raises the version error)",
    ),
    "mark_dirty_no_bump": (
        "autograd/function.py",
        "        t._vc[0] += 1  # PyTorch bumps the version of every tensor given to mark_dirty\n",
        "        pass\n",
        "ctx.mark_dirty does not bump the version of the tensors it is given (a write the version counter "
        "did not see, e.g. through .data, goes unnoticed by the tensors saved before it)",
    ),
    "custom_backward_not_summed": (
        "autograd/engine.py",
        "                    if cbuf[nr] is None:\n",
        '                    if cbuf[nr] is None or hasattr(node, "mark_dirty"):\n',
        "a gradient from a custom Function's node replaces, instead of adding to, what the same input "
        "already received along another path",
    ),
}
# with grad mode off (a backward without create_graph) the reference accumulates in place
_LEAF_INPLACE = (
    "            var.grad._accumulate_inplace(new)",
    "            var.grad = new.detach()._copy()",
)


class MutantError(RuntimeError):
    """A planted bug whose anchor text is not in the engine's source (the engine changed)."""


def _rewrite_imports(text: str, package: str) -> str:
    def fix(line: str) -> str:
        if re.match(r"\s*(from|import)\s+reference\b", line) or "import_module(" in line:
            return re.sub(r"\breference\b", package, line)
        return line

    return "\n".join(fix(line) for line in text.split("\n"))


_ROOT = []


def _private_root() -> Path:
    """A directory of this process's own (parallel tests and workers never share a copy), removed at exit."""
    if not _ROOT:
        _ROOT.append(Path(tempfile.mkdtemp(prefix="refgrad-mutants-")))
        atexit.register(shutil.rmtree, _ROOT[0], True)
    return _ROOT[0]


def build(bug: str, root: Path | None = None) -> str:
    """Write the mutant package for ``bug`` under ``root`` (on sys.path); return its module name."""
    if bug not in BUGS:
        raise MutantError(f"bug={bug!r}: unknown planted bug (known: {sorted(BUGS)})")
    package = f"refgrad_mutant_{bug}"
    root = Path(root or _private_root())
    target = root / package
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(REFERENCE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        path.write_text(_rewrite_imports(path.read_text(), package))
    rel, old, new, _ = BUGS[bug]
    replacements = [(old, new)] + ([_LEAF_INPLACE] if bug == "leaf_grad_overwritten" else [])
    path = target / rel
    text = path.read_text()
    for a, b in replacements:
        if text.count(a) != 1:
            raise MutantError(
                f"bug={bug!r}: anchor {a.strip()!r} occurs {text.count(a)} times in reference/{rel}"
            )
        text = text.replace(a, b)
    path.write_text(text)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return package


def mutant(bug: str):
    """The imported mutant engine (a module with the reference's Tensor API) for ``bug``."""
    name = f"refgrad_mutant_{bug}"
    if name not in sys.modules:
        build(bug)
        importlib.invalidate_caches()
    return importlib.import_module(name)


class MutantAdapter(Adapter):
    """Runs program cases with a planted-bug engine as ``T`` (set ``bug`` in a subclass)."""

    name = "mutant"
    bug = ""

    def __init__(self):
        self.T = mutant(self.bug)

    def version(self) -> str:
        return f"reference with planted bug {self.bug}: {BUGS[self.bug][3]}"

    def setup(self, device="cpu", precision="highest") -> dict:
        return cpu_setup(self, device, precision, {"bug": self.bug})

    def program(self, case, a):
        return execute(case.source, self.T, a)


class ViewNoVersionBump(MutantAdapter):
    name, bug = "mutant_view_no_version_bump", "view_no_version_bump"
    program_namespace = "refgrad_mutant_view_no_version_bump"


class CopySlicesKeepsBaseGrad(MutantAdapter):
    name, bug = "mutant_copyslices_keeps_base_grad", "copyslices_keeps_base_grad"
    program_namespace = "refgrad_mutant_copyslices_keeps_base_grad"


class LeafGradOverwritten(MutantAdapter):
    name, bug = "mutant_leaf_grad_overwritten", "leaf_grad_overwritten"
    program_namespace = "refgrad_mutant_leaf_grad_overwritten"


class CheckpointStaleInputs(MutantAdapter):
    name, bug = "mutant_checkpoint_stale_inputs", "checkpoint_stale_inputs"
    program_namespace = "refgrad_mutant_checkpoint_stale_inputs"


class MarkDirtyNoBump(MutantAdapter):
    name, bug = "mutant_mark_dirty_no_bump", "mark_dirty_no_bump"
    program_namespace = "refgrad_mutant_mark_dirty_no_bump"


class CustomBackwardNotSummed(MutantAdapter):
    name, bug = "mutant_custom_backward_not_summed", "custom_backward_not_summed"
    program_namespace = "refgrad_mutant_custom_backward_not_summed"
