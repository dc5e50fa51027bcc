"""The import graph of a package, read from its source with :mod:`ast`: every ``import`` statement
counts, at module level or inside a function, a method or an ``if TYPE_CHECKING`` block.

Used by tests/test_architecture.py: no cycle in ``src/`` (counting imports inside functions, which
"no import-time cycle" lets through), and the checker itself on planted packages.

An edge ``a -> b`` means module ``a`` imports module ``b`` (or a name from it). ``from . import x``
is an edge to the submodule ``pkg.x`` when that module exists, else to the package. A module
also depends on its parent packages (importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``),
but those edges are implicit in Python, not written by anyone, and are left out: a package's
``__init__`` re-exporting its submodules is not a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["module_files", "import_graph", "find_cycles", "unresolved_imports"]


def module_files(root: str | Path) -> dict[str, Path]:
    """``{dotted module name: file}`` of the package in directory ``root`` (``root`` named as the package)."""
    root = Path(root)
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import node refers to (absolute; ``from m import a`` gives ``m.a`` and ``m``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [f"{prefix}.{alias.name}" for alias in node.names if alias.name != "*"] + [prefix]


def import_graph(root: str | Path, *, internal_only: bool = True) -> dict[str, set[str]]:
    """``{module: {modules it imports}}`` for the package in ``root`` (imports inside functions included)."""
    files = module_files(root)
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = _targets(node, module, is_package)
            if isinstance(node, ast.ImportFrom):
                # "from m import a": the submodule m.a if there is one, else m itself
                prefix = names[-1]
                found = [n for n in names[:-1] if n in files]
                names = found if found and len(found) == len(names) - 1 else found + [prefix]
            for name in names:
                target = _resolve(name, files)
                if target is None:
                    if not internal_only:
                        graph[module].add(name)
                    continue
                if target != module:
                    graph[module].add(target)
    return graph


def _resolve(name: str, files: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module of the package (None: not ours)."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in files:
            return cand
    return None


def unresolved_imports(root: str | Path) -> list[tuple[str, str]]:
    """(module, name) of every import of the package's own name that names no module of it, e.g. a
    ``from ..report import x`` left behind by a move (an import inside a function fails only when run)."""
    files = module_files(root)
    package = Path(root).name
    bad = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                prefix = _targets(node, module, is_package)[-1]
                if (prefix == package or prefix.startswith(package + ".")) and prefix not in files:
                    bad.append((module, prefix))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith(package + ".") and _resolve(alias.name, files) != alias.name:
                        bad.append((module, alias.name))
    return bad


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (each one or more cycles), sorted
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)
