"""Every seed and every random number of the package, from one generator: SplitMix64.

The same numbers bit for bit on every platform and every API. Randomness is used when dealing,
by the random policy of rollouts, and by agents that draw their moves; a tournament derives all
of it from its one seed, so a game plays out the same whichever worker, batch or backend plays it.

| name | what |
|---|---|
| ``rng_next``, ``rng_below``, ``shuffle`` | the Numba stream: a one-element ``uint64`` state advanced in kernels |
| ``splitmix`` | SplitMix64's step on a Python int (the hash every derived seed is made of) |
| ``mix`` | SplitMix64's finaliser over a ``uint64`` array |
| ``deal_seed`` | the seed game ``k`` of a seeded tournament (or stage of a run) is dealt from |
| ``agent_seed`` | the seed a tournament's participant is built with |
| ``decision_keys`` | one key per decision: where an agent's randomness comes from in a tournament |
| ``key_uniforms`` | uniform floats drawn from such keys (row ``i`` from ``keys[i]`` only) |
| ``stream_state`` | the state a seeded search stream starts from |
"""

from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = 0x9E3779B97F4A7C15  #: SplitMix64's increment (the golden ratio in 64 bits)
MIX_1 = 0xBF58476D1CE4E5B9  #: the finaliser's first multiplier
MIX_2 = 0x94D049BB133111EB  #: the finaliser's second multiplier
MASK64 = 2**64 - 1
_GOLDEN = np.uint64(GOLDEN)


@njit(cache=True, inline="always")
def rng_next(rng):
    """SplitMix64: advance the one-element uint64 state ``rng`` and return 64 random bits."""
    rng[0] += np.uint64(0x9E3779B97F4A7C15)  # GOLDEN, MIX_1 and MIX_2, written out for Numba
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


def splitmix(z: int) -> int:
    """SplitMix64's step on a Python int: the state advanced and mixed (64 bits)."""
    z = (z + GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * MIX_1) & MASK64
    z = ((z ^ (z >> 27)) * MIX_2) & MASK64
    return z ^ (z >> 31)


def mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, vectorised over a uint64 array."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX_1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX_2)
        return z ^ (z >> np.uint64(31))


def deal_seed(seed: int, game: int) -> int:
    """The seed game ``game`` of a tournament seeded ``seed`` is dealt from: the two hashed together
    (SplitMix64) and cut to 53 bits, so it is exact in any JSON reader. Tournaments with different
    seeds share no deal (two given deals coincide with chance 2^-53), and
    ``bali_env.env(...).reset(seed=deal_seed(seed, k))`` deals game k again (each record keeps it)."""
    return splitmix(splitmix(int(seed) & MASK64) ^ int(game)) >> 11


def agent_seed(seed: int, participant: int, worker: int = 0) -> int:
    """The seed participant ``participant``'s agent is built with (every worker builds it with
    ``worker=0``: the randomness of its moves comes from ``decision_keys``)."""
    ss = np.random.SeedSequence([int(seed) % 2**64, participant, worker])
    return int(ss.generate_state(1, np.uint64)[0])


def decision_keys(seed: int, games: np.ndarray, seats: np.ndarray, decisions: np.ndarray) -> np.ndarray:
    """One uint64 key per decision, from the tournament seed, the game index, the seat and the
    decision's number in that game: what an agent's randomness is drawn from in a tournament,
    so a game plays out the same whichever worker, batch or backend plays it."""
    with np.errstate(over="ignore"):
        z = mix(np.full(len(games), np.uint64(int(seed) % 2**64)) + _GOLDEN)
        for part in (games, seats, decisions):
            z = mix(z ^ (np.asarray(part, dtype=np.int64).astype(np.uint64) + _GOLDEN))
    return z


def key_uniforms(keys: np.ndarray, width: int) -> np.ndarray:
    """``width`` uniform floats in [0, 1) per key (row i depends on ``keys[i]`` only)."""
    with np.errstate(over="ignore"):
        z = mix(keys[:, None] + _GOLDEN * np.arange(1, width + 1, dtype=np.uint64))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


def stream_state(seed: int | None) -> np.uint64:
    """The state a search's SplitMix64 stream seeded with ``seed`` starts from (``None``: fresh
    entropy)."""
    return np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]


__all__ = ["GOLDEN", "MASK64", "MIX_1", "MIX_2", "agent_seed", "deal_seed", "decision_keys", "key_uniforms", "mix",
           "rng_below", "rng_next", "shuffle", "splitmix", "stream_state"]
