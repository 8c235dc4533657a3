"""Worker processes: kernels compiled once and shared out (``compile_share``), the compile
notice, interpreted first runs (Numba's JIT off in the children), workers that exit with their
parent, and ``play_parallel`` (spawned processes playing strided games)."""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing as mp
import queue as queue_module
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from bali_env.bots.registry import make_agent
from bali_env.engine import compile_notice
from bali_env.engine.config import GameConfig
from bali_env.arena.games import play_games
from bali_env.arena.settings import GameJob

COMPILE_NOTICE = "compiling the game kernels (first run only; cached afterwards)"  #: said only when Numba compiles


class CompileNotice:
    """The line on stderr that says kernels are compiling, and how far: the parts of the
    tournament ready (the game's kernels, then each agent's: ``compile_parts``) out of all,
    the kernels compiled so far and the seconds since it started; never an estimate of the time
    left (compile times vary too much to predict). Shown from the moment ``show()`` is called
    (Numba started a real compile here or in a worker: a load from the disk cache is not one),
    never before; on a log file or a pipe the line once and then a line per part ready, on a
    terminal one animated line; ``stop()`` clears it (all methods idempotent, any thread). It
    quiets the library's own line (``bali_env.engine.compile_notice``) in this process: a
    tournament says it compiles with this notice, or not at all without progress."""

    def __init__(self, enabled: bool = True, parts: int = 0) -> None:
        compile_notice.quiet()  # a tournament speaks for its process: this notice, or nothing without progress
        self._enabled = enabled
        self._parts = parts
        self._ready: list[str] = []
        self._kernels: dict[int, int] = {}
        self._started = 0.0
        self._shown = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def show(self) -> None:
        """Start showing the notice (no effect when disabled, stopped or already shown)."""
        with self._lock:
            if not self._enabled or self._done.is_set() or self._shown.is_set():
                return
            self._shown.set()
            self._started = time.perf_counter()
            if not sys.stderr.isatty():  # a log file or a pipe: the line once, no animation
                sys.stderr.write(COMPILE_NOTICE + "\n")
                sys.stderr.flush()
                return
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()

    def kernels(self, worker: int, count: int) -> None:
        """Worker ``worker`` (0 in-process) has started compiling ``count`` kernels so far."""
        with self._lock:
            self._kernels[worker] = max(count, self._kernels.get(worker, 0))

    def part_ready(self, label: str) -> None:
        """The part ``label`` is compiled (or loaded from the cache); said on its own line on a
        log file or a pipe once the notice is shown."""
        with self._lock:
            self._ready.append(label)
            if self._shown.is_set() and not self._done.is_set() and not sys.stderr.isatty():
                sys.stderr.write(f"  ready: {label} ({self._progress()})\n")
                sys.stderr.flush()

    def _progress(self) -> str:
        """``2/4 parts ready, 57 kernels compiled, 41 s`` (the counts known so far)."""
        parts = f"{len(self._ready)}/{self._parts} parts ready, " if self._parts else ""
        return f"{parts}{sum(self._kernels.values())} kernels compiled, {time.perf_counter() - self._started:.0f} s"

    def text(self) -> str:
        """The notice with its progress, as a terminal shows it."""
        with self._lock:
            return f"{COMPILE_NOTICE}: {self._progress()}"

    def _spin(self) -> None:
        import shutil

        frames, k, width = "|/-\\", 0, 0
        while not self._done.wait(0.1):
            line = f"{frames[k % 4]} {self.text()}"[: shutil.get_terminal_size().columns - 1]
            width = max(width, len(line))
            sys.stderr.write(f"\r{line.ljust(width)}")
            sys.stderr.flush()
            k += 1
        sys.stderr.write("\r" + " " * width + "\r")
        sys.stderr.flush()

    def stop(self) -> None:
        """Stop and clear the line."""
        with self._lock:
            self._done.set()
            thread = self._thread
        if thread is not None:
            thread.join()


@contextlib.contextmanager
def on_compile(callback: Callable[[], None]) -> Iterator[None]:
    """Within the block, ``callback()`` is called when Numba starts compiling a kernel in this
    process (its ``numba:compile`` event: a kernel loaded from the disk cache raises none)."""
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            callback()

        def on_end(self, ev: Any) -> None:
            pass

    listener = _Listener()
    event.register("numba:compile", listener)
    try:
        yield
    finally:
        event.unregister("numba:compile", listener)


