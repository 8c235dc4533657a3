"""Every public entry point that reaches a kernel checks its arguments first: TypeError for a
wrong type (bools are not ints), ValueError for a wrong value, naming the argument; states handed
in are checked for consistency; fuzzed states never crash the process (run with Numba's bounds
checking on, so an out-of-range index would raise instead of corrupting memory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bali_env
from bali_env import engine as C
from bali_env.engine.contract import check_states
from bali_env.envs.batched import BaliVectorEnv, rollout

ROOT = os.path.dirname(os.path.dirname(bali_env.__file__))


@pytest.fixture(scope="module")
def boundscheck(tmp_path_factory):
    """The environment of a subprocess whose kernels compile with NUMBA_BOUNDSCHECK=1 (one cache
    for the module's fuzz tests, apart from the normal one)."""
    return {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path_factory.mktemp("bounds"))}


@pytest.mark.parametrize(("kwargs", "error", "named"), [
    ({"num_players": 5}, ValueError, "num_players"),
    ({"num_players": 50}, ValueError, "num_players"),
    ({"num_players": 4.0}, TypeError, "num_players"),
    ({"num_players": True}, TypeError, "num_players"),
    ({"oracle": "no"}, TypeError, "oracle"),
    ({"demon": 1}, TypeError, "demon"),
    ({"seed": 1.5}, TypeError, "seed"),
    ({"seed": "7"}, TypeError, "seed"),
])
def test_rollout_and_vector_env_refuse_bad_arguments(kwargs, error, named):
    """rollout(...) and BaliVectorEnv(...) name the bad argument before any kernel runs."""
    with pytest.raises(error, match=named):
        rollout(4, **kwargs)
    with pytest.raises(error, match=named):
        BaliVectorEnv(2, **kwargs)


@pytest.mark.parametrize("num_games", [-1, 2.5, True, "3"])
def test_rollout_refuses_a_bad_game_count(num_games):
    """num_games is a non-negative int."""
    with pytest.raises((TypeError, ValueError), match="num_games"):
        rollout(num_games)


@pytest.mark.parametrize("seat", [7, -1, 2, "1", 1.7, True])
def test_vector_observe_refuses_a_seat_not_in_the_game(seat):
    """observe(seat) takes an int seat of the game (2 players: 0 or 1)."""
    venv = BaliVectorEnv(3, num_players=2, seed=0)
    venv.reset()
    with pytest.raises((TypeError, ValueError), match="seat"):
        venv.observe(seat)
    obs, masks = venv.observe(1)
    assert obs.shape == (3, C.OBS_DIM) and obs.any() and masks.shape == (3, C.N_ACTIONS)


def _states(num_players: int = 3, count: int = 40) -> np.ndarray:
    venv = BaliVectorEnv(count, num_players=num_players, oracle=True, demon=True, seed=3)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(int(rng.integers(10, 60))):
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks]))
    return venv.states.copy()


@pytest.mark.parametrize(("slot", "value", "what"), [
    (C.S_NUM_PLAYERS, 9, "num_players"),
    (C.S_PHASE, 12, "phase"),
    (C.S_TO_MOVE, 3, "seat to move"),
    (C.S_DECK_POS, 900, "deck position"),
    (C.S_ALTAR_LEN, 60, "altar length"),
    (C.S_WINDOW, 7, "oracle window"),
    (C.S_HANDS + 2, -1, "hands"),
    (C.S_STONES + 3, 5, "stones"),  # the 4th seat is not in a 3-player game
    (C.S_COL_LEN, 9, "market column"),
    (C.S_ALTAR_KNOWN, 64, "altar knowledge"),
])
def test_inconsistent_states_are_refused(slot, value, what):
    """check_states (and rollout(states=...)) say which field is out of range; nothing is played."""
    states = _states()
    check_states(states)  # real positions pass
    bad = states.copy()
    bad[5, slot] = value
    with pytest.raises(ValueError, match=what):
        check_states(bad)
    with pytest.raises(ValueError, match=what):
        rollout(states=bad)
    with pytest.raises(TypeError, match="int16"):
        check_states(states.astype(np.float32))
    with pytest.raises(ValueError, match="shape"):
        rollout(states=states[:, :10])


def test_mixed_player_counts_are_refused():
    """A batch of states shares one player count (the results have one width)."""
    states = np.concatenate([_states(2, 3), _states(4, 3)])
    with pytest.raises(ValueError, match="same number of players"):
        rollout(states=states)


