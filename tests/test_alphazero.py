"""``bali az`` (``bali_env.trainers.alphazero``): the targets are the games' own decisions, visit
shares and final shares; a chunk plays the same alone or with others; the buffer keeps its
window; the gate takes the stronger network and not the weaker; a run stopped in the middle and
resumed ends bit for bit as one that was not stopped; local workers, the in-process run and Ray
give the same run; bad flags are one line (exit 2)."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import bali_env
from bali_env.bots.ppo import ExportedPolicy, shipped_policy
from bali_env.apps.cli import main as cli_main
from bali_env.engine.seeds import deal_seed
from bali_env.trainers.alphazero import buffer, gate
from bali_env.trainers.alphazero.learn import Learner
from bali_env.trainers.alphazero.generations import Config, Run
from bali_env.trainers.alphazero.jobs import Rows, SelfPlaySettings
from bali_env.trainers.alphazero.selfplay import job_for, play_chunk, targets
from bali_env.trainers.alphazero.dispatch import Pool

torch = pytest.importorskip("torch")

TINY = {"games": 4, "sims": 8, "leaves": 4, "train_steps": 3, "batch": 32, "gate_games": 2, "eval_every": 1,
        "eval_games": 2, "yardsticks": ["greedy"], "chunk": 2, "workers": 1}


@pytest.fixture(scope="module")
def chunk():
    job = job_for(ExportedPolicy(shipped_policy(2)),
                  SelfPlaySettings(players=2, seed=11, sims=8, c=1.5, leaves=4, temp_moves=6))
    return job, play_chunk(job, [0, 1, 2])


def test_targets_replay_as_the_games_that_were_played(chunk):
    """Each game, dealt again from deal_seed(seed, k) in the AEC env and played with the kept
    moves (forced moves where there is no row), shows the kept legal actions at every kept
    decision, and its winners are the value rows (the deciding seat first, then turn order); the
    policy rows are distributions over the legal actions."""
    job, rows = chunk
    assert np.allclose(rows.policy.sum(axis=1), 1.0)
    assert not (rows.policy[rows.action_mask == 0] > 0).any()
    assert (rows.action_mask.sum(axis=1) > 1).all()
    for k in range(3):
        mine = np.flatnonzero(rows.game == k)
        env = bali_env.raw_env(num_players=2)
        env.reset(seed=deal_seed(job.settings.seed, k))
        seats, i = [], 0
        while not all(env.terminations.values()):
            agent = env.agent_selection
            mask = env.observe(agent)["action_mask"]
            if mask.sum() > 1:
                np.testing.assert_array_equal(mask, rows.action_mask[mine[i]])
                seats.append(env.agents.index(agent))
                env.step(int(rows.action[mine[i]]))
                i += 1
            else:
                env.step(int(np.argmax(mask)))
        assert i == len(mine)
        won = np.array([env.rewards[a] > 0 for a in env.possible_agents], dtype=np.float32)
        shares = won / won.sum()
        for row, seat in zip(mine, seats, strict=True):
            np.testing.assert_array_equal(rows.value[row], np.roll(shares, -seat))


def test_targets_rotate_the_shares_to_the_deciding_seat():
    kept = {"input": [np.zeros((3, 5), np.float32)], "action_mask": [np.ones((3, 44), np.int8)],
            "policy": [np.full((3, 44), 1 / 44, np.float32)], "seat": [np.array([0, 2, 3])],
            "slot": [np.array([0, 0, 1])], "action": [np.array([1, 2, 3])]}
    shares = np.array([[0, 0, 1, 0], [0.5, 0, 0, 0.5]], np.float32)
    out = targets(kept, shares, np.array([7, 9]), 4, 5)
    np.testing.assert_array_equal(out.value, [[0, 0, 1, 0], [1, 0, 0, 0], [0.5, 0.5, 0, 0]])
    np.testing.assert_array_equal(out.game, [7, 7, 9])


def test_a_chunk_plays_its_games_as_they_play_alone(chunk):
    job, rows = chunk
    alone = play_chunk(job, [2])
    for name, array in alone.arrays().items():
        np.testing.assert_array_equal(array, rows.select(rows.game == 2)[name], err_msg=name)


def test_the_buffer_keeps_the_last_window_of_generations(tmp_path):
    def rows(g):
        return Rows(np.zeros((g, 3), np.float32), np.ones((g, 44), np.int8), np.full((g, 44), 1 / 44, np.float32),
                    np.full((g, 2), 0.5, np.float32), np.full(g, g, np.int64), np.zeros(g, np.int64))

    for g in (1, 2, 3):
        buffer.save(buffer.chunk_file(tmp_path, g, 0), rows(g))
        buffer.finish_generation(tmp_path, g, rows(g))
        assert not (tmp_path / "buffer" / f"gen_{g:04d}").exists()
    np.testing.assert_array_equal(buffer.window(tmp_path, 3, 2).game, [2, 2, 3, 3, 3])
    buffer.prune(tmp_path, 3, 2)
    assert sorted(p.name for p in (tmp_path / "buffer").iterdir()) == ["gen_0003.npz"]
    with pytest.raises(FileNotFoundError):
        buffer.window(tmp_path, 1, 1)


def test_the_gate_takes_a_network_whose_interval_clears_a_fair_share():
    assert gate.decide(0.501, 2)["accepted"] and not gate.decide(0.5, 2)["accepted"]
    assert gate.decide(0.26, 4) == {"needed": 0.25, "accepted": True}
    assert not gate.decide(0.496, 2)["accepted"]  # 56.5% [49.6, 63.2] of 200: not better


@pytest.mark.slow
def test_the_gate_takes_the_stronger_network_and_not_the_weaker(tmp_path):
    """The shipped policy against an untrained network of the same shape: it passes the gate,
    and the untrained one does not pass against it."""
    weak = Learner.scratch(2, 1e-3, seed=0).policy()
    from bali_env.bots.ppo import write_policy

    weights, meta = weak.arrays()
    write_policy(weights, meta, tmp_path / "weak.npz", value=weak.value_arrays())
    strong = shipped_policy(2)
    up = gate.gate(strong, tmp_path / "weak.npz", 2, 20, seed=3, workers=1)
    down = gate.gate(tmp_path / "weak.npz", strong, 2, 20, seed=3, workers=1)
    assert up["accepted"] and up["win_rate"] >= 0.8
    assert not down["accepted"] and down["win_rate"] <= 0.2
    assert down["ci_low"] <= down["win_rate"] <= down["ci_high"]
    again = gate.confirm(up, strong, tmp_path / "weak.npz", 2, seed=4, workers=1)
    c = again["confirm"]
    assert again["accepted"] and c["games"] == up["games"] and c["pooled_games"] == 2 * up["games"]
    assert c["pooled_win_rate"] == pytest.approx((up["win_rate"] + c["win_rate"]) / 2)
    assert {k: again[k] for k in up} == {**up, "accepted": True}  # the first match's figures stay


@pytest.mark.slow
def test_a_lucky_pass_is_not_confirmed(tmp_path):
    """A network against itself that passed one match by luck (a made-up 57.5% of 200 games, the
    top 2.5% of an even match): played again on other deals it wins about half, and the pooled
    interval does not clear the fair share."""
    from bali_env.arena.stats import wilson_interval

    low, high = wilson_interval(115, 200)
    lucky = {"games": 200, "win_rate": 0.575, "ci_low": low, "ci_high": high, **gate.decide(low, 2)}
    assert lucky["accepted"]
    same = shipped_policy(2)
    again = gate.confirm(lucky, same, same, 2, seed=5, workers=1)
    c = again["confirm"]
    assert 0.4 < c["win_rate"] < 0.6 and c["pooled_games"] == 400
    assert (c["pooled_ci_low"], c["pooled_ci_high"]) == pytest.approx(wilson_interval(115 + c["win_rate"] * 200, 400))
    assert c["pooled_ci_low"] <= 0.5 and not again["accepted"]


def test_the_confirmation_turns_down_a_third_of_the_lucky_passes_and_few_real_ones():
    """The figures the docs give for the gate, summed exactly over the binomial with the gate's
    own rule (``decide`` on one match, then on the two ``pool``ed): how often a network that is
    even (a fair share) or better passes one match, and passes it confirmed."""
    from math import comb

    def passes(p, games, players):
        pmf = [comb(games, k) * p ** k * (1 - p) ** (games - k) for k in range(games + 1)]
        match = [{"games": games, "win_rate": k / games} for k in range(games + 1)]
        first = [gate.decide(wilson_interval(k, games)[0], players)["accepted"] for k in range(games + 1)]
        both = sum(pmf[a] * pmf[b] for a in range(games + 1) if first[a] for b in range(games + 1)
                   if gate.decide(gate.pool(match[a], match[b])["pooled_ci_low"], players)["accepted"])
        return round(100 * sum(p for p, ok in zip(pmf, first, strict=True) if ok), 1), round(100 * both, 1)

    from bali_env.arena.stats import wilson_interval

    assert passes(1 / 3, 201, 3) == (2.3, 0.8) and passes(0.4, 201, 3) == (49.2, 47.4)
    assert passes(0.5, 200, 2) == (2.8, 0.9)
    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "research" / "alphazero.md").read_text().split())
    assert ("passes a 3-player gate of 201 games 2.3% of the time with one match and 0.8% with the confirmation "
            "(in 2 players: 2.8% and 0.9%") in page and "40% passes 49.2% and 47.4% of the time" in page


@pytest.mark.slow
def test_the_run_takes_a_new_best_only_when_the_confirmation_holds(tmp_path, monkeypatch, capsys):
    """In the loop a gate that passes is confirmed on the ``confirm`` stream's deals: the new
    network becomes the best only if the pooled interval clears the share, and the log says so."""
    played = []

    def scripted(lineup, players, games, seed, workers, progress=False):
        played.append(seed)
        rate = 0.9 if len(played) in (1, 3, 4) else 0.3  # gen 1: 0.9 then 0.3; gen 2: 0.9 then 0.9
        low, high = wilson_interval(rate * games, games)
        return {"games": games, "win_rate": rate, "ci_low": low, "ci_high": high}

    from bali_env.arena.stats import wilson_interval
    from bali_env.trainers.alphazero.generations import seed_for

    monkeypatch.setattr(gate, "match", scripted)
    folder = tmp_path / "run"
    Run(folder, Config(generations=2, **{**TINY, "gate_games": 40, "eval_every": 0}), say=print).run()
    assert played == [seed_for(0, 1, "gate"), seed_for(0, 1, "confirm"), seed_for(0, 2, "gate"),
                      seed_for(0, 2, "confirm")]
    first, second = (json.loads((folder / "gate" / f"gen_000{g}.json").read_text()) for g in (1, 2))
    assert first["confirm"]["pooled_win_rate"] == pytest.approx(0.6) and not first["accepted"]
    assert second["confirm"]["pooled_win_rate"] == pytest.approx(0.9) and second["accepted"]
    rows = list(csv.DictReader((folder / "generations.csv").open()))
    assert [(r["accepted"], r["best"]) for r in rows] == [("False", "0"), ("True", "2")]
    said = capsys.readouterr().out
    assert "again on other deals 30.0% of 40, both pooled 60.0% [" in said and "kept generation 0" in said


def test_the_learner_exports_what_it_loaded_and_learns_the_targets(chunk):
    _, rows = chunk
    policy = ExportedPolicy(shipped_policy(2))
    learner = Learner.from_policy(policy, lr=1e-3)
    again = learner.policy()
    x = rows.input[:50]
    np.testing.assert_allclose(again.forward(x), policy.forward(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(again.seat_values(x, 2), policy.seat_values(x, 2), rtol=1e-5, atol=1e-6)
    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in rows.arrays().items()}
    before = [v.item() for v in learner.losses(t["input"], t["action_mask"] > 0, t["policy"], t["value"])]
    learner.train(rows, steps=60, batch=128, seed=0)
    after = [v.item() for v in learner.losses(t["input"], t["action_mask"] > 0, t["policy"], t["value"])]
    assert after[0] < before[0] and after[1] < before[1]


def _fingerprint(folder: Path) -> dict:
    """What a run computed (not its timings): networks, learner weights, gate and curve results,
    the buffer, the losses."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.suffix == ".npz":
            with np.load(path) as data:
                out[rel] = {k: data[k].tobytes() for k in data.files}
        elif path.suffix == ".pt":
            saved = torch.load(path, weights_only=True)
            out[rel] = {k: v.numpy().tobytes() for part in ("actor", "value") for k, v in saved[part].items()}
        elif path.suffix == ".json" and rel != "config.json":
            out[rel] = json.loads(path.read_text())
        elif path.name == "generations.csv":
            out[rel] = [{k: v for k, v in r.items() if not k.endswith("_s")} for r in csv.DictReader(path.open())]
    return out


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """Two generations of a tiny run, not stopped."""
    folder = tmp_path_factory.mktemp("az") / "straight"
    Run(folder, Config(generations=2, **TINY)).run()
    return _fingerprint(folder)


