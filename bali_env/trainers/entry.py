"""The shape both training commands share (``bali train`` and ``bali train --framework rllib``):
parse and check every flag, check the packages, run, and turn what can go wrong into an exit code.

``run_command`` is the whole run of ``bali train`` (``bali_env.trainers.ppo_selfplay.train.run_argv``) and of
``bali train --framework rllib`` (``bali_env.trainers.rllib.launch.run_argv``):

- a bad flag: argparse's usage and one line naming it, exit 2 (nothing printed before, nothing written);
- a missing package: one line naming it and the extra to install, exit 2 (nothing written);
- a run that cannot start as asked (``TrainingError``): one line, exit 2;
- an interrupted run: the first Ctrl-C or SIGTERM during training stops the run cleanly (it saves,
  evaluates and writes ``summary.json`` with ``"interrupted": true``); one before training starts,
  or a second one, quits at once (one line); either way the command exits 130, the shell's
  convention for an interrupt;
- a finished run: exit 0.
"""

from __future__ import annotations

import importlib.util
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

INTERRUPTED = 130  #: the exit code of an interrupted run (128 + SIGINT, the shell's convention)


class TrainingError(ValueError):
    """A run that cannot start as asked (the command prints it in one line, exit 2)."""


def missing_modules(names: Sequence[str]) -> list[str]:
    """The modules of ``names`` that are not installed (a package's submodules listed after it)."""
    missing: list[str] = []
    for name in names:
        if name.rpartition(".")[0] in missing:  # a submodule of a missing package (listed before it)
            continue
        if importlib.util.find_spec(name) is None:
            missing.append(name)
    return missing


def run_command(argv: list[str] | None, *, name: str, parse: Callable[[list[str] | None], Any],
                missing: Callable[[Any], list[str]], install: str, train: Callable[[Any], dict[str, Any]]) -> int:
    """Run one training command: ``parse(argv)`` (argparse exits 2 on a bad flag), then
    ``missing(args)`` (packages not installed: one line naming ``install``, exit 2), then
    ``train(args)``; ``name`` starts every line printed. Returns the exit code: 0 for a finished
    run, 2 for a ``TrainingError``, 130 for an interrupted one (``train`` returned a summary with
    ``"interrupted": true``, or Ctrl-C or SIGTERM raised KeyboardInterrupt outside the clean stop)."""
    try:
        with _sigterm_interrupts():
            args = parse(argv)
            absent = missing(args)
            if absent:
                print(f"{name}: error: {', '.join(absent)} not installed; install the {install}", file=sys.stderr)
                return 2
            summary = train(args)
    except TrainingError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{name}: interrupted", file=sys.stderr)
        return INTERRUPTED
    return INTERRUPTED if summary.get("interrupted") else 0


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Within the block SIGTERM interrupts like Ctrl-C (KeyboardInterrupt), where the training
    loop does not stop cleanly on it (``bali_env.trainers.progress.StopOnSignals``): while the run starts,
    and after the first signal. Only in the main thread (where Python runs signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        """Stop like Ctrl-C."""
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
