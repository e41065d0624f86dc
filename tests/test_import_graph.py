"""Imports point one way (issue #31, docs/architecture.md): a contract over the project's import graph.

Every module of ``reference``, ``conformance`` and ``refgrad`` is parsed with :mod:`ast`; each
import statement, at module level or inside a function, gives one edge per project module it
names (``from reference.ops import api, kernels``: two edges; ``from reference.ops.api import
clone``: one, to ``reference.ops.api``). Imports under ``if TYPE_CHECKING:`` never run and are
left out. The contract:

(a) no import cycle (in-function imports counted: they are cycles that only wait for a call);
(b) no project-internal import inside a function (third-party imports may be lazy: optional
    heavy dependencies such as torch, jax, tensorflow, ray, cupy, mpmath are imported when used);
(c) the autograd core (``reference.autograd``) imports nothing from the op layer
    (``reference.ops``), ``reference.nn`` or ``reference.func``: the op layer registers into
    tables the core owns;
(d) inside the core, each module imports only the modules below it in :data:`CORE_LAYERS` (what
    a lower one calls in an upper one is registered in ``reference.autograd.table``).

Until the code obeys it everywhere, ``import_graph_allowlist.txt`` lists the remaining
violations: each in-function edge and each core edge with its number of import statements, and
each cycle by its modules. The lists must match the code exactly: a new violation fails, and so
does a fixed one that is still listed (remove its line, or lower its count), so they only shrink.
"""

from __future__ import annotations

import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("reference", "conformance", "refgrad")
ALLOWLIST = pathlib.Path(__file__).with_name("import_graph_allowlist.txt")
CORE = "reference.autograd"
OUTSIDE_CORE = ("reference.ops", "reference.nn", "reference.func")
#: The autograd core's modules from the bottom up (docs/architecture.md): the leaves (grad modes,
#: anomaly mode, the tables, the transform levels), strides, the Tensor, saved-tensor hook contexts,
#: the graph, the dispatcher, forward mode, batching, the engine, custom Functions and gradcheck.
CORE_LAYERS = (
    "grad_mode",
    "anomaly",
    "table",
    "levels",
    "layout",
    "tensor",
    "graph_hooks",
    "graph",
    "dispatch",
    "dual",
    "forward_ad",
    "batching",
    "batched_grad",
    "engine",
    "function",
    "checks",
)

Edge = collections.namedtuple("Edge", "importer imported lineno in_function")


def _modules():
    """``{dotted name: path}`` for every module of the project's packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _within(name, package):
    return name == package or name.startswith(package + ".")


def _is_type_checking(node):
    test = node.test
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _edges(modules):
    """Every project-internal import edge (self-imports of a package's own names left out)."""

    def project_module(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    edges = []
    for name, path in modules.items():
        is_package = path.name == "__init__.py"

        def visit(node, in_function, name=name, is_package=is_package):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child):
                    for sub in child.orelse:
                        visit(sub, in_function)
                    continue
                targets = []
                if isinstance(child, ast.Import):
                    targets = [alias.name for alias in child.names]
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = name.split(".") if is_package else name.split(".")[:-1]
                        base = ".".join(
                            base[: len(base) - child.level + 1] + ([child.module] if child.module else [])
                        )
                    else:
                        base = child.module
                    # ``from pkg import submodule`` names the submodule; ``from mod import name``, mod
                    targets = [
                        f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in child.names
                    ]
                for target in dict.fromkeys(project_module(t) for t in targets):
                    if target and target != name:
                        edges.append(Edge(name, target, child.lineno, in_function))
                nested = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                visit(child, in_function or nested)

        visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return edges


def _cycles(edges):
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    graph = collections.defaultdict(set)
    for e in edges:
        graph[e.importer].add(e.imported)
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(frozenset(component))
    return out


def _read_allowlist():
    """``(in_function, core, cycles)`` from :data:`ALLOWLIST` (``#`` starts a comment)."""
    sections = {"in-function": collections.Counter(), "core": collections.Counter(), "cycles": set()}
    current = None
    for raw in ALLOWLIST.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            continue
        if current == "cycles":
            sections["cycles"].add(frozenset(line.split()))
        else:
            edge, count = line.rsplit(None, 1)
            importer, imported = (part.strip() for part in edge.split("->"))
            sections[current][(importer, imported)] = int(count)
    return sections["in-function"], sections["core"], sections["cycles"]


def _count(edges):
    return collections.Counter((e.importer, e.imported) for e in edges)


def _compare(actual, listed, what):
    """Messages for every difference between the code's violations and the listed ones."""
    problems = []
    for key in sorted(set(actual) | set(listed)):
        got, allowed = actual.get(key, 0), listed.get(key, 0)
        if got > allowed:
            problems.append(f"new {what}: {key[0]} -> {key[1]} ({got} import(s), {allowed} allowed)")
        elif got < allowed:
            problems.append(
                f"fixed {what} still listed: {key[0]} -> {key[1]} has {got} import(s), the list says {allowed}: "
                f"update {ALLOWLIST.name}"
            )
    return problems


EDGES = _edges(_modules())


def test_the_parser_sees_the_known_structure():
    # The graph is not empty and resolves both import forms: a top-level ``from pkg import module``
    # and a relative import (conformance.ops's family modules import their siblings).
    modules = _modules()
    assert {"reference.autograd.engine", "conformance.cli", "refgrad"} <= set(modules)
    pairs = {(e.importer, e.imported) for e in EDGES if not e.in_function}
    assert ("reference.ops.api", "reference.autograd.dispatch") in pairs
    assert ("reference", "reference.autograd") in pairs


def test_no_import_cycle():
    found = set(_cycles(EDGES))
    _, _, listed = _read_allowlist()
    problems = []
    for cycle in sorted(found - listed, key=sorted):
        was = max(listed, key=lambda c: len(c & cycle), default=frozenset())
        if was & cycle:
            problems.append(
                f"a listed cycle changed: now also {sorted(cycle - was)}, no longer {sorted(was - cycle)} "
                f"(break the new edges, or update {ALLOWLIST.name} if it shrank)"
            )
        else:
            problems.append(f"new import cycle: {sorted(cycle)}")
    problems += [
        f"listed cycle gone (remove it): {sorted(c)}" for c in listed - found if not any(c & f for f in found)
    ]
    assert not problems, "\n".join(problems)


def test_no_project_import_inside_a_function():
    in_function, _, _ = _read_allowlist()
    problems = _compare(_count(e for e in EDGES if e.in_function), in_function, "in-function import")
    assert not problems, "\n".join(problems)


def test_the_autograd_core_imports_nothing_from_the_op_layer():
    core = _count(
        e for e in EDGES if _within(e.importer, CORE) and any(_within(e.imported, p) for p in OUTSIDE_CORE)
    )
    _, listed, _ = _read_allowlist()
    problems = _compare(core, listed, "core import of the op layer")
    assert not problems, "\n".join(problems)


def test_the_autograd_core_reads_as_layers():
    order = {f"{CORE}.{name}": i for i, name in enumerate(CORE_LAYERS)}
    modules = {m for m in _modules() if m.startswith(CORE + ".")}
    assert modules == set(order), f"place every core module in CORE_LAYERS: {sorted(modules ^ set(order))}"
    upward = sorted(
        f"{e.importer} imports {e.imported} (line {e.lineno}), which sits above it"
        for e in EDGES
        if e.importer in order and e.imported in order and order[e.imported] > order[e.importer]
    )
    assert not upward, "\n".join(upward)
