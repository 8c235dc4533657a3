"""``LeagueTrainSettings``: a ``bali league-train`` run's settings as one frozen, typed record.

The command makes it once from its flags (``league_command.settings_from``), or from a run's
``league.json`` with ``--resume OUT`` (``from_saved``: only ``RESUMABLE`` may change there), and
checks it once, when made: ``ValueError`` naming the flag (``--main-steps must be ...``), which
the command turns into argparse's one-line error (exit 2, nothing written). ``as_saved`` is what
``league.json`` keeps; the defaults are declared here, once (the parser shows them).

None of the fields changes what the run computes but ``RESUMABLE``'s: the workers, the backend
and where Ray runs decide where the jobs run, never their result (each job's seed and threads are
its own), and ``generations`` only how far the run goes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

PFSP_SHAPES = ("hard", "linear", "even")  #: ``--pfsp``: f(x) = x², x, 1 (x: the chance the main does not win)
STARTS = ("fresh", "main")  #: ``--exploiter-start``: a new network, or the main's current one
BACKENDS = ("local", "ray")  #: ``--backend``: local worker processes, or Ray tasks
#: what ``--resume OUT`` may change: where the jobs run, and how many generations the run has
RESUMABLE = ("generations", "workers", "backend", "ray_address")
SPEC_LISTS = ("baselines", "anchors")  #: the settings that are lists of agent specs (comma-separated flags)


def _flag(name: str) -> str:
    """The command-line flag of a field (``main_steps`` -> ``--main-steps``)."""
    return "--" + name.replace("_", "-")


def _whole(name: str, value: Any, low: int) -> int:
    """``value`` as an int of at least ``low`` (``2e6`` is 2000000); ValueError naming the flag."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) \
        and float(value).is_integer() and value >= low
    if not ok:
        raise ValueError(f"{_flag(name)} must be a whole number of at least {low}, got {value!r}")
    return int(value)