@pytest.mark.slow
def test_a_run_stopped_in_the_middle_and_resumed_is_the_run_not_stopped(straight, tmp_path, monkeypatch):
    """Stopped after the first chunk of generation 2's self-play, then resumed: every network,
    learner state, buffer file, gate and curve result is the same, bit for bit."""
    folder = tmp_path / "stopped"
    Run(folder, Config(generations=1, **TINY)).run()
    play = Pool.play

    def one_chunk_then_stop(self, job, chunks, on_chunk):
        first = dict(list(chunks.items())[:1])
        play(self, job, first, on_chunk)
        raise KeyboardInterrupt

    monkeypatch.setattr(Pool, "play", one_chunk_then_stop)
    with pytest.raises(KeyboardInterrupt):
        Run(folder, Config(generations=2, **TINY)).run()
    assert len(list((folder / "buffer" / "gen_0002").glob("chunk_*.npz"))) == 1
    monkeypatch.setattr(Pool, "play", play)
    Run(folder, Config(generations=2, **TINY)).run()
    assert _fingerprint(folder) == straight
    assert json.loads((folder / "state.json").read_text())["generation"] == 2


@pytest.mark.slow
def test_local_workers_give_the_run_of_one_process(straight, tmp_path):
    folder = tmp_path / "two"
    Run(folder, Config(generations=2, **{**TINY, "workers": 2})).run()
    assert _fingerprint(folder) == straight


