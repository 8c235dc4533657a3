"""The generations of a run: self-play, the buffer, training, the gate, the curve; and resuming.

Generation g (from 1):

1. **self-play**: the best network so far plays ``games`` games with search (``selfplay``), in
   chunks on the run's workers (``dispatch.Pool``); each chunk's rows are saved as they come;
2. **buffer**: the generation's rows become ``buffer/gen_g.npz``; the learner trains on the last
   ``window`` generations;
3. **training**: the learner (which goes on from its own weights whether or not the gate took
   its last network, as in AlphaGo Zero) takes ``train_steps`` Adam steps; saved as
   ``learner/gen_g.pt`` (weights and optimiser), exported as ``nets/gen_g.npz`` (the networks
   kept: the start, the best and the newest). With ``train_steps`` 0 the run is self-play only:
   no training and no gate (steps 3-4), every generation played by the start network, and the
   row's losses and gate empty (the rows for ``benchmarks.az_fit``);
4. **gate** (``gate.gate``): the new network against the best; saved as ``gate/gen_g.json``;
   when it passes, ``nets/gen_g.npz`` becomes the best (``best.npz``);
5. **curve** (every ``eval_every`` generations, and generation 0): the best against the
   yardsticks (``gate.yardsticks``), appended to ``curve.csv`` and drawn in ``curve.png``;
6. ``generations.csv`` gains the generation's row and ``state.json`` says it is done.

Every random stream is a hash of the run's seed, the generation and the stage (``seed_for``),
and every stage's result is a file written whole (a temporary file moved into place), so a run
stopped at any moment goes on with ``--resume`` from the first result it lacks and ends exactly
as it would have without the stop.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bali_env.files import replace_when_done, write_text

from bali_env.trainers.alphazero import buffer, gate
from bali_env.trainers.alphazero.learn import Learner
from bali_env.trainers.alphazero.jobs import Rows, SelfPlayJob, SelfPlaySettings
from bali_env.trainers.alphazero.selfplay import job_for, merge
from bali_env.trainers.alphazero.dispatch import Pool, chunks_of

STAGES = {"selfplay": 1, "train": 2, "gate": 3, "curve": 4, "init": 5, "confirm": 6}  #: a generation's streams


@dataclass(frozen=True)
class Config:
    """A run's settings (``config.json``); ``bali az``'s flags (checked by ``command.check``)."""

    players: int = 2
    generations: int = 10
    games: int = 256  #: self-play games per generation
    sims: int = 128  #: search descents per decision in self-play
    c: float = 1.5  #: the search's exploration weight
    leaves: int = 8  #: descents per tree per round (the search's batch)
    gumbel: int = 16  #: actions Gumbel root selection considers (0: a PUCT root); the target is then "improved"
    temp_moves: int = 20  #: with a PUCT root: decisions of a game whose move is drawn from the visit shares
    noise_alpha: float = 0.5  #: with a PUCT root: the Dirichlet noise on the root's priors in self-play (0: none)
    noise_eps: float = 0.25  #: its weight
    target: str = "visits"  #: the policy target with a PUCT root: "visits" (AlphaZero's) or "improved" (Gumbel's)
    train_steps: int = 500  #: Adam steps per generation
    batch: int = 512
    lr: float = 3e-4
    window: int = 4  #: generations of rows the learner trains on
    gate_games: int = 200
    eval_every: int = 5  #: generations between two points of the curve (0: none)
    eval_games: int = 100
    yardsticks: list[str] = field(default_factory=lambda: ["greedy", "mcts", "ppo"])
    init: str = "shipped"  #: "shipped" (the shipped policy), "scratch", or a policy file with a value head
    seed: int = 0
    chunk: int = 16  #: games per self-play chunk
    workers: int = 2  #: self-play worker processes (1: in this process)
    backend: str = "local"
    ray_address: str | None = None
    minutes: float = 0.0  #: no new generation starts after this many minutes (0: no limit)
    torch_threads: int = 1
    device: str = "cpu"  #: where the network trains: "cpu" or "cuda"

    def selfplay(self, seed: int) -> SelfPlaySettings:
        """The self-play settings of these, its games dealt from ``seed`` (``noise_alpha`` 0: no noise)."""
        noise = (self.noise_alpha, self.noise_eps) if self.noise_alpha else None
        return SelfPlaySettings(players=self.players, seed=seed, sims=self.sims, c=self.c, leaves=self.leaves,
                                temp_moves=self.temp_moves, gumbel=self.gumbel, noise=noise, target=self.target)


#: a self-play-only generation's gate (``--train-steps 0``): none played, nothing accepted
SELF_PLAY_ONLY: dict[str, Any] = {"win_rate": None, "ci_low": None, "ci_high": None, "needed": None, "accepted": False}
RESUMABLE = ("generations", "workers", "backend", "ray_address", "minutes", "device")  #: what ``--resume`` may change


def selfplay_job(cfg: Config, policy: Any, seed: int) -> SelfPlayJob:
    """The self-play job of a run's settings for the network ``policy``, dealt from ``seed``."""
    return job_for(policy, cfg.selfplay(seed))


