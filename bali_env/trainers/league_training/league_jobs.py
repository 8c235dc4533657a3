"""The jobs of a league generation, each a frozen record (``LeagueJob``) that pickles to a local
worker process or a Ray task, and ``run_job``, which runs one wherever it lands.

A job is a whole ``bali train`` run (or a whole ``bali exploit`` run) in its own folder
``OUT/jobs/NAME`` with its own seed (``job_seed``: the run's seed, the role, the generation and
the exploiter's number hashed together), its own thread counts (``--torch-threads`` for PyTorch,
Numba and BLAS alike: ``job_threads``) and a ``--steps`` budget (no clock read), so its result is
the same whichever worker runs it, when, and beside what. Its lines go to ``OUT/logs/NAME.log``.

- ``exploiter``: ``bali train`` against main_g alone in every other seat (``bali exploit``'s
  recipe), from a fresh network or from the main's; leaves ``final.npz`` (the run's
  ``exploiter_g.npz``) and its final win rate against main_g;
- ``main``: ``bali train`` from main_g against the population with PFSP weights; leaves
  ``final.npz`` (``main_{g+1}.npz``);
- ``yardstick``: ``bali exploit main_g --steps S`` (its seed the same every generation); leaves
  ``exploit.json``: main_g's exploitability.

Every job's network has the shape of the first main (``network_flags``: its hidden sizes,
activation and input features). A main goes on from the previous main job's saved model (actor
and critic: ``jobs/main_g/final.zip``), the first from ``--init``'s ``.npz`` (its actor; the
critic starts fresh); an exploiter started from the main takes the same.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bali_env.trainers.league_training.league_settings import LeagueTrainSettings

KINDS = ("main", "exploiter", "yardstick")  #: the kinds of job
ROLES = {"main": 1, "exploiter": 2, "yardstick": 3}  #: each kind's number in its seed (``job_seed``)
SEED_BITS = 31  #: a job's seed fits PyTorch's and NumPy's global seeding (below 2**31)


def job_seed(seed: int, kind: str, generation: int, index: int = 0) -> int:
    """The seed of a job: the run's ``seed``, the job's kind, generation and number hashed
    together (``deal_seed``, SplitMix64), cut to ``SEED_BITS`` bits."""
    from bali_env.engine.seeds import deal_seed

    return deal_seed(deal_seed(deal_seed(seed, ROLES[kind]), generation), index) % 2**SEED_BITS


@dataclass(frozen=True)
class LeagueJob:
    """One job: its ``name`` (``main_1``, ``exploiter_0``, ``exploiter_0_1``, ``yardstick_0``),
    ``kind`` (``KINDS``), the ``generation`` it belongs to, its ``seed``, the command line it
    runs (``argv``: ``bali train``'s, or ``bali exploit``'s with ``extra`` flags for the ``bali
    train`` run it makes), its ``folder`` and ``log``, its ``threads``, and ``output``: the file
    of the run folder its policy becomes (None for a yardstick)."""

    name: str
    kind: str
    generation: int
    seed: int
    argv: tuple[str, ...]
    folder: str
    log: str
    threads: int
    output: str | None = None
    extra: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "extra", tuple(self.extra))


# ---------------------------------------------------------------------------------------- building
def network_flags(policy: Path) -> list[str]:
    """``bali train``'s ``--net``, ``--activation`` and ``--features`` of the network in the
    policy file ``policy`` (every job's network has that shape)."""
    from bali_env.bots.ppo import ExportedPolicy

    weights, meta = ExportedPolicy(policy).arrays()
    hidden = ",".join(str(w.shape[0]) for w, _ in weights[:-1])
    return ["--net", hidden, "--activation", str(meta.get("activation", "relu")),
            "--features", str(meta.get("features") or "none")]


def train_flags(settings: LeagueTrainSettings) -> list[str]:
    """The ``bali train`` flags every training job shares: the seats, the rollout, the threads,
    no clock, no evaluation on the way, no bars."""
    return ["--players", str(settings.players), "--minutes", "0", "--envs", str(settings.envs),
            "--n-steps", str(settings.n_steps), "--batch-size", str(settings.batch_size),
            "--torch-threads", str(settings.torch_threads), "--eval-every", "0", "--no-progress"]


def policy_spec(path: Path) -> str:
    """The agent spec of a policy file (``ppo:path=FILE``)."""
    return f"ppo:path={path}"


class JobMaker:
    """The jobs of a run whose folder is ``out`` (absolute paths inside), by ``settings``."""

    def __init__(self, settings: LeagueTrainSettings, out: Path) -> None:
        self.settings, self.out = settings, Path(out).resolve()

    def main_file(self, g: int) -> Path:
        """main_g's policy file."""
        return self.out / f"main_{g}.npz"

    def start(self, g: int) -> Path:
        """Where a network that goes on from main_g starts: the main job that made it (its saved
        model, actor and critic), or the first main's ``.npz``."""
        saved = self.out / "jobs" / f"main_{g}" / "final.zip"
        return saved if g > 0 else self.main_file(0)

    def _job(self, name: str, kind: str, g: int, argv: list[str], **more: Any) -> LeagueJob:
        return LeagueJob(name=name, kind=kind, generation=g, seed=int(argv[argv.index("--seed") + 1]), argv=tuple(argv),
                         folder=str(self.out / "jobs" / name), log=str(self.out / "logs" / f"{name}.log"),
                         threads=self.settings.torch_threads, **more)

    def exploiter(self, g: int, index: int = 0) -> LeagueJob:
        """Exploiter ``index`` of generation ``g``: ``--exploiter-steps`` against main_g alone."""
        s, name = self.settings, f"exploiter_{g}" + (f"_{index}" if index else "")
        target = policy_spec(self.main_file(g))
        argv = [*train_flags(s), "--steps", str(s.exploiter_steps), "--opponents", f"{target}:1",
                "--eval-opponents", target, "--final-eval-games", str(s.eval_games),
                "--seed", str(job_seed(s.seed, "exploiter", g, index)), "--out", str(self.out / "jobs" / name),
                *network_flags(self.main_file(0))]
        if s.exploiter_start == "main":
            argv += ["--init", str(self.start(g))]
        return self._job(name, "exploiter", g, argv, output=f"{name}.npz")

    def main(self, g: int, opponents: str) -> LeagueJob:
        """The main job of generation ``g``: main_g trained ``--main-steps`` more against
        ``opponents`` (``bali train --opponents``: the population with PFSP weights), giving main_{g+1}."""
        s, name = self.settings, f"main_{g + 1}"
        argv = [*train_flags(s), "--steps", str(s.main_steps), "--opponents", opponents,
                "--eval-opponents", *s.baselines, "--final-eval-games", "0",
                "--seed", str(job_seed(s.seed, "main", g)), "--out", str(self.out / "jobs" / name),
                "--init", str(self.start(g)), *network_flags(self.main_file(0))]
        return self._job(name, "main", g, argv, output=f"{name}.npz")

    def yardstick(self, g: int) -> LeagueJob:
        """main_g's exploitability: ``bali exploit main_g --steps S`` with the same seed every
        generation (the league's rollout and threads in its ``bali train`` run)."""
        s, name = self.settings, f"yardstick_{g}"
        argv = [policy_spec(self.main_file(g)), "--players", str(s.players), "--steps", str(s.yardstick_steps),
                "--eval-games", str(s.eval_games), "--final-eval-games", str(s.yardstick_games),
                "--seed", str(job_seed(s.seed, "yardstick", 0)), "--out", str(self.out / "jobs" / name),
                "--no-progress"]
        extra = ["--envs", str(s.envs), "--n-steps", str(s.n_steps), "--batch-size", str(s.batch_size),
                 "--torch-threads", str(s.torch_threads)]
        return self._job(name, "yardstick", g, argv, extra=tuple(extra))


# ---------------------------------------------------------------------------------------- running
@contextmanager
def job_threads(threads: int) -> Iterator[None]:
    """Within the block Numba's parallel kernels and NumPy's BLAS use ``threads`` threads (PyTorch
    takes ``--torch-threads`` from the job's command line), the earlier counts restored after."""
    import numba
    from threadpoolctl import threadpool_limits

    before = numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        with threadpool_limits(limits=threads, user_api="blas"):
            yield
    finally:
        numba.set_num_threads(before)


def _train(argv: list[str]) -> int:
    """``bali train ARGV``'s exit code."""
    from bali_env.trainers.ppo_selfplay.train import run_argv

    return run_argv(argv)


def _exploit(job: LeagueJob) -> int:
    """``bali exploit`` of the job's command line, its ``bali train`` run given the job's extra
    flags (the league's rollout and threads); writes exploit.json, .csv and .png as it does."""
    from bali_env.flags import Parser
    from bali_env.trainers.exploitability import exploit

    parser = Parser(prog="bali exploit", parents=exploit.parents())
    exploit.add_arguments(parser)
    args = parser.parse_args(list(job.argv))
    code = _train([*exploit.train_argv(args), *job.extra])
    if code == 0:
        exploit.write_results(args, list(job.argv))
    return code


def _outcome(job: LeagueJob) -> dict[str, Any]:
    """What a finished job leaves: its env steps, and an exploiter's final win rate against its
    target, or a yardstick's final figures (``exploit.json``)."""
    folder = Path(job.folder)
    if job.kind == "yardstick":
        final = json.loads((folder / "exploit.json").read_text())["final"]
        return {"env_steps": int(final["env_steps"]), "exploitability": {k: final[k] for k in
                                                                         ("win_rate", "ci_low", "ci_high", "games")}}
    summary = json.loads((folder / "summary.json").read_text())
    found: dict[str, Any] = {"env_steps": int(summary["env_steps"]), "policy": str(folder / "final.npz")}
    if job.kind == "exploiter" and summary.get("final"):
        row = summary["final"][-1]
        found["vs_target"] = {**{k: float(row[k]) for k in ("win_rate", "ci_low", "ci_high")},
                              "games": int(row["games"])}
    return found


def run_job(job: LeagueJob) -> dict[str, Any]:
    """Run ``job`` from its start (its folder emptied first), its lines into its log; returns its
    exit ``code`` (0 finished, 130 interrupted, another: failed), its ``seconds`` and, finished,
    ``_outcome``'s figures."""
    folder, log = Path(job.folder), Path(job.log)
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(log, "w") as fh, redirect_stdout(fh), redirect_stderr(fh), job_threads(job.threads):
        print(("bali exploit " if job.kind == "yardstick" else "bali train ") + " ".join(job.argv), file=sys.stderr)
        code = _exploit(job) if job.kind == "yardstick" else _train(list(job.argv))
    result: dict[str, Any] = {"code": int(code), "seconds": round(time.time() - t0, 1)}
    if code == 0:
        result.update(_outcome(job))
    return result


__all__ = ["KINDS", "JobMaker", "LeagueJob", "ROLES", "job_seed", "job_threads", "network_flags", "policy_spec",
           "run_job", "train_flags"]
