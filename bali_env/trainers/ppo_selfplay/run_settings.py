"""``TrainSettings``: a ``bali train`` run's settings as one frozen, typed record.

``bali_env.trainers.ppo_selfplay.train.parse_args`` makes it once, after every flag is parsed
and checked (``p.error`` names a bad one), and the run carries it inward: the training loop
(``Session``, ``train``), the opponent pool, the checkpoints and the evaluations. Its fields are
the flags' destinations, in the parser's order, with ``weights`` (``--opponents`` parsed) last:
``as_config`` is the run's ``config.json``, byte for byte what the run wrote before, which
``--resume OUT`` reads back. The defaults are declared here, once: ``bali train``'s parser takes
its own from ``TrainSettings()`` (``DEFAULTS``), so ``bali train --help`` shows these.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from bali_env.engine.config import GameConfig
from bali_env.versus.opponents import opponent_weights


@dataclass(frozen=True)
class TrainSettings:
    """A ``bali train`` run's settings (every flag's value; ``weights``: ``--opponents`` parsed,
    from ``opponents`` when not given). Made once, after the flags are checked; frozen."""

    players: int = 2
    oracle: bool = False
    demon: bool = False
    seed: int = 0
    out: Path | None = None
    overwrite: bool = False
    progress: bool = True
    steps: float = 1e8
    minutes: float = 0.0
    envs: int = 512
    opponents: str = "random:1,greedy:3,self:1"
    mcts_sims: int = 200
    eval_opponents: tuple[str, ...] = ("random", "greedy")
    eval_minutes: float = 0.0
    pool_size: int = 6
    snapshot_every: float = 1e5
    eval_every: float | None = None
    eval_games: int = 200
    final_eval_games: int = 1000
    eval_workers: int = 1
    framework: str = "sb3"
    trainer: str = "sb3"
    privileged_critic: bool = False
    critic_warmup: float = 0.0
    init: Path | None = None
    features: str = "greedy-v1"
    lr: float = 3e-4
    net: str = "128,128"
    activation: str = "relu"
    n_steps: int = 64
    batch_size: int = 2048
    epochs: int = 2
    gamma: float = 0.997
    ent_coef: float = 0.01
    reward: str = "win_loss"
    torch_threads: int = 2
    resume: Path | None = None
    weights: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Normalise what a parser or a config.json may give in another form (a list of
        opponents, a path as a string) and parse ``opponents`` into ``weights`` when not given."""
        object.__setattr__(self, "eval_opponents", tuple(self.eval_opponents))
        for name in ("out", "init", "resume"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Path):
                object.__setattr__(self, name, Path(value))
        if not self.weights:
            object.__setattr__(self, "weights", opponent_weights(self.opponents))

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> TrainSettings:
        """The record of a parsed and checked command line (its flags' values; other attributes ignored)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)})

    @property
    def game(self) -> GameConfig:
        """Which game the run learns: ``--players``, ``--oracle``, ``--demon``."""
        return GameConfig(num_players=self.players, oracle=self.oracle, demon=self.demon)

    def parser_defaults(self) -> dict[str, Any]:
        """The flags' defaults as ``argparse`` takes them (``--eval-opponents`` a list, as it parses one)."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "weights"}
        values["eval_opponents"] = list(self.eval_opponents)
        return values

    def as_config(self) -> dict[str, Any]:
        """The run's ``config.json`` (every field, in order; paths as strings, lists as JSON's)."""
        config = self.parser_defaults() | {"weights": dict(self.weights)}
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in config.items()}

    def with_out(self, out: Path) -> TrainSettings:
        """The same settings writing to ``out`` (the folder the run claimed)."""
        return replace(self, out=out)


DEFAULTS = TrainSettings()  #: ``bali train``'s defaults, declared once (its parser reads them)
