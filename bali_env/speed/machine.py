"""The machine a measurement ran on: its CPU, core count and the versions that matter for the
numbers (kept beside every figure ``bali bench`` and ``python -m bali_env.speed.search`` write)."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any


def machine_info() -> dict[str, Any]:
    """CPU model, core count and the versions that matter for the numbers."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {"python": platform.python_version()}
    for mod in ("numpy", "numba", "pettingzoo", "gymnasium", "pyspiel", "rlcard"):
        try:
            m = __import__(mod)
            versions[mod] = getattr(m, "__version__", "installed")
        except Exception:  # noqa: BLE001 - an anchor may be missing or broken
            versions[mod] = None
    from bali_env.release import VERSION

    versions["bali_env"] = VERSION
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(), "versions": versions}
