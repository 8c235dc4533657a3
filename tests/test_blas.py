"""Decisions that do not hang on the BLAS build, the CPU or the thread count.

The policy network's numbers are computed in one fixed order (``bali_env.bots.network``), so
the shipped agents' logits, values and decisions, and a tournament's games, are the same bits
under every OpenBLAS kernel and thread count (``tests/probes/decisions.py`` run in subprocesses
under several), on another CPU's Numba code (``--slow``: ``NUMBA_CPU_NAME=generic``), and equal
to the kept digests in ``tests/golden/decisions.json`` (made on the project's machine; a user's
machine must give the same). The NumPy and Numba versions of a layer agree bit for bit, and the
elementary functions made of ``+ - * /`` are accurate.

After a deliberate change of the shipped policies or of the search, write the digests again:
``python tests/probes/decisions.py OUT_DIR --golden``."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bali_env.bots import network
from bali_env.bots.ppo import ExportedPolicy, shipped_policy

PROBE = Path(__file__).parent / "probes" / "decisions.py"
GOLDEN = Path(__file__).parent / "golden" / "decisions.json"
X86 = platform.machine().lower() in ("x86_64", "amd64")


def probe(tmp_path: Path, **env: str) -> dict:
    """The probe's digests and BLAS kernel in a subprocess with ``env`` set (a value "" removes
    the variable: the library's own choice)."""
    environ = {k: v for k, v in os.environ.items() if k not in env or env[k]}
    environ.update({k: v for k, v in env.items() if v})
    out = tmp_path / "-".join(f"{k}={v}" for k, v in env.items()).replace("/", "_")
    done = subprocess.run([sys.executable, str(PROBE), str(out)], env=environ, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


#: two OpenBLAS kernels (the library's own pick, and Prescott: what an older CPU gets) and thread counts
SETTINGS = [{"OPENBLAS_CORETYPE": "", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"},
            {"OPENBLAS_CORETYPE": "Prescott" if X86 else "", "OPENBLAS_NUM_THREADS": "2", "NUMBA_NUM_THREADS": "2"}]


def test_decisions_and_games_are_the_same_under_other_blas_kernels_and_thread_counts(tmp_path):
    """The shipped policies' logits and values, every built-in network agent's decisions on the
    same positions (``ppo``, sampled ``ppo``, ``ppo+search`` with a PUCT and a Gumbel root) and a
    tournament's journal and records: the same digests under two OpenBLAS kernels and thread
    counts, and the kept ones."""
    runs = [probe(tmp_path, **s) for s in SETTINGS]
    if X86:  # the two runs really used two kernels
        assert runs[0]["blas_kernel"] != runs[1]["blas_kernel"], runs
    assert runs[0]["digests"] == runs[1]["digests"]
    assert runs[0]["digests"] == json.loads(GOLDEN.read_text())


@pytest.mark.slow
def test_decisions_are_the_same_on_another_cpus_code(tmp_path):
    """Numba compiled for a generic x86-64 (no AVX: what another CPU's compiler would pick) gives
    the kept digests too (a fresh Numba cache: everything compiles, a few minutes)."""
    found = probe(tmp_path, NUMBA_CPU_NAME="generic", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    assert found["digests"] == json.loads(GOLDEN.read_text())


def _inputs() -> list[tuple[ExportedPolicy, np.ndarray]]:
    """Each shipped policy with network inputs from a probe's positions."""
    sys.path.insert(0, str(PROBE.parent))
    try:
        from decisions import positions
    finally:
        sys.path.pop(0)
    found = []
    for n in (2, 4):
        policy = ExportedPolicy(shipped_policy(n))
        found.append((policy, policy.input(*positions(n, 64))))
    return found


def test_a_layer_in_numpy_is_the_numba_kernels_bit_for_bit():
    """``dense_numpy`` (what runs with Numba's JIT off: interpreted first runs) equals
    ``dense_kernel`` on every layer of both shipped networks, with each activation, and on inputs
    with negative zeros, and both are close to the plain matrix product."""
    rng = np.random.default_rng(0)
    for policy, x in _inputs():
        for layers in (policy.weights, policy.value_weights):
            h = x
            for w, b in layers:
                for act in (None, "relu"):
                    out = np.empty((len(h), w.shape[1]), np.float32)
                    network.dense_kernel(h, w, b, act == "relu", out)
                    assert np.array_equal(network.dense_numpy(h, w, b, act == "relu"), out)
                    plain = h @ w + b
                    np.testing.assert_allclose(out, np.maximum(plain, 0) if act else plain, rtol=1e-4, atol=1e-4)
                h = network.dense(h, w, b, "relu")
    x = rng.normal(size=(9, 7)).astype(np.float32)
    x[x < -0.5] = -0.0
    w, b = rng.normal(size=(7, 5)).astype(np.float32), rng.normal(size=5).astype(np.float32)
    out = np.empty((9, 5), np.float32)
    network.dense_kernel(x, w, b, False, out)
    assert np.array_equal(network.dense_numpy(x, w, b, False), out)
    assert not np.signbit(network.dense(np.zeros((1, 7), np.float32), w, np.zeros(5, np.float32), None)).any()


def test_a_rows_numbers_do_not_depend_on_the_batch():
    """A row's logits alone equal its row in the batch, bit for bit, and so do its values."""
    for policy, x in _inputs():
        logits, values = policy.forward(x), policy.seat_values(x, 4)
        for i in (0, 17, len(x) - 1):
            assert np.array_equal(policy.forward(x[i : i + 1])[0], logits[i])
            assert np.array_equal(policy.seat_values(x[i : i + 1], 4)[0], values[i])


def test_fixed_exp_and_log_are_accurate_and_total():
    """``fixed_exp`` and ``fixed_log`` within 2e-15 of the C library's, ``fixed_tanh`` of NumPy's;
    ``exp(-inf)`` is 0, NaN stays NaN, huge arguments stay finite; ``log`` refuses x <= 0."""
    xs = np.concatenate([np.linspace(-700, 700, 20001), np.linspace(-2, 2, 4001), [0.0, -0.0, 1e-300]])
    exact = np.array([math.exp(v) for v in xs])
    assert np.max(np.abs(network.fixed_exp(xs) / exact - 1)) < 2e-15
    ys = np.concatenate([np.geomspace(1e-300, 1e300, 20001), np.linspace(0.5, 2, 4001)])
    exact = np.array([math.log(v) for v in ys])
    assert np.max(np.abs(network.fixed_log(ys) - exact) / np.maximum(np.abs(exact), 1.0)) < 2e-15
    assert np.max(np.abs(network.fixed_tanh(xs[:4001] / 100) - np.tanh(xs[:4001] / 100))) < 1e-15
    assert network.fixed_exp(np.array([-np.inf]))[0] == 0.0 and np.isnan(network.fixed_exp(np.array([np.nan]))[0])
    assert np.isfinite(network.fixed_exp(np.array([1e300, np.inf]))).all()
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="fixed_log"):
            network.fixed_log(np.array([1.0, bad]))


def test_seat_shares_are_a_softmax_or_a_sigmoid():
    """``seat_shares``: several outputs give their softmax, one gives its sigmoid and the rest
    split among the others; rows sum to 1."""
    out = np.array([[0.0, np.log(3.0)], [2.0, 2.0]])
    np.testing.assert_allclose(network.seat_shares(out), [[0.25, 0.75], [0.5, 0.5]], rtol=1e-6)
    one = network.seat_shares(np.array([[0.0], [np.log(3.0)]]), 3)
    np.testing.assert_allclose(one, [[0.5, 0.25, 0.25], [0.75, 0.125, 0.125]], rtol=1e-6)
    assert network.seat_shares(np.array([[0.0]])).shape == (1, 1)


def test_a_layer_refuses_shapes_that_do_not_fit():
    """The kernel does no bounds checking: ``dense`` (and so ``mlp`` and a policy's ``forward``)
    refuses an input, weights or bias that do not fit, and an unknown activation, before it."""
    x, w, b = np.ones((3, 4), np.float32), np.ones((4, 2), np.float32), np.ones(2, np.float32)
    assert network.dense(x, w, b, "relu").shape == (3, 2)
    for bad in ((np.ones((3, 5)), w, b), (x, w, np.ones(3)), (np.ones(4), w, b), (x, np.ones(4), b)):
        with pytest.raises(ValueError, match="do not fit"):
            network.dense(*bad, None)
    with pytest.raises(ValueError, match="activation"):
        network.dense(x, w, b, "sigmoid")
    policy = ExportedPolicy(shipped_policy(2))
    with pytest.raises(ValueError, match="do not fit"):
        policy.forward(np.ones((2, 100), np.float32))
