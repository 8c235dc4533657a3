"""The floors of the package import downwards only (the map in ``bali_env/__init__.py``): no
import circle between project files (imports inside functions count), no room imports a room on
a higher floor or a sibling on its own floor, and the package installs one top-level name.

The import graph is read from the source with ``ast`` (nothing is imported to build it)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bali_env", "benchmarks")
#: the rooms of ``bali_env`` by floor, lowest first; the package's own ``__init__`` (the public
#: face: what ``import bali_env`` gives a user) stands on top, and no room imports it
FLOORS = (
    ("bali_env.files", "bali_env.release"),
    ("bali_env.engine",),
    ("bali_env.pictures",),
    ("bali_env.envs",),
    ("bali_env.bots",),
    ("bali_env.arena", "bali_env.versus"),
    ("bali_env.flags",),
    ("bali_env.trainers", "bali_env.speed"),
    ("bali_env.apps",),
    ("bali_env",),
)


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


def import_origin(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute dotted name a ``from ... import`` statement of ``module`` (the file ``path``)
    imports from, its relative dots resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imported_names(module: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    """The dotted names one import statement loads (``from pkg import sub`` loads ``pkg.sub``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    origin = import_origin(module, path, node)
    submodules = [f"{origin}.{alias.name}" for alias in node.names if f"{origin}.{alias.name}" in modules]
    return submodules + ([origin] if len(submodules) < len(node.names) else [])


#: a module named in a string, to be imported later (a registry's ``"bali_env.bots.ppo:PPOAgent"``,
#: an ``import_module("bali_env.arena")``): an import all the same
NAMED_IN_STRING = re.compile(r"(?:bali_env|benchmarks)(?:\.\w+)+(?=:\w+$)")


def _named_in_string(node: ast.AST) -> list[str]:
    """The module a string names to be imported later: a whole string ``pkg.module:Name`` (a
    registry entry), or ``import_module("pkg.module")``'s argument (a docstring or a log's name
    that mentions a module is not a reference)."""
    if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
        arg = node.args[0] if node.args else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith(PACKAGES):
            return [arg.value]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        found = NAMED_IN_STRING.match(node.value)
        return [found.group(0)] if found else []
    return []


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its file (the nearest enclosing
    project module of each imported name), the modules its strings name to import later among them."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = _named_in_string(node)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = _imported_names(module, path, node, modules)
            if names:
                for name in names:
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


def room_of(module: str) -> str:
    """The room a module of ``bali_env`` belongs to (the longest room name that is its prefix)."""
    rooms = [r for floor in FLOORS for r in floor if module == r or module.startswith(r + ".")]
    return max(rooms, key=len)


def floor_of(room: str) -> int:
    """The floor of a room."""
    return next(k for k, floor in enumerate(FLOORS) if room in floor)


def upward_imports(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """module -> the modules it imports from another room on its own floor or a higher one."""
    found = {}
    for module, targets in graph.items():
        if module.split(".")[0] != "bali_env":
            continue
        mine = room_of(module)
        bad = sorted(t for t in targets if t.split(".")[0] == "bali_env" and room_of(t) != mine
                     and floor_of(room_of(t)) >= floor_of(mine))
        if bad:
            found[module] = bad
    return found


def test_every_room_imports_only_the_floors_below_it():
    """No module of a room imports a room above it or beside it (the CLI included: it stands
    on the top floor); a failure names the module and what it reaches."""
    modules = project_modules()
    assert set(room_of(m) for m in modules if m.startswith("bali_env")) <= {r for f in FLOORS for r in f}
    assert not upward_imports(import_graph(modules))


def test_the_floor_check_sees_an_upward_and_a_sideways_import():
    """The check itself: the engine reaching the agents, and training reaching the benchmarks
    beside it, are both found; the apps reaching down are not."""
    graph = {"bali_env.engine.step": {"bali_env.bots.base"},
             "bali_env.trainers.ppo_selfplay.loop": {"bali_env.speed.run"},
             "bali_env.apps.cli": {"bali_env.trainers.ppo_selfplay.train", "bali_env.engine"}}
    assert upward_imports(graph) == {"bali_env.engine.step": ["bali_env.bots.base"],
                                     "bali_env.trainers.ppo_selfplay.loop": ["bali_env.speed.run"]}


def test_the_graph_sees_a_module_named_in_a_string(tmp_path):
    """A registry entry ``"bali_env.x.y:Name"`` (imported later by ``import_module``) is an
    import of ``bali_env.x.y``; a docstring naming a module is not."""
    for name, text in {"engine/__init__.py": "", "engine/step.py": '"""Uses ``bali_env.bots.base`` words."""\n',
                       "bots/__init__.py": "", "bots/base.py": "", "__init__.py": "",
                       "engine/rules.py": 'KINDS = {"x": "bali_env.bots.base:Agent"}\n'}.items():
        (tmp_path / "bali_env" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "bali_env" / name).write_text(text)
    (tmp_path / "benchmarks").mkdir()
    graph = import_graph(project_modules(tmp_path))
    assert graph["bali_env.engine.rules"] == {"bali_env.bots.base"}
    assert graph["bali_env.engine.step"] == set()
    assert upward_imports(graph) == {"bali_env.engine.rules": ["bali_env.bots.base"]}


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> list[str]:
    """The file names in the wheel pip builds from this checkout (built once for the module), from a
    copy of what the build reads: a ``build/`` folder an earlier build left in the checkout (with
    modules since moved or removed) cannot slip into it."""
    import shutil
    import subprocess
    import sys
    import zipfile

    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("no checkout beside the tests to build a wheel from (the installed wheel's tests)")
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "bali_env", source / "bali_env", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(out), str(source)], check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("bali_env-*.whl")
    return zipfile.ZipFile(wheel).namelist()


def test_the_wheel_installs_one_top_level_name(wheel_names):
    """The wheel pip builds from this checkout holds one top-level name, ``bali_env`` (no
    ``agents``, ``training`` or ``benchmarks`` beside it in a user's Python), with the data its
    code reads: the shipped policies, the fonts, the replay page's assets, the web app's page."""
    names = wheel_names
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"bali_env"}
    for data in ("bali_env/bots/policies/bali_2p.npz", "bali_env/bots/policies/bali_4p.npz",
                 "bali_env/pictures/fonts/DejaVuSans-subset.ttf", "bali_env/pictures/assets/replay.js",
                 "bali_env/apps/web/static/index.html", "bali_env/py.typed"):
        assert data in names


