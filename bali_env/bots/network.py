"""A trained policy's arithmetic in one fixed order: the same bits on every CPU, BLAS build,
thread count and batch.

A policy is two small MLPs (the actor and the value head, ``bali_env.bots.ppo``). Computed by
BLAS, their sums were split and reordered by the CPU's kernel, the thread count and the batch's
shape: another machine, or one row alone rather than in a batch, got logits that differed in the
last bits, and a near-tie between two actions could go either way. Here every number a decision
reads is made from IEEE 754's correctly rounded ``+ - * /`` in an order fixed by this code:

- ``dense``: one layer, ``act(x @ w + b)``: each output summed in float32 over the inputs in
  ascending order (an input that is exactly 0 is skipped: its products would add nothing), the
  bias added last; ``relu`` (``max(y, 0)``) or ``tanh`` (``fixed_tanh``). A Numba kernel
  (``dense_kernel``), or with Numba's JIT off (interpreted first runs) the same sums in NumPy
  (``dense_numpy``, bit for bit the same: tested);
- ``fixed_exp``, ``fixed_log``, ``fixed_tanh``: float64 ``exp``, ``log`` and ``tanh`` from a
  range reduction and a polynomial (NumPy's and the C library's differ by CPU in the last bit);
- ``seat_shares``: a value head's outputs as win shares (softmax, or sigmoid for one output);
  ``softmax_weights`` and ``row_sums`` for the search's priors and sampling.

What is exact, then: a policy's logits and values, the actions ``ppo`` and ``ppo+search`` choose,
tournaments, goldens. What is not: training (PyTorch's own kernels), which is repeatable on one
machine only.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit

ACTIVATIONS = ("relu", "tanh")  #: the hidden layers' activations a policy file may name

_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (fdlibm's): k * _LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_EXP_POLY = tuple(1.0 / math.factorial(n) for n in range(13, -1, -1))  # Taylor, highest power first
_LOG_POLY = tuple(1.0 / (2 * i + 1) for i in range(11, -1, -1))  # 2 atanh(s) / (2 s), in s**2
_POW2 = np.array([math.ldexp(1.0, k) for k in range(-1022, 1024)])  # exact powers of two
_EXP_LIMIT = 700.0  # exp is clipped to [e**-700, e**700]: finite and normal


def fixed_exp(x: np.ndarray) -> np.ndarray:
    """``exp(x)`` in float64 (relative error below 1e-15), the same bits on every machine: x is
    reduced to ``k ln 2 + r`` with ``|r| <= ln 2 / 2``, and the result is ``2**k`` times a
    degree-13 Taylor polynomial in r. Below -700 (``-inf`` included) it is 0, above 700 it stays
    at ``e**700``; NaN stays NaN."""
    x = np.asarray(x, dtype=np.float64)
    xc = np.nan_to_num(np.clip(x, -_EXP_LIMIT, _EXP_LIMIT), nan=0.0)
    k = np.floor(xc * _INV_LN2 + 0.5)
    r = (xc - k * _LN2_HI) - k * _LN2_LO
    p = np.full_like(r, _EXP_POLY[0])
    for c in _EXP_POLY[1:]:
        p = p * r + c
    y = p * _POW2[k.astype(np.int64) + 1022]
    return np.where(x < -_EXP_LIMIT, 0.0, np.where(np.isnan(x), np.nan, y))


def fixed_log(x: np.ndarray) -> np.ndarray:
    """``log(x)`` in float64 for x > 0 (relative error below 1e-15), the same bits on every
    machine: ``x = m 2**e`` with m in [sqrt(1/2), sqrt(2)) (exact), then ``e ln 2 + 2 atanh(s)``
    with ``s = (m - 1) / (m + 1)`` by its series. ValueError for x <= 0 or not finite."""
    x = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(x) & (x > 0)):
        raise ValueError("fixed_log needs finite numbers > 0")
    m, e = np.frexp(x)
    low = m < math.sqrt(0.5)
    m = np.where(low, m * 2.0, m)
    e = (e - low).astype(np.float64)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    p = np.full_like(z, _LOG_POLY[0])
    for c in _LOG_POLY[1:]:
        p = p * z + c
    return e * _LN2_HI + (e * _LN2_LO + 2.0 * s * p)


def fixed_tanh(x: np.ndarray) -> np.ndarray:
    """``tanh(x)`` in float64 from ``fixed_exp``: ``sign(x) (1 - t) / (1 + t)`` with
    ``t = exp(-2 |x|)``."""
    x = np.asarray(x, dtype=np.float64)
    t = fixed_exp(-2.0 * np.abs(x))
    return np.copysign((1.0 - t) / (1.0 + t), x)


@njit(cache=True)
def dense_kernel(x, w, b, relu, out):
    """``out[i] = x[i] @ w + b`` (float32 [N, IN] @ [IN, OUT] + [OUT] -> [N, OUT], written),
    summed over the inputs in ascending order, zeros skipped, the bias last; with ``relu``,
    ``max(y, 0)`` (a zero is +0)."""
    acc = np.empty(w.shape[1], dtype=np.float32)
    zero = np.float32(0.0)
    for i in range(x.shape[0]):
        acc[:] = zero
        for k in range(x.shape[1]):
            v = x[i, k]
            if v != zero:
                for j in range(w.shape[1]):
                    acc[j] += v * w[k, j]
        for j in range(w.shape[1]):
            y = acc[j] + b[j] + zero  # + 0: a -0 becomes +0
            out[i, j] = (y if y > zero else zero) if relu else y


def dense_numpy(x: np.ndarray, w: np.ndarray, b: np.ndarray, relu: bool) -> np.ndarray:
    """``dense_kernel``'s sums in NumPy, the same bits (each input's products added in turn):
    what runs with Numba's JIT off."""
    acc = np.zeros((x.shape[0], w.shape[1]), dtype=np.float32)
    for k in np.flatnonzero(np.any(x != 0, axis=0)):
        acc += x[:, k, None] * w[k]  # a row whose input k is 0 adds +-0: the sum stays as it was
    y = acc + b + np.float32(0.0)
    return np.where(y > 0, y, np.float32(0.0)) if relu else y


