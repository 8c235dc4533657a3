"""Tournaments on Ray: chunks of games as Ray tasks, on a local Ray instance or a cluster.

``bali tournament ... --backend ray [--ray-address ADDR] [--chunk-size K]`` (or
``run_tournament(..., backend="ray")``) cuts the games still to play into chunks of ``K``
consecutive game indices and runs each chunk as one Ray task: ``play_games`` on the batched env
in the worker that picks it up, one Numba thread per task. Without ``--ray-address`` a local Ray
instance with ``--workers`` CPUs is started (and stopped at the end); with one, the driver joins
that cluster (``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the
others) and every node's CPUs take chunks.

What is sent to a worker: the agent specs, the job (``GameJob``: the game, seed, batch size,
clock) and the chunk's game indices; a file agent (``path/bot.py:Class``) travels as its absolute path,
so on a cluster that file must exist at the same path on every node (or be an installed
package). Each node compiles the Numba kernels once into its disk cache.

Same results as the local backend: game k is dealt from ``deal_seed(seed, k)`` and every decision draws
from its own key (``bali_env.bots.base.decision_keys``), so a game plays out the same in any chunk,
worker or backend. A chunk whose worker dies (killed, node lost) is retried by Ray (up to
``MAX_RETRIES`` times); its games are journaled only when the chunk's result arrives, so none is
lost or counted twice. Progress bar, journal and ``--resume`` work as with local workers.
"""

from __future__ import annotations

import math
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bali_env.arena.settings import GameJob

RAY_EXTRA = 'pip install "bali-env[ray]"'
MAX_RETRIES = 3  #: Ray retries of a chunk whose worker died
CONNECT_TIMEOUT = 3.0  #: seconds to reach --ray-address before giving up


def check_ray(address: str | None) -> None:
    """Fail fast, before any game: Ray must be installed, and ``address`` (``host:port``, or
    ``auto`` for the cluster this machine belongs to) must accept a connection within
    ``CONNECT_TIMEOUT`` seconds. Raises ``TournamentError`` saying what to do."""
    from bali_env.arena.errors import TournamentError

    try:
        import ray  # noqa: F401
    except ImportError:
        raise TournamentError(f"the ray backend needs Ray: {RAY_EXTRA}") from None
    if address is None or address == "auto":
        return
    host, _, port = str(address).removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise TournamentError(f"--ray-address must be HOST:PORT (e.g. 10.0.0.5:6379) or auto, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise TournamentError(f"cannot reach the Ray cluster at {address} ({exc}); start it with "
                              "`ray start --head` or check the address") from None


AUTH_HINT = ("a cluster started with token authentication (the default from Ray 2.59 on) needs its token "
             "here: export RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<the output of `ray get-auth-token` on the head>")


def init_ray(address: str | None, num_cpus: int) -> None:
    """Join the cluster at ``address``, or start a local Ray instance of ``num_cpus`` CPUs
    (``address`` None); RuntimeError in one line (with ``AUTH_HINT``) when it cannot connect."""
    import ray

    try:
        ray.init(address=address, num_cpus=None if address else num_cpus, include_dashboard=False,
                 log_to_driver=False, logging_level="ERROR")
    except ConnectionError as exc:
        raise RuntimeError(f"cannot connect to the Ray cluster at {address} ({exc}); {AUTH_HINT}") from None


def _absolute_specs(specs: list[str]) -> list[str]:
    """Agent specs with a file agent's path made absolute (workers may run elsewhere)."""
    out = []
    for spec in specs:
        path, sep, rest = spec.partition(".py:")
        file = Path(path + ".py")
        out.append(f"{file.resolve()}:{rest}" if sep and file.is_file() else spec)
    return out


def _play_chunk(specs: list[str], job: GameJob, games: list[int]) -> list[dict[str, Any]]:
    """A Ray task: play the games ``games`` of ``specs`` by ``job`` (a ``GameJob``) on one Numba thread."""
    import numba

    from bali_env.arena.games import play_games
    from bali_env.engine.thread_pool import start_thread_pool

    start_thread_pool()
    numba.set_num_threads(1)
    return play_games(specs, games, job, worker=0)


def default_chunk_size(todo: int, cpus: int, batch_size: int) -> int:
    """Games per task: about ``PROGRESS_WAVES`` chunks per CPU (the bar moves and a lost worker
    costs little), at most ``batch_size``."""
    from bali_env.arena.games import PROGRESS_WAVES

    return max(1, min(batch_size, math.ceil(todo / (PROGRESS_WAVES * max(cpus, 1)))))


def play_on_ray(specs: list[str], job: GameJob, todo: list[int], on_games: Callable[[list[dict[str, Any]]], None],
                address: str | None, workers: int, chunk_size: int | None = None,
                on_first: Callable[[], None] = lambda: None) -> None:
    """Play the games ``todo`` of ``specs`` by ``job`` (a ``GameJob``) as Ray tasks of
    ``chunk_size`` games (``default_chunk_size`` when None), passing each chunk's records to
    ``on_games`` as it arrives. Starts a local Ray
    instance of ``workers`` CPUs when ``address`` is None (stopped at the end), else joins the
    cluster. A chunk that fails for good raises RuntimeError; an interruption cancels the rest."""
    import ray

    started = not ray.is_initialized()
    if started:
        init_ray(address, workers)
    try:
        cpus = int(ray.cluster_resources().get("CPU", workers))
        size = chunk_size or default_chunk_size(len(todo), cpus, int(job.batch_size))
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(_play_chunk)
        remote_specs = _absolute_specs(list(specs))
        pending = [task.remote(remote_specs, job, todo[i : i + size]) for i in range(0, len(todo), size)]
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
                for ref in ready:
                    try:
                        records = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        raise RuntimeError(f"a ray chunk failed: {str(exc).strip().splitlines()[-1]}") from None
                    on_first()
                    on_games(records)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
    finally:
        if started:
            ray.shutdown()
