"""``bali league-train``: a league of a main policy and exploiters (AlphaStar's league, PSRO's
population), trained over generations with prioritised fictitious self-play.

```bash
bali league-train --players 2 --generations 6 --out runs/league2p      # from the shipped policy
bali league-train --resume runs/league2p --generations 10              # go on (also after a stop)
```

Every flag is checked before anything is written (exit 2, one line naming it); ``--out`` follows
the rule of every command that writes a folder (``bali_env.files.check_out_folder``: an
unfinished run is continued with ``--resume OUT``, a run is replaced only with ``--overwrite``).
``--resume OUT`` takes the run's settings from its ``league.json``; only ``--generations``,
``--workers``, ``--backend`` and ``--ray-address`` may be given again (none of them changes what
the run computes). Ctrl-C stops the jobs (a job stopped midway reruns from its start on
``--resume``, with the same result) and exits 130; nothing finished is lost. Needs torch and
stable-baselines3 (the train extra). What a generation does: ``league_run``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from bali_env import flags
from bali_env.flags import UsageError

from bali_env.trainers.league_training.league_settings import (
    BACKENDS,
    DEFAULTS,
    PFSP_SHAPES,
    RESUMABLE,
    SPEC_LISTS,
    STARTS,
    LeagueTrainSettings,
)

COMMAND = "bali league-train"  #: how the command names itself in what it prints
#: what a run writes in OUT (``--overwrite`` removes these, and the mains' and exploiters' files)
OUTPUTS = ("league.json", "jobs", "logs", "main_0.npz", "league.csv", "league.png", "payoff.png", "best.npz",
           "summary.json")
#: ``bali league-train``'s own flags: name, type (or choices), help; the defaults are ``DEFAULTS``'
FLAGS: list[tuple[str, Any, str]] = [
    ("generations", int, "generations in all: each trains the exploiters and the main once"),
    ("main-steps", float, "env steps of each main job (bali train --steps)"),
    ("exploiter-steps", float, "env steps of each exploiter job"),
    ("exploiters", int, "exploiter jobs per generation (each its own seed)"),
    ("eval-games", int, "games of each payoff match (the main alone against one opponent), and of an exploiter's "
     "final evaluation"),
    ("pfsp", PFSP_SHAPES, "PFSP weighting f(1 - win rate): hard x², linear x, even 1"),
    ("pfsp-floor", float, "the least weight of an opponent before normalising"),
    ("init", Path, "the first main, a policy FILE.npz (default: the shipped policy for --players)"),
    ("exploiter-start", STARTS, "an exploiter's network: fresh, or the main's current one"),
    ("yardstick-steps", float, "each main's exploitability: bali exploit MAIN --steps this, the same seed every "
     "generation; 0 for none"),
    ("yardstick-games", int, "games of the yardstick's final evaluation"),
    ("baselines", str, "fixed agents each main plays too, comma-separated agent specs"),
    ("anchors", str, "fixed agents in the population from the start, comma-separated agent specs (mcts:sims=100, "
     "ppo): each main trains against them with PFSP weights and plays them in its payoff row"),
    ("envs", int, "games stepped together in every job (bali train --envs)"),
    ("n-steps", int, "steps per env per PPO rollout in every job"),
    ("batch-size", int, "PPO minibatch size in every job"),
    ("backend", BACKENDS, "where the jobs run: local worker processes or Ray tasks"),
    ("ray-address", str, "HOST:PORT of the Ray cluster to join (default: a local Ray)"),
    ("torch-threads", int, "PyTorch, Numba and BLAS threads of each job (fixed: the result does not depend on the "
     "workers)"),
]
SHARED = ("players", "seed", "workers")  #: the shared flags (``bali_env.flags``) that are settings


def parents() -> list[argparse.ArgumentParser]:
    """The shared flags ``bali league-train`` takes (``bali_env.flags``)."""
    return [flags.players(DEFAULTS.players), flags.seed(DEFAULTS.seed, "the jobs (each a seed of its own derived "
                                                        "from it) and the yardstick"),
            flags.workers(DEFAULTS.workers), flags.out("the run's folder (default: a new folder runs/league-train/"
                                                       "<date-time>)"),
            flags.overwrite("run"), flags.progress()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``bali league-train`` besides the shared ones (each None when not given: the
    settings' default, or with ``--resume`` the run's)."""
    p.description = ("Train a main policy in a league: each generation trains exploiters against the main and the "
                     "main against its population (past mains, exploiters, self-play) with PFSP weights, then "
                     "measures it against every member; resumable, same result on any number of workers.")
    for name, kind, text in FLAGS:
        default = getattr(DEFAULTS, name.replace("-", "_"))
        shown = (",".join(default) or "none") if isinstance(default, tuple) else \
            f"{default:g}" if isinstance(default, float) else default
        extra = {"choices": kind} if isinstance(kind, tuple) else {"type": kind} if kind is not str else {}
        p.add_argument(f"--{name}", default=None, help=f"{text} (default {shown})", **extra)
    p.add_argument("--resume", type=Path, default=None, metavar="OUT",
                   help="continue the run in OUT (its settings; --generations, --workers, --backend may change)")


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line: every own flag not None, and the shared ones
    (``SHARED``) named in ``args.argv`` (all of them when the command line is not known)."""
    values = {f.name: getattr(args, f.name) for f in fields(LeagueTrainSettings)
              if f.name not in SHARED and getattr(args, f.name, None) is not None}
    for name in SPEC_LISTS:
        if values.get(name) is not None:
            values[name] = tuple(b.strip() for b in str(values[name]).split(","))
    if values.get("init") is not None:
        values["init"] = str(values["init"])
    argv = getattr(args, "argv", None)
    for name in SHARED:
        flag = "--" + name
        if argv is None or any(a == flag or a.startswith(flag + "=") for a in argv):
            values[name] = getattr(args, name)
    return values


def settings_from(args: argparse.Namespace) -> tuple[LeagueTrainSettings, Any]:
    """The run's settings from the flags (checked: ``UsageError`` naming the flag) and its
    ledger (``ledger.Ledger``: a new one, or with ``--resume`` the run's, where only the
    ``RESUMABLE`` flags given replace the saved settings)."""
    from bali_env.trainers.league_training.ledger import Ledger

    given = _given(args)
    try:
        if args.resume is None:
            settings = LeagueTrainSettings(**{**_defaults(), **given}).settled()
            settings.check_agents()
            return settings, None
        ledger = Ledger.read(args.resume / "league.json")
        if getattr(args, "argv", None) is None:  # not known: keep the shared settings as saved
            given = {k: v for k, v in given.items() if k not in SHARED or k in RESUMABLE}
        return ledger.settings(**given), ledger
    except ValueError as exc:
        raise UsageError(str(exc) if args.resume is None else f"--resume {str(args.resume)!r}: {exc}") from None


def _defaults() -> dict[str, Any]:
    """The settings' defaults by field."""
    return {f.name: getattr(DEFAULTS, f.name) for f in fields(LeagueTrainSettings)}


