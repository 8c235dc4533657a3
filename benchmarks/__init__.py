"""Benchmarks of bali-env against anchor environments (``python -m benchmarks.run``)."""