@pytest.mark.slow
def test_train_steps_0_is_self_play_only_by_the_start_network(straight, tmp_path):
    """``--train-steps 0``: every generation's self-play is the start network's (the rows of a
    run whose networks never passed the gate, as the straight run's did not), with no training,
    no gate and the row's losses and gate empty."""
    folder = tmp_path / "data"
    Run(folder, Config(generations=2, **{**TINY, "train_steps": 0})).run()
    mine = _fingerprint(folder)
    assert [r["best"] for r in straight["generations.csv"]] == ["0", "0"]  # the straight run kept generation 0
    for g in (1, 2):
        assert mine[f"buffer/gen_{g:04d}.npz"] == straight[f"buffer/gen_{g:04d}.npz"]
    rows = mine["generations.csv"]
    assert [(r["generation"], r["best"], r["accepted"]) for r in rows] == [("1", "0", "False"), ("2", "0", "False")]
    assert all(r[k] == "" for r in rows for k in ("policy_loss", "value_loss", "loss", "gate_win_rate", "gate_ci_low"))
    assert not list((folder / "gate").glob("*")) and sorted(p.name for p in (folder / "nets").glob("*")) == [
        "gen_0000.npz"]
    assert not list((folder / "learner").glob("gen_0001*"))


@pytest.mark.slow
def test_ray_gives_the_run_of_one_process(straight, tmp_path):
    pytest.importorskip("ray")
    folder = tmp_path / "ray"
    Run(folder, Config(generations=2, **{**TINY, "workers": 2, "backend": "ray"})).run()
    assert _fingerprint(folder) == straight


def test_bali_az_runs_resumes_and_says_how_to_play(tmp_path, capsys):
    out = tmp_path / "run"
    tiny = ["--games", "2", "--sims", "4", "--leaves", "2", "--train-steps", "2", "--batch", "16", "--gate-games",
            "2", "--eval-every", "0", "--chunk", "2", "--workers", "1", "--no-progress"]
    assert cli_main(["az", "--generations", "1", "--out", str(out), *tiny]) == 0
    said = capsys.readouterr().out
    assert f"ppo:path={out / 'best.npz'}" in said and f"bali az --resume {out}" in said
    assert ExportedPolicy(out / "best.npz").value_weights is not None
    with pytest.raises(SystemExit) as exc:
        cli_main(["az", "--generations", "1", "--out", str(out), *tiny])
    assert exc.value.code == 2 and "--overwrite" in capsys.readouterr().err
    assert cli_main(["az", "--resume", str(out), "--generations", "2", "--no-progress"]) == 0
    assert json.loads((out / "state.json").read_text())["generation"] == 2
    saved = json.loads((out / "config.json").read_text())
    assert saved["games"] == 2 and saved["workers"] == 1  # the saved settings, not the defaults


