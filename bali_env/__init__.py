"""bali-env: the card game Bali (Klaus-Jürgen Wrede, 2017) as a fast reinforcement-learning
environment. ``bali_env.env(...)`` is the PettingZoo AEC environment ``bali_v0``; the rules
engine is the Numba core in ``bali_env.core``."""

from __future__ import annotations

import os

# Numba's OpenMP threads busy-wait between parallel regions by default; on a shared or small
# machine that spinning starves the other thread and a batched step can run 10-100x slower.
# Passive waiting is set before the OpenMP runtime starts (a value you set yourself wins).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import core  # noqa: E402
from .bali_v0 import env, raw_env  # noqa: E402
from .contract import ACTION_NAMES, CARD_NAMES, CATEGORY_NAMES, action_to_str, state_dict  # noqa: E402
from .core import N_ACTIONS, OBS_DIM, observation_slot_names  # noqa: E402
from .view import ObservationView, decode_observation  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "ACTION_NAMES",
    "CARD_NAMES",
    "CATEGORY_NAMES",
    "N_ACTIONS",
    "ObservationView",
    "OBS_DIM",
    "action_to_str",
    "core",
    "decode_observation",
    "env",
    "observation_slot_names",
    "raw_env",
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
