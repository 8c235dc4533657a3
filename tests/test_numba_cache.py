"""Numba's on-disk cache notices a change in another file (``bali_env/engine/numba_cache.py``).

A copy of the package is imported in fresh processes: a kernel (``step.is_legal``) is compiled
and cached; then its callee in another file (``take_offering.legal_take_offering``) is changed,
and a new process must use the new behaviour. The same steps with the engine's cache locator
switched off show the stale result that Numba's own per-file stamp gives, so the test can fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bali_env

PACKAGE = Path(bali_env.__file__).resolve().parent
PROBE = (
    "import numpy as np; from bali_env import engine as E; "
    "s = np.zeros(E.STATE_SIZE, np.int16); e = np.zeros(0, np.int64); "
    "E.init_game(s, 2, False, False, 1, e, e, e); print(int(E.is_legal(s, E.A_PASS)))"
)
PASS_LINE = "    mask[A_PASS] = 1\n"


def _copy(tmp: Path, install: bool) -> Path:
    root = tmp / ("with_locator" if install else "numba_default")
    shutil.copytree(PACKAGE, root / "bali_env", ignore=shutil.ignore_patterns("__pycache__"))
    if not install:
        init = root / "bali_env" / "engine" / "__init__.py"
        init.write_text(init.read_text().replace("numba_cache.install()", "pass"))
    return root


def _probe(root: Path) -> str:
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": ""}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _change_callee(root: Path) -> None:
    """Phase 1 no longer offers "pass" (a change in take_offering.py only)."""
    path = root / "bali_env" / "engine" / "take_offering.py"
    text = path.read_text()
    assert PASS_LINE in text
    path.write_text(text.replace(PASS_LINE, "    pass\n"))


@pytest.mark.slow
def test_a_changed_callee_in_another_file_is_recompiled(tmp_path):
    """With the engine's locator the new callee is used; without it the cached caller is stale."""
    fresh = _copy(tmp_path, install=True)
    assert _probe(fresh) == "1"  # compiles and caches is_legal
    assert list((fresh / "bali_env" / "engine" / "__pycache__").glob("step.is_legal*.nbi"))
    _change_callee(fresh)
    assert _probe(fresh) == "0"  # the change is seen

    stale = _copy(tmp_path, install=False)
    assert _probe(stale) == "1"
    _change_callee(stale)
    assert _probe(stale) == "1"  # Numba's own stamp: step.py did not change, the old code runs


def test_a_covered_file_is_stamped_with_its_dependencies(tmp_path):
    """``cover(file, dep)``: the cache stamp of ``file``'s kernels changes when ``dep`` changes."""
    from bali_env.engine import numba_cache

    kernels, dep = tmp_path / "kernels.py", tmp_path / "tables.py"
    kernels.write_text("x = 1\n")
    dep.write_text("TABLE = [1, 2]\n")
    numba_cache.cover(str(kernels), str(dep))
    assert numba_cache._is_covered(str(kernels))
    before = numba_cache._dependencies_hash(str(kernels))
    dep.write_text("TABLE = [1, 3]\n")
    assert numba_cache._dependencies_hash(str(kernels)) != before
    assert numba_cache._dependencies_hash(str(dep)) == ""  # not covered itself: no extra stamp


@pytest.mark.slow
def test_a_corrupted_cache_entry_is_recompiled_with_a_warning(tmp_path):
    """Every cached kernel file cut short: the next run warns, compiles again and works (it used
    to crash in every later run with no hint)."""
    code = ("import numpy as np, bali_env; from bali_env.envs.batched import rollout; "
            "r = rollout(3, num_players=2, seed=1); print(int(r['scores'].sum()))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    root = Path(__file__).resolve().parents[1]
    first = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                           timeout=900)
    assert first.returncode == 0, first.stderr[-2000:]
    files = list(tmp_path.rglob("*.nbc"))
    assert files
    for f in files:
        f.write_bytes(f.read_bytes()[:20])
    again = subprocess.run([sys.executable, "-W", "always::RuntimeWarning", "-c", code], cwd=root, env=env,
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout == first.stdout
    assert "ignoring an unreadable Numba cache entry" in again.stderr


def test_the_fingerprint_covers_the_kernel_sources_and_nothing_else(tmp_path):
    """The engine's cache fingerprint hashes the files kernels are compiled from: a kernel file and
    an engine file a kernel imports (its constants) change it; the validators, the contract, the
    compile notice and the cache module itself do not (editing them keeps every compiled kernel)."""
    from bali_env.engine import numba_cache

    names = {p.name for p in numba_cache.kernel_sources()}
    assert {"step.py", "batch.py", "seeds.py", "ids.py", "obs_spec.py"} <= names
    assert not names & {"validate.py", "contract.py", "compile_notice.py", "numba_cache.py", "__init__.py"}
    copy = tmp_path / "engine"
    shutil.copytree(PACKAGE / "engine", copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = numba_cache.engine_sources_hash.__wrapped__(copy)
    for name in ("validate.py", "contract.py", "compile_notice.py"):
        (copy / name).write_text((copy / name).read_text() + "\n# a comment\n")
    assert numba_cache.engine_sources_hash.__wrapped__(copy) == before
    for name in ("ids.py", "take_offering.py"):
        (copy / name).write_text((copy / name).read_text() + "\n# a comment\n")
        assert numba_cache.engine_sources_hash.__wrapped__(copy) != before


def test_a_users_own_numba_function_is_cached_as_numba_caches_it(tmp_path):
    """Importing bali_env changes nothing for a user's ``@njit(cache=True)`` function: Numba's own
    locator caches it, and its unreadable cache entry fails the way Numba makes it fail, with no
    warning of ours (the package's tolerance is for its own kernels only)."""
    user = tmp_path / "user_kernels.py"
    user.write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    code = ("import bali_env, user_kernels; from numba.core import caching; "
            "c = user_kernels.twice._cache._impl.locator; "
            "print(type(c).__module__, user_kernels.twice(21))")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{Path(__file__).resolve().parents[1]}",
           "NUMBA_CACHE_DIR": ""}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["numba.core.caching", "42"]
    (index,) = (tmp_path / "__pycache__").glob("user_kernels.twice*.nbi")
    (data,) = (tmp_path / "__pycache__").glob("user_kernels.twice*.nbc")
    data.write_bytes(data.read_bytes()[:20])
    plain = subprocess.run([sys.executable, "-c", code.replace("import bali_env, ", "import ")], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=600)
    ours = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert plain.returncode != 0  # Numba itself fails on the cut entry
    assert "unreadable Numba cache entry" not in ours.stderr
    assert (ours.returncode, ours.stdout) == (plain.returncode, plain.stdout)
    assert index.exists()