def _fraction(name: str, value: Any, low: float, high: float) -> float:
    """``value`` as a float in ``[low, high)``; ValueError naming the flag."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value < high:
        raise ValueError(f"{_flag(name)} must be a number in [{low:g}, {high:g}), got {value!r}")
    return float(value)


@dataclass(frozen=True)
class LeagueTrainSettings:
    """A ``bali league-train`` run: ``players`` seats, ``generations`` of ``exploiters`` exploiter
    jobs (``exploiter_steps`` env steps each, against the main alone) and one main job
    (``main_steps`` against the population with PFSP weights ``pfsp``, floored at ``pfsp_floor``),
    the new main evaluated against every member and each of ``baselines`` (``eval_games`` games
    each); ``anchors`` are fixed agents in the population from the start (the main trains against
    them with PFSP weights, as against any member, and plays them in every payoff row), and with
    ``yardstick_steps`` > 0 each main's exploitability (``bali exploit --steps``, its final
    evaluation ``yardstick_games`` games). The first main is ``init`` (a policy .npz;
    None: the shipped policy for ``players``, set by ``settled``). The PPO rollout of every job:
    ``envs``, ``n_steps``, ``batch_size``; each job's PyTorch and Numba threads: ``torch_threads``.
    The jobs run on ``workers`` local processes or Ray tasks (``backend``, ``ray_address``)."""

    players: int = 2
    seed: int = 0
    generations: int = 5
    main_steps: int = 2_000_000
    exploiter_steps: int = 2_000_000
    exploiters: int = 1
    eval_games: int = 200
    pfsp: str = "hard"
    pfsp_floor: float = 0.02
    init: str | None = None
    exploiter_start: str = "fresh"
    yardstick_steps: int = 0
    yardstick_games: int = 400
    baselines: tuple[str, ...] = ("greedy",)
    anchors: tuple[str, ...] = ()
    envs: int = 512
    n_steps: int = 64
    batch_size: int = 2048
    workers: int = 2
    backend: str = "local"
    ray_address: str | None = None
    torch_threads: int = 1

    def __post_init__(self) -> None:
        counts = {"seed": 0, "generations": 1, "main_steps": 1, "exploiter_steps": 1, "exploiters": 1,
                  "eval_games": 1, "yardstick_steps": 0, "yardstick_games": 1, "envs": 1, "n_steps": 1,
                  "batch_size": 1, "workers": 1, "torch_threads": 1}
        settled: dict[str, Any] = {name: _whole(name, getattr(self, name), low) for name, low in counts.items()}
        if self.players not in (2, 3, 4) or isinstance(self.players, bool):
            raise ValueError(f"--players must be 2, 3 or 4, got {self.players!r}")
        settled["pfsp_floor"] = _fraction("pfsp_floor", self.pfsp_floor, 0.0, 1.0)
        for name, choices in (("pfsp", PFSP_SHAPES), ("exploiter_start", STARTS), ("backend", BACKENDS)):
            if getattr(self, name) not in choices:
                raise ValueError(f"{_flag(name)} must be one of {', '.join(choices)}, got {getattr(self, name)!r}")
        for name in SPEC_LISTS:
            specs = tuple(str(b) for b in getattr(self, name))
            if not all(specs) or len(set(specs)) < len(specs):
                raise ValueError(f"{_flag(name)} must name agents, each once, got {','.join(specs)!r}")
            settled[name] = specs
        both = sorted(set(settled["baselines"]) & set(settled["anchors"]))
        if both:
            raise ValueError(f"--anchors {','.join(both)!r}: already a baseline (an anchor is played in every payoff "
                             "row too)")
        if self.init is not None:
            settled["init"] = str(self.init)
        for name, value in settled.items():
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ made, saved, read back
    @classmethod
    def from_saved(cls, saved: dict[str, Any], **changed: Any) -> LeagueTrainSettings:
        """The settings ``as_saved`` wrote (a field added since takes its default), with the
        ``RESUMABLE`` fields of ``changed`` replacing the saved ones (ValueError for another)."""
        other = sorted(set(changed) - set(RESUMABLE))
        if other:
            raise ValueError(f"{', '.join(_flag(n) for n in other)}: --resume OUT takes the run's settings; only "
                             f"{', '.join(_flag(n) for n in RESUMABLE)} may change")
        known = {f.name for f in fields(cls)}
        values = {k: (tuple(v) if k in SPEC_LISTS else v) for k, v in saved.items() if k in known}
        return cls(**{**values, **changed})

    def as_saved(self) -> dict[str, Any]:
        """The settings as ``league.json`` keeps them (JSON's types)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}

    def settled(self) -> LeagueTrainSettings:
        """These settings with ``init`` a file (the shipped policy for ``players`` when None),
        checked: a policy file the ``ppo`` agent plays for ``players`` seats (ValueError naming
        ``--init`` otherwise), its path absolute."""
        from bali_env.bots.ppo import ExportedPolicy, shipped_policy

        path = shipped_policy(self.players) if self.init is None else Path(self.init)
        if not path.is_file():
            shipped = f" (no policy is shipped for {self.players} players: give --init FILE.npz)"
            raise ValueError(f"--init {str(path)!r}: no such file" + (shipped if self.init is None else ""))
        try:
            ExportedPolicy(path).for_players(self.players)
        except (ValueError, OSError) as exc:
            raise ValueError(f"--init {str(path)!r}: " + " ".join(str(exc).split())) from None
        return replace(self, init=str(path.resolve()))

    def check_agents(self) -> None:
        """Every ``--baselines`` and ``--anchors`` spec makes an agent that plays ``players`` seats
        (ValueError naming the flag otherwise)."""
        from bali_env.bots import make_agent

        for flag, spec in [("--baselines", b) for b in self.baselines] + [("--anchors", a) for a in self.anchors]:
            try:
                agent = make_agent(spec, seed=0)
                check = getattr(agent, "check_players", None)
                if callable(check):
                    check(self.players)
                agent.close()
            except Exception as exc:  # noqa: BLE001 - unknown kind, missing file, no policy for the count
                raise ValueError(f"{flag} {spec!r}: " + " ".join(str(exc).split())) from None


DEFAULTS = LeagueTrainSettings()  #: ``bali league-train``'s defaults, declared once (its parser shows them)

__all__ = ["BACKENDS", "DEFAULTS", "LeagueTrainSettings", "PFSP_SHAPES", "RESUMABLE", "SPEC_LISTS", "STARTS"]
