"""The command-line pieces both trainers share, in one place: ``bali train`` (``bali_env.trainers.ppo_selfplay.train``)
and ``bali train --framework rllib`` (``bali_env.trainers.rllib.launch``) build their parsers from ``parents``
(the flags every command shares) and ``SHARED`` (the training flags both take), check
the shared flags with ``check_shared``, continue a saved run with ``resumed_from``, space their
evaluations with ``eval_interval`` and claim their output folder with ``claim_out``.

Every check runs before anything is printed or created: a bad flag is ``p.error`` (argparse's
usage and one line naming the flag, exit 2). The output folder is claimed only when the run
starts: without ``--out`` a new folder ``runs/NAME-YYYYmmdd-HHMMSS`` (``-2``, ``-3``, ... when two
runs start in the same second), with ``--out`` that folder, whose ``config.json`` is created
exclusively, so of two runs started at once into the same new folder one wins and the other stops
with one line (``TrainingError``) before writing anything.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from bali_env import flags
from bali_env.files import check_out_folder, new_output_dir, remove_outputs, write_text

from bali_env.trainers.entry import TrainingError

OUT_PARENT = Path("runs")  #: where a run without ``--out`` gets its new folder
AUTO_POINTS = 5  #: without ``--eval-every``, a run evaluates every fifth of its steps (and of its time)
#: what a run writes into its folder (both trainers, and ``bali exploit``'s results): ``--overwrite`` removes these
OUTPUTS = ("config.json", "summary.json", "resume.pt", "rllib_checkpoint", "final.zip", "final.pt", "final.npz",
           "eval.csv", "learning_curve.png", "progress.csv", "checkpoints", "tb", "curve.csv", "curve.png",
           "exploit.csv", "exploit.json", "exploit.png")
#: a run's settings as the shared pieces read them: ``bali train``'s frozen ``TrainSettings``
#: (``bali_env.trainers.ppo_selfplay.run_settings``) or RLlib's checked ``argparse.Namespace``
RunSettings = Any
RESUMABLE_FILES = ("resume.pt", "rllib_checkpoint")  #: what ``--resume`` continues from
RESUMABLE = ("steps", "minutes", "eval_workers", "progress")  #: what ``--resume`` may change
HELP_EPILOG = ("The first Ctrl-C or SIGTERM ends the run cleanly: it saves {checkpoint} (continue with --resume OUT), "
               "evaluates the model and writes summary.json, then exits with code 130; a second one quits at once "
               "(exit 130 too). A bad flag or a run that cannot start: one line, exit 2, nothing written.")

#: The training flags both trainers take (``add_shared``; the flags every command shares, such as
#: ``--players``, ``--seed`` and ``--out``, are ``parents``); ``{checkpoint}`` and ``{name}`` in a
#: help are the trainer's checkpoint and default folder name.
SHARED: dict[str, dict[str, Any]] = {
    "--steps": {"type": float, "default": 1e8, "help": "total learner env steps"},
    "--minutes": {"type": float, "default": 0.0,
                  "help": "wall-clock limit of the whole run, evaluations included (0: none)"},
    "--pool-size": {"type": int, "default": 6, "help": "frozen self-play snapshots kept"},
    "--snapshot-every": {"type": float, "default": 1e5, "help": "env steps between self-play snapshots"},
    "--eval-every": {"type": float, "default": None, "metavar": "STEPS",
                     "help": "env steps between checkpoints evaluated against random and greedy (default: "
                             "min(1e6, --steps/5), and with --minutes also every fifth of the training time; "
                             "0: none between the first and the final)"},
    "--eval-games": {"type": int, "default": 200, "help": "games per opponent at each evaluation"},
    "--final-eval-games": {"type": int, "default": 1000,
                           "help": "games per opponent at the end (0: no final evaluation); with --minutes its "
                                   "time is part of the run's"},
    "--eval-workers": {"type": int, "default": 1, "help": "worker processes of the evaluation tournaments"},
    "--lr": {"type": float, "default": 3e-4, "help": "Adam learning rate"},
    "--net": {"default": "128,128", "help": "hidden layer sizes (actor and critic each)"},
    "--epochs": {"type": int, "default": 2, "help": "PPO epochs per rollout"},
    "--gamma": {"type": float, "default": 0.997, "help": "discount factor, in (0, 1]"},
    "--ent-coef": {"type": float, "default": 0.01, "help": "entropy bonus coefficient"},
    "--reward": {"default": "win_loss", "choices": ("win_loss", "score"),
                 "help": "terminal reward: +1 win / -1 otherwise, or the score margin (own final score minus the "
                         "mean of the others) / 10, denser with more players"},
    "--resume": {"type": Path, "default": None, "metavar": "OUT",
                 "help": "continue the run saved in OUT (its config.json and {checkpoint}); only --steps and "
                         "--minutes (totals over the whole run), --eval-workers and --progress can change"},
}


def parents(name: str, *, players: int = 2, seed: int = 0) -> list[argparse.ArgumentParser]:
    """The shared flags both trainers take (``bali_env.flags``); ``name``: the trainer's
    default folder name (``runs/NAME-YYYYmmdd-HHMMSS``); ``players`` and ``seed``: the defaults."""
    return [flags.players(players), flags.variants(), flags.seed(seed, "the deals, the opponents and the learner"),
            flags.out(f"output folder (default: a new folder {OUT_PARENT}/{name}-YYYYmmdd-HHMMSS for every run)"),
            flags.overwrite("training run"), flags.progress()]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults in the help, except ``--out``'s and those of flags without a default
    value (their help says what happens without them); a whole number read as a float (``--steps``'
    1e8) is shown as the integer (``100000000``, not ``100000000.0``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.dest == "out" or action.default is None:
            return action.help
        text = super()._get_help_string(action)
        default = action.default
        if text is not None and isinstance(default, float) and default.is_integer():
            text = text.replace("%(default)s", str(int(default)))
        return text


def add_shared(p: argparse.ArgumentParser, flags: str, *, name: str, checkpoint: str,
               helps: dict[str, str] | None = None, defaults: Mapping[str, Any] | None = None) -> None:
    """Add the ``SHARED`` flags named in ``flags`` (space separated, in that order) to ``p``;
    ``helps`` replaces the help of some; ``name`` and ``checkpoint`` fill the helps' blanks;
    ``defaults`` (by destination, e.g. ``eval_games``) replaces the default of some (a trainer's
    settings record declares its own)."""
    for flag in flags.split():
        kwargs = dict(SHARED[flag])
        dest = flag[2:].replace("-", "_")
        if defaults is not None and dest in defaults:
            kwargs["default"] = defaults[dest]
        kwargs["help"] = (helps or {}).get(flag, kwargs["help"]).format(name=name, checkpoint=checkpoint)
        p.add_argument(flag, **kwargs)


def parse(make_parser: Callable[[], argparse.ArgumentParser], argv: list[str] | None, *, checkpoint: str,
          check: Callable[[argparse.ArgumentParser, argparse.Namespace], None],
          before: dict[str, Any] | None = None) -> argparse.Namespace:
    """The configuration from the command line: ``make_parser()``'s flags, or with ``--resume OUT``
    OUT/config.json's with only ``RESUMABLE`` changed (``resumed_from``); then ``check_shared`` and
    ``check`` (the trainer's own flags), which ``p.error`` (exit 2, nothing written)."""
    p = make_parser()
    args = p.parse_args(argv)
    if args.resume is not None:
        args = resumed_from(p, args, explicit_in(make_parser(), argv), make_parser().parse_args([]), RESUMABLE,
                            checkpoint, before)
    check_shared(p, args)
    check(p, args)
    return args


def explicit_in(p: argparse.ArgumentParser, argv: list[str] | None) -> set[str]:
    """The options of parser ``p`` given in ``argv`` (not left at their defaults); ``p`` is spent."""
    unset = object()
    p.set_defaults(**dict.fromkeys(vars(p.parse_args([])), unset))
    return {key for key, value in vars(p.parse_args(argv)).items() if value is not unset}


def resumed_from(p: argparse.ArgumentParser, args: argparse.Namespace, given: set[str], default: argparse.Namespace,
                 resumable: tuple[str, ...], checkpoint: str,
                 before: dict[str, Any] | None = None) -> argparse.Namespace:
    """``default`` updated with the config.json of the run in ``args.resume`` and the given
    ``resumable`` flags; ``p.error`` for another flag, a missing config or a missing ``checkpoint``.
    ``before``: the values of flags added since, for a config.json written without them."""
    folder: Path = args.resume
    fixed = sorted(given - {"resume", *resumable})
    if fixed:
        p.error(f"--resume continues the run in {str(folder)!r} with its config.json: "
                f"{', '.join('--' + k.replace('_', '-') for k in fixed)} cannot change "
                f"(only {', '.join('--' + k.replace('_', '-') for k in resumable)} can)")
    try:
        config = json.loads((folder / "config.json").read_text())
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        p.error(f"--resume {str(folder)!r}: no readable config.json of a training run ({exc})")
    if not (folder / checkpoint).exists():
        p.error(f"--resume {str(folder)!r}: no {checkpoint} in it (a run saves one at every evaluation "
                "and when it stops)")
    resumed = default
    for key, value in (before or {}).items():
        if key not in config:
            config[key] = value
    for key, value in config.items():
        if hasattr(resumed, key) and key not in ("out", "resume", "overwrite", *given):
            setattr(resumed, key, value)
    for key in given & set(resumable):
        setattr(resumed, key, getattr(args, key))
    resumed.out = resumed.resume = folder
    return resumed


def check_positive(p: argparse.ArgumentParser, args: argparse.Namespace, names: Iterable[str]) -> None:
    """``p.error`` unless every flag of ``names`` (dests, e.g. ``eval_games``) is positive and finite."""
    for name in names:
        value = getattr(args, name)
        if not value > 0 or value == float("inf"):
            p.error(f"--{name.replace('_', '-')} must be positive, got {value!r}")


def check_shared(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check the flags both trainers take (``p.error`` names the first bad one): the positive
    counts, the time limit, gamma, the entropy coefficient, the layer sizes, and ``--out``, which
    must be writable and, for a new run, follows the rule of every output folder
    (``bali_env.files.check_out_folder``: a run there is replaced only with ``--overwrite``)."""
    check_positive(p, args, ("steps", "snapshot_every", "eval_games", "eval_workers", "lr", "batch_size", "epochs"))
    _check_budget(p, args)
    _check_learning(p, args)
    _check_out(p, args)


def _check_budget(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--eval-every``, ``--final-eval-games`` and ``--minutes`` in their ranges."""
    if args.eval_every is not None and not 0 <= args.eval_every < float("inf"):
        p.error(f"--eval-every must be a number of env steps >= 0 (0: no evaluation between the first and the "
                f"final), got {args.eval_every!r}")
    if not args.final_eval_games >= 0:
        p.error(f"--final-eval-games must be >= 0 (0: no final evaluation), got {args.final_eval_games!r}")
    if not args.minutes >= 0 or args.minutes == float("inf"):
        p.error(f"--minutes must be >= 0 (0: no limit), got {args.minutes!r}")


def _check_learning(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--gamma``, ``--ent-coef`` and ``--net`` in their ranges."""
    if not 0 < args.gamma <= 1:
        p.error(f"--gamma must be in (0, 1], got {args.gamma!r}")
    if not args.ent_coef >= 0:
        p.error(f"--ent-coef must be >= 0, got {args.ent_coef!r}")
    if not layer_sizes(args.net):
        p.error(f"--net must be positive layer sizes like 128,128, got {args.net!r}")


def _check_out(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--out`` writable and, for a new run, free by the rule of every output folder."""
    out = (OUT_PARENT if args.out is None else args.out).resolve()
    probe = next((q for q in (out, *out.parents) if q.exists()), None)
    if probe is None or not probe.is_dir() or not os.access(probe, os.W_OK):
        p.error(f"--out {str(args.out or OUT_PARENT)!r} is not writable ({probe} is not a writable folder)")
    if args.resume is None:
        try:
            check_out_folder(args.out, what="training run", outputs=OUTPUTS, finished=finished_marker(args.out),
                             resumable=RESUMABLE_FILES, overwrite=getattr(args, "overwrite", False))
        except ValueError as exc:
            p.error(str(exc))


def eval_interval(args: RunSettings) -> float:
    """Env steps between evaluations: ``--eval-every`` (0: none, ``inf``), or by default
    ``min(1e6, --steps / 5)``, so a run bounded by ``--steps`` has at least five points."""
    if args.eval_every is None:
        return min(1e6, args.steps / AUTO_POINTS)
    return args.eval_every if args.eval_every > 0 else float("inf")


def layer_sizes(net: str) -> list[int]:
    """The hidden layer sizes of ``--net`` (``"128,128"``), or [] when it is not positive sizes."""
    try:
        sizes = [int(x) for x in net.split(",")]
    except ValueError:
        return []
    return sizes if sizes and min(sizes) >= 1 else []


def finished_marker(out: Path | None) -> str:
    """The file that marks a finished run in ``out``: ``summary.json``, unless it says the run
    was interrupted (then no file does: such a run is continued with ``--resume``)."""
    try:
        interrupted = json.loads((out / "summary.json").read_text()).get("interrupted", False)  # type: ignore[operator]
    except (OSError, ValueError, TypeError, AttributeError):
        interrupted = False
    return "(an interrupted run)" if interrupted else "summary.json"


def _holds_a_run(out: Path) -> str:
    return (f"--out {str(out)!r} already holds a training run (config.json): continue it with "
            f"--resume {str(out)!r}, or choose another folder")


def check_left(args: RunSettings, steps: int, elapsed: float) -> None:
    """TrainingError when a resumed run already reached its end (``steps`` env steps, ``elapsed``
    seconds against ``--steps`` and ``--minutes``, totals over the whole run)."""
    if steps >= args.steps or (args.minutes > 0 and elapsed >= args.minutes * 60):
        raise TrainingError(f"the run in {str(args.out)!r} already reached its end ({steps:,} steps, "
                            f"{elapsed / 60:.1f} minutes): give a larger --steps or --minutes "
                            "(totals over the whole run) to train further")


def claim_out(args: RunSettings, name: str) -> Path:
    """Make the run's folder and write its ``config.json`` (every flag); returns the folder.
    ``args``: the run's settings, an ``argparse.Namespace`` (RLlib's, whose ``out`` is set to the
    folder) or a frozen record with ``as_config()`` (``bali train``'s ``TrainSettings``: the caller
    takes the folder returned). A new run without ``--out`` gets a new folder
    ``runs/NAME-YYYYmmdd-HHMMSS`` (named on stderr, as ``bali tournament`` names its own); a new run
    with ``--out`` creates that folder's config.json exclusively (TrainingError, nothing written,
    when another run holds it, also one started at the same moment; with ``--overwrite`` the earlier
    run's ``OUTPUTS`` are removed first); a resumed run rewrites its config.json (its new limits)."""
    out = _claim(args, name)
    if isinstance(args, argparse.Namespace):
        args.out = out
    return out


def _claim(args: Any, name: str) -> Path:
    """``claim_out``'s work: the folder claimed, its config.json written."""
    out: Path | None = args.out
    if args.resume is not None:
        write_text(out / "config.json", _config_text(args, out))  # type: ignore[operator]
        return out  # type: ignore[return-value]
    chosen = out is None
    if out is not None and getattr(args, "overwrite", False) and out.is_dir():
        removed = remove_outputs(out, OUTPUTS)
        if removed:
            print(f"--overwrite: replacing the earlier run in {out} ({', '.join(removed)})", file=sys.stderr)
    try:
        if out is None:
            out = new_output_dir(OUT_PARENT, f"{name}-{time.strftime('%Y%m%d-%H%M%S')}")
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "config.json", "x") as f:
            f.write(_config_text(args, out))
    except FileExistsError as exc:
        raise TrainingError(str(exc) if chosen else _holds_a_run(out)) from None  # type: ignore[arg-type]
    except OSError as exc:
        raise TrainingError(f"--out {str(out or OUT_PARENT)!r}: cannot create it ({exc})") from None
    if chosen:
        print(f"writing to {out}", file=sys.stderr, flush=True)
    return out


def _config_text(args: Any, out: Path) -> str:
    """config.json: every setting (a record's ``as_config()``, or a Namespace's attributes), ``out`` the folder."""
    config = dict(vars(args)) if isinstance(args, argparse.Namespace) else args.as_config()
    config["out"] = out
    return json.dumps({k: (str(v) if isinstance(v, Path) else v) for k, v in config.items()}, indent=2)