@pytest.mark.parametrize(("argv", "says"), [
    (["--sims", "0"], "--sims must be at least 1"),
    (["--init", "nope.npz"], "--init: no exported policy"),
    (["--players", "3", "--init", str(shipped_policy(2))], "value head gives 1 output(s) cannot start 3-player"),
    (["--lr", "2"], "--lr must be in (0, 1)"),
    (["--gumbel", "-1"], "--gumbel must be at least 0"),
    (["--train-steps", "-1"], "--train-steps must be at least 0"),
    (["--yardsticks", "greedy,nobody"], "--yardsticks"),
    (["--resume", "nowhere"], "no readable config.json"),
])
def test_bad_flags_are_one_line_and_write_nothing(tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        cli_main(["az", "--out", str(tmp_path / "run"), *argv] if "--resume" not in argv else ["az", *argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "runs").exists()


def test_init_shipped_without_the_file_says_to_start_from_scratch(tmp_path, capsys, monkeypatch):
    """``--init shipped`` (the default) where the policies folder lacks the player count's file:
    one line naming ``--init scratch``, nothing written."""
    import bali_env.bots.ppo as ppo

    monkeypatch.setattr(ppo, "POLICY_DIR", tmp_path / "policies")
    with pytest.raises(SystemExit) as exc:
        cli_main(["az", "--players", "3", "--out", str(tmp_path / "run")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "no policy is shipped for 3 players; give --init scratch" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_the_generation_benchmark_prints_and_writes_what_it_measured(tmp_path, capsys):
    from benchmarks import az_generation as bench

    assert bench.main(["--games", "2", "--out", str(tmp_path / "cost.json")]) == 0
    said = capsys.readouterr().out
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert cost["positions"] > 0 and cost["games"] == 2
    for key in ("selfplay_s_in_process", "selfplay_s_workers_1", "selfplay_s_workers_2", "train_s", "gate_s"):
        assert cost[key] > 0
    assert f"{cost['positions']:,} positions" in said and "training: 500 steps" in said


def test_the_improved_policy_completes_unvisited_actions_with_the_mixed_value():
    """Visited a0 (q 1, 4 visits) and a1 (q 0.5, 1 visit), unvisited a2, priors 0.4, 0.4, 0.2,
    network value 0: the mixed value is (0 + 5 * (0.4 * 1 + 0.4 * 0.5) / 0.8) / (1 + 5) = 0.625;
    the completed q (1, 0.5, 0.625) are rescaled to [0, 1] (1, 0, 0.25) and scaled by
    (50 + 4) * 0.1 = 5.4."""
    from bali_env.trainers.alphazero.selfplay import improved_policy

    root = {"visits": np.array([[4, 1, 0, 0]]), "q": np.array([[1.0, 0.5, np.nan, np.nan]]),
            "prior": np.array([[0.4, 0.4, 0.2, 0.0]]), "value": np.array([0.0])}
    out = improved_policy(root, np.array([[True, True, True, False]]))
    logits = np.log([0.4, 0.4, 0.2]) + 5.4 * np.array([1.0, 0.0, 0.25])
    np.testing.assert_allclose(out[0, :3], np.exp(logits) / np.exp(logits).sum())
    assert out[0, 3] == 0 and out.sum() == pytest.approx(1)
    same_q = {**root, "q": np.array([[0.3, 0.3, np.nan]]), "visits": np.array([[2, 2, 0]]),
              "prior": np.array([[0.8, 0.2, 0.0]])}
    np.testing.assert_allclose(improved_policy(same_q, np.array([[True, True, False]])), [[0.8, 0.2, 0.0]])


def _choices(players: int, seeds: range) -> tuple[np.ndarray, np.ndarray]:
    """The first position with a choice of each deal."""
    env = bali_env.raw_env(num_players=players)
    obs, masks = [], []
    for seed in seeds:
        env.reset(seed=seed)
        while env.observe(env.agent_selection)["action_mask"].sum() < 2:
            env.step(int(np.argmax(env.observe(env.agent_selection)["action_mask"])))
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
    return np.array(obs), np.array(masks)


def test_root_noise_changes_the_search_and_keeps_each_row_its_own(chunk):
    from bali_env.bots.puct import PolicySearchAgent

    policy = ExportedPolicy(shipped_policy(2))
    obs, masks = _choices(2, range(6))
    keys = np.arange(1, 7, dtype=np.uint64) * np.uint64(7919)
    search = PolicySearchAgent(seed=0, sims=32, leaves=4)
    plain = search.search_root(obs, masks, keys, policy)
    noisy = search.search_root(obs, masks, keys, policy, noise=(0.5, 0.5))
    alone = search.search_root(obs[3:4], masks[3:4], keys[3:4], policy, noise=(0.5, 0.5))
    assert not np.array_equal(plain["visits"], noisy["visits"])
    np.testing.assert_array_equal(alone["visits"][0], noisy["visits"][3])
    np.testing.assert_array_equal(plain["visits"], search.search(obs, masks, keys, policy))
    np.testing.assert_allclose(plain["prior"].sum(axis=1), 1.0)
    assert np.isnan(plain["q"][masks == 0]).all()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU PyTorch sees")
def test_device_cuda_without_a_gpu_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli_main(["az", "--device", "cuda", "--out", str(tmp_path / "run")])
    assert exc.value.code == 2 and "PyTorch sees no GPU" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("players", "init", "gumbel"), [(3, "scratch", 0), (4, "shipped", 8),
                                                       (3, str(shipped_policy(4)), 8), (3, "shipped", 8)])
def test_three_and_four_players_run_a_generation(tmp_path, players, init, gumbel):
    """3 players from scratch, 3 from the 4-player policy (its value head cut to three seats) and
    4 from the shipped policy with Gumbel's root: a generation runs, the value rows and the head
    have one column per seat."""
    folder = tmp_path / f"{players}p"
    Run(folder, Config(players=players, init=init, generations=1, gumbel=gumbel, **TINY)).run()
    rows = buffer.load(buffer.generation_file(folder, 1))
    assert np.allclose(rows.policy.sum(axis=1), 1.0) and not (rows.policy[rows.action_mask == 0] > 0).any()
    assert rows.value.shape[1] == players and np.allclose(rows.value.sum(axis=1), 1.0)
    best = ExportedPolicy(folder / "nets" / "gen_0001.npz")
    assert best.seat_values(rows.input[:3], players).shape == (3, players)
    assert best.meta["num_players"] == players
    if init.endswith(".npz"):  # the start is the given network, adapted
        start = ExportedPolicy(folder / "nets" / "gen_0000.npz")
        cut = ExportedPolicy(init).for_players(players)
        assert all(np.array_equal(a, b) for pair in zip(start.value_weights, cut.value_weights, strict=True)
                   for a, b in zip(*pair, strict=True))


def test_the_cost_of_a_generation_in_the_docs_is_the_kept_measurement():
    docs = Path(__file__).resolve().parents[1] / "docs"
    page = (docs / "research" / "alphazero.md").read_text()
    for players, suffix, root, gumbel in ((2, "", "Gumbel", Config().gumbel), (4, "", "Gumbel", Config().gumbel),
                                          (2, "-puct", "PUCT", 0), (4, "-puct", "PUCT", 0)):
        cost = json.loads((docs / "results" / "az" / f"cost-{players}p{suffix}.json").read_text())
        row = (f"| {players} | {root} | {cost['selfplay_s_in_process']:.1f} s | {cost['selfplay_s_workers_1']:.1f} s | "
               f"{cost['selfplay_s_workers_2']:.1f} s ({cost['speedup_2_workers']:.2f}x) | {cost['positions']:,} | "
               f"{cost['train_s']:.1f} s | {cost['gate_s']:.1f} s |")
        assert row in page
        assert cost["sims"] == Config().sims and cost["games"] == 64 and cost["gumbel"] == gumbel


@pytest.mark.slow
def test_sigterm_stops_at_once_with_no_worker_left_and_resume_finishes(tmp_path):
    """SIGTERM in the middle of self-play on 2 workers: exit 130 within seconds, no worker
    process left, the chunks already played kept; --resume then ends the run."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    argv = [sys.executable, "-m", "bali_env.apps.cli", "az", "--generations", "1", "--games", "64", "--sims", "16",
            "--chunk", "4", "--eval-every", "0", "--gate-games", "2", "--train-steps", "2", "--workers", "2",
            "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 240
    while not list((out / "buffer").glob("gen_0001/chunk_*.npz")) and time.time() < deadline:
        time.sleep(0.2)
    assert list((out / "buffer").glob("gen_0001/chunk_*.npz")), proc.communicate()[1][-2000:]
    proc.send_signal(signal.SIGTERM)
    t = time.time()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and time.time() - t < 15, err[-2000:]
    assert b"--resume" in err
    left = "?"
    for _ in range(50):  # the workers and multiprocessing's resource tracker end with the run
        left = subprocess.run(["ps", "-o", "pid,stat,args", "--no-headers", "-g", str(proc.pid)], capture_output=True,
                              text=True).stdout.strip()
        if not left:
            break
        time.sleep(0.1)
    assert not left, f"processes of the stopped run are still alive: {left}"
    done = subprocess.run([sys.executable, "-m", "bali_env.apps.cli", "az", "--resume", str(out), "--no-progress"],
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((out / "state.json").read_text())["generation"] == 1


@pytest.mark.parametrize(("name", "shown", "listed", "gumbel", "sims"),
                         [("az2p", "2p", 13, 0, 128), ("az2p-gumbel", "2p-gumbel", 8, 16, 128),
                          ("az2p-sims400", "2p-sims400", 16, 16, 400),
                          ("az4p-gumbel", "4p-gumbel", 13, 16, 128), ("az4p-gumbel4", "4p-gumbel4", 25, 4, 128)])
def test_the_kept_runs_are_records_and_the_docs_show_their_files(monkeypatch, name, shown, listed, gumbel, sims):
    """training/NAME keeps a run's record, not its weights: the settings, the state, a gate result
    per generation, the log (no optimiser state, no network: only .json and .csv files);
    docs/results/az shows its log and curve (a run with --eval-every 0 has none), and the page
    lists its first gates."""
    root = Path(__file__).resolve().parents[1]
    run = root / "training" / name
    files = sorted(p.relative_to(run) for p in run.rglob("*") if p.is_file())
    assert files and {p.suffix for p in files} <= {".json", ".csv"}, files  # no .pt, .npz, .png
    state = json.loads((run / "state.json").read_text())
    g, best = state["generation"], state["best"]
    assert sorted(p.name for p in (run / "gate").iterdir()) == [f"gen_{k:04d}.json" for k in range(1, g + 1)]
    rows = list(csv.DictReader((run / "generations.csv").open()))
    assert [int(r["generation"]) for r in rows] == list(range(1, g + 1)) and int(rows[-1]["best"]) == best
    docs = root / "docs" / "results" / "az"
    curve = json.loads((run / "config.json").read_text())["eval_every"] > 0
    for kept in ("generations.csv", "curve.csv"):
        copy = docs / kept.replace(".", f"-{shown}.")
        if kept == "generations.csv" or curve:
            assert (run / kept).read_bytes() == copy.read_bytes(), copy.name
        else:
            assert not (run / kept).exists() and not copy.exists(), copy.name
    assert (docs / f"curve-{shown}.png").is_file() == curve
    page = (root / "docs" / "research" / "alphazero.md").read_text()
    rates = ", ".join(f"{100 * float(r['gate_win_rate']):.1f}" for r in rows[:listed])
    assert f"| 1-{listed} | {rates}% of 200 games against generation 0" in page
    from bali_env.apps.cli import parse_command
    from bali_env.trainers.alphazero import command

    # the saved settings read as --resume reads them; az2p-sims400's --init file (az2p-gumbel's
    # generation 9) is not kept under that path: it is the shipped bali_2p.npz
    monkeypatch.setattr(command, "_check_init", lambda cfg: None)
    saved = command.config_from(parse_command(["az", "--resume", str(run)]))
    assert saved.gumbel == gumbel and saved.sims == sims  # az2p was written before --gumbel: a PUCT root


def test_the_second_runs_gates_in_the_docs_are_its_log():
    root = Path(__file__).resolve().parents[1]
    rows = list(csv.DictReader((root / "docs" / "results" / "az" / "generations-2p-800.csv").open()))
    rates = ", ".join(f"{100 * float(r['gate_win_rate']):.1f}" for r in rows[:-1])
    page = " ".join((root / "docs" / "research" / "alphazero.md").read_text().split())
    assert f"{rates} and {100 * float(rows[-1]['gate_win_rate']):.1f}%" in page
    assert f"{sum(int(r['positions']) for r in rows):,} positions" in page


def test_sequential_halving_follows_mctx_schedule():
    """Four actions and 20 descents: 2 phases; 2 visits each to the 4, then the best 2 share the
    rest (mctx's get_sequence_of_considered_visits); one action: every descent to it."""
    from bali_env.bots.puct_search import halving_schedule

    np.testing.assert_array_equal(halving_schedule(4, 20), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7])
    np.testing.assert_array_equal(halving_schedule(1, 5), np.arange(5))
    assert len(halving_schedule(16, 32)) == 32 and (halving_schedule(16, 32)[:16] == 0).all()


def test_the_halving_choice_takes_the_best_scaled_q_among_the_actions_due():
    """A root whose four children have 1, 1, 1 and 2 visits, mean win shares 0.2, 0.9, 0.5, 1.0,
    equal Gumbel scores: the descent due at visit count 1 takes action 1 (the best q among the
    three with one visit), not action 3 (two visits); with action 1's score 10 lower, action 2."""
    from bali_env.bots.puct_search import GumbelRoot, PuctTrees, _halving_choice

    child = np.full((6, 44), -1, dtype=np.int32)
    child[0, :4] = [1, 2, 3, 4]
    visits = np.array([7, 1, 1, 1, 2, 0])  # the root: its evaluation, five descents, and this one
    value = np.array([0.0, 0.2, 0.9, 0.5, 2.0, 0.0])
    weights = np.ones((6, 44), dtype=np.float32)
    mask = np.zeros(44, dtype=np.int8)
    mask[:4] = 1
    score = np.where(mask > 0, 0.0, -np.inf)
    halving = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    scratch = np.zeros((4, 44))
    nodes = np.zeros(6, dtype=np.int64)
    tree = PuctTrees(child, visits, value, nodes, weights, np.full(6, 0.5), nodes.astype(np.int8), nodes[:1])
    assert _halving_choice(GumbelRoot(score, halving), mask, tree, scratch) == 1
    score[1] = -10.0
    assert _halving_choice(GumbelRoot(score, halving), mask, tree, scratch) == 2
    visits[0] = 2 + len(halving)  # the schedule is spent: PUCT decides
    assert _halving_choice(GumbelRoot(score, halving), mask, tree, scratch) == -1


def test_a_gumbel_root_spends_its_descents_as_sequential_halving_says():
    """At every root the visits, sorted, are the schedule's (as many actions reach v + 1 visits as
    the schedule has descents due at v); the action chosen is among the most visited; a row
    searched alone is searched the same; the agent plays the search's choice."""
    from bali_env.bots.puct import PolicySearchAgent
    from bali_env.bots.puct_search import halving_schedule

    policy = ExportedPolicy(shipped_policy(2))
    obs, masks = _choices(2, range(8))
    keys = np.arange(1, 9, dtype=np.uint64) * np.uint64(104729)
    search = PolicySearchAgent(seed=0, sims=24, leaves=4, gumbel=16)
    root = search.search_root(obs, masks, keys, policy)
    for i in range(len(obs)):
        due = halving_schedule(min(16, int(masks[i].sum())), 24)
        reached = np.array([(due == v).sum() for v in range(due.max() + 1)])
        expected = [int((reached > k).sum()) for k in range(int(masks[i].sum()))]
        np.testing.assert_array_equal(np.sort(root["visits"][i][masks[i] > 0])[::-1], expected)
        assert root["visits"][i, root["action"][i]] == root["visits"][i].max()
    alone = search.search_root(obs[5:6], masks[5:6], keys[5:6], policy)
    np.testing.assert_array_equal(alone["visits"][0], root["visits"][5])
    assert alone["action"][0] == root["action"][5]
    np.testing.assert_array_equal(search.act_batch_keyed(obs, masks, keys), root["action"])


def test_gumbel_self_play_plays_the_search_choice_and_keeps_the_improved_policy():
    """The first kept decision of a Gumbel self-play game, searched again with its key: the move
    played is the search's choice and the policy row its improved policy."""
    from bali_env.engine.seeds import decision_keys
    from bali_env.bots.puct import PolicySearchAgent
    from bali_env.trainers.alphazero.selfplay import improved_policy

    policy = ExportedPolicy(shipped_policy(2))
    job = job_for(policy, SelfPlaySettings(players=2, seed=5, sims=16, c=1.5, leaves=4, temp_moves=6,
                                           noise=(0.5, 0.25), gumbel=8))
    assert job.settings.noise is None and job.settings.target == "improved"
    rows = play_chunk(job, [0])
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=deal_seed(5, 0))
    decision = 0
    while env.observe(env.agent_selection)["action_mask"].sum() < 2:
        env.step(int(np.argmax(env.observe(env.agent_selection)["action_mask"])))
        decision += 1
    o = env.observe(env.agent_selection)
    key = decision_keys(5, np.array([0]), np.array([env.agents.index(env.agent_selection)]), np.array([decision]))
    search = PolicySearchAgent(seed=0, sims=16, leaves=4, gumbel=8)
    root = search.search_root(o["observation"][None], o["action_mask"][None], key, policy)
    assert rows.action[0] == root["action"][0]
    np.testing.assert_allclose(rows.policy[0], improved_policy(root, o["action_mask"][None] > 0)[0], rtol=1e-6)
    recomputed = improved_policy({k: v for k, v in root.items() if k != "sigma"}, o["action_mask"][None] > 0)
    np.testing.assert_array_equal(improved_policy(root, o["action_mask"][None] > 0), recomputed)  # the kept sigma


def test_the_gumbel_benchmark_prints_and_writes_what_it_measured(tmp_path, capsys):
    from benchmarks import gumbel

    assert gumbel.main(["--games", "2", "--sims", "4", "--workers", "1", "--out", str(tmp_path / "g.json")]) == 0
    said = capsys.readouterr().out
    data = json.loads((tmp_path / "g.json").read_text())
    assert [(m["sims"], m["root"], m["games"]) for m in data["matches"]] == [(4, "puct", 2), (4, "gumbel", 2)]
    assert all(line in said for line in gumbel.table(data["matches"]))


def test_the_gumbel_comparison_in_the_docs_is_the_kept_measurement():
    from benchmarks import gumbel

    docs = Path(__file__).resolve().parents[1] / "docs"
    data = json.loads((docs / "results" / "az" / "gumbel-vs-puct-2p.json").read_text())
    page = (docs / "research" / "alphazero.md").read_text()
    assert "\n".join(gumbel.table(data["matches"])) in page
    assert data["seed"] == gumbel.SEED and all(m["games"] == 400 for m in data["matches"])


def test_the_roots_self_play_benchmark_prints_writes_and_the_docs_quote_its_kept_runs(tmp_path, capsys):
    """``benchmarks.roots_selfplay`` times both roots in alternating rounds, prints and writes what it
    measured; the AlphaZero page quotes the kept 2- and 4-player runs' figures."""
    from benchmarks import roots_selfplay

    assert roots_selfplay.main(["--games", "1", "--rounds", "2", "--sims", "4", "--out", str(tmp_path / "r.json")]) == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert [(m["round"], m["gumbel"]) for m in data["rounds_measured"]] == [(0, 16), (0, 0), (1, 0), (1, 16)]
    assert roots_selfplay.summary(data) in capsys.readouterr().out
    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "research" / "alphazero.md").read_text().split())
    for players in (2, 4):
        kept = json.loads((Path(__file__).resolve().parents[1] / "docs" / "results" / "az"
                           / f"roots-selfplay-{players}p.json").read_text())
        gumbel, puct = kept["gumbel"]["ms_per_position"], kept["puct"]["ms_per_position"]
        quoted = page.replace("ms a position against PUCT's ", "against ")
        assert f"{gumbel:.2f} against {puct:.2f} in {players}" in quoted