FUZZ = textwrap.dedent("""
    import numpy as np
    from bali_env import engine as C
    from bali_env.engine.contract import check_states
    from bali_env.envs.batched import BaliVectorEnv, rollout

    rng = np.random.default_rng(int(__import__("sys").argv[1]))
    refused = played = 0
    for num_players in (2, 3, 4):
        venv = BaliVectorEnv(16, num_players=num_players, oracle=True, demon=bool(num_players % 2), seed=num_players)
        venv.reset()
        for _ in range(int(rng.integers(0, 80))):
            venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks]))
        base = venv.states.copy()
        for trial in range(150):
            bad = base.copy()
            for _ in range(int(rng.integers(1, 4))):
                i, slot = int(rng.integers(0, len(bad))), int(rng.integers(0, C.STATE_SIZE))
                bad[i, slot] = rng.choice([-32768, -2, -1, 0, 1, 2, 3, 4, 5, 7, 8, 9, 58, 100, 32767])
            try:
                check_states(bad)
            except ValueError:
                refused += 1
                continue
            rollout(states=bad, seed=trial)  # must finish: no crash, no out-of-range index
            played += 1
    print("refused", refused, "played", played)
""")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0])
def test_fuzzed_states_never_crash_with_bounds_checking(seed, tmp_path, boundscheck):
    """Random corruptions of real states: either refused by check_states with a ValueError, or
    played to the end by the rollout kernel compiled with NUMBA_BOUNDSCHECK=1 (an out-of-range
    index raises IndexError there), in a subprocess so a crash would show as a signal."""
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    proc = subprocess.run([sys.executable, str(script), str(seed)], capture_output=True, text=True, env=boundscheck,
                          timeout=900, cwd=ROOT)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    refused, played = (int(x) for x in proc.stdout.split()[1::2])
    assert refused > 50 and played > 50


AGENT_FUZZ = textwrap.dedent("""
    import sys
    import numpy as np
    import bali_env
    from bali_env import engine as C
    from bali_env.bots import make_agent

    rng = np.random.default_rng(int(sys.argv[1]))
    obs, masks = [], []
    for n in (2, 3, 4):
        env = bali_env.raw_env(num_players=n, oracle=True, demon=n == 3)
        env.reset(seed=n)
        while not all(env.terminations.values()):
            o = env.observe(env.agent_selection)
            obs.append(o["observation"]); masks.append(o["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    obs, masks = np.array(obs), np.array(masks)
    agents = [make_agent("mcts:sims=30", seed=0), make_agent("greedy", seed=0), make_agent("random", seed=0)]
    refused = searched = 0
    for trial in range(int(sys.argv[2])):
        i = int(rng.integers(len(obs)))
        o, m = obs[i].copy(), masks[i].copy()
        kind = trial % 3
        slots = rng.integers(0, C.OBS_DIM, size=int(rng.integers(1, 6)))
        if kind == 0:  # in-range counts: what a careless encoder could produce
            o[slots] = rng.integers(0, C.OBS_HIGH[slots] * C.OBS_SCALE[slots] + 1) / C.OBS_SCALE[slots]
        elif kind == 1:  # anything
            o[slots] = rng.choice([np.nan, np.inf, -1.0, 1e6, 0.5, 100.0, 1e-3], size=len(slots))
        else:  # the mask
            m = (rng.random(C.N_ACTIONS) < 0.3).astype(np.int8) if rng.random() < 0.5 else m * 2
        for agent in agents:
            try:
                a = agent.act(o, m)
                assert 0 <= a < C.N_ACTIONS and m[a] == 1, (a, type(agent).__name__)
                searched += 1
            except (ValueError, TypeError):
                refused += 1
        try:
            agents[1].act_batch(o[None].astype(np.float32), m[None].astype(np.int8))
        except (ValueError, TypeError):
            pass
    print("refused", refused, "searched", searched)
""")


@pytest.mark.slow
def test_fuzzed_observations_never_crash_an_agent(tmp_path, boundscheck):
    """Random and adversarial observations and masks (real ones with slots overwritten, in range
    or not): every agent answers with a legal action or raises TypeError/ValueError, with Numba's
    bounds checking on, in a subprocess (a crash would show as a signal)."""
    script = tmp_path / "agent_fuzz.py"
    script.write_text(AGENT_FUZZ)
    proc = subprocess.run([sys.executable, str(script), "0", "600"], capture_output=True, text=True, env=boundscheck,
                          timeout=1200, cwd=ROOT)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    refused, searched = (int(x) for x in proc.stdout.split()[1::2])
    assert refused > 100 and searched > 100


