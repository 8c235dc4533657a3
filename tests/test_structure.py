"""The code's shape: every function of the package, the benchmarks, the agents and the examples
is small (radon's cyclomatic complexity under 15), no public function of the package takes more
than 8 parameters, and no module imports another room's private names.

Everything is read from the source (radon and ``ast``); nothing is imported to check it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parent.parent
#: the folders whose functions are measured
MEASURED = ("bali_env", "benchmarks", "agents", "examples")
#: a function's radon cyclomatic complexity must stay under this
MAX_COMPLEXITY = 15
#: a public function takes at most this many parameters (``self`` and ``cls`` not counted)
MAX_PARAMETERS = 8
#: the rooms of ``bali_env`` (the package's own ``__init__`` is the room ``bali_env``); a module
#: outside ``bali_env`` belongs to the room of its top-level folder (``benchmarks``...)
ROOMS = ("bali_env.files", "bali_env.release", "bali_env.engine", "bali_env.pictures", "bali_env.envs",
         "bali_env.bots", "bali_env.arena", "bali_env.versus", "bali_env.flags", "bali_env.trainers",
         "bali_env.speed", "bali_env.apps", "bali_env")


def source_files(folders: tuple[str, ...] = MEASURED, root: Path = ROOT) -> list[Path]:
    """The Python files under the folders, sorted."""
    return sorted(path for folder in folders for path in (root / folder).rglob("*.py"))


def _shown(path: Path, root: Path = ROOT) -> str:
    """A file's path as a report shows it: relative to the repository."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


# --- complexity --------------------------------------------------------------------------------


def complex_functions(limit: int = MAX_COMPLEXITY, paths: list[Path] | None = None) -> list[str]:
    """``file:line name (complexity)`` for every function, method or closure whose radon
    cyclomatic complexity is ``limit`` or more (classes are not counted: their methods are)."""
    found = []
    for path in source_files() if paths is None else paths:
        for block in cc_visit(path.read_text()):
            if not hasattr(block, "closures"):  # a class: radon lists its methods as blocks of their own
                continue
            functions = [block]
            for function in functions:  # the functions defined inside, at any depth
                functions += function.closures
            found += [f"{_shown(path)}:{f.lineno} {f.fullname} ({f.complexity})"
                      for f in functions if f.complexity >= limit]
    return found


def test_every_function_is_simple_enough():
    """radon's cyclomatic complexity is under 15 for every function of the package, the
    benchmarks, the agents and the examples; a failure lists the offenders."""
    found = complex_functions()
    assert not found, f"{len(found)} function(s) of complexity {MAX_COMPLEXITY} or more:\n" + "\n".join(found)


def test_the_complexity_check_sees_a_complex_function(tmp_path):
    """The check itself: a function of 15 branches is reported (at top level, as a method, as
    a closure), a plain one is not, and a class is not reported for its methods' sum."""
    branches = "".join(f"if x == {k}:\n    return {k}\n" for k in range(14)) + "return -1\n"
    tangle = "def tangle(self, x):\n" + textwrap.indent(branches, "    ")
    inner = "def inner(x):\n" + textwrap.indent(branches, "    ")
    (tmp_path / "tangle.py").write_text(
        tangle.replace("self, ", "") + "\n"
        + "def plain(x):\n    return x\n\n"
        + "class Knot:\n" + textwrap.indent(tangle, "    ") + "\n"
        + "def outer(x):\n" + textwrap.indent(inner, "    ") + "    return inner\n")
    found = complex_functions(paths=[tmp_path / "tangle.py"])
    assert sorted(line.split(" ", 1)[1] for line in found) == ["Knot.tangle (15)", "inner (15)", "tangle (15)"]


# --- parameters --------------------------------------------------------------------------------


def _parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> int:
    """Every parameter of a function (positional, keyword-only, ``*args``, ``**kwargs``), a
    method's ``self`` or ``cls`` not counted."""
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    if method and names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names)


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """Every function of a module with its qualified name and whether it is a method."""
    found = []

    def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + child.name, child, in_class))
                visit(child, f"{prefix}{child.name}.", False)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", True)
            else:
                visit(child, prefix, in_class)

    visit(tree, "", False)
    return found


#: public constructors whose keywords are an ecosystem's calling convention, left as they are:
#: ``gymnasium.make("bali_env/Bali-v0", num_players=..., opponents=...)`` and ``make_vec`` pass
#: their keywords to the learner's envs, and ``make_agent("greedy:rival_weight=0.5")`` its
#: settings to the heuristic's constructor
KEYWORD_CONSTRUCTORS = {"BaliSingleAgentEnv.__init__", "BaliGymVectorEnv.__init__", "BaliSB3VecEnv.__init__",
                        "GreedyAgent.__init__"}


def public_functions_over(limit: int = MAX_PARAMETERS, paths: list[Path] | None = None) -> list[str]:
    """``file:line name (count)`` for every public function or method of ``bali_env`` (its name,
    and the name of every class or function around it, not starting with ``_``; a public class's
    ``__init__`` is public: it is how the class is called) taking more than ``limit`` parameters."""
    found = []
    for path in source_files(("bali_env",)) if paths is None else paths:
        for name, node, method in _functions(ast.parse(path.read_text(), filename=str(path))):
            count = _parameter_count(node, method)
            parts = name.split(".")
            parts = parts[:-1] if method and parts[-1] == "__init__" else parts
            if count > limit and not any(part.startswith("_") for part in parts) and name not in KEYWORD_CONSTRUCTORS:
                found.append(f"{_shown(path)}:{node.lineno} {name} ({count})")
    return found


