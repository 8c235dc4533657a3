"""The guard of one bot process, so that no bot outlives the bali process that started it,
however that process ends (a clean stop, SIGTERM, SIGINT or SIGKILL).

``BotProcess`` runs ``python guard.py FD PROGRAM ARGS`` in a new session (the guard leads its
process group) instead of the program itself. The guard starts the program in its group, with
the standard input, output and error it was given, and waits on two things at once:

- the program ends: the guard exits with the program's exit code (or dies by its signal), so
  bali sees the program's own exit;
- the lifeline ``FD`` (the read end of a pipe whose only write end bali holds) reaches its end:
  bali closed it (it stopped the bot) or died, whatever killed it. The guard kills its whole
  process group, the program and anything it started, itself last.

The guard is a script of the standard library's C modules only (``os``, ``select``, ``_signal``),
run as ``python -I -S``: it adds about 10 ms to a bot's start beyond the interpreter's own start
(25-35 ms on this project's 2-core machine). It imports nothing of bali_env.
"""

from __future__ import annotations

import os
import select
import sys

try:  # the C module: ``signal`` imports ``enum``, which doubles the guard's start-up time
    import _signal as signal
except ImportError:  # another Python than CPython
    import signal  # type: ignore[no-redef]

GUARD_PATH = os.path.abspath(__file__)  #: the script ``BotProcess`` runs


def _exit_as(status: int) -> None:
    """End this process as the program ended: its exit code, or death by the same signal."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: die by it too (its default action was restored at start)
        os.kill(os.getpid(), -code)
        code = 128 - code  # a signal that does not end a process (never here): the shell's convention
    os._exit(code)


def _run(program: list[str], lifeline: int) -> None:
    """The child: become the program (same group, same standard streams, no lifeline)."""
    os.close(lifeline)
    try:
        os.execvp(program[0], program)
    except OSError as exc:
        os.write(2, f"bali: cannot start {program[0]!r}: {exc.strerror or exc}\n".encode())
    os._exit(127)


def main(argv: list[str]) -> None:
    """``guard.py FD PROGRAM ARGS``: run the program; kill the process group when FD closes."""
    if len(argv) < 2 or not argv[0].isdigit():
        sys.stderr.write("usage: guard.py LIFELINE_FD PROGRAM [ARGS...]\n")
        os._exit(2)
    lifeline, program = int(argv[0]), argv[1:]
    for name in ("SIGINT", "SIGPIPE", "SIGXFSZ", "SIGTERM"):  # the program starts as a plain exec would
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    wake_r, wake_w = os.pipe()  # SIGCHLD wakes the select below (no thread: it costs 15 ms to import)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_w)
    pid = os.fork()
    if pid == 0:
        _run(program, lifeline)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # only the program holds the protocol's pipes and its stderr: its exit closes them
        os.dup2(null, fd)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            _exit_as(status)
        ready = select.select([lifeline, wake_r], [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 512)
        if lifeline in ready and not os.read(lifeline, 512):  # bali never writes: its end closed, or bali is gone
            break
    os.killpg(0, signal.SIGKILL)  # the program, anything it started, and this guard


if __name__ == "__main__":
    main(sys.argv[1:])
