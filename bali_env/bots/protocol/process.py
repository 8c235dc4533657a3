"""One bot as its own process: ``BotProcess`` starts the program, says hello, sends a message and
waits for one answer line under a clock, and kills the process (its whole process group) when it
times out, crashes, floods its output, breaks the protocol or is done.

The program runs under a guard (``guard.py``): a small process that leads the bot's process
group and kills it when bali closes the guard's lifeline or dies, however it dies (SIGKILL
included), so that no bot outlives the bali process that started it.

Reads and writes never block past the clock: the pipes are non-blocking and waited on with
``select``; an answer longer than ``MAX_LINE`` bytes without a newline is a flood (``protocol``),
and so is a line the bot sends when no answer is due (bali looks before each message it sends but
``end`` and ``quit``, and after each answer: ``expect_quiet``). The bot's standard error goes to a
log file; without one, its last ``STDERR_TAIL`` bytes are kept (unless ``keep_stderr`` is off: then
nowhere), and a bot that fails to start or crashes says them in its fault.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

from bali_env.bots.protocol.guard import GUARD_PATH
from bali_env.bots.protocol.messages import MAX_LINE, QUIT, BotFault, hello_message, line, parse_hello

HELLO_SECONDS = 10.0  #: the time a new bot has to answer hello (its start-up)
QUIT_SECONDS = 2.0  #: the time a bot has to exit after quit before it is killed
STDERR_TAIL = 2_000  #: bytes of a bot's standard error kept when it goes to no log file
STDERR_SAYS = "; its standard error ends: "  #: what comes before that tail in a fault's detail


class BotProcess:
    """A running bot program (``argv``), its stderr appended to ``stderr_path``, or else its tail
    kept (``keep_stderr``) or discarded."""

    def __init__(self, argv: list[str], stderr_path: str | Path | None = None, cwd: str | Path | None = None,
                 keep_stderr: bool = True) -> None:
        self.argv = list(argv)
        self.stderr_path = Path(stderr_path) if stderr_path is not None else None
        self.keep_stderr = keep_stderr
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self.name = ""
        self.fields: tuple[str, ...] = ()  #: the decision fields the bot asked for in its hello
        self._buffer = b""
        self._lifeline: int | None = None  # the write end of the guard's lifeline
        self._stderr = b""  # the tail of its standard error, when it goes to no log file

    # ------------------------------------------------------------------ life
    def start(self, move_time: float | None, game_time: float | None) -> str:
        """Start the program (under its guard) and exchange hellos; returns the bot's name.
        BotFault when it cannot start (``crash``), does not answer in time (``timeout``) or
        answers wrongly (``protocol``); without a log file, the fault ends with the tail of the
        bot's standard error."""
        self.close()
        self._buffer, self._stderr = b"", b""
        try:
            self.proc = self._spawn()
            answer = self.request(hello_message(move_time, game_time), max(HELLO_SECONDS, move_time or 0))
            self.name, self.fields = parse_hello(answer)
            self.expect_quiet()
        except BotFault as exc:
            self.kill()
            raise self.with_stderr(exc) from None
        return self.name

    def _spawn(self) -> subprocess.Popen[bytes]:
        """The guard running the program, its pipes non-blocking (BotFault ``crash`` when it
        cannot be started)."""
        err: BinaryIO | int = subprocess.PIPE if self.keep_stderr else subprocess.DEVNULL
        if self.stderr_path is not None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            err = self.stderr_path.open("ab")
        lifeline, self._lifeline = os.pipe()
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-S", GUARD_PATH, str(lifeline), *self.argv],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=self.cwd,
                                    start_new_session=True, bufsize=0, pass_fds=(lifeline,))
        except OSError as exc:
            self._cut_lifeline()
            raise BotFault("crash", f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        finally:
            os.close(lifeline)
            if not isinstance(err, int):
                err.close()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                os.set_blocking(pipe.fileno(), False)
        return proc

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
            self._wait_exit(proc, QUIT_SECONDS)
        self._kill(proc)

    def _wait_exit(self, proc: subprocess.Popen[bytes], seconds: float) -> None:
        """Wait up to ``seconds`` for the bot to exit, reading its standard error meanwhile (a
        bot that writes much of it on its way out is not stuck on a full pipe)."""
        deadline = time.monotonic() + seconds
        reading = proc.stderr is not None
        while proc.poll() is None and (left := deadline - time.monotonic()) > 0:
            if not reading:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(left)
                return
            if select.select([proc.stderr], [], [], min(left, 0.05))[0]:
                reading = self._read_stderr(proc)

    def kill(self) -> None:
        """Kill the bot at once (after a fault)."""
        if self.proc is not None:
            proc, self.proc = self.proc, None
            self._kill(proc)

    def _kill(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        proc.wait()
        self._cut_lifeline()  # the guard is gone; were it not, this would kill its group
        self._read_stderr(proc)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: the process may be gone already
            self.kill()
        with contextlib.suppress(Exception):
            self._cut_lifeline()

    def _cut_lifeline(self) -> None:
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None

    # ------------------------------------------------------------------ talk
    def send(self, message: dict[str, Any], seconds: float = 1.0) -> None:
        """Send a message that needs no answer (BotFault ``protocol`` when a line the bot sent
        unasked waits, except before ``end`` and ``quit``)."""
        if self.proc is None:
            raise BotFault("crash", "the bot is not running")
        if message.get("type") not in ("end", "quit"):
            self.expect_quiet()
        self._write(self.proc, line(message), time.monotonic() + seconds)

    def request(self, message: dict[str, Any] | bytes, seconds: float) -> bytes:
        """Send a message (or a line already encoded) and return the bot's answer line, within
        ``seconds`` in all. BotFault ``timeout``, ``crash`` or ``protocol`` (a flood, or a line
        the bot sent before this message: ``expect_quiet``)."""
        if self.proc is None:
            raise BotFault("crash", "the bot is not running")
        deadline = time.monotonic() + seconds
        self.expect_quiet()
        self._write(self.proc, message if isinstance(message, bytes) else line(message), deadline)
        return self._read_line(self.proc, deadline, seconds)

    def expect_quiet(self, seconds: float = 0.0, after: bytes | None = None) -> None:
        """BotFault ``protocol`` when the bot has sent anything that bali has not read as an
        answer (waiting up to ``seconds`` for it; ``after``: the answer it came after). A line
        sent when no answer was due (after ``start``, after ``end``, a second line after an
        answer) would otherwise be read as the next answer."""
        if self.proc is None:
            return
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        deadline = time.monotonic() + seconds
        while not self._buffer:
            with contextlib.suppress(OSError):  # BlockingIOError: nothing now
                while chunk := os.read(fd, MAX_LINE):
                    self._buffer += chunk
                    if len(self._buffer) > MAX_LINE:
                        break
            left = deadline - time.monotonic()
            if self._buffer or left <= 0 or not self._wait(self.proc, [fd], [], left)[0]:
                break
        if self._buffer:
            first = self._buffer.split(b"\n", 1)[0].strip()
            came = "" if after is None else f" came after the answer {after[:40]!r}"
            raise BotFault("protocol", f"a line sent when no answer was due: {first[:80]!r}{came}")

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
            if left <= 0 or not self._wait(proc, [], [fd], left)[1]:
                raise BotFault("timeout", "did not read its input in time")

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float, seconds: float) -> bytes:
        fd = proc.stdout.fileno()  # type: ignore[union-attr]
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE:
                raise BotFault("protocol", f"more than {MAX_LINE:,} bytes without a newline (flood)")
            left = deadline - time.monotonic()
            if left <= 0 or not self._wait(proc, [fd], [], left)[0]:
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

    def _wait(self, proc: subprocess.Popen[bytes], reads: list[int], writes: list[int],
              seconds: float) -> tuple[list[int], list[int]]:
        """``select`` on the pipes for up to ``seconds``, keeping the bot's standard error read
        meanwhile (when bali keeps its tail): the ready ones of ``reads`` and ``writes``."""
        err = proc.stderr.fileno() if proc.stderr is not None else None
        deadline = time.monotonic() + seconds
        while True:
            ready_r, ready_w, _ = select.select(reads + ([err] if err is not None else []), writes, [],
                                                max(0.0, deadline - time.monotonic()))
            if err is not None and err in ready_r:
                if not self._read_stderr(proc):
                    err = None  # its end: wait on the others only
                ready_r = [fd for fd in ready_r if fd != proc.stderr.fileno()]  # type: ignore[union-attr]
                if not ready_r and not ready_w and time.monotonic() < deadline:
                    continue
            return ready_r, ready_w

    def _read_stderr(self, proc: subprocess.Popen[bytes]) -> bool:
        """Read what the bot wrote to its standard error (kept: the last ``STDERR_TAIL`` bytes);
        False at its end."""
        if proc.stderr is None or proc.stderr.closed:
            return False
        try:
            while chunk := os.read(proc.stderr.fileno(), 65_536):
                self._stderr = (self._stderr + chunk)[-STDERR_TAIL:]
        except BlockingIOError:
            return True
        except OSError:
            pass
        return False

    def with_stderr(self, fault: BotFault) -> BotFault:
        """The fault, its detail ending with the tail of the bot's standard error (its last 5
        lines, at most 600 characters) when bali kept it (no log file) and it said anything."""
        if not self._stderr.strip() or STDERR_SAYS in fault.detail:  # nothing kept, or said already
            return fault
        lines = [" ".join(t.split()) for t in self._stderr.decode(errors="replace").splitlines() if t.strip()]
        return BotFault(fault.reason, f"{fault.detail}{STDERR_SAYS}{' | '.join(lines[-5:])[-600:]}")

    @staticmethod
    def _exit_text(proc: subprocess.Popen[bytes], what: str) -> str:
        try:
            code = proc.wait(0.2)
        except subprocess.TimeoutExpired:
            return what
        return f"exited with code {code}" if code >= 0 else f"killed by signal {-code}"


__all__ = ["HELLO_SECONDS", "QUIT_SECONDS", "STDERR_SAYS", "STDERR_TAIL", "BotProcess"]