def test_evaluate_measures_without_training_and_agrees_with_the_losses(chunk):
    """``Learner.evaluate`` gives ``losses`` on the rows and the share of rows whose first legal
    choice is the target's, and leaves the weights as they were."""
    _, rows = chunk
    learner = Learner.from_policy(ExportedPolicy(shipped_policy(2)), lr=1e-3)
    before = [w.copy() for pair in learner.policy().arrays()[0] for w in pair]
    got = learner.evaluate(rows)
    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in rows.arrays().items()}
    p, v = learner.losses(t["input"], t["action_mask"] > 0, t["policy"], t["value"])
    assert got["policy_loss"] == pytest.approx(p.item()) and got["value_loss"] == pytest.approx(v.item())
    logits = np.where(rows.action_mask > 0, learner.policy().forward(rows.input), -np.inf)
    assert got["agreement"] == pytest.approx(np.mean(logits.argmax(1) == rows.policy.argmax(1)))
    assert 0.0 < got["agreement"] < 1.0
    after = [w for pair in learner.policy().arrays()[0] for w in pair]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_rows_read_in_another_column_order_train_as_the_rows_moved(chunk):
    """``Learner.train(orders=...)`` reads each batch row through the maps of an order drawn from
    its own stream: with one order, the steps are those on the rows moved beforehand (the same
    batches, bit for bit); with the 24 orders, other steps."""
    from bali_env.bots.features import features_for_input, input_permutation
    from bali_env.engine import column_orders

    _, rows = chunk
    rows = replace(rows, action_mask=rows.action_mask.copy(), policy=rows.policy.copy())
    refill = (rows.action_mask[:, 29:33].sum(1) > 1) & (rows.policy[:, 29] == 0)
    rows.action_mask[refill, 29] = 0  # column 0 closed at some refills: the masks must move too
    features = features_for_input(rows.input.shape[1])
    input_index, action_index = input_permutation((2, 0, 3, 1), features)
    moved = replace(rows, input=rows.input[:, input_index], action_mask=rows.action_mask[:, action_index],
                    policy=rows.policy[:, action_index])
    assert refill.sum() > 10 and not np.array_equal(moved.policy, rows.policy)
    nets = []
    for data, orders in ((moved, None), (rows, (input_index[None], action_index[None])),
                         (rows, tuple(np.stack(m) for m in zip(*(input_permutation(o, features)
                                                                  for o in column_orders(False)), strict=True)))):
        learner = Learner.from_policy(ExportedPolicy(shipped_policy(2)), lr=1e-3)
        losses = learner.train(data, steps=20, batch=64, seed=5, orders=orders)
        nets.append(([w for pair in learner.policy().arrays()[0] for w in pair], losses))
    assert nets[1][1] == nets[0][1]
    assert all(np.array_equal(a, b) for a, b in zip(nets[0][0], nets[1][0], strict=True))
    assert nets[2][1] != nets[0][1]