@pytest.mark.slow
def test_fuzzed_arguments_never_crash_a_public_entry_point(boundscheck):
    """tests/fuzz/entry_points.py with bounds checking on, in a subprocess: random and adversarial
    arguments to the AEC env (constructor, reset, observe, illegal steps between legal ones), the
    vector env (constructor, reset, step, reset_game, observe), rollout, the single-agent env,
    load_record and make_agent. Each call works or raises TypeError/ValueError/IndexError/
    RuntimeError; a refused step changes nothing. Every entry point gets both outcomes."""
    proc = subprocess.run([sys.executable, os.path.join("tests", "fuzz", "entry_points.py"), "0", "300"],
                          capture_output=True, text=True, env=boundscheck, timeout=1200, cwd=ROOT)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    report = json.loads(proc.stdout)
    assert report["failures"] == []
    for entry in ("bali_env.env", "env.reset", "env.step", "env.observe", "BaliVectorEnv", "vector.reset",
                  "vector.step", "vector.reset_game", "vector.observe", "rollout", "BaliSingleAgentEnv",
                  "single.reset", "single.step", "load_record", "make_agent"):
        assert 0 < report["refused"].get(entry, 0) < report["cases"][entry], entry
    assert sum(report["cases"].values()) > 10_000


def test_a_game_count_beyond_memory_is_refused_before_anything_is_allocated():
    """num_envs / num_games that cannot fit in memory: ValueError naming them (not a process
    killed for memory, nor minutes spent building seed streams)."""
    with pytest.raises(ValueError, match="num_games=2147483648 needs"):
        rollout(2**31)
    with pytest.raises(ValueError, match="num_envs"):
        BaliVectorEnv(2**40)


def test_single_agent_env_refuses_a_bad_seed_or_seat_cleanly():
    """The single-agent env takes the AEC env's seeds (any int, negative ones too), refuses other
    seeds with TypeError before anything changes, and a bool is not a learner seat."""
    from bali_env.bots.random_agent import RandomAgent
    from bali_env.versus.single import BaliSingleAgentEnv

    env = BaliSingleAgentEnv(RandomAgent(seed=0), num_players=2, learner_seat=0)
    first, _ = env.reset(seed=-1)
    aec = bali_env.raw_env(num_players=2)
    aec.reset(seed=-1)
    assert (first == aec.observe("player_0")["observation"]).all()
    for bad in (1.5, "1", np.float32(2)):
        with pytest.raises(TypeError, match="seed"):
            env.reset(seed=bad)
    assert (env.step(int(np.flatnonzero(env.action_masks())[0]))[0] is not None)
    with pytest.raises(ValueError, match="learner_seat"):
        BaliSingleAgentEnv(RandomAgent(seed=0), num_players=2, learner_seat=True)


@pytest.mark.parametrize(("spec", "error", "says"), [
    ("sb3", ValueError, "sb3:PATH.zip"),
    ("mcts:sims=abc", TypeError, "sims"),
    ("mcts:sims=-1", ValueError, "sims"),
    ("mcts:sims=1.5", TypeError, "sims"),
    ("mcts:seconds=nan", ValueError, "seconds"),
    ("mcts:sims=0", ValueError, "budget"),
    ("ppo:deterministic=yes", TypeError, "deterministic"),
    ("ppo:deterministic=1", TypeError, "deterministic"),
])
def test_bad_agent_specs_say_what_is_wrong(spec, error, says):
    """make_agent refuses a bad setting with the setting's name, before any search runs."""
    from bali_env.bots import make_agent

    with pytest.raises(error, match=says):
        make_agent(spec)


def test_a_spec_says_true_and_false_as_words():
    """``ppo:deterministic=false`` samples (the word was read as a non-empty string, so true)."""
    from bali_env.bots import make_agent

    env = bali_env.raw_env(num_players=2)
    env.reset(seed=0)
    rows, rng = [], np.random.default_rng(0)
    while not all(env.terminations.values()):
        o = env.observe(env.agent_selection)
        rows.append((o["observation"], o["action_mask"]))
        env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    obs, mask = (np.stack(x) for x in zip(*rows, strict=True))
    best = make_agent("ppo", seed=0).act_batch(obs, mask)
    for word, argmax in (("false", False), ("False", False), ("true", True), ("TRUE", True)):
        agent = make_agent(f"ppo:deterministic={word}", seed=3)
        assert agent.deterministic is argmax
        assert np.array_equal(agent.act_batch(obs, mask), best) is argmax, word


