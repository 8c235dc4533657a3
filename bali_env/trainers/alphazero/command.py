"""``bali az``: AlphaZero's loop of self-play with search, training and a gate, for generations.

```bash
bali az --players 2 --generations 20 --out runs/az2p             # from the shipped policy
bali az --players 3 --init scratch --generations 50 --out runs/az3p
bali az --resume runs/az2p --generations 40                      # go on (also after a stop)
```

Every flag is checked before anything runs (exit 2); ``--out`` follows the rule of every command
that writes a folder (``bali_env.files.check_out_folder``: an unfinished run is continued with
``--resume OUT``, a run is replaced only with ``--overwrite``). ``--resume OUT`` takes the run's
``config.json``; only ``generations.RESUMABLE`` may be given again (more generations, other workers or
backend, a time budget: none of them changes what the run computes; or another ``--device``, whose
arithmetic differs from the last one's in the last bits). Ctrl-C stops at once and
loses nothing written (exit 130); ``--resume`` goes on from there. Needs torch (the train extra).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from bali_env import flags
from bali_env.flags import UsageError

from bali_env.trainers.alphazero.generations import RESUMABLE, Config, Run

OUTPUTS = ("config.json", "state.json", "nets", "buffer", "summary.json")  #: what a run writes in OUT
DEFAULTS = Config()
#: what a setting meant in a ``config.json`` written before the setting existed (``--resume`` of an older run)
BEFORE = {"gumbel": 0}


def parents() -> list[argparse.ArgumentParser]:
    """The shared flags ``bali az`` takes (``bali_env.flags``)."""
    return [flags.players(2), flags.games(DEFAULTS.games, "self-play games per generation"),
            flags.seed(0, "the deals, the search, the draws, the training and the matches"),
            flags.workers(DEFAULTS.workers), flags.out("the run's folder (networks, buffer, curve, logs)"),
            flags.overwrite("run"), flags.progress()]


#: ``bali az``'s own flags: name, type (or choices), help; the defaults are ``Config``'s
FLAGS: list[tuple[str, Any, str]] = [
    ("generations", int, "generations in all"),
    ("sims", int, "search descents per self-play decision"),
    ("leaves", int, "descents per tree per round"),
    ("c", float, "the search's exploration weight"),
    ("gumbel", int, "actions Gumbel root selection considers in self-play (sequential halving, the improved-policy "
     "target, the chosen move played; 16 is Gumbel MuZero's), 0 for a PUCT root with noise and drawn moves"),
    ("temp-moves", int, "with --gumbel 0: decisions of a game whose move is drawn from the visit shares"),
    ("noise-alpha", float, "with --gumbel 0: Dirichlet noise on the root's priors in self-play, 0 for none"),
    ("noise-eps", float, "with --gumbel 0: the noise's weight"),
    ("target", ("visits", "improved"), "with --gumbel 0: the policy target, the visit shares or Gumbel MuZero's "
     "improved policy"),
    ("train-steps", int, "Adam steps per generation (0: self-play only, no training and no gate)"),
    ("batch", int, "rows per training step"),
    ("lr", float, "Adam learning rate"),
    ("window", int, "generations of rows trained on"),
    ("gate-games", int, "games of the new network against the best"),
    ("eval-every", int, "generations between two points of the curve, 0 for none"),
    ("eval-games", int, "games per yardstick"),
    ("yardsticks", str, "agents the curve measures the best against, comma-separated"),
    ("init", str, "shipped (the shipped policy), scratch, or a policy .npz with a value head (a per-seat head for "
     "more players is cut to --players)"),
    ("chunk", int, "self-play games per chunk"),
    ("backend", ("local", "ray"), "where self-play runs: local worker processes or Ray tasks"),
    ("ray-address", str, "HOST:PORT of the Ray cluster to join (default: a local Ray)"),
    ("minutes", float, "no generation starts after this many minutes; 0 for no limit"),
    ("torch-threads", int, "PyTorch threads"),
    ("device", ("cpu", "cuda"), "where the network trains (cuda: a GPU PyTorch sees)"),
]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``bali az`` besides the shared ones."""
    p.description = ("AlphaZero: self-play with policy-guided search, a replay buffer, training in PyTorch and a "
                     "gate, for generations; resumable at any moment.")
    for name, kind, text in FLAGS:
        default = getattr(DEFAULTS, name.replace("-", "_"))
        shown = ",".join(default) if isinstance(default, list) else default
        extra = {"choices": kind} if isinstance(kind, tuple) else {"type": kind} if kind is not str else {}
        p.add_argument(f"--{name}", default=shown, help=text if default is None else f"{text} (default {shown})",
                       **extra)
    p.add_argument("--resume", type=Path, default=None, metavar="OUT", help="continue the run in OUT")
    for action in p._actions:  # None: not given (so --resume keeps the saved value); the help keeps the default
        if action.dest in RESUMABLE:
            if action.dest == "workers":
                action.help = f"self-play worker processes (default {DEFAULTS.workers}; 1 = in this process)"
            action.default = None


def config_from(args: argparse.Namespace) -> Config:
    """The run's ``Config`` from the flags (checked: ``UsageError`` naming the flag), or with
    ``--resume`` from OUT/config.json, where only the flags of ``RESUMABLE`` given on the command
    line replace the saved ones (their parser default is None: not given)."""
    values = {f.name: getattr(args, f.name) for f in fields(Config) if getattr(args, f.name, None) is not None}
    values["yardsticks"] = [y for y in str(args.yardsticks).split(",") if y]
    if args.resume is not None:
        saved = args.resume / "config.json"
        try:
            stored = json.loads(saved.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"--resume {str(args.resume)!r}: no readable config.json of a bali az run "
                             f"({exc})") from None
        changed = {k: values[k] for k in RESUMABLE if k in values}
        values = {**{f.name: stored.get(f.name, BEFORE.get(f.name, getattr(DEFAULTS, f.name))) for f in fields(Config)},
                  **changed}
    cfg = Config(**values)
    check(cfg)
    return cfg


