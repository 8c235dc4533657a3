"""The Ray tournament backend's former address: it lives in ``agents.tournament.backends.ray``."""

from __future__ import annotations

from .tournament.backends.ray import MAX_RETRIES, check_ray, default_chunk_size, init_ray, play_on_ray

__all__ = ["MAX_RETRIES", "check_ray", "default_chunk_size", "init_ray", "play_on_ray"]
