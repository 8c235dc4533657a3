"""Training Bali agents, a room per method and per tool, each with its map:

| room / module | job |
|---|---|
| ``ppo_selfplay/`` | ``bali train``: PPO with self-play on the batched env (MaskablePPO, or ``--trainer lean``) |
| ``rllib/`` | ``bali train --framework rllib``: multi-agent PPO on Ray RLlib |
| ``alphazero/`` | ``bali az``: self-play with policy-guided search over generations |
| ``evaluation/`` | a policy against opponents with the tournament code, during a run and after (``curve``) |
| ``exploitability/`` | ``bali exploit AGENT``: a best response trained against AGENT frozen |
| ``league_training/`` | ``bali league-train``: a main and its exploiters over generations, PFSP, a payoff matrix |
| ``finetune/`` | on an exported policy: ``bali fit-value`` (a value head), ``bali distil`` (expert iteration) |
| ``entry.py`` | what every training command shares: parse, check, run; exit 2 on bad input, 130 interrupted |
| ``options.py`` | the flags ``bali train``'s two frameworks share and their checks, claiming the output folder |
| ``progress.py`` | the clean stop on SIGINT/SIGTERM, the progress bars and the lines between them |
| ``console.py`` | a run in words: its plan, the bar's postfix, its last lines (what it wrote, how to play it) |

The shared modules stand below the rooms that use them; a command module imports the others,
never the reverse (``ppo_selfplay/train.py`` hands ``--framework rllib`` to ``rllib/launch.py``).
How the shipped policies were trained: the repository's ``training/README.md``; training speed:
its ``benchmarks/throughput.py``.
"""
