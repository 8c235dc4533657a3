"""Improving an exported policy after training. One job per module:

| module | job |
|---|---|
| ``fit_value.py`` | ``bali fit-value POLICY``: a value head fitted to the policy's own games |
| ``distil.py`` | ``bali distil POLICY``: the actor fitted to what ``ppo+search`` plays (expert iteration) |
"""
