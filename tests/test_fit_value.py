"""``bali fit-value``: the positions it learns from are the policy's own games, labelled with the
deciding seat's final win share; the file it writes is the same actor with a value head; bad input
is one line (exit 2) and writes nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bali_env
from bali_env.bots.ppo import ExportedPolicy
from bali_env.engine import OBS_DIM
from bali_env.apps.cli import main as cli_main
from bali_env.trainers.finetune.fit_value import collect_positions


def main(argv):
    """``bali fit-value ARGV``: its exit code (SystemExit(2) for a bad argument)."""
    return cli_main(["fit-value", *argv])


SHIPPED = "bali_env/bots/policies/bali_2p.npz"


def test_positions_are_labelled_with_the_deciders_win_share():
    """Every kept decision of a finished game is labelled with its seat's share of the win: in
    2 players the two seats' labels of one game add up to 1; with everything kept, each game's
    first row is the dealt position of the game's seed, and the games are all accounted."""
    policy = ExportedPolicy(SHIPPED)
    x, y, game = collect_positions(policy, 2, games=12, seed=5, keep=1.0, envs=4)
    assert x.shape[1] == policy.meta["obs_dim"] and x.dtype == np.float32 and len(x) == len(y) == len(game)
    assert set(np.unique(game)) <= set(range(12)) and len(np.unique(game)) == 12
    assert set(np.unique(y)) <= {0.0, 0.5, 1.0}
    for g in np.unique(game):
        rows = np.flatnonzero(game == g)
        assert len(rows) > 40  # a whole game's decisions
        labels = set(y[rows].tolist())
        assert labels in ({0.0, 1.0}, {0.5})  # one seat won, or both share
    dealt = []
    for seed in range(5, 9):  # slot i's first game is seed + i, as BaliVectorEnv deals it
        env = bali_env.raw_env(num_players=2)
        env.reset(seed=seed)
        dealt.append(env.observe(env.agent_selection)["observation"])
    firsts = [x[np.flatnonzero(game == g)[0], :OBS_DIM] for g in np.unique(game)]
    assert all(any(np.array_equal(d, f) for f in firsts) for d in dealt)


def test_fit_value_writes_the_actor_with_a_value_head(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "v.npz"
    assert main([SHIPPED, "--games", "24", "--epochs", "1", "--net", "16", "--out", str(out), "--no-progress"]) == 0
    old, new = ExportedPolicy(SHIPPED), ExportedPolicy(out)
    for (w0, b0), (w1, b1) in zip(old.weights, new.weights, strict=True):
        np.testing.assert_array_equal(w0, w1)
        np.testing.assert_array_equal(b0, b1)
    assert [w.shape for w, _ in new.value_arrays()] == [(16, old.meta["obs_dim"]), (1, 16)]
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["games"] == 24 and report["positions"] > 24 * 20 and 0 <= report["picks_winner"] <= 1
    assert report["log_loss"] > 0 and report["command"].startswith("bali fit-value --games 24")
    assert "picks the winner" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["nosuch.npz"], "POLICY"),
    ([SHIPPED, "--keep", "0"], "--keep"),
    ([SHIPPED, "--games", "0"], "--games"),
    ([SHIPPED, "--net", "12,x"], "--net"),
    ([SHIPPED, "--out", "v.txt"], "--out must name a .npz"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, argv, says):
    monkeypatch.chdir(tmp_path)
    if "--out" not in argv:
        argv = [*argv, "--out", "v.npz"]
    if argv[0] == SHIPPED:
        argv[0] = str(bali_env.__file__).rsplit("/bali_env/", 1)[0] + "/" + SHIPPED
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and says in capsys.readouterr().err.splitlines()[-1]
    assert list(tmp_path.iterdir()) == []


def test_each_label_is_the_deciding_seats_share(monkeypatch):
    """With every decision kept, row k is the k-th decision of the game, and its label is the
    final win share of the seat that took it, as the env reports it at the end."""
    movers, result = _log_first_game(monkeypatch)
    x, y, game = collect_positions(ExportedPolicy(SHIPPED), 2, games=1, seed=8, keep=1.0, envs=1)
    share = result[0] / result[0].sum()
    assert len(y) == len(movers) > 40 and (game == 0).all()
    np.testing.assert_array_equal(y, share[movers].astype(np.float32))
    assert set(movers) == {0, 1}


def test_in_four_players_the_labels_are_every_seats_share_from_the_deciders_seat(monkeypatch):
    """With ``seats``, row k's label is the final share of every seat, starting with the seat that
    took decision k and going on in turn order; its first column is the one-seat label."""
    movers, result = _log_first_game(monkeypatch)
    policy = ExportedPolicy("bali_env/bots/policies/bali_4p.npz")
    x, y, game = collect_positions(policy, 4, games=1, seed=2, keep=1.0, envs=1, seats=True)
    share = result[0] / result[0].sum()
    assert y.shape == (len(movers), 4) and set(movers) == {0, 1, 2, 3}
    for k, seat in enumerate(movers):
        np.testing.assert_array_equal(y[k], share[[(seat + j) % 4 for j in range(4)]].astype(np.float32))
    movers.clear()
    _, y1, _ = collect_positions(policy, 4, games=1, seed=2, keep=1.0, envs=1)
    np.testing.assert_array_equal(y1, y[:, 0])


def test_fit_value_in_four_players_gives_a_head_per_seat(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "v4.npz"
    policy = "bali_env/bots/policies/bali_4p.npz"
    assert main([policy, "--games", "8", "--epochs", "1", "--net", "8", "--out", str(out), "--no-progress"]) == 0
    new = ExportedPolicy(out)
    assert [w.shape for w, _ in new.value_arrays()] == [(8, new.meta["obs_dim"]), (4, 8)]
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["seat_log_loss"] > 0 and report["constant_seat_log_loss"] > 0
    assert "every seat's share" in capsys.readouterr().err


def _log_first_game(monkeypatch) -> tuple[list[int], list[np.ndarray]]:
    """Make ``BaliVectorEnv`` record the seat to move of slot 0 at every step (``movers``) and
    the winners of its first finished game (``result``)."""
    import bali_env.envs.batched as vector

    movers: list[int] = []
    result: list[np.ndarray] = []

    class Logged(vector.BaliVectorEnv):
        def step(self, actions):
            movers.append(int(self.to_move[0]))
            out = super().step(actions)
            if out[2][0] and not result:
                result.append(out[4]["winners"][0].astype(float))
            return out

    monkeypatch.setattr(vector, "BaliVectorEnv", Logged)
    return movers, result
