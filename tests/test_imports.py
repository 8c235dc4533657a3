"""The floors of the project import downwards only: no import circle between project files
(imports inside functions count), and the environment (``bali_env``) never imports the floors
above it (``agents``, ``training``), except its command-line entry point ``bali_env/cli.py``.

The import graph is read from the source with ``ast`` (nothing is imported to build it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bali_env", "agents", "training", "benchmarks")
UPPER_FLOORS = ("agents", "training")
ALLOWED_TO_REACH_UP = {"bali_env.cli"}


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the project's packages by dotted name (a package by its ``__init__``)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imported_names(module: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    """The dotted names one import statement loads (``from pkg import sub`` loads ``pkg.sub``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join(base + ([node.module] if node.module else []))
    else:
        origin = node.module or ""
    submodules = [f"{origin}.{alias.name}" for alias in node.names if f"{origin}.{alias.name}" in modules]
    return submodules + ([origin] if len(submodules) < len(node.names) else [])


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its file (the nearest enclosing
    project module of each imported name)."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported_names(module, path, node, modules):
                    while name and name not in modules:
                        name = name.rpartition(".")[0]
                    if name and name != module:
                        targets.add(name)
        graph[module] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_two_project_files_import_each_other():
    """No import circle of any length between project modules; a failure names the circle."""
    found = circles(import_graph(project_modules()))
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_environment_does_not_import_the_floors_above_it():
    """No module of bali_env imports agents or training (the CLI entry point excepted)."""
    graph = import_graph(project_modules())
    reaching_up = {m: sorted(t for t in targets if t.split(".")[0] in UPPER_FLOORS)
                   for m, targets in graph.items() if m.split(".")[0] == "bali_env" and m not in ALLOWED_TO_REACH_UP}
    assert not {m: t for m, t in reaching_up.items() if t}


@pytest.mark.parametrize("files, expected", [
    ({"agents/a.py": "from .b import x\n", "agents/b.py": "def f():\n    from . import a\n"},
     [["agents.a", "agents.b"]]),
    ({"agents/a.py": "import agents.b\n", "agents/b.py": "import agents.c\n", "agents/c.py": "from agents import a\n"},
     [["agents.a", "agents.b", "agents.c"]]),
    ({"agents/a.py": "from agents.b import x\n", "agents/b.py": "import numpy\n"}, []),
])
def test_the_circle_finder_sees_lazy_and_long_circles(tmp_path, files, expected):
    """The check itself: a circle through a function-level import, a three-file circle, and no
    false alarm on a one-way import."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "agents" / "__init__.py").write_text("")
    assert circles(import_graph(project_modules(tmp_path))) == expected