@pytest.mark.parametrize("bad", ["nan", "inf", "huge", "short", "zeros", "slot248", "mask2"])
def test_agents_refuse_observations_the_game_cannot_produce(bad):
    """The reports that used to crash or hang the search: each is a ValueError for every agent."""
    from bali_env.bots import make_agent

    env = bali_env.raw_env(num_players=2)
    env.reset(seed=0)
    o = env.observe(env.agent_selection)
    obs, mask = o["observation"].copy(), o["action_mask"].copy()
    if bad == "nan":
        obs[:] = np.nan
    elif bad == "inf":
        obs[5] = np.inf
    elif bad == "huge":
        obs[:] = 1e6
    elif bad == "short":
        obs = obs[:10]
    elif bad == "zeros":
        obs[:] = 0
    elif bad == "slot248":
        obs[248] = 100
    else:
        mask = mask * 2
    for spec in ("mcts:sims=20", "greedy", "random"):
        with pytest.raises(ValueError):
            make_agent(spec, seed=0).act(obs, mask)


def test_game_record_keeps_its_own_copy_of_the_reset_options():
    """Changing the option lists after reset (or a record taken earlier) changes neither the game
    nor its record: the record is the one taken before the lists changed, and it replays."""
    import copy

    from bali_env.envs.records import validate_record

    env = bali_env.raw_env(num_players=2)
    starters = [2, 0]
    options = {"starter_sets": starters}
    env.reset(seed=3, options=options)
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    before = copy.deepcopy(env.game_record())
    assert before["options"] == {"starter_sets": [2, 0]}
    starters.reverse()  # the caller's lists change after the game...
    options["deck"] = [1]
    first = env.game_record()
    first["options"]["starter_sets"].append(9)  # ...and so does a record handed out earlier
    assert env.game_record() == before
    validate_record(env.game_record())


def test_a_failed_first_reset_leaves_the_env_not_reset():
    """reset() with bad options raises and changes nothing: observe/step then ask for reset()."""
    e = bali_env.env(num_players=2)
    with pytest.raises(ValueError):
        e.reset(seed=0, options={"starter_sets": [9, 9]})
    with pytest.raises(AssertionError, match="reset"):  # PettingZoo's wrapper: "reset() needs to be called"
        e.observe("player_0")
    with pytest.raises(RuntimeError, match="reset"):  # the raw env says so too
        bali_env.raw_env(num_players=2).observe("player_0")
    e.reset(seed=0)
    assert e.observe("player_0")["observation"].shape == (C.OBS_DIM,)
    with pytest.raises(ValueError, match="unknown agent"):
        e.unwrapped.observe("player_7")


def test_single_agent_env_after_an_opponent_raises_needs_a_reset():
    """An opponent that raises leaves the game at its turn: the learner's next step is refused
    (it would otherwise be applied to the opponent's seat) until reset()."""
    from bali_env.bots.random_agent import RandomAgent
    from bali_env.versus.single import BaliSingleAgentEnv

    class Faulty(RandomAgent):
        calls = 0

        def act(self, observation, action_mask):
            Faulty.calls += 1
            if Faulty.calls == 5:
                raise RuntimeError("bot bug")
            return super().act(observation, action_mask)

    env = BaliSingleAgentEnv(Faulty(seed=0), num_players=2, learner_seat=0)
    env.reset(seed=1)
    with pytest.raises(RuntimeError, match="bot bug"):
        for _ in range(50):
            env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    obs, info = env.reset(seed=2)
    assert info["learner_seat"] == 0 and env.action_masks().any()


@pytest.mark.parametrize("bad", ["deep", "dev_zero", "folder", "agents", "version_true", "huge"])
def test_bad_record_files_are_refused_cleanly(tmp_path, bad):
    """Records: deep nesting, devices, folders, huge files, a bad agents field and a bool version
    are each a ValueError saying so (bali replay: exit 2), never a crash or a hang."""
    import json

    from bali_env.envs.records import load_record
    from bali_env.apps.cli import parse_command
    from bali_env.apps.replay import run

    env = bali_env.raw_env(num_players=2)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    record = env.game_record(["a", "b"])
    path = tmp_path / "r.json"
    if bad == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif bad == "dev_zero":
        path = "/dev/zero"
    elif bad == "folder":
        path = tmp_path
    elif bad == "agents":
        path.write_text(json.dumps(dict(record, agents=[1, 2, 3])))
    elif bad == "version_true":
        path.write_text(json.dumps(dict(record, version=True)))
    else:
        path.write_bytes(b" " * 10_000_001)
    with pytest.raises(ValueError):
        load_record(path)
    out: list[str] = []
    assert run(parse_command(["replay", str(path), "--all"]), print_fn=out.append) == 2
