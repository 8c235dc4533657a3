"""Speed measurements: ``bali bench``, every one beside its anchors in the same run.

| module | job |
|---|---|
| ``run.py`` | ``bali bench``: the AEC env, the batched env and the rollout kernel against PettingZoo and OpenSpiel |
| ``loops.py`` | the timed loops on the environments, on public names only (so any commit can be timed) |
| ``rendering.py`` | what the pictures cost: the SVG, an ``rgb_array`` frame, an HTML replay |
| ``bot_protocol.py`` | what the bot protocol costs, and a tournament that survives a bad bot |
| ``search.py`` | what a decision of the search agents costs (``python -m bali_env.speed.search``) |
| ``machine.py`` | the machine a measurement ran on (CPU, cores, versions), kept beside the figures |
| ``ways.py`` | every way into the game (AEC, Gymnasium, vector, SB3, PufferLib, batch, OpenSpiel), its speed |
| ``first_legal_bot.py`` | the bot those measurements run (``--hang-every 10``: the bot that hangs) |

The figures the docs quote are kept in ``docs/results/`` and written into the docs by the
repository's ``benchmarks/`` scripts.
"""

from __future__ import annotations