def test_a_fresh_network_takes_the_hidden_widths_asked_for():
    wide = Learner.scratch(2, 1e-3, seed=0, hidden=(64, 32, 16))
    weights, meta = wide.policy().arrays()
    assert [w.shape[0] for w, _ in weights] == [64, 32, 16, 44] and meta["layers"] == 4
    assert [w.shape[0] for w, _ in Learner.scratch(2, 1e-3, seed=0).policy().arrays()[0]] == [128, 128, 44]
    for bad in [(), (0,), (64, -1), (64.0,)]:
        with pytest.raises(ValueError, match="hidden"):
            Learner.scratch(2, 1e-3, seed=0, hidden=bad)


@pytest.fixture(scope="module")
def fit_run(tmp_path_factory, chunk):
    """A run folder with three generations of rows (the chunk's, split by game) and the shipped
    policy as its best, for ``benchmarks.az_fit``."""
    _, rows = chunk
    run = tmp_path_factory.mktemp("fit") / "run"
    for g in range(3):
        buffer.save(buffer.generation_file(run, g + 1), rows.select(rows.game == g))
    (run / "config.json").write_text(json.dumps({"players": 2, "lr": 3e-4, "batch": 32, "window": 4}))
    (run / "best.npz").write_bytes(shipped_policy(2).read_bytes())
    return run