def test_no_public_function_takes_more_than_8_parameters():
    """A public function of the package takes 8 parameters at most (more go into a record);
    a failure lists the offenders."""
    found = public_functions_over()
    assert not found, f"{len(found)} public function(s) over {MAX_PARAMETERS} parameters:\n" + "\n".join(found)


def test_the_parameter_check_counts_every_parameter(tmp_path):
    """The check itself: keyword-only, ``*args`` and ``**kwargs`` count, ``self`` does not, a
    public class's ``__init__`` is checked, and private functions and methods are left out."""
    (tmp_path / "many.py").write_text(
        "def wide(a, b, c, d, e, f, g, *args, h, **kwargs): ...\n"
        "def narrow(a, b, c, d, e, f, g, h): ...\n"
        "def _private(a, b, c, d, e, f, g, h, i): ...\n"
        "class Thing:\n"
        "    def method(self, a, b, c, d, e, f, g, h): ...\n"
        "    def wider(self, a, b, c, d, e, f, g, h, i): ...\n"
        "    def __init__(self, a, b, c, d, e, f, g, h, i): ...\n"
        "class _Hidden:\n"
        "    def wider(self, a, b, c, d, e, f, g, h, i): ...\n")
    found = public_functions_over(paths=[tmp_path / "many.py"])
    assert [line.split(" ", 1)[1] for line in found] == ["wide (10)", "Thing.wider (9)", "Thing.__init__ (9)"]


# --- private names across rooms ----------------------------------------------------------------


def module_name(path: Path, root: Path = ROOT) -> str:
    """A file's dotted module name (a package by its ``__init__``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room_of(module: str) -> str:
    """The room a module belongs to: the longest room of ``ROOMS`` it is in, else its top-level
    package (``benchmarks``, ``agents``...)."""
    rooms = [r for r in ROOMS if module == r or module.startswith(r + ".")]
    return max(rooms, key=len) if rooms else module.split(".")[0]


def _is_private(name: str) -> bool:
    """A name with a leading underscore that is not a dunder."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _origin(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` of ``module`` imports from (relative dots resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _module_aliases(tree: ast.Module, module: str, is_package: bool, modules: set[str]) -> dict[str, str]:
    """Local name -> the project module it stands for, from the module's imports anywhere."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom):
            origin = _origin(module, is_package, node)
            for alias in node.names:
                if f"{origin}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{origin}.{alias.name}"
    return aliases


def private_imports(paths: list[Path] | None = None, root: Path = ROOT) -> list[str]:
    """``file:line module -> other.module._name`` for every private name (a leading underscore,
    not a dunder) a module takes from another room: imported with ``from other import _name``,
    or read as an attribute ``other._name`` of a module imported from another room."""
    paths = source_files(root=root) if paths is None else paths
    modules = {module_name(p, root) for p in paths}
    found = []
    for path in paths:
        module, is_package = module_name(path, root), path.name == "__init__.py"
        tree = ast.parse(path.read_text(), filename=str(path))
        aliases = _module_aliases(tree, module, is_package, modules)
        for node in ast.walk(tree):
            taken = []
            if isinstance(node, ast.ImportFrom):
                origin = _origin(module, is_package, node)
                taken = [(origin, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                taken = [tuple(alias.name.rsplit(".", 1)) for alias in node.names if "." in alias.name]
            elif isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
                head, _, rest = base.partition(".")
                if head in aliases:
                    taken = [(".".join(filter(None, (aliases[head], rest))), node.attr)]
            found += [f"{_shown(path, root)}:{node.lineno} {module} -> {origin}.{name}" for origin, name in taken
                      if _is_private(name) and origin.split(".")[0] in {m.split(".")[0] for m in modules}
                      and room_of(origin) != room_of(module)]
    return sorted(set(found))


def test_no_module_imports_a_private_name_from_another_room():
    """A room's private names stay at home: another room uses only public ones; a failure lists
    the module, the line and the name."""
    found = private_imports()
    assert not found, f"{len(found)} private name(s) taken from another room:\n" + "\n".join(found)


def test_the_private_import_check_sees_a_planted_example(tmp_path):
    """The check itself: a private name taken from another room (by ``from``, by a relative
    ``from``, or as a module's attribute) is found; the same inside one room, a dunder, and a
    public name are not."""
    files = {
        "bali_env/__init__.py": "",
        "bali_env/engine/__init__.py": "",
        "bali_env/engine/rules.py": "_secret = 1\npublic = 2\n",
        "bali_env/engine/step.py": "from .rules import _secret\n",
        "bali_env/speed/__init__.py": "",
        "bali_env/speed/run.py": ("from bali_env.engine.rules import _secret, public, __doc__\n"
                                  "from ..engine import rules\n"
                                  "import bali_env.engine.rules as r\n"
                                  "x = rules._secret + r._secret + rules.public\n"),
        "benchmarks/__init__.py": "",
        "benchmarks/fit.py": "from bali_env.speed.run import _helper\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    paths = sorted(tmp_path.rglob("*.py"))
    assert private_imports(paths, tmp_path) == [
        "bali_env/speed/run.py:1 bali_env.speed.run -> bali_env.engine.rules._secret",
        "bali_env/speed/run.py:4 bali_env.speed.run -> bali_env.engine.rules._secret",
        "benchmarks/fit.py:1 benchmarks.fit -> bali_env.speed.run._helper",
    ]
