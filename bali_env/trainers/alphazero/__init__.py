"""AlphaZero for Bali (``bali az``): self-play with policy-guided search over many generations.

The network is an exported policy's two MLPs (the actor and the value head, ``bali_env.bots.ppo``'s
``.npz``, which plays without torch); the search is ``ppo+search``'s information-set PUCT
(``bali_env.bots.puct``; its root PUCT too, or Gumbel MuZero's sequential halving with
``--gumbel``); the matches are tournaments (``bali_env.arena``). One job per module:

| module | what |
|---|---|
| ``command.py`` | ``bali az``: its flags, their checks, the output folder, the closing lines |
| ``generations.py`` | the run's ``Config``, the generations (self-play, buffer, training, gate, curve), resuming |
| ``jobs.py`` | the typed records: the self-play job (the network's arrays and the settings) and the rows it leaves |
| ``selfplay.py`` | the games of a chunk with search, and the targets each decision leaves |
| ``dispatch.py`` | where the chunks run: this process, local worker processes or Ray tasks |
| ``buffer.py`` | the replay buffer: each generation's rows in a file, the last ``window`` read |
| ``learn.py`` | the network in PyTorch: its losses, its optimiser, its export |
| ``gate.py`` | the gate (the new network against the best) and the yardsticks of the curve |

How a run goes, what a generation costs and what it gave: docs/research/alphazero.md.
"""