def check_folder(args: argparse.Namespace) -> Path | None:
    """The run's folder (None: a new one, made later), checked by the rule of every output
    folder and as a place agent specs can name (no ``,`` nor ``:`` in its path); ``UsageError``."""
    from bali_env.files import check_out_folder

    if args.resume is not None and args.out is not None and args.out != args.resume:
        raise UsageError("--resume OUT continues the run in OUT: give no other --out")
    out = args.resume if args.resume is not None else args.out
    try:
        check_out_folder(out, what="bali league-train run", outputs=OUTPUTS, finished="summary.json",
                         resumable=("league.json",), resume=args.resume is not None, overwrite=args.overwrite)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if out is not None and any(c in str(Path(out).resolve()) for c in ",:"):
        raise UsageError(f"--out {str(out)!r}: its path holds ',' or ':', which agent specs cannot name; "
                         "choose another --out")
    return out


def _check_places(settings: LeagueTrainSettings) -> None:
    """Torch is installed, and Ray with ``--backend ray`` (``UsageError`` otherwise)."""
    from bali_env.trainers.entry import missing_modules

    absent = missing_modules(["torch", "stable_baselines3", "sb3_contrib"])
    if absent:
        raise UsageError(f"{', '.join(absent)} not installed; install the train extra: "
                         "pip install torch==2.13.0 && pip install -e '.[train]'")
    if settings.backend == "ray":
        from bali_env.arena.errors import TournamentError
        from bali_env.arena.ray_backend import check_ray

        try:
            check_ray(settings.ray_address)
        except TournamentError as exc:
            raise UsageError(str(exc)) from None


def _clear(folder: Path) -> None:
    """``--overwrite``: remove the earlier run's outputs (and its mains' and exploiters' files)."""
    from bali_env.files import remove_outputs

    earlier = tuple(p.name for pattern in ("main_*.npz", "exploiter_*.npz") for p in folder.glob(pattern))
    removed = remove_outputs(folder, (*OUTPUTS, *earlier))
    if removed:
        print(f"--overwrite: replacing the earlier run in {folder}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """``bali league-train`` with the options of ``bali``'s parser: check everything, then run the
    generations in the folder; the exit code (130 interrupted, 1 a job failed)."""
    from bali_env.files import lock_folder, new_output_dir

    from bali_env.trainers.league_training.league_run import JobFailed, LeagueRun
    from bali_env.trainers.league_training.ledger import Ledger
    from bali_env.trainers.progress import say

    settings, ledger = settings_from(args)
    _check_places(settings)
    out = check_folder(args)
    folder = Path(out) if out is not None else new_output_dir(Path("runs") / "league-train")
    if args.overwrite:
        _clear(folder)
    ledger = ledger or Ledger.new(folder / "league.json", settings)
    say(f"{COMMAND}: {settings.players} players, {settings.generations} generations of {settings.exploiters} "
        f"exploiter(s) ({settings.exploiter_steps:,} steps) and a main ({settings.main_steps:,} steps), payoff matches "
        f"of {settings.eval_games} games" + (f", yardstick {settings.yardstick_steps:,} steps" if
                                             settings.yardstick_steps else "") + f"; writing to {folder}")
    try:
        with lock_folder(folder):
            (folder / "summary.json").unlink(missing_ok=True)  # finished again at the end
            summary = LeagueRun(folder, settings, ledger, say=say, progress=args.progress).run()
    except KeyboardInterrupt:
        print(f"\n{COMMAND}: interrupted; finished jobs are kept: continue with {COMMAND} --resume {folder}",
              file=sys.stderr)
        return 130
    except JobFailed as exc:
        print(f"{COMMAND}: error: {exc}; continue with {COMMAND} --resume {folder}", file=sys.stderr)
        return 1
    say(f"wrote: {folder / 'league.json'}, league.csv, league.png, payoff.png, main_0..{settings.generations}.npz; "
        f"best.npz = {summary['best']}: {summary['reason']}")
    say(f"play it: bali tournament --agents ppo:path={folder / 'best.npz'} greedy --players {settings.players}")
    say(f"go on: {COMMAND} --resume {folder} --generations {settings.generations + 2}")
    return 0


__all__ = ["COMMAND", "FLAGS", "OUTPUTS", "SHARED", "add_arguments", "check_folder", "parents", "run",
           "settings_from"]
