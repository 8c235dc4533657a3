"""A name says one thing in the whole repository: no two modules or packages of the library, the
benchmarks, the example bots and the examples share a name (``run.py`` twice would say two
things), and no room of ``bali_env`` is named like a folder beside it (``training/`` holds how
the shipped policies were trained, ``bali_env/trainers/`` the trainers)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the folders whose Python names must be unique together (the tests name themselves ``test_*``)
FOLDERS = ("bali_env", "benchmarks", "agents", "examples", "training")
#: file names every package has, which say nothing of their own
GENERIC = {"__init__", "__main__"}


def names(root: Path = ROOT) -> dict[str, list[str]]:
    """Every module stem and package folder name under ``FOLDERS`` -> where it occurs."""
    found: dict[str, list[str]] = defaultdict(list)
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []:
            rel = path.relative_to(root)
            if "__pycache__" in rel.parts or path.stem in GENERIC:
                continue
            found[path.stem].append(str(rel))
        for init in sorted((root / folder).rglob("__init__.py")) if (root / folder).is_dir() else []:
            package = init.parent.relative_to(root)
            if len(package.parts) > 1:  # the folder's own name is checked against the rooms below
                found[package.name].append(str(package) + "/")
    return found


def repeated(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """The names that occur more than once, with every place."""
    return {name: places for name, places in sorted(found.items()) if len(places) > 1}


def test_every_module_and_package_name_occurs_once():
    """No two modules or packages share a name (a failure lists each name and its places)."""
    assert repeated(names()) == {}


def test_no_room_is_named_like_a_folder_beside_the_library():
    """The top-level folders (``agents/``, ``training/``, ``benchmarks/``, ``examples/``, ``tests/``,
    ``docs/``) name no room or module of ``bali_env``."""
    library = {p.stem for p in (ROOT / "bali_env").rglob("*.py")}
    library |= {p.parent.name for p in (ROOT / "bali_env").rglob("__init__.py")}
    beside = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    assert library & beside - {"bali_env"} == set()


def test_the_check_sees_a_name_twice(tmp_path):
    """The check itself: ``run.py`` in two rooms is found; a package's ``__init__`` is not a name."""
    for rel in ("bali_env/arena/run.py", "bali_env/speed/run.py", "bali_env/arena/__init__.py",
                "bali_env/speed/__init__.py", "benchmarks/figures.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert repeated(names(tmp_path)) == {"run": ["bali_env/arena/run.py", "bali_env/speed/run.py"]}


def unmapped(root: Path = ROOT) -> dict[str, list[str]]:
    """Package -> the modules and subpackages its docstring's map does not name."""
    import ast

    found = {}
    for init in sorted((root / "bali_env").rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        folder = init.parent
        names = [p.name for p in sorted(folder.glob("*.py")) if p.name != "__init__.py"]
        names += [d.name + "/" for d in sorted(folder.iterdir()) if (d / "__init__.py").is_file()]
        missing = [n for n in names if f"``{n}``" not in doc]
        if missing:
            found[str(folder.relative_to(root))] = missing
    return found


def test_every_room_maps_its_modules():
    """Every package's docstring names each of its modules and subpackages (``module.py``,
    ``room/``): the map a maintainer reads first."""
    assert unmapped() == {}


def test_the_map_check_sees_a_module_left_out(tmp_path):
    """The check itself: a module the map does not name is found."""
    room = tmp_path / "bali_env" / "room"
    room.mkdir(parents=True)
    (room / "__init__.py").write_text('"""A room.\n\n| ``kept.py`` | mapped |\n"""\n')
    (room / "kept.py").write_text("")
    (room / "left_out.py").write_text("")
    (tmp_path / "bali_env" / "__init__.py").write_text('"""| ``room/`` | a room |"""\n')
    assert unmapped(tmp_path) == {"bali_env/room": ["left_out.py"]}
