"""Training Bali agents: PPO with self-play, with stable-baselines3 / sb3-contrib (``bali train``)
or with Ray RLlib (``bali train --framework rllib``). One job per module:

| module | what |
|---|---|
| ``train.py`` | ``bali train``: its flags (``parents``, ``add_arguments``) and its run (``run``, thin) |
| ``rllib.py`` | ``bali train --framework rllib``: RLlib's flags and its run (thin) |
| ``entry.py`` | the run both share: parse, check, run; one line and exit 2 on bad input or a missing |
| | package, exit 130 when interrupted (``TrainingError``, ``run_command``) |
| ``options.py`` | the flags both share and their checks, ``--resume``'s config, claiming the output folder |
| ``loop.py`` | ``bali train``'s run: the model, the training loop (``Session``), its counters (``RunProgress``) |
| ``pool.py`` | a run's opponent pool (``bali_env.versus.opponents``): self-play snapshots; returns per opponent |
| ``evaluate.py`` | evaluating policies with the tournament code; ``eval.csv`` and ``learning_curve.png`` |
| ``checkpoints.py`` | saving models, the ``resume.pt`` checkpoint, loading ``--init`` policies |
| ``progress.py`` | the clean stop on SIGINT/SIGTERM, the progress bars and the lines between them, for both loops |
| ``report.py`` | a run in words: its plan, the bar's postfix, its last lines (what it wrote, how to play it) |
| ``lean.py`` | ``--trainer lean``: PPO with MaskablePPO's losses and less overhead |
| ``privileged.py`` | ``--privileged-critic``: the hidden state as features for the critic only |
| ``rllib_env.py`` | what RLlib trains: the multi-agent env, the masked module, the self-play mapping |
| ``rllib_loop.py`` | RLlib's run: Ray, the training loop, its checkpoint and summary |
| ``exploit.py`` | ``bali exploit AGENT``: a best response trained against AGENT frozen, its win rate over time |
| ``value.py`` | ``bali fit-value POLICY``: a value head for an exported policy, fitted to its own games |
| ``distil.py`` | ``bali distil POLICY``: the actor fitted to what ``ppo+search`` plays (expert iteration) |
| ``curve.py`` | ``python -m bali_env.training.curve OUT``: a run's checkpoints against any opponents, afterwards |

The command modules import the others, never the reverse (``train.py`` hands ``--framework
rllib`` to ``rllib.py``); the public names of ``bali_env.training.train`` and
``bali_env.training.rllib`` are re-exported there. How the shipped policies were trained: the
repository's ``training/README.md``; training speed: its ``benchmarks/throughput.py``.
"""