def files_for_tests_only(names: list[str]) -> list[str]:
    """The files of ``bali_env`` in a list of wheel paths that only the tests use: a test module, a
    conftest, a tests folder, or a bot that misbehaves on purpose (``faulty*``)."""
    found = []
    for name in names:
        parts = name.split("/")
        if parts[0] != "bali_env":
            continue
        if any(p in ("tests", "test", "testing") for p in parts[:-1]) or parts[-1] == "conftest.py" or \
                parts[-1].startswith(("test_", "faulty")) or parts[-1].endswith("_test.py"):
            found.append(name)
    return found


def test_the_wheel_holds_nothing_test_only(wheel_names):
    """Nothing in the wheel is there for the tests alone (the fault tests' misbehaving bot lives in
    ``tests/``); its Python files are the modules of ``bali_env`` in this checkout."""
    assert files_for_tests_only(wheel_names) == []
    shipped = {n for n in wheel_names if n.endswith(".py")}
    source = {p.relative_to(ROOT).as_posix() for p in (ROOT / "bali_env").rglob("*.py")}
    assert shipped == source, f"in the wheel only: {sorted(shipped - source)}; " \
                              f"in the checkout only: {sorted(source - shipped)} (a folder without __init__.py?)"


def test_the_test_only_check_sees_test_files():
    """The check itself: a faulty bot, a test module, a conftest and a tests folder inside the
    package are found; the package's own modules and the dist-info are not."""
    names = ["bali_env/speed/faulty_bot.py", "bali_env/engine/test_rules.py", "bali_env/conftest.py",
             "bali_env/tests/helper.py", "bali_env/speed/bot_protocol.py", "bali_env/bots/protocol/command_agent.py",
             "bali_env-1.0.0.dist-info/RECORD"]
    assert files_for_tests_only(names) == names[:4]


@pytest.mark.parametrize("files, expected", [
    ({"bali_env/a.py": "from .b import x\n", "bali_env/b.py": "def f():\n    from . import a\n"},
     [["bali_env.a", "bali_env.b"]]),
    ({"bali_env/a.py": "import bali_env.b\n", "bali_env/b.py": "import bali_env.c\n",
      "bali_env/c.py": "from bali_env import a\n"},
     [["bali_env.a", "bali_env.b", "bali_env.c"]]),
    ({"bali_env/a.py": "from bali_env.b import x\n", "bali_env/b.py": "import numpy\n"}, []),
])
def test_the_circle_finder_sees_lazy_and_long_circles(tmp_path, files, expected):
    """The check itself: a circle through a function-level import, a three-file circle, and no
    false alarm on a one-way import."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "bali_env" / "__init__.py").write_text("")
    assert circles(import_graph(project_modules(tmp_path))) == expected