def test_the_fit_benchmark_holds_out_the_newest_generation_and_writes_what_it_measured(fit_run, chunk, tmp_path,
                                                                                      capsys):
    from benchmarks import az_fit

    _, rows = chunk
    out, png, npz = tmp_path / "fit.json", tmp_path / "fit.png", tmp_path / "fit.npz"
    argv = [str(fit_run), "--windows", "1", "2", "5", "--hidden", "128x128", "16x8x8", "--steps-per-generation", "3",
            "--min-steps", "4", "--loop-steps", "5", "--every", "2", "--out", str(out), "--plot", str(png),
            "--export", str(npz), "--permute-columns"]
    assert az_fit.main(argv) == 0
    said = capsys.readouterr().out
    data = json.loads(out.read_text())
    held = rows.game == 2
    assert data["held_out_generation"] == 3 and data["held_out_rows"] == int(held.sum())
    assert data["target_entropy"] == pytest.approx(az_fit.target_entropy({"policy": rows.policy[held]}))
    # windows beyond the two generations there are to fit become two; steps: 3 a generation, 4 at least
    assert [(d["window"], d["rows"], d["steps"]) for d in data["data"]] == [
        (1, int((rows.game == 1).sum()), 4), (2, int((rows.game < 2).sum()), 6)]
    assert [c["step"] for c in data["data"][1]["curve"]] == [0, 2, 4, 6]
    assert [c["hidden"] for c in data["capacity"]] == [[128, 128], [16, 8, 8]]
    assert "| fresh, 16x8x8, " in az_fit.table(data)
    assert data["capacity"][0]["curve"] == data["data"][1]["curve"]  # the shipped shape is the data fit
    columns = data["columns"]  # the data fit's rows and steps, each row read in one of 24 column orders
    assert (columns["orders"], columns["rows"], columns["steps"]) == (24, data["data"][1]["rows"], 6)
    assert columns["curve"][0] == data["data"][1]["curve"][0] and columns["curve"] != data["data"][1]["curve"]
    assert f"| fresh, 128x128, {columns['rows']:,} rows, columns in random order |" in az_fit.table(data)
    assert "columns in random order" in said
    loop = data["loop"]
    assert [c["step"] for c in loop["curve"]] == [0, 2, 4, 5] and loop["window"] == 2
    first = Learner.from_policy(ExportedPolicy(shipped_policy(2)), 3e-4).evaluate(rows.select(held))
    assert loop["curve"][0]["policy_loss"] == pytest.approx(first["policy_loss"])
    assert loop["best_policy_loss"] == min(c["policy_loss"] for c in loop["curve"])
    best_value = min(loop["curve"], key=lambda c: c["value_loss"])
    assert (loop["best_value_loss"], loop["best_value_step"]) == (best_value["value_loss"], best_value["step"])
    assert az_fit.line("the loop", loop).split(":")[0] in said and "data, window 2" in said
    exported = Learner.from_policy(ExportedPolicy(npz), 3e-4).evaluate(rows.select(held))
    assert exported["policy_loss"] == pytest.approx(loop["best_policy_loss"], rel=1e-5)
    assert exported["value_loss"] == pytest.approx(loop["best_value_loss"], rel=1e-5)
    assert png.read_bytes()[:4] == b"\x89PNG"
    def curves(result: dict) -> list:
        return [d["curve"] for d in result["data"] + result["capacity"] + [result["loop"], result["columns"]]]

    assert az_fit.main(argv) == 0 and curves(json.loads(out.read_text())) == curves(data)  # seeded: the same fits


@pytest.mark.parametrize(("argv", "says"), [
    (["--export", "x.npz", "--loop-steps", "0"], "--loop-steps"),
    (["--windows", "0"], "--windows"),
    (["--hidden", "12x"], "--hidden"),
    (["--hidden", "0x5"], "--hidden"),
    (["--lr", "0"], "--lr"),
    (["--seed", "-1"], "--seed"),
])
def test_the_fit_benchmark_refuses_bad_flags(fit_run, capsys, argv, says):
    from benchmarks import az_fit

    with pytest.raises(SystemExit) as exc:
        az_fit.main([str(fit_run), *argv])
    assert exc.value.code == 2 and says in capsys.readouterr().err


def test_the_fit_benchmark_needs_two_generations_and_a_run(tmp_path, fit_run, capsys):
    from benchmarks import az_fit

    with pytest.raises(SystemExit) as exc:
        az_fit.main([str(tmp_path)])
    assert exc.value.code == 2 and "not a bali az run" in capsys.readouterr().err
    one = tmp_path / "one"
    (one / "buffer").mkdir(parents=True)
    (one / "config.json").write_text((fit_run / "config.json").read_text())
    buffer.save(buffer.generation_file(one, 1), buffer.load(buffer.generation_file(fit_run, 1)))
    with pytest.raises(SystemExit) as exc:
        az_fit.main([str(one)])
    assert exc.value.code == 2 and "two or more" in capsys.readouterr().err


def test_the_fits_in_the_docs_are_the_kept_measurements():
    """The AlphaZero page's fit tables are ``benchmarks.az_fit.table`` of the kept results."""
    from benchmarks import az_fit

    docs = Path(__file__).resolve().parents[1] / "docs"
    page = "\n".join(line.strip()  # tables in lists
                     for line in (docs / "research" / "alphazero.md").read_text().splitlines())
    kept = sorted((docs / "results" / "az").glob("fit-2p-*.json"))
    assert len(kept) >= 3
    for path in kept:
        assert az_fit.table(json.loads(path.read_text())) in page, path.name
        assert f"results/az/{path.name}" in page


def test_a_fit_keeps_each_head_at_its_own_best_held_out_point():
    """``benchmarks.az_fit.fit`` keeps the actor at its lowest held-out policy loss and the value
    head at its lowest value loss, wherever in the curve each falls."""
    from benchmarks import az_fit

    policy, value = [0.9, 0.7, 0.5, 0.6], [0.5, 0.4, 0.6, 0.8]  # the best: steps 4 and 2

    class Scripted:
        def __init__(self) -> None:
            self.actor = torch.nn.Sequential(torch.nn.Linear(1, 1))
            self.value = torch.nn.Sequential(torch.nn.Linear(1, 1))
            self.points = iter(zip(policy, value, strict=True))

        def evaluate(self, rows):
            p, v = next(self.points)
            self.actor[0].bias.data.fill_(p)  # the weights say at which point they were taken
            self.value[0].bias.data.fill_(v)
            return {"policy_loss": p, "value_loss": v, "agreement": 0.5}

        def train(self, rows, steps, batch, seed, orders=None):
            return {"policy_loss": 0.0, "value_loss": 0.0}

    got = az_fit.fit(Scripted(), {"action": np.zeros(3)}, {}, steps=6, every=2, batch=1, seed=0)
    assert [c["step"] for c in got["curve"]] == [0, 2, 4, 6]
    assert (got["best_policy_loss"], got["best_policy_step"]) == (0.5, 4)
    assert (got["best_value_loss"], got["best_value_step"]) == (0.4, 2)
    assert got["layers"]["actor"][0][1][0] == pytest.approx(0.5)
    assert got["layers"]["value"][0][1][0] == pytest.approx(0.4)