def _confirmed(verdict: dict[str, Any]) -> str:
    """The log's words for a gate's confirming match (``gate.confirm``), if it played one."""
    if "confirm" not in verdict:
        return ""
    c = verdict["confirm"]
    return (f"; again on other deals {100 * c['win_rate']:.1f}% of {c['games']}, both pooled "
            f"{100 * c['pooled_win_rate']:.1f}% [{100 * c['pooled_ci_low']:.1f}, {100 * c['pooled_ci_high']:.1f}] "
            f"of {c['pooled_games']}")


def seed_for(seed: int, generation: int, stage: str) -> int:
    """The seed of one stage of one generation: the run's seed, the stage and the generation
    hashed (``deal_seed``), 53 bits."""
    from bali_env.engine.seeds import deal_seed

    return deal_seed(deal_seed(seed, STAGES[stage]), generation)


class Run:
    """One run's folder and its generations (the module docstring); ``say`` prints a line."""

    def __init__(self, folder: Path, config: Config, progress: bool = False, say: Any = print) -> None:
        self.folder, self.config, self.progress, self.say = Path(folder), config, progress, say

    # ------------------------------------------------------------------ files
    def path(self, *parts: str) -> Path:
        """A file of the run."""
        return self.folder.joinpath(*parts)

    def net(self, generation: int) -> Path:
        """Generation ``generation``'s network (0: the one the run starts from)."""
        return self.path("nets", f"gen_{generation:04d}.npz")

    def state(self) -> dict[str, Any]:
        """``state.json``: the last generation done and the best network's generation."""
        path = self.path("state.json")
        return json.loads(path.read_text()) if path.is_file() else {"generation": -1, "best": 0}

    def _write_json(self, path: Path, data: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(data, indent=1) + "\n")

    # ------------------------------------------------------------------ the run
    def run(self) -> dict[str, Any]:
        """Play the generations not yet done (``config.generations`` in all, or fewer when
        ``config.minutes`` runs out); returns the state at the end."""
        import torch

        cfg = self.config
        torch.set_num_threads(cfg.torch_threads)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_json(self.path("config.json"), asdict(cfg))
        start = time.time()
        state = self.state()
        if state["generation"] < 0:
            self._start()
            state = self.state()
        with Pool(cfg.workers, cfg.backend, cfg.ray_address) as pool:
            for g in range(state["generation"] + 1, cfg.generations + 1):
                if cfg.minutes and g > state["generation"] + 1 and time.time() - start > cfg.minutes * 60:
                    self.say(f"--minutes {cfg.minutes:g} reached: stopping after generation {g - 1}")
                    break
                self.generation(g, pool)
        return self.state()

    def _start(self) -> None:
        """Generation 0: the starting network (``nets/gen_0000.npz``, the first best), the
        learner's first state, the curve's first point."""
        cfg = self.config
        learner = self._new_learner()
        self.net(0).parent.mkdir(parents=True, exist_ok=True)
        _export(learner, self.net(0), generation=0)
        learner.save(self.path("learner", "gen_0000.pt"))
        shutil.copyfile(self.net(0), self.path("best.npz"))
        if cfg.eval_every:
            self._curve(0, 0)
        self._write_json(self.path("state.json"), {"generation": 0, "best": 0})

    def _new_learner(self) -> Learner:
        from bali_env.bots.ppo import ExportedPolicy, shipped_policy

        cfg = self.config
        if cfg.init == "scratch":
            return Learner.scratch(cfg.players, cfg.lr, seed_for(cfg.seed, 0, "init") % 2**31, cfg.device)
        path = shipped_policy(cfg.players) if cfg.init == "shipped" else Path(cfg.init)
        return Learner.from_policy(ExportedPolicy(path).for_players(cfg.players), cfg.lr, cfg.device)

    def generation(self, g: int, pool: Pool) -> dict[str, Any]:
        """Play, train, gate and (on its turn) evaluate generation ``g``; returns its row."""
        cfg = self.config
        best = self.state()["best"]
        t0 = time.time()
        rows = self._self_play(g, best, pool)
        t1 = time.time()
        if cfg.train_steps:
            learner = self._train(g)
            t2 = time.time()
            verdict = self._gate(g, best)
        else:  # --train-steps 0: self-play only; the row's losses and gate stay empty
            learner, verdict = dict.fromkeys(("policy_loss", "value_loss", "loss")), SELF_PLAY_ONLY
            t2 = t1
        t3 = time.time()
        new_best = g if verdict["accepted"] else best
        if verdict["accepted"]:
            shutil.copyfile(self.net(g), self.path("best.npz.tmp"))
            self.path("best.npz.tmp").replace(self.path("best.npz"))
        row = {"generation": g, "games": cfg.games, "positions": len(rows),
               "selfplay_s": round(t1 - t0, 1), "train_s": round(t2 - t1, 1), "gate_s": round(t3 - t2, 1),
               **{k: None if v is None else round(v, 4) for k, v in learner.items()},
               "gate_win_rate": verdict["win_rate"], "gate_ci_low": verdict["ci_low"],
               "gate_ci_high": verdict["ci_high"], "gate_needed": verdict["needed"],
               "accepted": verdict["accepted"], "best": new_best}
        played = f"generation {g}: {cfg.games} games, {row['positions']:,} positions, self-play {t1 - t0:.0f} s"
        if not cfg.train_steps:
            self.say(f"{played} (self-play only: no training, no gate)")
        else:
            self.say(f"{played}; trained {cfg.train_steps} steps in {t2 - t1:.0f} s (loss {row['loss']:.3f}: policy "
                     f"{row['policy_loss']:.3f}, value {row['value_loss']:.3f}); gate {100 * verdict['win_rate']:.1f}% "
                     f"[{100 * verdict['ci_low']:.1f}, {100 * verdict['ci_high']:.1f}] of {verdict['games']} against "
                     f"generation {best} (its interval must clear {100 * verdict['needed']:.1f}%)"
                     f"{_confirmed(verdict)}: {'accepted' if verdict['accepted'] else 'kept generation ' + str(best)}")
        if cfg.eval_every and (g % cfg.eval_every == 0 or g == cfg.generations):
            self._curve(g, new_best)
        self._append_csv(self.path("generations.csv"), [row])
        buffer.prune(self.folder, g, cfg.window)
        self._write_json(self.path("state.json"), {"generation": g, "best": new_best})
        self.path("learner", f"gen_{g - 1:04d}.pt").unlink(missing_ok=True)
        for old in self.path("nets").glob("gen_*.npz"):  # the start, the best and the newest stay
            if int(old.stem.split("_")[1]) not in (0, new_best, g):
                old.unlink()
        return row

    def _self_play(self, g: int, best: int, pool: Pool) -> Rows:
        """Generation ``g``'s rows: from ``buffer/gen_g.npz`` when done, else its missing chunks played."""
        from bali_env.bots.ppo import ExportedPolicy
        from tqdm.auto import tqdm

        cfg = self.config
        done_file = buffer.generation_file(self.folder, g)
        if done_file.is_file():
            return buffer.load(done_file)
        chunks = chunks_of(cfg.games, cfg.chunk)
        todo = {i: games for i, games in chunks.items() if not buffer.chunk_file(self.folder, g, i).is_file()}
        job = selfplay_job(cfg, ExportedPolicy(self.net(best)), seed_for(cfg.seed, g, "selfplay"))
        bar = tqdm(total=cfg.games, initial=cfg.games - sum(len(v) for v in todo.values()), unit="game",
                   desc=f"generation {g}: self-play", disable=not self.progress, leave=False)
        positions = [0]

        def keep(index: int, rows: Rows) -> None:
            """Save a chunk's rows as they arrive and move the bar."""
            buffer.save(buffer.chunk_file(self.folder, g, index), rows)
            positions[0] += len(rows)
            bar.update(len(chunks[index]))
            bar.set_postfix_str(f"{positions[0]:,} positions", refresh=False)

        try:
            pool.play(job, todo, keep)
        finally:
            bar.close()
        rows = merge([buffer.load(buffer.chunk_file(self.folder, g, i)) for i in sorted(chunks)])
        buffer.finish_generation(self.folder, g, rows)
        return rows

    def _train(self, g: int) -> dict[str, float]:
        """Generation ``g``'s training (or its saved result): the losses."""
        cfg = self.config
        saved = self.path("learner", f"gen_{g:04d}.json")
        if saved.is_file() and self.path("learner", f"gen_{g:04d}.pt").is_file() and self.net(g).is_file():
            return json.loads(saved.read_text())
        learner = self._new_learner()
        learner.load(self.path("learner", f"gen_{g - 1:04d}.pt"))
        losses = learner.train(buffer.window(self.folder, g, cfg.window), cfg.train_steps, cfg.batch,
                               seed_for(cfg.seed, g, "train"))
        learner.save(self.path("learner", f"gen_{g:04d}.pt"))
        _export(learner, self.net(g), generation=g)
        self._write_json(saved, losses)
        return losses

    def _gate(self, g: int, best: int) -> dict[str, Any]:
        """Generation ``g``'s gate (or its saved result)."""
        cfg = self.config
        saved = self.path("gate", f"gen_{g:04d}.json")
        if saved.is_file():
            return json.loads(saved.read_text())
        verdict = gate.gate(self.net(g), self.net(best), cfg.players, cfg.gate_games,
                             seed_for(cfg.seed, g, "gate"), cfg.workers, progress=self._bar(g, "gate", cfg.gate_games))
        if verdict["accepted"]:  # a pass is played again on other deals, pooled
            verdict = gate.confirm(verdict, self.net(g), self.net(best), cfg.players, seed_for(cfg.seed, g, "confirm"),
                                    cfg.workers, progress=self._bar(g, "confirm", verdict["games"]))
        self._write_json(saved, verdict)
        return verdict

    def _curve(self, g: int, best: int) -> None:
        """The best network's yardstick matches at generation ``g`` (or their saved result),
        then ``curve.csv`` and ``curve.png`` from every point so far."""
        from bali_env.arena.schedule import rounded_games

        from bali_env.trainers.evaluation.evaluate import plot_curve

        cfg = self.config
        saved = self.path("curve", f"gen_{g:04d}.json")
        if not saved.is_file():
            total = rounded_games(cfg.eval_games, cfg.players, cfg.players) * len(cfg.yardsticks)
            found = gate.yardsticks(self.net(best), cfg.yardsticks, cfg.players, cfg.eval_games,
                                     seed_for(cfg.seed, g, "curve"), cfg.workers,
                                     progress=self._bar(g, "yardsticks", total))
            self._write_json(saved, [{"generation": g, "best": best, **r} for r in found])
        points = [r for f in sorted(self.path("curve").glob("gen_*.json")) for r in json.loads(f.read_text())]
        for r in json.loads(saved.read_text()):
            self.say(f"generation {g}: the best (generation {best}) against {r['opponent']}: "
                     f"{100 * r['win_rate']:.1f}% [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}] of {r['games']}")
        if points:
            self._write_csv(self.path("curve.csv"), points)
            plot_curve([{**r, "steps": r["generation"]} for r in points], self.path("curve.png"), cfg.players,
                       title=f"AlphaZero on Bali, {cfg.players} players: the best network alone",
                       xlabel="generation")

    def _bar(self, g: int, what: str, total: int) -> Any:
        """A progress callback for a match (``run_tournament``'s), as a bar with ``progress``."""
        if not self.progress:
            return False
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="game", desc=f"generation {g}: {what}", leave=False)

        def moved(n: int) -> None:
            """Move the bar by ``n`` games; close it at the end."""
            bar.update(n)
            if bar.n >= bar.total:
                bar.close()

        return moved

    def _append_csv(self, path: Path, rows: list[dict[str, Any]]) -> None:
        old = list(csv.DictReader(path.open())) if path.is_file() else []
        old = [r for r in old if int(r["generation"]) not in {int(x["generation"]) for x in rows}]
        self._write_csv(path, [*old, *rows])

    def _write_csv(self, path: Path, rows: list[dict[str, Any]]) -> None:
        with replace_when_done(path) as tmp, open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[-1]))
            w.writeheader()
            w.writerows(rows)


def _export(learner: Learner, path: Path, generation: int) -> None:
    """Write the learner's network as a policy file (``.npz`` with its value head)."""
    from bali_env.bots.ppo import write_policy

    policy = learner.policy(alphazero_generation=generation)
    weights, meta = policy.arrays()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_policy(weights, meta, path, value=policy.value_arrays())


__all__ = ["Config", "RESUMABLE", "Run", "STAGES", "seed_for", "selfplay_job"]