def dense(x: np.ndarray, w: np.ndarray, b: np.ndarray, activation: str | None) -> np.ndarray:
    """One layer ``activation(x @ w + b)`` in the fixed order (the module docstring): ``x``
    [N, IN], ``w`` [IN, OUT], ``b`` [OUT] (as float32); ``activation`` ``"relu"``, ``"tanh"`` or
    None. Returns float32 [N, OUT]. ValueError for shapes that do not fit or another activation
    (checked before the kernel, which does no bounds checking)."""
    if activation not in (None, *ACTIVATIONS):
        raise ValueError(f"activation must be one of {ACTIVATIONS} or None, got {activation!r}")
    x, w, b = (np.ascontiguousarray(a, dtype=np.float32) for a in (x, w, b))
    if x.ndim != 2 or w.ndim != 2 or b.shape != (w.shape[1],) or x.shape[1] != w.shape[0]:
        raise ValueError(f"x [N, IN], w [IN, OUT] and b [OUT] do not fit: x {x.shape}, w {w.shape}, b {b.shape}")
    relu = activation == "relu"
    if numba.config.DISABLE_JIT:
        y = dense_numpy(x, w, b, relu)
    else:
        y = np.empty((x.shape[0], w.shape[1]), dtype=np.float32)
        dense_kernel(x, w, b, relu, y)
    return fixed_tanh(y).astype(np.float32) if activation == "tanh" else y


def mlp(x: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]], activation: str) -> np.ndarray:
    """An MLP of ``(w [IN, OUT], b)`` float32 layers over ``x`` (float32 [N, IN]): ``activation``
    after every layer but the last. A row's outputs depend on that row alone."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    last = len(layers) - 1
    for i, (w, b) in enumerate(layers):
        x = dense(x, w, b, activation if i < last else None)
    return x


def row_sums(a: np.ndarray) -> np.ndarray:
    """Each row's sum ([N, M] -> float64 [N]), added column by column: a fixed order (NumPy's
    ``sum`` picks its own, which may depend on the CPU)."""
    a = np.asarray(a, dtype=np.float64)
    total = np.zeros(a.shape[0])
    for j in range(a.shape[1]):
        total += a[:, j]
    return total


def softmax_weights(logits: np.ndarray) -> np.ndarray:
    """``exp(logits - the row's max)`` (float64 [N, M]; -inf gives 0): a softmax's weights, up to
    each row's factor, by ``fixed_exp``."""
    logits = np.asarray(logits, dtype=np.float64)
    return fixed_exp(logits - logits.max(axis=1, keepdims=True))


def seat_shares(out: np.ndarray, num_players: int | None = None) -> np.ndarray:
    """A value head's outputs ([N, S]) as win shares, float32 [N, S'] (rows summing to 1): with
    several outputs their softmax (the reading seat first, then the others in turn order); with
    one, its sigmoid as the reading seat's share and the rest split equally among the
    ``num_players - 1`` others (S' = ``num_players``; without it, the single column)."""
    out = np.asarray(out, dtype=np.float64)
    if out.shape[1] > 1:
        e = softmax_weights(out)
        return (e / row_sums(e)[:, None]).astype(np.float32)
    v = 1.0 / (1.0 + fixed_exp(-out[:, 0]))
    if num_players is None or num_players <= 1:
        return v[:, None].astype(np.float32)
    rest = np.repeat(((1.0 - v) / (num_players - 1))[:, None], num_players - 1, axis=1)
    return np.concatenate([v[:, None], rest], axis=1).astype(np.float32)


def compile_network_kernels() -> None:
    """Compile (or load from Numba's cache) ``dense_kernel`` for the types ``dense`` passes."""
    from numba import typeof

    x, w, b = np.zeros((1, 2), np.float32), np.zeros((2, 2), np.float32), np.zeros(2, np.float32)
    dense_kernel.compile((typeof(x), typeof(w), typeof(b), typeof(True), typeof(x)))
