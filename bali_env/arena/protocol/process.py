"""One bot as its own process: ``BotProcess`` starts the program, says hello, sends a message and
waits for one answer line under a clock, and kills the process (its whole process group) when it
times out, crashes, floods its output or is done. The bot's standard error goes to a log file.

Reads and writes never block past the clock: both pipes are non-blocking and waited on with
``select``; an answer longer than ``MAX_LINE`` bytes without a newline is a flood (``protocol``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, BinaryIO

from .messages import MAX_LINE, QUIT, BotFault, hello_message, line, parse_hello

HELLO_SECONDS = 10.0  #: the time a new bot has to answer hello (its start-up)
QUIT_SECONDS = 2.0  #: the time a bot has to exit after quit before it is killed


class BotProcess:
    """A running bot program (``argv``), its stderr appended to ``stderr_path`` (or discarded)."""

    def __init__(self, argv: list[str], stderr_path: str | Path | None = None, cwd: str | Path | None = None) -> None:
        self.argv = list(argv)
        self.stderr_path = Path(stderr_path) if stderr_path is not None else None
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self.name = ""
        self.fields: tuple[str, ...] = ()  #: the decision fields the bot asked for in its hello
        self._buffer = b""

    # ------------------------------------------------------------------ life
    def start(self, move_time: float | None, game_time: float | None) -> str:
        """Start the program and exchange hellos; returns the bot's name. BotFault when it cannot
        start (``crash``), does not answer in time (``timeout``) or answers wrongly (``protocol``)."""
        self.close()
        err: BinaryIO | int = subprocess.DEVNULL
        if self.stderr_path is not None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            err = self.stderr_path.open("ab")
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         cwd=self.cwd, start_new_session=True, bufsize=0)
        except OSError as exc:
            raise BotFault("crash", f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        finally:
            if not isinstance(err, int):
                err.close()
        for pipe in (self.proc.stdin, self.proc.stdout):
            os.set_blocking(pipe.fileno(), False)  # type: ignore[union-attr]
        self._buffer = b""
        try:
            answer = self.request(hello_message(move_time, game_time), max(HELLO_SECONDS, move_time or 0))
            self.name, self.fields = parse_hello(answer)
        except BotFault:
            self.kill()
            raise
        return self.name

    @property
    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        """Ask the bot to quit; kill it (its process group) if it does not exit in time."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            with contextlib.suppress(BotFault):
                self._write(proc, line(QUIT), time.monotonic() + 0.5)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(QUIT_SECONDS)
        self._kill(proc)

    def kill(self) -> None:
        """Kill the bot at once (after a fault)."""
        if self.proc is not None:
            proc, self.proc = self.proc, None
            self._kill(proc)

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()

    # ------------------------------------------------------------------ talk
    def send(self, message: dict[str, Any], seconds: float = 1.0) -> None:
        """Send a message that needs no answer."""
        if self.proc is None:
            raise BotFault("crash", "the bot is not running")
        self._write(self.proc, line(message), time.monotonic() + seconds)

    def request(self, message: dict[str, Any] | bytes, seconds: float) -> bytes:
        """Send a message (or a line already encoded) and return the bot's answer line, within
        ``seconds`` in all. BotFault ``timeout``, ``crash`` or ``protocol`` (a flood)."""
        if self.proc is None:
            raise BotFault("crash", "the bot is not running")
        deadline = time.monotonic() + seconds
        self._write(self.proc, message if isinstance(message, bytes) else line(message), deadline)
        return self._read_line(self.proc, deadline, seconds)

    def _write(self, proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> None:
        view = memoryview(data)
        fd = proc.stdin.fileno()  # type: ignore[union-attr]
        while view:
            try:
                sent = os.write(fd, view)
                view = view[sent:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, OSError):
                raise BotFault("crash", self._exit_text(proc, "closed its input")) from None
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise BotFault("timeout", "did not read its input in time")

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float, seconds: float) -> bytes:
        fd = proc.stdout.fileno()  # type: ignore[union-attr]
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE:
                raise BotFault("protocol", f"more than {MAX_LINE:,} bytes without a newline (flood)")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise BotFault("timeout", f"no answer within {seconds:g} s")
            try:
                chunk = os.read(fd, MAX_LINE)
            except BlockingIOError:
                continue
            if not chunk:
                raise BotFault("crash", self._exit_text(proc, "closed its output"))
            self._buffer += chunk
        answer, _, self._buffer = self._buffer.partition(b"\n")
        if len(answer) > MAX_LINE:
            raise BotFault("protocol", f"an answer of {len(answer):,} bytes (flood; at most {MAX_LINE:,})")
        return answer.strip()

    @staticmethod
    def _exit_text(proc: subprocess.Popen[bytes], what: str) -> str:
        try:
            code = proc.wait(0.2)
        except subprocess.TimeoutExpired:
            return what
        return f"exited with code {code}" if code >= 0 else f"killed by signal {-code}"


__all__ = ["HELLO_SECONDS", "QUIT_SECONDS", "BotProcess"]