def check(cfg: Config) -> None:
    """UsageError naming the first flag out of range (nothing created): the numbers, the
    starting point, the yardsticks, the device, the backend."""
    _check_numbers(cfg)
    _check_init(cfg)
    _check_places(cfg)


def _check_numbers(cfg: Config) -> None:
    """The counts, rates and weights in their ranges."""
    at_least = {"generations": 1, "games": 1, "sims": 1, "leaves": 1, "temp_moves": 0, "train_steps": 0, "batch": 1,
                "window": 1, "gate_games": 1, "gumbel": 0, "eval_every": 0, "eval_games": 1, "chunk": 1, "workers": 1,
                "torch_threads": 1}
    for name, low in at_least.items():
        if getattr(cfg, name) < low:
            raise UsageError(f"--{name.replace('_', '-')} must be at least {low}, got {getattr(cfg, name)}")
    if not 0 < cfg.lr < 1:
        raise UsageError(f"--lr must be in (0, 1), got {cfg.lr}")
    if cfg.c < 0 or cfg.minutes < 0 or cfg.noise_alpha < 0:
        raise UsageError("--c, --minutes and --noise-alpha must be 0 or more")
    if not 0 <= cfg.noise_eps <= 1:
        raise UsageError(f"--noise-eps must be in [0, 1], got {cfg.noise_eps}")


def _check_init(cfg: Config) -> None:
    """``--init``: the shipped policy exists, or the file is a policy with a value head for the
    player count (or one ``ExportedPolicy.for_players`` adapts to it)."""
    if cfg.init not in ("shipped", "scratch"):
        from bali_env.bots.ppo import ExportedPolicy

        try:
            policy = ExportedPolicy(cfg.init)
        except ValueError as exc:
            raise UsageError(f"--init: {exc}") from None
        if policy.value_weights is None:
            raise UsageError(f"--init {cfg.init}: it has no value head (add one: bali fit-value)")
        try:
            policy.for_players(cfg.players)
        except ValueError as exc:
            raise UsageError(f"--init {cfg.init}: {exc}") from None
    elif cfg.init == "shipped":
        from bali_env.bots.ppo import shipped_policy

        if not shipped_policy(cfg.players).is_file():
            raise UsageError(f"--init shipped: no policy is shipped for {cfg.players} players; give --init scratch")


def _check_places(cfg: Config) -> None:
    """The yardsticks are agents, the device and the backend are there."""
    from bali_env.bots import make_agent

    for name in cfg.yardsticks:
        if name != "ppo":
            try:
                make_agent(name, seed=0)
            except (ValueError, TypeError) as exc:
                raise UsageError(f"--yardsticks: {exc}") from None
    if cfg.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError("--device cuda: PyTorch sees no GPU here (torch.cuda.is_available() is False); "
                             "train on --device cpu")
    if cfg.backend == "ray":
        from bali_env.arena.errors import TournamentError
        from bali_env.arena.ray_backend import check_ray

        try:
            check_ray(cfg.ray_address)
        except TournamentError as exc:
            raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """``bali az`` with the options of ``bali``'s parser: check, then play the generations; the
    exit code."""
    from bali_env.files import check_out_folder, lock_folder, new_output_dir, remove_outputs, write_text
    from bali_env.trainers.progress import say

    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("bali az needs torch: pip install torch==2.13.0 && pip install -e '.[train]'") from None
    cfg = config_from(args)
    out = args.resume if args.resume is not None else args.out
    try:
        check_out_folder(out, what="bali az run", outputs=OUTPUTS, finished="summary.json", resumable=("state.json",),
                         resume=args.resume is not None, overwrite=args.overwrite)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    folder = Path(out) if out is not None else new_output_dir(Path("runs") / "az")
    if args.overwrite:
        remove_outputs(folder, (*OUTPUTS, "learner", "gate", "curve", "best.npz", "curve.csv", "curve.png",
                                "generations.csv"))
    root = f"Gumbel's root over {cfg.gumbel} actions" if cfg.gumbel else "a PUCT root"
    say(f"bali az: {cfg.players} players, generations to {cfg.generations}, {cfg.games} self-play games each "
        f"({cfg.sims} descents a decision, {root}), {cfg.train_steps} training steps, gate of {cfg.gate_games} games; "
        f"writing to {folder}" + (f"; no generation starts after {cfg.minutes:g} min" if cfg.minutes else ""))
    try:
        with lock_folder(folder):
            state = Run(folder, cfg, progress=args.progress, say=say).run()
    except KeyboardInterrupt:
        print(f"\nbali az: interrupted; nothing written is lost: continue with bali az --resume {folder}",
              file=sys.stderr)
        return 130
    summary = {"generation": state["generation"], "best": state["best"], "config": asdict(cfg)}
    if state["generation"] >= cfg.generations:
        write_text(folder / "summary.json", json.dumps(summary, indent=1) + "\n")
    say(f"wrote: {folder / 'best.npz'} (the best network: generation {state['best']} of {state['generation']}), "
        f"{folder / 'generations.csv'}" + (f", {folder / 'curve.png'}" if (folder / "curve.png").is_file() else ""))
    say(f"play it: bali tournament --agents ppo:path={folder / 'best.npz'} greedy --players {cfg.players}; "
        f"searched: ppo+search:path={folder / 'best.npz'}")
    say(f"go on: bali az --resume {folder} --generations {state['generation'] + 10}")
    return 0


__all__ = ["OUTPUTS", "add_arguments", "check", "config_from", "parents", "run"]
