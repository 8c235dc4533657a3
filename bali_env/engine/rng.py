"""The one source of randomness: a SplitMix64 stream in a one-element ``uint64`` array.

Randomness is used only when dealing (and by the random policy of rollouts); the stream gives
the same numbers bit for bit on every platform and every API.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def rng_next(rng):
    """SplitMix64: advance the one-element uint64 state ``rng`` and return 64 random bits."""
    rng[0] += np.uint64(0x9E3779B97F4A7C15)
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def rng_below(rng, k):
    """A random integer in [0, k)."""
    return np.int64(rng_next(rng) % np.uint64(k))


@njit(cache=True)
def shuffle(rng, arr, start, stop):
    """Fisher-Yates shuffle of arr[start:stop] in place."""
    for i in range(stop - 1, start, -1):
        j = start + rng_below(rng, i - start + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t
