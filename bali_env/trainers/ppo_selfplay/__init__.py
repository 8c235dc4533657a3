"""``bali train``: PPO with self-play over the batched Numba env, with sb3-contrib's MaskablePPO
(the default) or the lean trainer (``--trainer lean``). One job per module:

| module | job |
|---|---|
| ``train.py`` | the command: its flags (``parents``, ``add_arguments``) and its run (``run``, thin) |
| ``run_settings.py`` | the run's settings as one frozen record (``TrainSettings``), its defaults declared once |
| ``loop.py`` | the run: the model, the training loop (``Session``), its counters (``RunProgress``) |
| ``pool.py`` | the run's opponent pool: self-play snapshots, returns per opponent |
| ``checkpoints.py`` | the model files, the ``resume.pt`` checkpoint, the ``--init`` policies |
| ``lean.py`` | ``--trainer lean``: MaskablePPO's losses with less overhead |
| ``privileged.py`` | ``--privileged-critic``: the hidden state as features for the critic only |
"""
