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
