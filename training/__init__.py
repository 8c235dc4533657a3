"""Training bali-env agents with stable-baselines3 / sb3-contrib (MaskablePPO), self-play
included: the VecEnv over the batched Numba environment (``vec_env``), the opponent pool, and
the training entry point (``python -m training.train``, ``bali train``)."""
