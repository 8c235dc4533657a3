"""Where a tournament's games can be played besides local worker processes: ``ray.py`` (Ray tasks)."""
