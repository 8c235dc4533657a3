"""The trainers' settings travel as typed records: the AlphaZero self-play job is frozen, checked
when made (a bad value names its field), pickles (to worker processes and Ray tasks) and keeps its
defaults in its fields (nothing reads it with ``.get(key, default)``); the self-play rows go
through the replay buffer unchanged, file and all; ``bali train``'s settings are one frozen record
whose defaults the parser takes (the shape of every function: ``tests/test_structure.py``)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bali_env.bots.ppo import ExportedPolicy, shipped_policy
from bali_env.trainers.alphazero import buffer
from bali_env.trainers.alphazero.generations import Config, selfplay_job
from bali_env.trainers.alphazero.jobs import ROW_NAMES, NetworkArrays, Rows, SelfPlayJob, SelfPlaySettings
from bali_env.trainers.alphazero.selfplay import job_for

TRAINERS = Path(__file__).resolve().parents[1] / "bali_env" / "trainers"
GOOD = {"players": 2, "seed": 11, "sims": 8, "c": 1.5, "leaves": 4, "temp_moves": 6}


@pytest.fixture(scope="module")
def job() -> SelfPlayJob:
    return job_for(ExportedPolicy(shipped_policy(2)), SelfPlaySettings(**GOOD, noise=(0.5, 0.25)))


def test_the_job_is_frozen(job):
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.settings = SelfPlaySettings(**GOOD)
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.settings.sims = 16
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.network.meta = {}


@pytest.mark.parametrize(("field", "bad"), [
    ("players", 5), ("players", 1), ("seed", -1), ("sims", 0), ("sims", 2.5), ("c", -0.5), ("c", float("nan")),
    ("leaves", 0), ("temp_moves", -1), ("gumbel", -1), ("target", "best"), ("noise", (0.0, 0.25)),
    ("noise", (0.5, 1.5)), ("noise", 0.5), ("players", True),
])
def test_a_bad_setting_is_refused_when_made_naming_its_field(field, bad):
    with pytest.raises(ValueError, match=field):
        SelfPlaySettings(**{**GOOD, field: bad})


def test_the_network_needs_a_value_head():
    weights, meta = ExportedPolicy(shipped_policy(2)).arrays()
    with pytest.raises(ValueError, match="value"):
        NetworkArrays(weights, meta, [])
    with pytest.raises(ValueError, match="settings"):
        SelfPlayJob(NetworkArrays.of(ExportedPolicy(shipped_policy(2))), dict(GOOD))


def test_the_settings_are_settled_once_gumbel_takes_no_noise_and_the_improved_target():
    puct = SelfPlaySettings(**GOOD, noise=(0.5, 0.25), target="improved")
    assert (puct.noise, puct.target, puct.gumbel) == ((0.5, 0.25), "improved", 0)
    gumbel = SelfPlaySettings(**GOOD, noise=(0.5, 0.25), gumbel=8)
    assert (gumbel.noise, gumbel.target) == (None, "improved")
    assert type(SelfPlaySettings(**{**GOOD, "sims": np.int64(8), "c": 1}).c) is float


def test_the_defaults_are_in_one_place_the_fields():
    """The settings' defaults are their fields' (and the run's ``Config`` gives every field), the
    function that makes a job has none of its own, and a job cannot be read with ``.get(key,
    default)`` nor ``job[key]``; nothing in the trainers or the AlphaZero benchmarks reads a job or
    its settings with ``.get``."""
    defaults = {f.name: f.default for f in dataclasses.fields(SelfPlaySettings)
                if f.default is not dataclasses.MISSING}
    assert defaults == {"gumbel": 0, "noise": None, "target": "visits"}
    assert all(p.default is inspect.Parameter.empty for p in inspect.signature(job_for).parameters.values())
    made = Config(gumbel=0).selfplay(seed=3)
    assert (made.sims, made.noise, made.target, made.seed) == (Config.sims, (0.5, 0.25), "visits", 3)
    job = selfplay_job(Config(), ExportedPolicy(shipped_policy(2)), 3)
    assert not hasattr(job, "get") and not hasattr(job.settings, "get")
    with pytest.raises(TypeError):
        job["sims"]  # noqa: B018 - the subscript is what is tested
    root = TRAINERS.parents[1]
    sources = [*TRAINERS.rglob("*.py"), *(root / "benchmarks" / f"{name}.py" for name in
                                           ("az_generation", "az_targets", "roots_selfplay", "gumbel"))]
    found = [f"{path.name}:{node.lineno}" for path in sources for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
             and _name(node.func.value).endswith(("job", "settings"))]
    assert not found, found


def _name(node: ast.AST) -> str:
    """``a.b.c`` of a name or an attribute chain ('' for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def test_the_job_pickles(job):
    again = pickle.loads(pickle.dumps(job))
    assert isinstance(again, SelfPlayJob) and again.settings == job.settings
    assert again.network.meta == job.network.meta
    for mine, theirs in ((job.network.weights, again.network.weights), (job.network.value, again.network.value)):
        assert all(np.array_equal(a, b) for pair, other in zip(mine, theirs, strict=True)
                   for a, b in zip(pair, other, strict=True))
    x = np.zeros((1, again.network.weights[0][0].shape[1]), np.float32)
    np.testing.assert_array_equal(again.network.policy().forward(x), job.network.policy().forward(x))


def _rows(count: int, seed: int = 0, players: int = 3) -> Rows:
    rng = np.random.default_rng(seed)
    policy = rng.random((count, 44)).astype(np.float32)
    return Rows(input=rng.random((count, 7)).astype(np.float32), action_mask=(policy > 0.3).astype(np.int8),
                policy=policy / policy.sum(axis=1, keepdims=True),
                value=rng.random((count, players)).astype(np.float32),
                game=rng.integers(0, 50, count).astype(np.int64), action=rng.integers(0, 44, count).astype(np.int64))


def _members(path: Path) -> list[tuple[str, bytes]]:
    """A zip file's members in order, with their bytes (the file less the members' timestamps)."""
    with zipfile.ZipFile(path) as z:
        return [(info.filename, z.read(info.filename)) for info in z.infolist()]


def test_rows_round_trip_through_the_buffer_unchanged(tmp_path):
    """Rows saved and loaded are the same arrays (dtypes, shapes, values); the file holds them in
    ``ROW_NAMES``' order, byte for byte what ``np.savez`` of the named arrays writes, and a file
    written again from the rows read is the same file."""
    rows = _rows(37)
    path = tmp_path / "gen_0001.npz"
    buffer.save(path, rows)
    back = buffer.load(path)
    assert isinstance(back, Rows) and len(back) == 37
    for name in ROW_NAMES:
        mine, theirs = getattr(rows, name), getattr(back, name)
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, name
        np.testing.assert_array_equal(mine, theirs, err_msg=name)
    plain = io.BytesIO()
    np.savez(plain, **{name: getattr(rows, name) for name in ROW_NAMES})
    plain.seek(0)
    written = _members(path)
    assert [name for name, _ in written] == [f"{name}.npy" for name in ROW_NAMES]
    with zipfile.ZipFile(plain) as z:
        assert written == [(info.filename, z.read(info.filename)) for info in z.infolist()]
    again = tmp_path / "again.npz"
    buffer.save(again, back)
    assert _members(again) == written


def test_rows_concatenate_select_and_refuse_what_is_not_rows(tmp_path):
    first, second = _rows(5, seed=1), _rows(3, seed=2)
    both = Rows.concat([first, second])
    np.testing.assert_array_equal(both.policy, np.concatenate([first.policy, second.policy]))
    np.testing.assert_array_equal(both.select(np.arange(8) >= 5).input, second.input)
    assert both["game"] is both.game and len(Rows.empty(7, 3)) == 0
    for g, rows in ((1, first), (2, second)):
        buffer.finish_generation(tmp_path, g, rows)
    np.testing.assert_array_equal(buffer.window(tmp_path, 2, 2).action, both.action)
    with pytest.raises(ValueError, match="value"):
        dataclasses.replace(first, value=first.value[:2])
    with pytest.raises(ValueError, match="missing"):
        Rows.from_arrays({"game": first.game})
    with pytest.raises(KeyError):
        first["seat"]  # noqa: B018 - the subscript is what is tested


def test_bali_trains_settings_are_one_frozen_record(tmp_path):
    from bali_env.trainers.ppo_selfplay.run_settings import TrainSettings
    from bali_env.trainers.ppo_selfplay.train import parse_args

    settings = parse_args(["--players", "3", "--opponents", "greedy:2,self:1", "--out", str(tmp_path / "run")])
    assert isinstance(settings, TrainSettings)
    assert (settings.players, settings.weights, settings.out) == (3, {"greedy": 2.0, "self": 1.0}, tmp_path / "run")
    assert settings.game.as_dict() == {"num_players": 3, "oracle": False, "demon": False}
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.steps = 10  # type: ignore[misc]
    assert settings.with_out(tmp_path / "other").out == tmp_path / "other" and settings.out == tmp_path / "run"


def test_bali_trains_settings_are_checked_once_by_the_parser(monkeypatch, tmp_path, capsys):
    """The flags are checked once, before the record is made (a bad one: exit 2 naming it, no record);
    the record itself only normalises (a list of opponents, a path given as a string)."""
    import bali_env.trainers.ppo_selfplay.train as train_module
    from bali_env.trainers.ppo_selfplay.run_settings import TrainSettings

    checks: list[object] = []
    check = train_module._check
    monkeypatch.setattr(train_module, "_check", lambda p, args: checks.append(args) or check(p, args))
    made = train_module.parse_args(["--out", str(tmp_path / "run")])
    assert len(checks) == 1 and isinstance(made, TrainSettings)
    with pytest.raises(SystemExit) as exc:
        train_module.parse_args(["--gamma", "2", "--out", str(tmp_path / "run")])
    assert exc.value.code == 2 and "--gamma must be in (0, 1]" in capsys.readouterr().err
    loose = TrainSettings(eval_opponents=["random"], init="a/b.npz")  # type: ignore[arg-type]
    assert loose.eval_opponents == ("random",) and loose.init == Path("a/b.npz")


def test_bali_trains_defaults_are_the_records():
    """The parser takes its defaults from ``TrainSettings()`` (declared once), so the two never drift."""
    from bali_env.trainers.ppo_selfplay.run_settings import DEFAULTS, TrainSettings
    from bali_env.trainers.ppo_selfplay.train import _parser, defaults

    parsed = vars(_parser().parse_args([]))
    assert parsed == DEFAULTS.parser_defaults()
    assert list(parsed) == [f.name for f in dataclasses.fields(TrainSettings) if f.name != "weights"]
    assert TrainSettings.from_namespace(_parser().parse_args([])) == DEFAULTS == defaults()
    assert DEFAULTS.weights == {"random": 1.0, "greedy": 3.0, "self": 1.0}


def test_bali_trains_config_json_round_trips(tmp_path):
    """config.json is the record's ``as_config()`` (every flag in the parser's order, ``weights`` last);
    ``--resume OUT`` reads it back into the same record, and rewrites it unchanged."""
    import json

    from bali_env.trainers.options import claim_out
    from bali_env.trainers.ppo_selfplay.train import parse_args

    out = tmp_path / "run"
    settings = parse_args(["--players", "3", "--oracle", "--eval-opponents", "random", "mcts", "--steps", "5000",
                           "--opponents", "greedy:2,self:1", "--out", str(out)])
    assert claim_out(settings, "bali") == out
    text = (out / "config.json").read_text()
    assert text == json.dumps(settings.as_config(), indent=2)
    assert list(json.loads(text))[-1] == "weights" and json.loads(text)["eval_opponents"] == ["random", "mcts"]
    (out / "resume.pt").write_bytes(b"")
    resumed = parse_args(["--resume", str(out)])
    assert resumed == dataclasses.replace(settings, resume=out)
    claim_out(resumed, "bali")
    assert (out / "config.json").read_text() == json.dumps(resumed.as_config(), indent=2)
    assert json.loads((out / "config.json").read_text()) == json.loads(text) | {"resume": str(out)}


def test_the_training_loop_carries_the_record_not_a_namespace():
    loops = [TRAINERS / "ppo_selfplay" / name for name in ("loop.py", "pool.py")]
    assert not [path.name for path in loops if "Namespace" in path.read_text()]
