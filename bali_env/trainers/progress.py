"""What both training loops share while they run: the clean stop on SIGINT/SIGTERM
(``StopOnSignals``), the progress bar (``ProgressBar``), a bar over one task's games
(``task_bar``: an evaluation's) and lines printed between the bars (``say``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bali_env.trainers.options import RunSettings


class ProgressBar:
    """A tqdm bar over the run: env steps, or seconds of training when ``--minutes`` ends the run
    first (so the ETA is the run's, not that of ``--steps``' 1e8); ``total`` is those seconds
    (``--minutes`` less what the final evaluation is kept; ``set_total`` moves it). Its postfix
    says what the run is learning (``advance``'s ``describe``)."""

    def __init__(self, args: RunSettings, start: float, steps: int = 0, total: float | None = None) -> None:
        from tqdm.auto import tqdm

        self.by_time = args.minutes > 0
        self.start = start
        if total is None:
            total = args.minutes * 60 if self.by_time else int(args.steps)
        initial = min(time.time() - start, total) if self.by_time else steps  # a resumed run goes on
        self.bar = tqdm(total=total, initial=initial, unit="s" if self.by_time else "step", disable=not args.progress,
                        desc="training", smoothing=0.05, bar_format=None if not self.by_time else
                        "{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]")
        self.last = 0.0

    def set_total(self, seconds: float) -> None:
        """A bar by time: the training now ends ``seconds`` after the run's start."""
        if self.by_time and abs(seconds - self.bar.total) >= 0.5:
            self.bar.total = max(seconds, 1.0)
            self.bar.refresh()

    def advance(self, steps: int, describe: Callable[[], str] | None = None) -> None:
        """Move the bar to ``steps`` env steps (or the elapsed time), at most 4 times a second; its
        postfix is ``describe()`` (by default the steps)."""
        now = time.time()
        if now - self.last < 0.25:
            return
        self.last = now
        done = min(now - self.start, self.bar.total) if self.by_time else steps
        self.bar.update(done - self.bar.n)
        self.bar.set_postfix_str(describe() if describe is not None else f"{steps:,} steps", refresh=False)

    def close(self) -> None:
        """Close the bar."""
        self.bar.close()


@contextmanager
def task_bar(args: RunSettings, label: str, total: int, leave: bool = False) -> Iterator[Any]:
    """A bar over ``total`` games of one task (an evaluation: ``LABEL: k/N games``) within the
    block, or None without ``--progress``."""
    if not getattr(args, "progress", True):
        yield None
        return
    from tqdm.auto import tqdm

    with tqdm(total=total, desc=label, unit="game", leave=leave, file=sys.stderr,
              bar_format="{desc}: {n_fmt}/{total_fmt} games {bar} [{elapsed}<{remaining}]") as bar:
        yield bar


def say(text: str, err: bool = False) -> None:
    """Print a line (on stderr with ``err``) without breaking the progress bars on screen."""
    from tqdm.auto import tqdm

    tqdm.write(text, file=sys.stderr if err else sys.stdout)
    (sys.stderr if err else sys.stdout).flush()


class StopOnSignals:
    """Within the block, the first SIGINT or SIGTERM sets ``now`` (the training loop ends after its
    current step and the run is saved as usual); a second one raises KeyboardInterrupt (quits at
    once). ``now`` keeps its value after the block (the run says whether it was interrupted)."""

    def __init__(self) -> None:
        self.now = False
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.now:
            raise KeyboardInterrupt
        self.now = True

    def __enter__(self) -> StopOnSignals:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
