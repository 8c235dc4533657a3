"""The game as one learner's environment: the learner plays one seat, opponent bots play the
others. What Gymnasium, stable-baselines3 and ``bali train`` train on.

| module | job |
|---|---|
| ``opponents.py`` | ``OpponentPool``: opponents by spec (``"random:1,greedy:3"``) with weights, drawn per game |
| ``single.py`` | ``BaliSingleAgentEnv``: a ``gymnasium.Env``, ``gymnasium.make("bali_env/Bali-v0")`` |
| ``vector.py`` | ``BaliGymVectorEnv``: a ``gymnasium.vector.VectorEnv`` on the batched engine, opponents |
| | inside the batch: ``gymnasium.make_vec("bali_env/Bali-v0", num_envs=N)`` |
| ``sb3_vecenv.py`` | ``BaliSB3VecEnv``: the vector env as a stable-baselines3 ``VecEnv`` (``bali train`` uses it) |
| ``puffer_env.py`` | ``BaliPufferEnv``: the vector env as a native ``pufferlib.PufferEnv`` (mask in the observation), |
| | a masked policy and a CPU stand-in for PufferLib's compiled advantage kernel, for ``PuffeRL`` |
| ``registration.py`` | the names in Gymnasium's and PettingZoo's registries (``register_envs``, the package's |
| | ``gymnasium.envs`` entry point): the single and vector envs are this room's |

The environments themselves (the AEC env, the batched engine) are ``bali_env.envs``'; the
opponents are ``bali_env.bots``' bots (and bots in any language, ``bali_env.bots.protocol``),
so this room stands above both.
"""

from __future__ import annotations
