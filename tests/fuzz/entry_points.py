"""Fuzz every public entry point that reaches a kernel (run in a subprocess by
tests/test_boundaries.py, with NUMBA_BOUNDSCHECK=1): random and adversarial arguments, and for
the AEC env random illegal steps between legal ones. Every call either works or raises a clean
TypeError / ValueError / IndexError / RuntimeError; a rejected AEC step leaves the state as it
was. Prints one JSON line: cases and refusals per entry point; exits 1 on any other outcome
(a crash would show as a signal to the caller).

``python tests/fuzz/entry_points.py SEED ROUNDS``
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

import bali_env
from bali_env.bots import make_agent
from bali_env import engine as C
from bali_env.envs.records import load_record, make_record, save_record
from bali_env.versus.single import BaliSingleAgentEnv
from bali_env.envs.batched import BaliVectorEnv, rollout

CLEAN = (TypeError, ValueError, IndexError, RuntimeError)
rng = np.random.default_rng(int(sys.argv[1]))
ROUNDS = int(sys.argv[2])
VALUES = [None, True, False, -1, 0, 1, 2, 3, 4, 5, 43, 44, 100, 2**31, 2**63 - 1, -(2**63), 2**70, 1.5,
          float("nan"), float("inf"), "1", "two", b"x", [], [1], {}, (2,), np.int64(3), np.int8(-1), np.float32(2),
          np.array([1, 2]), np.array(1), np.uint64(2**64 - 1), np.bool_(True), object()]
cases: Counter = Counter()
refused: Counter = Counter()
failures: list[str] = []
REFUSED = object()  #: what ``call`` returns when the call raised


def anything() -> object:
    return VALUES[int(rng.integers(len(VALUES)))]


def near(lo: int, hi: int) -> object:
    """An int in [lo, hi] half of the time, just outside a quarter, anything otherwise."""
    r = rng.random()
    if r < 0.5:
        return int(rng.integers(lo, hi + 1))
    return int(rng.choice([lo - 3, lo - 2, lo - 1, hi + 1, hi + 2, hi + 3])) if r < 0.75 else anything()


def choice(good: list, *bad: object) -> object:
    """One of ``good`` most of the time, else one of ``bad`` or anything."""
    if rng.random() < 0.85:
        return good[int(rng.integers(len(good)))]
    return bad[int(rng.integers(len(bad)))] if bad and rng.random() < 0.5 else anything()


def flag() -> object:
    """A bool most of the time, anything otherwise."""
    return choice([True, False])


def options() -> object:
    """Reset options: garbage, unknown keys, or lists of card ids of plausible and wrong lengths."""
    if rng.random() < 0.2:
        return anything()
    out: dict[str, object] = {}
    for key in ("deck", "starter_sets", "altar", "typo"):
        if rng.random() < 0.4:
            size = int(rng.choice([0, 1, 2, 4, 16, 49, 50, 58, 100]))
            out[key] = [near(0, 60) if rng.random() < 0.1 else int(rng.integers(-2, 62)) for _ in range(size)] \
                if rng.random() < 0.8 else anything()
    return out


def call(name: str, fn, *args, **kwargs) -> object:
    """Count one case and return what ``fn`` returns, or REFUSED: a clean refusal is counted,
    anything else is a failure."""
    cases[name] += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    except CLEAN:
        refused[name] += 1
    except Exception as exc:  # noqa: BLE001 - the point: report whatever else escapes
        failures.append(f"{name}{args!r:.200}{kwargs!r:.200}: {type(exc).__name__}: {exc}")
    return REFUSED


def fuzz_aec() -> None:
    # illegal_action="raise": a refused step must leave the game as it was (env() ends it by default)
    env = call("bali_env.env", bali_env.env, num_players=near(2, 4), oracle=flag(), demon=flag(),
               illegal_action="raise")
    if env is REFUSED:
        env = bali_env.env(num_players=int(rng.integers(2, 5)), oracle=bool(rng.random() < 0.5),
                           demon=bool(rng.random() < 0.5), illegal_action="raise")
    if call("env.reset", env.reset, seed=near(0, 10), options=options()) is REFUSED:
        env.reset(seed=int(rng.integers(100)))
    call("env.observe", env.observe, anything() if rng.random() < 0.5 else f"player_{near(0, 4)}")
    raw = env.unwrapped
    for _ in range(int(rng.integers(5, 60))):
        if not env.agents or all(env.terminations.values()):
            break
        before = json.dumps(raw.state_dict(), sort_keys=True, default=str)
        mask = env.observe(env.agent_selection)["action_mask"]
        if rng.random() < 0.5:
            env.step(int(rng.choice(np.flatnonzero(mask))))
            continue
        bad = near(0, C.N_ACTIONS - 1) if rng.random() < 0.5 else int(rng.choice(np.flatnonzero(mask == 0)))
        cases["env.step"] += 1
        try:
            env.step(bad)
        except CLEAN:
            refused["env.step"] += 1
            if json.dumps(raw.state_dict(), sort_keys=True, default=str) != before:
                failures.append(f"env.step({bad!r}) was refused but changed the state")
        except Exception as exc:  # noqa: BLE001
            failures.append(f"env.step({bad!r}): {type(exc).__name__}: {exc}")
        else:
            if mask[int(bad)] != 1:
                failures.append(f"env.step({bad!r}) accepted an illegal action")


def fuzz_vector() -> None:
    venv = call("BaliVectorEnv", BaliVectorEnv, near(1, 8), num_players=near(2, 4), oracle=flag(), demon=flag(),
                seed=near(0, 5), reward=choice(["win_loss", "score"], "x"), parallel=choice([None, True, False], 1))
    if venv is REFUSED:
        venv = BaliVectorEnv(int(rng.integers(1, 6)), num_players=int(rng.integers(2, 5)),
                             oracle=bool(rng.random() < 0.5), seed=int(rng.integers(9)))
    if call("vector.reset", venv.reset, seed=near(0, 5), options=options()) is REFUSED:
        venv.reset(seed=1)
    for _ in range(int(rng.integers(5, 40))):
        legal = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks])
        r = rng.random()
        if r < 0.5:
            venv.step(legal)
            continue
        if r < 0.8:
            bad = legal.tolist()
            bad[int(rng.integers(len(bad)))] = near(-1, C.N_ACTIONS)
            with contextlib.suppress(TypeError, ValueError, OverflowError):  # else: a list with a stray value
                bad = np.asarray(bad, dtype=rng.choice([np.int64, np.int8, np.float64, np.uint64]))
        else:
            bad = anything()
        before = venv.states.copy()
        cases["vector.step"] += 1
        try:
            venv.step(bad)
        except CLEAN:
            refused["vector.step"] += 1
            if not (venv.states == before).all():
                failures.append(f"vector.step({bad!r:.100}) was refused but changed a game")
        except Exception as exc:  # noqa: BLE001
            failures.append(f"vector.step({bad!r:.100}): {type(exc).__name__}: {exc}")
    call("vector.reset_game", venv.reset_game, near(0, venv.num_envs), near(0, 5))
    call("vector.observe", venv.observe, near(0, venv.num_players))


def fuzz_rollout() -> None:
    if rng.random() < 0.7:
        call("rollout", rollout, near(0, 6), num_players=near(2, 4), oracle=flag(), demon=flag(),
             seed=near(0, 9))
    else:
        call("rollout", rollout, states=rng.integers(-3, 60, size=(int(rng.integers(0, 3)), C.STATE_SIZE)))


def fuzz_single() -> None:
    env = call("BaliSingleAgentEnv", BaliSingleAgentEnv, make_agent("random", seed=0), num_players=near(2, 4),
               learner_seat=choice(["rotate", "random", 0, 1], 5, -1, True, "0"),
               reward=choice(["win_loss", "score"], "x"))
    if env is REFUSED:
        return
    if call("single.reset", env.reset, seed=near(0, 5), options=options()) is REFUSED:
        return
    for _ in range(int(rng.integers(1, 30))):
        mask = env.action_masks()
        action = int(rng.choice(np.flatnonzero(mask))) if rng.random() < 0.6 else near(0, C.N_ACTIONS)
        result = call("single.step", env.step, action)
        if result is not REFUSED and (result[2] or result[3]):
            return


def fuzz_records(tmp: Path) -> None:
    env = bali_env.env(num_players=int(rng.integers(2, 5)), oracle=bool(rng.random() < 0.5))
    env.reset(seed=int(rng.integers(50)))
    for _ in range(int(rng.integers(0, 30))):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    text = json.dumps(make_record(env.unwrapped))
    path = tmp / "record.json"
    for _ in range(4):
        r = rng.random()
        if r < 0.4:  # flip a few characters
            chars = list(text)
            for _ in range(int(rng.integers(1, 4))):
                chars[int(rng.integers(len(chars)))] = chr(int(rng.choice([48, 49, 57, 45, 44, 93, 125, 34, 116])))
            data = "".join(chars).encode()
        elif r < 0.7:  # change one field
            record = json.loads(text)
            record[str(rng.choice(list(record)))] = anything() if rng.random() < 0.5 else [near(0, 50)]
            data = json.dumps(record, default=str).encode()
        else:
            data = bytes(rng.integers(0, 256, size=int(rng.integers(0, 200)), dtype=np.uint8))
        path.write_bytes(data)
        call("load_record", load_record, path)
    save_record(json.loads(text), path)
    call("load_record", load_record, path)


def fuzz_specs() -> None:
    spec = str(rng.choice(["random", "greedy", "mcts", "ppo", "sb3", "nope", "mcts:sims", "x.py:Y", ":", ""]))
    if rng.random() < 0.6:
        spec += ":" + ",".join(f"{rng.choice(['sims', 'seconds', 'c', 'seed', 'path', 'zz'])}={anything()!s}"
                               for _ in range(int(rng.integers(1, 3))))
    call("make_agent", make_agent, spec, seed=near(0, 3))


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(ROUNDS):
            fuzz_aec()
            fuzz_vector()
            fuzz_rollout()
            fuzz_single()
            fuzz_records(Path(tmp))
            fuzz_specs()
    print(json.dumps({"cases": dict(cases), "refused": dict(refused), "failures": failures[:20]}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.stdout = io.TextIOWrapper(sys.stdout.buffer, line_buffering=True)
    raise SystemExit(main())
