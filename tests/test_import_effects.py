"""What ``import bali_env`` does to the process: it registers names, and nothing more. It sets no
environment variable and starts no thread; Numba's pool starts when a batched env first needs it,
with ``OMP_WAIT_POLICY=PASSIVE`` set for that moment only (a value the user set wins and stays).
Each case runs in a fresh interpreter, where nothing has started Numba's threads yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, os, sys
import numba
seen = []
real = numba.get_num_threads
def watched():
    seen.append(os.environ.get("OMP_WAIT_POLICY"))
    return real()
numba.get_num_threads = watched
import bali_env
maps = lambda: "libgomp" in open("/proc/self/maps").read()
after_import = {"env": os.environ.get("OMP_WAIT_POLICY"), "openmp": maps(), "launches": list(seen)}
if sys.argv[1] == "batched":
    from bali_env import BaliVectorEnv
    BaliVectorEnv(4, num_players=2, seed=1).reset()
print(json.dumps({"after_import": after_import, "env": os.environ.get("OMP_WAIT_POLICY"),
                  "openmp": maps(), "at_launch": seen[:1]}))
"""


def _probe(what: str, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", PROBE, what], cwd=ROOT, env={**clean, **env}, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_sets_no_variable_and_starts_no_thread():
    """After ``import bali_env``: no ``OMP_WAIT_POLICY``, no OpenMP runtime loaded, Numba's pool
    not launched."""
    seen = _probe("import")
    assert seen["after_import"] == {"env": None, "openmp": False, "launches": []}
    assert seen["env"] is None and seen["openmp"] is False


def test_the_pool_starts_passive_and_the_variable_goes_away():
    """A batched env starts Numba's pool with ``OMP_WAIT_POLICY=PASSIVE`` in the environment at
    that moment, and the environment is as it was afterwards."""
    seen = _probe("batched")
    assert seen["at_launch"] == ["PASSIVE"]
    assert seen["openmp"] is True and seen["env"] is None


def test_a_users_own_wait_policy_is_used_and_kept():
    """``OMP_WAIT_POLICY=ACTIVE`` set by the user: the pool starts under it, and it stays."""
    seen = _probe("batched", OMP_WAIT_POLICY="ACTIVE")
    assert seen["at_launch"] == ["ACTIVE"] and seen["env"] == "ACTIVE"
