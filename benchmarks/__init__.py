"""Benchmarks of bali-env against anchor environments, and the figures the docs quote.

- ``run``: ``bali bench``, every speed measurement in one run, beside the anchors;
- ``pictures``, ``bots``, ``search``: its parts for the renderers, the bot protocol and the search agents;
- ``compare``: this checkout against another commit, in one run;
- ``figures``: the README's and the docs' tables, written from the kept runs in ``docs/results/``;
- ``rerun``: play those kept tournaments again from their own configuration.
"""