def warm_up(specs: Sequence[str], game: GameConfig | None = None, notice: CompileNotice | None = None,
            **fields: Any) -> None:
    """Compile (or load from Numba's disk cache) every kernel a game between ``specs`` uses, in
    this process: the parts (``compile_parts``, each said ready to ``notice``), then deal a game,
    let every agent decide a few times, step with a legal move (anything the parts missed); an
    agent that fails or answers an illegal action here is not held to it (it forfeits its games).
    ``game``: the ``GameConfig``, or its fields as keywords (``num_players=2, oracle=False``)."""
    from bali_env.envs.batched import BaliVectorEnv

    if game is None or fields:  # the loose fields, on the game given (or the default one)
        game = dataclasses.replace(game or GameConfig(), **fields)
    count = [0]

    def compiling() -> None:
        count[0] += 1
        if notice is not None:
            notice.show()
            notice.kernels(0, count[0])

    with on_compile(compiling):
        compile_share(specs, game, 0, 1, None if notice is None else notice.part_ready)
        env = BaliVectorEnv(1, **game.as_dict(), seed=0, parallel=False)
        env.reset()
        env.reset_game(0, 0)
        # a bot program (cmd:) compiles nothing here: it is not started (no hello, no decision before the games)
        agents = [make_agent(spec, seed=0) for spec in dict.fromkeys(specs) if spec.partition(":")[0] != "cmd"]
        agents = agents or [make_agent("random", seed=0)]
        for _ in range(3):
            for agent in agents:
                with contextlib.suppress(Exception):  # a failing bot forfeits when it plays, not here
                    agent.act_batch(env.obs, env.action_masks)
            env.step(np.argmax(env.action_masks, axis=1))  # a legal move, whatever the bots answered


def _exit_with_parent(parent: int) -> None:
    """A daemon thread that ends this worker process when its parent is gone (killed included)."""
    import os
    import threading

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def compile_parts(specs: Sequence[str]) -> list[str | None]:
    """The parts of a tournament's kernels, in order: the game's (None), then each distinct
    agent's ``compile_kernels``."""
    return [None, *dict.fromkeys(specs)]


def part_label(part: str | None) -> str:
    """How the compile notice names a part: ``the game`` or the agent's spec."""
    return "the game" if part is None else part


def _next_parts(count: int, worker: int, workers: int, counter: Any = None) -> Iterator[int]:
    """The part indices a worker compiles: with ``counter`` (a shared ``multiprocessing.Value``)
    the next part not yet taken by any worker, each time this worker is free; without it every
    ``workers``-th part from ``worker`` on."""
    if counter is None:
        yield from range(worker, count, workers)
        return
    while True:
        with counter.get_lock():
            k = counter.value
            counter.value += 1
        if k >= count:
            return
        yield k


def compile_share(specs: Sequence[str], game: GameConfig, worker: int = 0, workers: int = 1,
                  on_ready: Callable[[str], None] | None = None, counter: Any = None) -> None:
    """Worker ``worker``'s share of the kernels a tournament of ``game`` needs: parts of ``compile_parts``
    (each taken by the first free worker through the shared ``counter``, or dealt round-robin
    without one), ``on_ready(part_label(part))`` after each. Each part compiles (or loads from
    Numba's disk cache) once; the other workers load it afterwards."""
    from bali_env.envs.batched import compile_kernels

    parts = compile_parts(specs)
    for k in _next_parts(len(parts), worker, workers, counter):
        if parts[k] is None:
            compile_kernels(game.num_players, game.oracle, game.demon)
        else:
            make_agent(parts[k], seed=0).compile_kernels()
        if on_ready is not None:
            on_ready(part_label(parts[k]))


ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")  #: BLAS pools a worker keeps to one thread


@contextlib.contextmanager
def _children_environment(interpreted: bool) -> Iterator[None]:
    """Within the block, processes started inherit one BLAS thread each (``ONE_THREAD``: a
    worker is one thread, like its Numba kernels, and two workers' BLAS pools spinning on two
    cores made the network's agents about 8x slower) and, when ``interpreted``,
    ``NUMBA_DISABLE_JIT=1``; this process's own environment is restored on exit."""
    import os

    wanted = dict.fromkeys(ONE_THREAD, "1") | ({"NUMBA_DISABLE_JIT": "1"} if interpreted else {})
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def _worker_main(task: dict[str, Any], messages: Any, parent: int, compiled: Any = None, parts: Any = None) -> None:
    """Entry point of a worker process, its ``task`` the ``specs``, the ``job`` (a ``GameJob``),
    its ``games`` and its number ``worker``: compile its share of the kernels (``compile_share``, the
    parts taken through the shared counter ``parts``) and wait for the others' (``compiled``, a
    barrier), play (saying ``compiling`` once if Numba
    compiles anything), send each step's finished games through
    ``messages`` as they end (the parent journals them), then ``done``; exit if the parent dies."""
    import contextlib
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it terminates the workers
    _exit_with_parent(parent)
    compile_notice.quiet()  # the parent's CompileNotice speaks for the workers
    specs, job, worker = task["specs"], task["job"], task["worker"]
    try:
        import numba

        from bali_env.engine.thread_pool import start_thread_pool

        start_thread_pool()
        numba.set_num_threads(1)
        if numba.config.DISABLE_JIT:  # interpreted: NumPy scalars wrap around (SplitMix64) like Numba's ints
            np.seterr(over="ignore")
        count, said = [0], [0.0]

        def compiling() -> None:  # tell the parent how many kernels so far (twice a second at most)
            count[0] += 1
            if count[0] == 1 or time.perf_counter() - said[0] > 0.5:
                said[0] = time.perf_counter()
                messages.put(("compiling", worker, count[0]))

        with on_compile(compiling):
            if compiled is not None:
                compile_share(specs, job.game, worker, compiled.parties,
                              lambda label: messages.put(("part", worker, label)), parts)
                with contextlib.suppress(threading.BrokenBarrierError):  # a slow share: the rest compiles on use
                    compiled.wait(timeout=900)
                messages.put(("ready", worker, None))
            play_games(specs, task["games"], job, worker=worker,
                       on_finished=lambda recs: messages.put(("games", worker, recs)))
        messages.put(("done", worker, None))
    except BaseException:  # noqa: BLE001  (reported to the parent, which raises)
        messages.put(("error", worker, traceback.format_exc()))


