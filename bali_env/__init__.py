"""bali-env: the card game Bali (Klaus-Jürgen Wrede, 2017) as a fast reinforcement-learning
environment. ``bali_env.env(...)`` is the PettingZoo AEC environment ``bali_v0``.

Everything the package installs imports under ``bali_env``, one room per job. The floors import
downwards only (``tests/test_imports.py`` checks it); rooms on one floor do not import each other:

| floor | room | its job |
|---|---|---|
| 0 | ``files.py``, ``release.py`` | output files written to a temporary file and moved into place; the version |
| 1 | ``engine/`` | the rules: Numba kernels, the observation and its decoder, seeds, validators, the contract |
| 2 | ``pictures/`` | every renderer: text, moves in words, SVG, pixels, frames, an HTML replay, a GIF |
| 3 | ``envs/`` | the environment: PettingZoo AEC (``bali_v0``), the batched engine; game records |
| 4 | ``bots/`` | the bots: ``Agent``, ``make_agent``, random, greedy, mcts, ``ppo``, ``ppo+search``, any language |
| 5 | ``arena/`` | tournaments, leagues, ratings, on worker processes or Ray |
| 5 | ``versus/`` | one learner's seat against bots: the Gymnasium envs (``bali_env/Bali-v0``), the SB3 VecEnv |
| 6 | ``flags.py`` | the command-line flags every command shares |
| 7 | ``trainers/``, ``speed/`` | ``bali train`` and the commands around it; ``bali bench``, speed against the anchors |
| 8 | ``apps/`` | what a person runs: the ``bali`` command, the terminal game, the web app, replays |
| 9 | this module | the package's face: what ``import bali_env`` gives (no room imports it) |

``import bali_env`` registers the environments' names with Gymnasium and PettingZoo (strings only:
nothing more is imported until an environment is made); it sets no environment variable and
starts no thread (``bali_env.engine.thread_pool`` starts Numba's threads when a batched env or a
search first needs them) and changes Numba's cache for this package's kernels only
(``bali_env.engine.numba_cache``).

This module exports ``env``, ``raw_env``, ``bali_v0``, the names of cards, categories and actions,
``decode_observation``, ``render_svg``, ``state_dict``, and ``BaliVectorEnv``
(the batched engine, imported on first use: ``from bali_env import BaliVectorEnv``).
"""

from __future__ import annotations

from typing import Any

from bali_env import engine  # noqa: E402
from bali_env.envs import bali_v0  # noqa: E402
from bali_env.envs.bali_v0 import env, raw_env  # noqa: E402
from bali_env.engine.contract import action_to_str, state_dict  # noqa: E402
from bali_env.engine.ids import ACTION_NAMES, CARD_NAMES, CATEGORY_NAMES, N_ACTIONS  # noqa: E402
from bali_env.engine.obs_spec import OBS_DIM, observation_slot_names  # noqa: E402
from bali_env.engine.decode import ObservationView, decode_observation  # noqa: E402
from bali_env.pictures.svg import render_svg  # noqa: E402
from bali_env.release import VERSION  # noqa: E402

__version__ = VERSION

__all__ = [
    "ACTION_NAMES",
    "BaliVectorEnv",
    "CARD_NAMES",
    "CATEGORY_NAMES",
    "N_ACTIONS",
    "GYMNASIUM_ID",
    "ObservationView",
    "OBS_DIM",
    "action_to_str",
    "bali_v0",
    "engine",
    "decode_observation",
    "env",
    "observation_slot_names",
    "raw_env",
    "render_svg",
    "state_dict",
]


from bali_env.versus.registration import GYMNASIUM_ID  # noqa: E402 - ``gymnasium.make(GYMNASIUM_ID)``: one learner's seat against bots

#: names this package exports from a module imported only when the name is first used: name -> module
_LAZY = {"BaliVectorEnv": "bali_env.envs.batched"}


def __getattr__(name: str) -> Any:
    """``bali_env.BaliVectorEnv`` (and ``from bali_env import BaliVectorEnv``): the batched engine,
    imported on first use so that ``import bali_env`` stays light."""
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups find it without coming here
        return value
    raise AttributeError(f"module 'bali_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the lazy exports among them."""
    return sorted({*globals(), *_LAZY})


def _register() -> None:
    """Register the environments with Gymnasium (``gymnasium.make("bali_env/Bali-v0")`` and
    ``gymnasium.make_vec``: importing ``bali_env`` is all it takes) and ``bali_v0`` with
    PettingZoo's registry when the installed PettingZoo has one (``versus.registration``)."""
    from bali_env.versus.registration import register_envs

    register_envs()


_register()
