"""Evaluating policies with the tournament code (``bali_env.arena``). One job per module:

| module | job |
|---|---|
| ``evaluate.py`` | a policy against each opponent, during a run and at its end; ``eval.csv``, the curve |
| ``curve.py`` | ``python -m bali_env.trainers.evaluation.curve OUT``: a run's checkpoints, afterwards |
"""
