"""The shipped policies' inputs and choices are frozen (``tests/golden/policy``): the greedy
features they read (``policy_input``, feature set ``greedy-v1``) and what they play on the
greedy golden's observations. Retuning the greedy heuristic cannot change ``ppo`` silently."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

_spec = importlib.util.spec_from_file_location("bali_policy_golden", Path(__file__).parent / "golden" / "policy"
                                               / "generate.py")
generate = importlib.util.module_from_spec(_spec)  #: tests/golden/policy/generate.py
_spec.loader.exec_module(generate)


def test_the_policy_inputs_and_choices_match_the_golden():
    golden = np.load(generate.OUT)
    now = generate.compute()
    np.testing.assert_allclose(now["features"], golden["features"], rtol=0, atol=1e-6)
    for n in (2, 4):
        np.testing.assert_array_equal(now[f"rows_{n}p"], golden[f"rows_{n}p"])
        np.testing.assert_allclose(now[f"logits_{n}p"], golden[f"logits_{n}p"], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(now[f"choice_{n}p"], golden[f"choice_{n}p"])


def test_the_golden_notices_a_retuned_heuristic(monkeypatch):
    """The check can fail: the default greedy weights changed by a little change the features."""
    import bali_env.bots.features as F

    golden = np.load(generate.OUT)
    monkeypatch.setattr(F, "_PARAMS", F.default_params() * 1.05)
    assert not np.allclose(generate.compute()["features"], golden["features"], rtol=0, atol=1e-6)
