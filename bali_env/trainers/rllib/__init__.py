"""``bali train --framework rllib``: multi-agent PPO on Ray RLlib's current API stack, with action
masking and self-play against frozen past policies. One job per module:

| module | job |
|---|---|
| ``launch.py`` | the command: RLlib's flags and its run (thin) |
| ``multiagent_env.py`` | what RLlib trains: the turn-based multi-agent env, the masked module, the self-play mapping |
| ``algorithm_loop.py`` | the run: Ray, the training loop, its checkpoint and summary |
"""
