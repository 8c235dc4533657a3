"""bali-env: the card game Bali (Klaus-Jürgen Wrede, 2017) as a fast reinforcement-learning
environment. ``bali_env.env(...)`` is the PettingZoo AEC environment ``bali_v0``; the rules
engine is ``bali_env.engine`` (Numba kernels, one file per part of the rules in docs/rules.md);
``bali_env.core`` keeps its former single namespace; ``bali_env.render_svg`` draws a view of the
table (``bali_env.viewer``: pictures, pixels, HTML replays, GIFs)."""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version

# Numba's OpenMP threads busy-wait between parallel regions by default; on a shared or small
# machine that spinning starves the other thread and a batched step can run 10-100x slower.
# Passive waiting is set before the OpenMP runtime starts (a value you set yourself wins).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import core, engine  # noqa: E402
from .bali_v0 import env, raw_env  # noqa: E402
from .contract import action_to_str, state_dict  # noqa: E402
from .engine.ids import ACTION_NAMES, CARD_NAMES, CATEGORY_NAMES, N_ACTIONS  # noqa: E402
from .engine.obs_spec import OBS_DIM, observation_slot_names  # noqa: E402
from .view import ObservationView, decode_observation  # noqa: E402
from .viewer.table import render_svg  # noqa: E402

try:
    __version__ = version("bali-env")
except PackageNotFoundError:
    __version__ = "0.0.0+unknown"

__all__ = [
    "ACTION_NAMES",
    "CARD_NAMES",
    "CATEGORY_NAMES",
    "N_ACTIONS",
    "ObservationView",
    "OBS_DIM",
    "action_to_str",
    "core",
    "engine",
    "decode_observation",
    "env",
    "observation_slot_names",
    "raw_env",
    "render_svg",
    "state_dict",
]


def _register() -> None:
    """Register ``bali_v0`` with PettingZoo's registry when the installed PettingZoo has one."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError:  # older PettingZoo: no registry
        return
    if "bali_v0" not in aec_registry:
        register("aec", "bali_v0", entry_point="bali_env.bali_v0:env")


_register()
