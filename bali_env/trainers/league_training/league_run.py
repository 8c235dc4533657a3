"""A ``bali league-train`` run: its generations, from the first main to ``best.npz``.

The run's folder OUT holds the mains (``main_0.npz``: a copy of ``--init``; ``main_{g+1}.npz``:
generation g's main job), the exploiters (``exploiter_g.npz``, ``exploiter_g_k.npz`` for the
k-th of a generation), a folder per job (``jobs/NAME``: its ``bali train`` or ``bali exploit``
run) and its log (``logs/NAME.log``), ``league.json`` (``ledger.Ledger``), ``league.csv``,
``league.png``, ``payoff.png``, and at the end ``best.npz`` and ``summary.json``.

Generation g (main_g the current main):

1. the PFSP weights of main_g's population (``pfsp.pfsp_weights``, from main_g's payoff row: the
   mains before it, every exploiter so far and the ``--anchors``), and of main_g itself, frozen
   (its self-play);
2. its jobs, run together on the workers (``job_pool.JobPool``): the exploiter(s) against main_g,
   the main job (main_g trained further against the population: main_{g+1}), and with
   ``--yardstick-steps`` main_g's yardstick (``bali exploit``); each finished job is kept
   (its file copied into OUT, its record into league.json) as it ends;
3. main_{g+1}'s payoff row (``payoff.payoff_row``): against every member and each baseline;
   then the table and the pictures.

Generation 0 starts with main_0's row against the baselines (the curve's first point); after the
last generation, the last main's yardstick. Nothing is done twice: a job or a row in league.json
is skipped, anything else runs from its start, with the same seed, so a run interrupted (or
continued with more ``--generations``) ends as an uninterrupted one, bit for bit.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bali_env.files import replace_when_done, write_text

from bali_env.trainers.league_training.candidates import best_candidate, reference_baseline
from bali_env.trainers.league_training.job_pool import JobPool
from bali_env.trainers.league_training.league_jobs import JobMaker, LeagueJob, policy_spec
from bali_env.trainers.league_training.league_plots import plot_league, plot_payoff, write_table
from bali_env.trainers.league_training.league_settings import LeagueTrainSettings
from bali_env.trainers.league_training.ledger import Ledger
from bali_env.trainers.league_training.payoff import ANCHOR, BASELINE, payoff_row, payoff_seed, pooled
from bali_env.trainers.league_training.pfsp import SELF, opponents_text, pfsp_weights

INTERRUPTED = 130  #: a job's exit code when it was stopped by a signal


class JobFailed(RuntimeError):
    """A job ended with an error (its log says what)."""


def percent(entry: dict[str, Any]) -> str:
    """A win rate and its interval in words: ``55.0% [48.1, 61.7] of 200``."""
    return (f"{100 * entry['win_rate']:.1f}% [{100 * entry['ci_low']:.1f}, {100 * entry['ci_high']:.1f}] "
            f"of {entry['games']}")


class LeagueRun:
    """One run in the folder ``out`` with ``settings`` (settled: ``init`` a file) and its
    ``ledger``; ``say`` prints a line, ``progress`` shows the matches' bars."""

    def __init__(self, out: Path, settings: LeagueTrainSettings, ledger: Ledger, say: Callable[[str], None] = print,
                 progress: bool = False) -> None:
        self.out, self.settings, self.ledger, self.say, self.progress = Path(out), settings, ledger, say, progress
        self.jobs = JobMaker(settings, self.out)

    # ------------------------------------------------------------------ the population
    def exploiter_names(self, g: int) -> list[str]:
        """The exploiters of generation ``g``."""
        return [f"exploiter_{g}" + (f"_{k}" if k else "") for k in range(self.settings.exploiters)]

    def members(self, g: int) -> dict[str, str]:
        """main_g's population, name -> kind: the mains before it, the exploiters of the
        generations before it, then the anchors (``--anchors``, named by their specs)."""
        found = {f"main_{j}": "main" for j in range(g)}
        for j in range(g):
            found.update(dict.fromkeys(self.exploiter_names(j), "exploiter"))
        found.update(dict.fromkeys(self.settings.anchors, ANCHOR))
        return found

    def spec(self, name: str) -> str:
        """The agent spec of a member or of main_g's self-play: an anchor is its own spec, a
        main or an exploiter its file in the run's folder."""
        return name if name in self.settings.anchors else policy_spec(self.out.resolve() / f"{name}.npz")

    def mix(self, g: int) -> dict[str, float]:
        """The opponents of generation ``g``'s main job by name, with their PFSP weights from
        main_g's payoff row: main_g itself (frozen: its self-play) first, then its population."""
        rates = {e["opponent"]: e["win_rate"] for e in self.ledger.payoff(g) or [] if e["kind"] != BASELINE}
        members = self.members(g)
        missing = sorted(set(members) - set(rates))
        if missing:
            raise RuntimeError(f"main_{g}'s payoff row lacks {', '.join(missing)}")
        s = self.settings
        weights = pfsp_weights({m: rates[m] for m in members}, s.players, s.pfsp, s.pfsp_floor)
        return {(f"main_{g}" if name == SELF else name): w for name, w in weights.items()}

    def opponents(self, g: int) -> str:
        """``bali train --opponents`` of generation ``g``'s main job (``mix``, each by its ``spec``)."""
        mix = self.mix(g)
        return opponents_text(mix, {m: self.spec(m) for m in mix})

    # ------------------------------------------------------------------ the run
    def run(self) -> dict[str, Any]:
        """Every generation not yet done, the last main's yardstick, then ``best.npz`` and
        ``summary.json``; returns the summary."""
        s = self.settings
        self.ledger.set_settings(s)
        self.ledger.save()
        if not (self.out / "main_0.npz").is_file():
            copy_into(Path(s.init or ""), self.out / "main_0.npz")
        self.evaluate(0)
        with JobPool(s.workers, s.backend, s.ray_address) as pool:
            for g in range(s.generations):
                self.generation(g, pool)
            if s.yardstick_steps:
                self.run_jobs([self.jobs.yardstick(s.generations)], pool, f"main_{s.generations}'s yardstick")
        self.draw()
        return self.finish()

    def generation(self, g: int, pool: JobPool) -> None:
        """Generation ``g``: its jobs (those not done), then main_{g+1}'s payoff row."""
        s = self.settings
        jobs = [self.jobs.exploiter(g, k) for k in range(s.exploiters)]
        if not self.ledger.done(f"main_{g + 1}"):
            jobs.append(self.jobs.main(g, self.opponents(g)))
            self.say(f"generation {g}: main_{g + 1} trains against " + ", ".join(
                f"{name} {100 * w:.1f}%" for name, w in self.mix(g).items()) + f" (PFSP {s.pfsp})")
        if s.yardstick_steps:
            jobs.append(self.jobs.yardstick(g))
        self.run_jobs(jobs, pool, f"generation {g}")
        self.evaluate(g + 1)
        self.draw()

    def run_jobs(self, jobs: list[LeagueJob], pool: JobPool, what: str) -> None:
        """Run the jobs of ``jobs`` not done yet, keeping each as it ends."""
        todo = [job for job in jobs if not self.ledger.done(job.name)]
        if not todo:
            return
        where = "in this process" if self.settings.workers <= 1 and self.settings.backend == "local" else \
            f"on {self.settings.workers} {'Ray CPUs' if self.settings.backend == 'ray' else 'workers'}"
        self.say(f"{what}: running {', '.join(job.name for job in todo)} {where} (logs: {self.out / 'logs'})")
        pool.run(todo, self.keep)

    def keep(self, job: LeagueJob, result: dict[str, Any]) -> None:
        """A job that ended: its policy copied into the run's folder and its record kept
        (finished); KeyboardInterrupt (interrupted) or ``JobFailed`` otherwise."""
        if result["code"] == INTERRUPTED:
            raise KeyboardInterrupt(f"{job.name} interrupted")
        if result["code"] != 0:
            raise JobFailed(f"{job.name} failed (exit {result['code']}); its log: {job.log}")
        if job.output is not None:
            copy_into(Path(result["policy"]), self.out / job.output)
        record = {"kind": job.kind, "generation": job.generation, "seed": job.seed,
                  **{k: v for k, v in result.items() if k not in ("code", "policy")}}
        if job.kind == "main":
            record["opponents"] = self.mix(job.generation)
        self.ledger.record_job(job.name, record)
        self.say(f"{job.name} done in {result['seconds']:.0f} s ({result['env_steps']:,} env steps)"
                 + _figures(job, result))

    def evaluate(self, g: int) -> None:
        """main_g's payoff row (unless measured): against its population and every baseline."""
        if self.ledger.payoff(g) is not None:
            return
        opponents = {m: (kind, self.spec(m)) for m, kind in self.members(g).items()}
        opponents.update({b: (BASELINE, b) for b in self.settings.baselines})

        def said(entry: dict[str, Any]) -> None:
            """Say one match of the row."""
            self.say(f"main_{g} against {entry['opponent']}: {percent(entry)}")

        entries = payoff_row(policy_spec(self.out.resolve() / f"main_{g}.npz"), opponents, self.settings,
                             payoff_seed(g), said, self.progress)
        self.ledger.record_payoff(g, entries)

    # ------------------------------------------------------------------ what it writes
    def table(self) -> list[dict[str, Any]]:
        """``league.csv``'s rows from league.json (``league_plots``' kinds)."""
        rows = []
        for key, entries in sorted(self.ledger.data["payoff"].items(), key=lambda kv: int(kv[0])):
            g = int(key)
            base = {"generation": g, "main": f"main_{g}"}
            rows += [{**base, **e} for e in entries]
            population = pooled([e for e in entries if e["kind"] != BASELINE])
            if population is not None:
                rows.append({**base, "opponent": "population", "kind": "population", **population})
        for name, job in sorted(self.ledger.data["jobs"].items()):  # the same order however the jobs ended
            g = job["generation"]
            if "exploitability" in job:
                rows.append({"generation": g, "main": f"main_{g}", "opponent": "best response",
                             "kind": "exploitability", **job["exploitability"]})
            if "vs_target" in job:
                rows.append({"generation": g, "main": f"main_{g}", "opponent": name, "kind": "exploiter_win",
                             **job["vs_target"]})
        return sorted(rows, key=lambda r: r["generation"])  # stable: a generation's rows keep their order

    def draw(self) -> None:
        """``league.csv``, ``league.png`` and ``payoff.png`` from what is done so far."""
        rows = self.table()
        write_table(rows, self.out / "league.csv")
        try:
            plot_league(rows, self.out / "league.png", self.settings.players)
            plot_payoff(rows, self.out / "payoff.png", self.settings.players)
        except ImportError:
            self.say("no league.png nor payoff.png: matplotlib is not installed")

    def finish(self) -> dict[str, Any]:
        """``best.npz`` (``candidates.best_candidate``) and ``summary.json``; returns the summary."""
        s = self.settings
        exploitability = {job["generation"]: job["exploitability"] for job in self.ledger.data["jobs"].values()
                          if "exploitability" in job and job["generation"] <= s.generations}
        baseline = reference_baseline(s.baselines)
        against = {int(g): e for g, entries in self.ledger.data["payoff"].items() for e in entries
                   if e["kind"] == BASELINE and e["opponent"] == baseline and int(g) <= s.generations}
        best = best_candidate(exploitability, against, s.generations, baseline)
        copy_into(self.out / f"main_{best['generation']}.npz", self.out / "best.npz")
        summary = {"best": f"main_{best['generation']}", **best, "generations": s.generations,
                   "mains": [f"main_{g}.npz" for g in range(s.generations + 1)],
                   "exploitability": {f"main_{g}": e for g, e in sorted(exploitability.items())},
                   f"against_{baseline}": {f"main_{g}": e for g, e in sorted(against.items())} if baseline else {},
                   "settings": s.as_saved()}
        write_text(self.out / "summary.json", json.dumps(summary, indent=1) + "\n")
        return summary


def _figures(job: LeagueJob, result: dict[str, Any]) -> str:
    """A finished job's figures in words (an exploiter's win against its main, a yardstick's)."""
    if "vs_target" in result:
        return f"; it beats main_{job.generation} {percent(result['vs_target'])}"
    if "exploitability" in result:
        return f"; its best response beats main_{job.generation} {percent(result['exploitability'])}"
    return ""


def copy_into(source: Path, target: Path) -> None:
    """Copy the file ``source`` to ``target`` atomically (a temporary file moved into place)."""
    with replace_when_done(target) as tmp:
        shutil.copyfile(source, tmp)


__all__ = ["INTERRUPTED", "JobFailed", "LeagueRun", "copy_into", "percent"]