def play_parallel(specs: Sequence[str], job: GameJob, workers: int, todo: list[int],
                  on_games: Callable[[list[dict[str, Any]]], None], notice: CompileNotice | None = None,
                  interpreted: bool = False, on_ready: Callable[[], None] | None = None) -> None:
    """Play the games ``todo`` of ``specs`` by ``job`` in ``workers`` spawned processes
    (strided), passing every batch of finished records to ``on_games`` as it arrives (``notice``
    is shown when a worker starts compiling and stopped, and ``on_ready()`` called, when every
    part is compiled or the first games end). A worker that dies is reported within about a
    second (RuntimeError naming it); on any exit the workers are stopped. ``interpreted``: the
    workers start with Numba's JIT off (``NUMBA_DISABLE_JIT=1``) and compile nothing."""
    import os

    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    # every worker compiles its share of the kernels, then plays (interpreted: nothing to compile)
    compiled = None if interpreted else ctx.Barrier(workers)
    parts = ctx.Value("i", 0)  # the next part of the kernels to compile: taken by the first free worker
    procs = []
    for w in range(workers):
        task = {"specs": list(specs), "job": job, "games": todo[w::workers], "worker": w}
        procs.append(ctx.Process(target=_worker_main, args=(task, messages, os.getpid(), compiled, parts),
                                 name=f"bali-tournament-{w}", daemon=True))
    done: set[int] = set()
    ready: tuple[set[int], int] = (set(), workers)  # the workers past the compile barrier
    try:
        with _children_environment(interpreted):
            for p in procs:
                p.start()
        while len(done) < workers:
            dead = [p for w, p in enumerate(procs) if w not in done and p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"tournament worker {dead[0].name} died (exit code {dead[0].exitcode})")
            try:
                message = messages.get(timeout=0.2)
            except queue_module.Empty:
                continue
            _take(message, done, on_games, notice, on_ready, ready)
        for p in procs:
            p.join()
    finally:
        _stop(procs)


def _take(message: tuple[str, int, Any], done: set[int], on_games: Callable[[list[dict[str, Any]]], None],
          notice: CompileNotice | None, on_ready: Callable[[], None] | None = None,
          ready: tuple[set[int], int] | None = None) -> None:
    """One message of a worker: it compiles (show the notice, with its count of kernels), a part
    of the kernels is ready, the worker passed the barrier (``ready``: the workers that did, of
    how many; when all did, stop the notice and call ``on_ready``: each worker's messages arrive
    in order, so every part said ready has been said by then), finished games (stop the notice,
    hand them on), it is done, or it failed (RuntimeError with its traceback)."""
    kind, w, payload = message
    if kind == "compiling":
        if notice is not None:
            notice.show()
            notice.kernels(w, payload)
    elif kind == "part":
        if notice is not None:
            notice.part_ready(payload)
    elif kind == "ready" and ready is not None and len(ready[0] | {w}) < ready[1]:
        ready[0].add(w)
    elif kind in ("ready", "games"):
        if notice is not None:
            notice.stop()
        if on_ready is not None:
            on_ready()
        if kind == "games":
            on_games(payload)
    elif kind == "done":
        done.add(w)
    else:
        raise RuntimeError(f"tournament worker {w} failed:\n{payload}")


def _stop(procs: list[Any]) -> None:
    """Terminate the workers still running and wait for them; one still there after 5 s is
    killed (multiprocessing joins its children at exit with no time limit, so a worker that
    outlived SIGTERM would hold the tournament's exit). A start that raised leaves the rest
    unstarted: only started ones are stopped."""
    started = [p for p in procs if p.pid is not None]
    for p in started:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 5
    for p in started:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in started:
        if p.is_alive():
            p.kill()
            p.join(timeout=5)
