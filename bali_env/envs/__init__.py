"""The environment's ways in, each a thin shell over the engine (``bali_env.engine``):

| module | job |
|---|---|
| ``bali_v0.py`` | the PettingZoo AEC environment (``bali_env.env()``, ``raw_env``) and its documentation |
| ``batched.py`` | ``BaliVectorEnv``: N games in one array stepped by one Numba call; ``rollout`` |
| ``records.py`` | game records: save a game as JSON, load it back with validation, replay it |
| ``openspiel.py`` | the game for OpenSpiel (``pyspiel.load_game("python_bali")``), registered on import |
| ``api_check.py`` | a generic checker for action-masked PettingZoo AEC environments (``check_env``) |

Rendering is the pictures' (``bali_env.pictures``); the rules, the observation and its decoder
are the engine's; one learner's seat against bots (the Gymnasium envs, SB3) is ``bali_env.versus``.
"""

from __future__ import annotations
