"""Where a generation's jobs run: in this process, on local worker processes, or as Ray tasks
(the dispatch of ``bali az``, ``bali_env.trainers.alphazero.dispatch``, for whole training runs).

``JobPool.run`` hands the jobs to ``league_jobs.run_job`` and passes each result to a callback as
it arrives (in the order they end). A job's result depends on the job alone (its seed, its
threads, its ``--steps`` budget), so a run is the same on 1 or N workers and on either backend.
With 1 worker the jobs run one after the other in this process; with more, on ``workers``
processes started once per run (``spawn``: nothing inherited from the driver), one job at a time
each (a job seeds every generator it uses and sets its own threads); with ``backend="ray"`` each
job is a Ray task of one CPU on a local Ray of ``workers`` CPUs, or on the cluster at
``ray_address`` (``bali_env.arena.ray_backend.init_ray``; the jobs read and write the run's
folder by its path: on a cluster it must be on a file system every node sees at that path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bali_env.trainers.league_training.league_jobs import LeagueJob, run_job

Done = Callable[[LeagueJob, dict[str, Any]], None]  #: what ``JobPool.run`` calls as each job ends


class JobPool:
    """The workers of a run's jobs: ``workers`` local processes (1: this process), or Ray tasks
    with ``backend="ray"`` (a local Ray of ``workers`` CPUs, or the cluster at ``ray_address``).
    Close it (or use it as a context manager) at the end."""

    def __init__(self, workers: int = 1, backend: str = "local", ray_address: str | None = None) -> None:
        self.workers, self.backend, self.ray_address = int(workers), backend, ray_address
        self._ray_started = False
        self._executor: Any = None

    def __enter__(self) -> JobPool:
        """The pool itself (closed when the block ends)."""
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        """Close the pool (at once, the workers killed, when the block ends with an error or Ctrl-C)."""
        self.close(now=kind is not None)

    def run(self, jobs: Sequence[LeagueJob], on_done: Done) -> None:
        """Run every job of ``jobs`` and call ``on_done(job, result)`` as each ends."""
        if not jobs:
            return
        if self.backend == "ray":
            self._run_ray(jobs, on_done)
        elif self.workers <= 1:
            for job in jobs:
                on_done(job, run_job(job))
        else:
            self._run_local(jobs, on_done)

    def _run_local(self, jobs: Sequence[LeagueJob], on_done: Done) -> None:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        if self._executor is None:  # started once per run: a job sets its own seeds and threads
            self._executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        pending = {self._executor.submit(run_job, job): job for job in jobs}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                on_done(pending.pop(future), future.result())

    def _run_ray(self, jobs: Sequence[LeagueJob], on_done: Done) -> None:
        import ray

        from bali_env.arena.ray_backend import init_ray

        if not ray.is_initialized():
            init_ray(self.ray_address, self.workers)
            self._ray_started = True
        task = ray.remote(num_cpus=1, max_retries=0)(run_job)
        pending = {task.remote(job): job for job in jobs}
        try:
            while pending:
                finished, _ = ray.wait(list(pending), num_returns=1)
                for ref in finished:
                    on_done(pending.pop(ref), ray.get(ref))
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self, now: bool = False) -> None:
        """Stop the local workers (``now``: killed in the middle of their jobs, which rerun from
        their start on ``--resume``), and the local Ray this pool started."""
        if self._executor is not None:
            if now:
                for process in list(getattr(self._executor, "_processes", {}).values()):
                    process.kill()
            self._executor.shutdown(wait=not now, cancel_futures=True)
            self._executor = None
        if self._ray_started:
            import ray

            ray.shutdown()
            self._ray_started = False


__all__ = ["Done", "JobPool"]