def test_the_target_figures_on_searches_written_by_hand():
    """``benchmarks.az_targets.figures`` on three searches of two positions, every figure by hand."""
    from benchmarks import az_targets

    legal = np.array([[True, True, True], [True, True, False]])
    targets = np.array([[[0.6, 0.3, 0.1], [0.5, 0.5, 0.0]],    # first choices: 0, 0 (a tie takes the lower id)
                        [[0.2, 0.7, 0.1], [0.2, 0.8, 0.0]],    # 1, 1
                        [[0.5, 0.4, 0.1], [0.4, 0.6, 0.0]]])   # 0, 1
    prior = np.array([[0.1, 0.8, 0.1], [0.3, 0.3, 0.9]])       # 1, 0 (the illegal 0.9 does not count)
    got = az_targets.figures(targets, prior, legal)
    ent = -(targets * np.log(np.where(targets > 0, targets, 1.0))).sum(axis=2).mean()
    # the rest's mean, without search 0: [.35 .55 .1] -> 1, [.3 .7 0] -> 1; without 1: [.55 .35 .1] -> 0,
    # [.45 .55 0] -> 1; without 2: [.4 .5 .1] -> 1, [.35 .65 0] -> 1
    rest = [np.array([[.35, .55, .1], [.3, .7, 0]]), np.array([[.55, .35, .1], [.45, .55, 0]]),
            np.array([[.4, .5, .1], [.35, .65, 0]])]
    def ce(t, p):
        return -(np.where(legal, t * np.log(np.maximum(p, 1e-12)), 0)).sum(axis=1)

    assert got == pytest.approx({
        "positions": 2, "target_entropy": ent,
        "searches_agree": 2 / 6,          # pairs (0,1): 0 of 2, (0,2): 1 of 2, (1,2): 1 of 2
        "search_vs_rest": 2 / 6,          # 0 0 against 1 1: none; 1 1 against 0 1: one; 0 1 against 1 1: one
        "network_vs_search": 2 / 6,       # the network's 1 0 against 0 0, 1 1, 0 1: one, one, none
        "network_vs_rest": 2 / 6,         # against 1 1, 0 1, 1 1: one, none, one
        "network_loss": np.mean([ce(t, prior) for t in targets]),
        "rest_loss": np.mean([ce(targets[r], rest[r]) for r in range(3)]),
    })
    with pytest.raises(ValueError, match="repeats must be 2"):
        az_targets.figures(targets[:1], prior, legal)
    # by kind of decision: position 0 a play, position 1 a refill; the mean of all three searches
    # is [.433 .467 .1] -> 1 (the network's 1: no miss) and [.367 .633 0] -> 1 (the network's 0: a miss)
    kinds = az_targets.by_decision(targets, prior, legal, np.array([1, 5]))
    assert list(kinds) == ["play", "refill"]
    assert (kinds["play"]["misses"], kinds["refill"]["misses"]) == (0, 1)
    assert kinds["play"]["searches_agree"] == pytest.approx(1 / 3)    # 0, 1, 0: only (0, 2) agree
    assert kinds["refill"]["network_vs_rest"] == pytest.approx(0.0)   # the network's 0 against 1 1 1
    assert kinds["play"]["positions"] == kinds["refill"]["positions"] == 1
    said = az_targets.decisions_table({"by_sims": [{"sims": 8, "by_decision": kinds}]}).splitlines()
    assert said[2].startswith("| refill | 50.0% | 100.0% | ") and said[3].startswith("| play | 50.0% | 0.0% | ")


@pytest.fixture(scope="module")
def targets_run(tmp_path_factory):
    """A Gumbel run's folder (its config and the shipped policy as its best) for ``benchmarks.az_targets``."""
    run = tmp_path_factory.mktemp("targets") / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"players": 2, "sims": 8, "c": 1.5, "leaves": 4, "gumbel": 4}))
    (run / "best.npz").write_bytes(shipped_policy(2).read_bytes())
    return run


def test_the_targets_benchmark_searches_the_self_play_positions_again(targets_run, tmp_path, capsys):
    """The first search of each decision is self-play's (the rows ``bali az`` keeps for the same seed,
    exactly); the others search the same positions again; the JSON holds the figures of those
    searches, a row per descents in the table; the same flags give the same figures."""
    from benchmarks import az_targets

    policy = ExportedPolicy(targets_run / "best.npz")
    config = json.loads((targets_run / "config.json").read_text())
    found = az_targets.play(policy, config, games=2, repeats=3, sims=[8, 12], seed=5)
    settings = SelfPlaySettings(players=2, seed=5, sims=8, c=1.5, leaves=4, temp_moves=0, gumbel=4)
    rows = play_chunk(job_for(policy, settings), [0, 1])
    np.testing.assert_array_equal(found["targets"][0][0], rows.policy)
    np.testing.assert_array_equal(found["legal"], rows.action_mask > 0)
    from bali_env.engine import N_DECISIONS, O_DECISION

    np.testing.assert_array_equal(found["decision"],
                                  np.argmax(rows.input[:, O_DECISION : O_DECISION + N_DECISIONS], axis=1))
    assert [t.shape for t in found["targets"]] == [(3, len(rows), 44)] * 2
    assert not np.array_equal(found["targets"][0][0], found["targets"][0][1])  # other keys, other searches
    out = tmp_path / "targets.json"
    argv = [str(targets_run), "--games", "2", "--repeats", "3", "--sims", "12", "8", "--seed", "5", "--out", str(out)]
    assert az_targets.main(argv) == 0
    said = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert [f["sims"] for f in data["by_sims"]] == [8, 12]  # the run's own first, once
    for f, searched in zip(data["by_sims"], found["targets"], strict=True):
        assert {k: v for k, v in f.items() if k not in ("sims", "by_decision")} == pytest.approx(
            az_targets.figures(searched, found["prior"], found["legal"]))
        kinds = az_targets.by_decision(searched, found["prior"], found["legal"], found["decision"])
        assert f["by_decision"] == json.loads(json.dumps(kinds))
    assert az_targets.table(data) in said and len(az_targets.table(data).splitlines()) == 4
    assert az_targets.decisions_table(data) in said
    assert az_targets.main(argv) == 0
    assert json.loads(out.read_text())["by_sims"] == data["by_sims"]


@pytest.mark.parametrize(("argv", "says"), [
    (["--repeats", "1"], "--repeats"),
    (["--games", "0"], "--games"),
    (["--sims", "0"], "--sims"),
    (["--seed", "-1"], "--seed"),
    (["--policy", "nowhere.npz"], "no policy file"),
])
def test_the_targets_benchmark_refuses_bad_flags(targets_run, capsys, argv, says):
    from benchmarks import az_targets

    with pytest.raises(SystemExit) as exc:
        az_targets.main([str(targets_run), *argv])
    assert exc.value.code == 2 and says in capsys.readouterr().err


def test_the_targets_benchmark_needs_a_run_and_a_value_head(targets_run, tmp_path, capsys):
    from benchmarks import az_targets
    from bali_env.bots.ppo import write_policy

    with pytest.raises(SystemExit) as exc:
        az_targets.main([str(tmp_path)])
    assert exc.value.code == 2 and "not a bali az run" in capsys.readouterr().err
    headless = write_policy(*ExportedPolicy(shipped_policy(2)).arrays(), tmp_path / "headless.npz")
    with pytest.raises(SystemExit) as exc:
        az_targets.main([str(targets_run), "--policy", str(headless)])
    assert exc.value.code == 2 and "has no value head, which the search needs" in capsys.readouterr().err


def test_the_target_figures_in_the_docs_are_the_kept_measurements():
    """The AlphaZero page's tables of searches searched again are ``benchmarks.az_targets.table``
    of the kept results, and the page links them."""
    from benchmarks import az_targets

    docs = Path(__file__).resolve().parents[1] / "docs"
    page = "\n".join(line.strip() for line in (docs / "research" / "alphazero.md").read_text().splitlines())
    kept = sorted((docs / "results" / "az").glob("targets-*.json"))
    assert kept
    for path in kept:
        assert az_targets.table(json.loads(path.read_text())) in page, path.name
        assert f"results/az/{path.name}" in page
    assert az_targets.decisions_table(json.loads((docs / "results" / "az" / "targets-2p.json").read_text())) in page
