"""Where self-play runs: in this process, on local worker processes, or as Ray tasks.

A generation's games are cut into chunks of consecutive game numbers (the same chunks whatever
runs them); ``Pool.play`` hands the chunks not yet done to ``selfplay.play_chunk`` and passes each
result to a callback as it arrives. A chunk's rows depend on its games only, so the run is the
same on 1 or N workers and on either backend. Local workers are started once per run (``spawn``:
no state inherited from the driver, which holds PyTorch) with one Numba and one BLAS thread each;
Ray tasks likewise (``bali_env.arena.ray_backend.init_ray`` starts or joins Ray).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bali_env.trainers.alphazero.jobs import Rows, SelfPlayJob
from bali_env.trainers.alphazero.selfplay import play_chunk


def _one_thread() -> None:
    """A worker's start: one Numba thread (the workers share the cores)."""
    import numba

    numba.set_num_threads(1)


def _play_alone(job: SelfPlayJob, games: list[int]) -> Rows:
    """``play_chunk`` on one Numba thread (a Ray task)."""
    _one_thread()
    return play_chunk(job, games)


class Pool:
    """The workers that play self-play chunks for a run: ``workers`` local processes (1: this
    process, unless ``in_process`` is False), or Ray tasks with ``backend="ray"`` (a local Ray of
    ``workers`` CPUs, or the cluster at ``ray_address``). Close it (or use it as a context
    manager) at the end."""

    def __init__(self, workers: int = 1, backend: str = "local", ray_address: str | None = None,
                 in_process: bool | None = None) -> None:
        self.workers, self.backend, self.ray_address = int(workers), backend, ray_address
        self.in_process = self.workers <= 1 if in_process is None else bool(in_process)
        self._executor: Any = None
        self._ray_started = False

    def __enter__(self) -> Pool:
        """The pool itself (closed when the block ends)."""
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        """Close the pool (at once, the workers killed, when the block ends with an error or Ctrl-C)."""
        self.close(now=kind is not None)

    def play(self, job: SelfPlayJob, chunks: dict[int, list[int]],
             on_chunk: Callable[[int, Rows], None]) -> None:
        """Play every chunk of ``chunks`` (index -> game numbers) and call ``on_chunk(index, rows)``
        as each ends (in the order they end)."""
        if not chunks:
            return
        if self.backend == "ray":
            self._play_ray(job, chunks, on_chunk)
        elif self.in_process:
            for index, games in chunks.items():
                on_chunk(index, play_chunk(job, games))
        else:
            self._play_local(job, chunks, on_chunk)

    def _play_local(self, job: SelfPlayJob, chunks: dict[int, list[int]],
                    on_chunk: Callable[[int, Rows], None]) -> None:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        if self._executor is None:
            self._executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_one_thread)
        pending = {self._executor.submit(play_chunk, job, games): index for index, games in chunks.items()}
        while pending:  # on an interruption the pool is closed at once (close(now=True)): nothing to cancel here
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                on_chunk(pending.pop(future), future.result())

    def _play_ray(self, job: SelfPlayJob, chunks: dict[int, list[int]],
                  on_chunk: Callable[[int, Rows], None]) -> None:
        import ray

        from bali_env.arena.ray_backend import MAX_RETRIES, init_ray

        if not ray.is_initialized():
            init_ray(self.ray_address, self.workers)
            self._ray_started = True
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(_play_alone)
        shared = ray.put(job)
        pending = {task.remote(shared, games): index for index, games in chunks.items()}
        try:
            while pending:
                finished, _ = ray.wait(list(pending), num_returns=1)
                for ref in finished:
                    on_chunk(pending.pop(ref), ray.get(ref))
        finally:
            for ref in pending:
                ray.cancel(ref)

    def close(self, now: bool = False) -> None:
        """Stop the local workers (``now``: killed in the middle of their chunks, whose rows are
        not kept anyway), and the local Ray this pool started."""
        if self._executor is not None:
            if now:
                # the jobs still queued for the killed workers must not hold up this process's exit
                # (multiprocessing joins the queue's feeder thread, blocked on a full pipe, at exit)
                queue = getattr(self._executor, "_call_queue", None)
                if queue is not None:
                    queue.cancel_join_thread()
                for process in list(getattr(self._executor, "_processes", {}).values()):
                    process.kill()
            self._executor.shutdown(wait=not now, cancel_futures=not now)
            self._executor = None
        if self._ray_started:
            import ray

            ray.shutdown()
            self._ray_started = False


def chunks_of(games: int, size: int) -> dict[int, list[int]]:
    """A generation's ``games`` cut into chunks of ``size`` consecutive game numbers, by index."""
    return {i: list(range(start, min(start + size, games))) for i, start in enumerate(range(0, games, size))}


__all__ = ["Pool", "chunks_of"]
