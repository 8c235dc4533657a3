"""``bali distil``: the positions are the policy's own decisions with a choice; the labels are
ppo+search's root visits, saved as they come and taken up again after an interruption; the fit
moves the actor towards them; the file it writes keeps the value head; bad input is one line
(exit 2) and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import bali_env
from bali_env.bots.ppo import ExportedPolicy, write_policy
from bali_env.bots.puct import PolicySearchAgent
from bali_env.trainers.finetune import distil
from bali_env.apps.cli import main as cli_main
from bali_env.trainers.finetune.distil import FitSettings, SearchedPositions, fingerprint, fit_actor, label, positions


def main(argv):
    """``bali distil ARGV``: its exit code (SystemExit(2) for a bad argument)."""
    return cli_main(["distil", *argv])


SHIPPED = str(Path(bali_env.__file__).parent / "bots" / "policies" / "bali_2p.npz")


@pytest.fixture(scope="module")
def kept():
    return positions(ExportedPolicy(SHIPPED), 2, games=6, seed=3, keep=0.2)


def test_positions_are_the_policys_decisions_with_a_choice(kept):
    policy = ExportedPolicy(SHIPPED)
    assert len(kept["key"]) > 30 and kept["key"].dtype == np.uint64
    assert (kept["action_mask"].sum(axis=1) > 1).all()
    np.testing.assert_array_equal(kept["input"], policy.input(kept["observation"], kept["action_mask"]))
    again = positions(policy, 2, games=6, seed=3, keep=0.2)
    assert fingerprint(again, "x") == fingerprint(kept, "x") != fingerprint(kept, "y")
    assert fingerprint(positions(policy, 2, games=6, seed=4, keep=0.2), "x") != fingerprint(kept, "x")


def test_labels_are_the_search_visits_and_resume_after_an_interruption(kept, tmp_path, monkeypatch):
    """Row i's label is ppo+search's root visits on position i with key i; a run stopped after its
    first chunk goes on from the saved labels (searching only the rest) to the same result; a
    labels file of other positions (another digest) is not reused."""
    policy = ExportedPolicy(SHIPPED)
    searcher = PolicySearchAgent(sims=16, leaves=4, path=SHIPPED)
    whole = label(searcher, policy, kept, tmp_path / "whole.labels.npz", "d", chunk=8)
    assert whole.shape == (len(kept["key"]), 44) and (whole.sum(axis=1) == 16).all()
    assert ((whole > 0) <= (kept["action_mask"] > 0)).all()
    np.testing.assert_array_equal(whole[3:4], searcher.search(kept["observation"][3:4], kept["action_mask"][3:4],
                                                               kept["key"][3:4], policy))

    calls = []

    class Stopped(PolicySearchAgent):
        def search(self, obs, masks, keys, pol):
            calls.append(len(obs))
            if len(calls) == 2:
                raise KeyboardInterrupt
            return super().search(obs, masks, keys, pol)

    monkeypatch.setattr(distil, "SAVE_SECONDS", 0.0)
    path = tmp_path / "cut.labels.npz"
    with pytest.raises(KeyboardInterrupt):
        label(Stopped(sims=16, leaves=4, path=SHIPPED), policy, kept, path, "d", chunk=8)
    with np.load(path) as data:
        assert int(data["done"]) == 8
    calls.clear()
    resumed = label(Stopped(sims=16, leaves=4, path=SHIPPED), policy, kept, path, "d", chunk=len(kept["key"]))
    assert calls == [len(kept["key"]) - 8]
    np.testing.assert_array_equal(resumed, whole)
    calls.clear()
    label(Stopped(sims=16, leaves=4, path=SHIPPED), policy, kept, path, "other", chunk=len(kept["key"]))
    assert calls == [len(kept["key"])]


def test_the_fit_moves_the_actor_towards_the_visits(kept):
    """Targets that put all visits on the legal action the policy likes least: after the fit the
    held-out cross-entropy is lower and the network, which picked that action nowhere, picks it in
    most of the positions it was fitted to and in some of the held-out ones."""
    pytest.importorskip("torch")
    policy = ExportedPolicy(SHIPPED)
    logits = np.where(kept["action_mask"] > 0, policy.forward(kept["input"]), np.inf)
    visits = np.zeros_like(kept["action_mask"], dtype=np.int32)
    visits[np.arange(len(visits)), logits.argmin(axis=1)] = 10
    game = np.arange(len(visits)) % 3 * 5  # held out: game % 10 == 0, a third of the rows
    weights, report = fit_actor(policy.arrays()[0], "relu", SearchedPositions(kept["input"], kept["action_mask"],
                                                                              visits, game),
                                FitSettings(epochs=30, lr=3e-3, seed=0))
    assert report["agrees_before"] == 0.0 and report["target_entropy"] == 0.0
    assert report["cross_entropy_after"] < report["cross_entropy_before"]
    new = ExportedPolicy.from_arrays(weights, policy.meta)
    new_logits = np.where(kept["action_mask"] > 0, new.forward(kept["input"]), -np.inf)
    picks = new_logits.argmax(axis=1) == visits.argmax(axis=1)
    held_out = game % 10 == 0
    assert picks[~held_out].mean() > 0.75 and picks[held_out].mean() > 0.0


def test_distil_writes_the_new_actor_with_the_old_value_head(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "d.npz"
    assert main([SHIPPED, "--games", "4", "--keep", "0.2", "--sims", "16", "--epochs", "1", "--out", str(out),
                 "--no-progress"]) == 0
    old, new = ExportedPolicy(SHIPPED), ExportedPolicy(out)
    assert any(not np.array_equal(w0, w1) for (w0, _), (w1, _) in zip(old.weights, new.weights, strict=True))
    for (w0, b0), (w1, b1) in zip(old.value_arrays(), new.value_arrays(), strict=True):
        np.testing.assert_array_equal(w0, w1)
        np.testing.assert_array_equal(b0, b1)
    assert new.meta["distilled"].startswith("bali distil --games 4 --keep 0.2 --sims 16")
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["games"] == 4 and report["positions"] > 10 and 0 <= report["agrees_after"] <= 1
    assert out.with_suffix(".labels.npz").is_file()
    assert "refit its value head" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["nosuch.npz"], "POLICY"),
    (["novalue"], "bali fit-value"),
    ([SHIPPED, "--keep", "0"], "--keep"),
    ([SHIPPED, "--games", "0"], "--games"),
    ([SHIPPED, "--lr", "2"], "--lr"),
    ([SHIPPED, "--sims", "0"], "--sims"),
    ([SHIPPED, "--out", "d.txt"], "--out must name a .npz"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, argv, says):
    if argv[0] == "novalue":
        weights, meta = ExportedPolicy(SHIPPED).arrays()
        argv = [str(write_policy(weights, meta, tmp_path / "novalue.npz"))]
    before = set(tmp_path.iterdir())
    monkeypatch.chdir(tmp_path)
    if "--out" not in argv:
        argv = [*argv, "--out", "d.npz"]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and says in capsys.readouterr().err.splitlines()[-1]
    assert set(tmp_path.iterdir()) == before
