"""What both training loops share while they run: the clean stop on SIGINT/SIGTERM
(``StopOnSignals``) and the progress bar (``ProgressBar``)."""

from __future__ import annotations

import argparse
import time
from typing import Any


class ProgressBar:
    """A tqdm bar over the run: env steps, or minutes when ``--minutes`` ends the run first (so
    the ETA is the run's, not that of ``--steps``' 1e8)."""

    def __init__(self, args: argparse.Namespace, start: float, steps: int = 0) -> None:
        from tqdm.auto import tqdm

        self.by_time = args.minutes > 0
        self.start = start
        total = args.minutes * 60 if self.by_time else int(args.steps)
        initial = min(time.time() - start, total) if self.by_time else steps  # a resumed run goes on
        self.bar = tqdm(total=total, initial=initial, unit="s" if self.by_time else "step", disable=not args.progress,
                        desc="training", smoothing=0.05, bar_format=None if not self.by_time else
                        "{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]")
        self.last = 0.0

    def advance(self, steps: int) -> None:
        """Move the bar to ``steps`` env steps (or the elapsed time), at most 4 times a second."""
        now = time.time()
        if now - self.last < 0.25:
            return
        self.last = now
        done = min(now - self.start, self.bar.total) if self.by_time else steps
        self.bar.update(done - self.bar.n)
        self.bar.set_postfix_str(f"{steps:,} steps", refresh=False)

    def close(self) -> None:
        """Close the bar."""
        self.bar.close()


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
