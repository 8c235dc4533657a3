"""Each extra installs what its examples import: every example names its install line in its
docstring (``pip install -e ".[openspiel,train]"``), and every third-party module it imports, at
any depth of the example and at the top of the ``bali_env`` and OpenSpiel modules it reaches
(OpenSpiel's wheel does not declare everything its algorithms import: ``pytorch/dqn.py`` imports
``tree``, from dm-tree), comes from a distribution those extras require, or that one of them
requires in turn (read from the installed distributions' metadata).

The extras are read from ``pyproject.toml`` in a checkout, from the installed metadata of
bali-env elsewhere (a wheel's tests). Nothing is imported to find the imports: ``ast`` reads them."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from test_imports import import_origin

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
#: the packages whose modules an example reaches are read too (the rest trust their declared requirements)
FOLLOW = ("bali_env", "open_spiel")
INSTALL_LINE = re.compile(r'pip install -e "\.\[([a-z0-9_,-]+)\]"')


def bali_requirements() -> dict[str, list[Requirement]]:
    """bali-env's requirements by extra ("" for the core), from ``pyproject.toml`` where the
    tests run in a checkout (the truth, even before a reinstall), else from the installed metadata."""
    pyproject = ROOT / "pyproject.toml"
    if pyproject.is_file() and sys.version_info >= (3, 11):
        import tomllib

        project = tomllib.loads(pyproject.read_text())["project"]
        out = {"": [Requirement(r) for r in project["dependencies"]]}
        out.update({extra: [Requirement(r) for r in reqs] for extra, reqs in project["optional-dependencies"].items()})
        return out
    extras = importlib.metadata.metadata("bali-env").get_all("Provides-Extra") or []
    out: dict[str, list[Requirement]] = {"": [], **{extra: [] for extra in extras}}
    for text in importlib.metadata.requires("bali-env") or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            out[""].append(req)
        else:
            for extra in extras:
                if req.marker.evaluate({"extra": extra}):
                    out[extra].append(req)
    return out


def declared(extras: set[str], requirements: dict[str, list[Requirement]]) -> set[str]:
    """The distributions (canonical names) that installing bali-env with ``extras`` asks for
    directly, an extra's ``bali-env[other]`` expanded."""
    names, todo, seen = set(), {"", *extras}, set()
    while todo:
        extra = todo.pop()
        seen.add(extra)
        for req in requirements.get(extra, []):
            if canonicalize_name(req.name) == "bali-env":
                todo |= set(req.extras) - seen
            else:
                names.add(canonicalize_name(req.name))
    return names


def closure(names: set[str]) -> set[str]:
    """``names`` and everything their installed distributions require, transitively (a
    distribution that is not installed adds only itself)."""
    found, todo = set(), set(names)
    while todo:
        name = todo.pop()
        found.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if (req.marker is None or req.marker.evaluate({"extra": ""})) and canonicalize_name(req.name) not in found:
                todo.add(canonicalize_name(req.name))
    return found


def _module_file(name: str) -> Path | None:
    """The source file of a module of a FOLLOW package, found without importing anything."""
    top, *rest = name.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(next(iter(spec.submodule_search_locations))).joinpath(*rest)
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _imports(path: Path, module: str, top_only: bool) -> set[str]:
    """The absolute dotted names a file imports (``from a import b``: ``a.b`` and ``a``), at the
    top of the module only or anywhere in it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = tree.body if top_only else list(ast.walk(tree))
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            origin = import_origin(module, path, node)
            names.add(origin)
            names |= {f"{origin}.{alias.name}" for alias in node.names}
    return {n for n in names if n and n != "__future__"}


def needed_modules(example: Path) -> set[str]:
    """The top-level third-party modules an example needs: its own imports anywhere, and those
    at the top of every module of a FOLLOW package it reaches (and of their parent packages)."""
    names = _imports(example, example.stem, top_only=False)
    todo, read = [n for n in names if n.split(".")[0] in FOLLOW], set()
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            module = ".".join(parts[:k])
            path = _module_file(module)
            if module in read or path is None:
                continue
            read.add(module)
            more = _imports(path, module, top_only=True)
            names |= more
            todo += [n for n in more if n.split(".")[0] in FOLLOW]
    tops = {n.split(".")[0] for n in names}
    return {t for t in tops if t not in sys.stdlib_module_names and t != "bali_env"}


def install_extras(example: Path) -> set[str]:
    """The extras an example's docstring says to install."""
    found = INSTALL_LINE.findall(ast.get_docstring(ast.parse(example.read_text())) or "")
    return {extra for group in found for extra in group.split(",")}


def missing(example: Path, requirements: dict[str, list[Requirement]]) -> dict[str, list[str]]:
    """module -> its distributions, for each module the example needs that no distribution
    installed by its extras provides (a module that is not installed at all skips the test)."""
    allowed = closure(declared(install_extras(example), requirements))
    providers = importlib.metadata.packages_distributions()
    out = {}
    for module in sorted(needed_modules(example)):
        dists = providers.get(module)
        if not dists:
            pytest.skip(f"{module} (imported by {example.name}) is not installed: install the extras it names")
        if not {canonicalize_name(d) for d in dists} & allowed:
            out[module] = sorted(dists)
    return out


def test_there_are_examples():
    """The examples are where this checkout keeps them (a wheel's tests, run without them, skip)."""
    if not (ROOT / "examples").is_dir():
        pytest.skip("no examples/ beside the tests (the installed wheel's tests)")
    assert EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_an_example_names_extras_that_exist(example):
    """Every example says which extras it needs, and each of them is one of bali-env's."""
    extras = install_extras(example)
    assert extras, f"{example.name}: no 'pip install -e \".[...]\"' line in its docstring"
    assert extras <= set(bali_requirements()) - {""}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_an_examples_extras_install_everything_it_imports(example):
    """Every third-party module the example imports (and the bali_env and OpenSpiel modules it
    reaches import at their top) comes with the extras its install line names."""
    assert missing(example, bali_requirements()) == {}


def test_the_check_sees_a_missing_dm_tree():
    """The check itself: without dm-tree in the openspiel extra, the OpenSpiel example's DQN
    (``open_spiel.python.pytorch.dqn``) lacks ``tree``; with the extras as declared, nothing."""
    example = ROOT / "examples" / "openspiel_bali.py"
    if not example.is_file():
        pytest.skip("no examples/ beside the tests (the installed wheel's tests)")
    pytest.importorskip("open_spiel", reason="the openspiel extra")
    requirements = bali_requirements()
    assert "dm-tree" in {canonicalize_name(r.name) for r in requirements["openspiel"]}
    assert "tree" in needed_modules(example) and "torch" in needed_modules(example)
    cut = dict(requirements, openspiel=[r for r in requirements["openspiel"] if canonicalize_name(r.name) != "dm-tree"])
    assert missing(example, cut) == {"tree": ["dm-tree"]}
