"""Speed benchmarks of bali-env against anchor environments, all measured in the same run.

``bali bench`` measures:

1. start-up: the time from ``import bali_env`` to the first step, and of a whole first
   tournament (``bali tournament --agents greedy random --players 2 --games 20 --workers 2``),
   cold (empty Numba cache) and cached, each in a fresh subprocess;
2. the AEC env (``bali_env.env``) with random masked actions, 4 players, through PettingZoo's
   ``agent_iter``/``last``/``step`` loop;
3. anchors measured with the very same loop: PettingZoo classic ``connect_four_v3`` and
   ``texas_holdem_v4``; OpenSpiel ``hearts`` and ``crazy_eights`` driven from Python with an
   observation tensor per decision. An anchor that is not installed is skipped with a note;
4. the batched env (``BaliVectorEnv``) at N = 1, 64, 1024 and 8192 games, random masked actions
   chosen with NumPy, the observation of every game written at every step, all cores;
5. the rollout kernel (whole random games inside Numba), steps/s and games/s, on 1 thread and on
   all cores;
6. memory: bytes of state per game, the buffers of the largest batch, the process's peak RSS;
7. pictures (``bali_env.speed.rendering``): the SVG of a frame, the ``rgb_array`` frame (1280 x 720)
   and the HTML replay of a whole 4-player game, in time and size;
8. bots (``bali_env.speed.bot_protocol``): what the bot protocol costs a decision, and a 100-game tournament
   against a bot that hangs once in ten moves, every game accounted for;
9. search (``bali_env.speed.search``): milliseconds a decision of ``mcts`` and ``ppo+search``, one
   position at a time and in batches of 64, and one at a time again beside a competing process.

It prints a table (fitted to the terminal, 100 columns when the output is not one), writes
``bench.json`` (every figure with the counts and seconds it comes from) and ``bench.png`` into
``--out`` (default: a new folder ``results/bench/<date-time>``; an ``--out`` holding an earlier
``bench.json`` is replaced only with ``--overwrite``, the rule of every output folder,
``bali_env.files.check_out_folder``) and records the machine. Every timed loop is warmed up
first (Numba compilation never counts). The options are checked before anything is measured or
written (a bad one: exit code 2); ``--out`` is created only when the results are written.
``parents``, ``add_arguments`` and ``run`` are the command (``bali_env.apps.cli`` builds its
parser); ``measure`` the measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np

from bali_env.speed.loops import aec_steps_per_second, bench_rollout, bench_vector
from bali_env.speed.machine import machine_info


# ----------------------------------------------------------------------------- start-up
_STARTUP = (
    "import time; t0 = time.perf_counter(); import bali_env; t1 = time.perf_counter(); "
    "e = make_env(num_players=4); e.reset(seed=0); "
    "m = e.observe(e.agent_selection)['action_mask']; e.step(int(m.nonzero()[0][0])); "
    "t2 = time.perf_counter(); print(t1 - t0, t2 - t0)"
)


FIRST_TOURNAMENT = ["tournament", "--agents", "greedy", "random", "--players", "2", "--games", "20", "--seed", "0",
                    "--workers", "2", "--no-progress"]  #: the first-run measurement (bali ... --out TMP)


_COMPILE = ("from bali_env.arena import warm_up; "
            "warm_up(['greedy', 'random'], num_players=2, oracle=False, demon=False)")


def bench_startup() -> dict[str, float]:
    """Seconds from ``import bali_env`` to the first step, and of a whole first tournament
    (``bali`` + ``FIRST_TOURNAMENT``: 20 games greedy vs random, 2 workers, results written),
    each cold (empty Numba cache) then cached, in fresh subprocesses. The cold tournament plays
    interpreted and compiles nothing (``bali_env.arena.tournament._interpret_first_run``), so between the
    two the kernels are compiled into the cache in one process, timed as ``compile_one_process_s``
    (what a run that needs compiled kernels, a long one or one with mcts, pays once)."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold", "cached"):
            res = subprocess.run([sys.executable, "-c", _STARTUP], env=env, capture_output=True, text=True, check=True)
            imp, first = (float(x) for x in res.stdout.split())
            out[f"import_{label}_s"] = imp
            out[f"first_step_{label}_s"] = first
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as results:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold", "compile", "cached"):
            t0 = time.perf_counter()
            command = ["-c", _COMPILE] if label == "compile" else [
                "-m", "bali_env.apps.cli", *FIRST_TOURNAMENT, "--out", f"{results}/{label}"]
            subprocess.run([sys.executable, *command], env=env, capture_output=True, text=True, check=True)
            key = "compile_one_process_s" if label == "compile" else f"tournament_{label}_s"
            out[key] = time.perf_counter() - t0
    return out


# ----------------------------------------------------------------------------- AEC loops
def _pettingzoo_anchor(name: str) -> Callable[[], Any]:
    import importlib

    module = importlib.import_module(f"pettingzoo.classic.{name}")
    return module.env


def openspiel_steps_per_second(game_name: str, seconds: float, seed: int = 0) -> dict[str, float]:
    """Decisions per second of an OpenSpiel game driven from Python: random legal actions, chance
    outcomes drawn with their probabilities (not counted as decisions), and the player's
    observation (or information-state) tensor at every decision."""
    import pyspiel

    game = pyspiel.load_game(game_name)
    gtype = game.get_type()
    use_obs = gtype.provides_observation_tensor
    rnd = random.Random(seed)

    def play(budget: float) -> tuple[int, int, float]:
        steps = games = 0
        t0 = time.perf_counter()
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():  # an outcome drawn with its probability, not counted
                    outcomes, u = state.chance_outcomes(), rnd.random()
                    k = 0
                    while k < len(outcomes) - 1 and u >= outcomes[k][1]:
                        u -= outcomes[k][1]
                        k += 1
                    state.apply_action(outcomes[k][0])
                    continue
                p = state.current_player()
                np.asarray(
                    state.observation_tensor(p) if use_obs else state.information_state_tensor(p), dtype=np.float32
                )
                legal = state.legal_actions()
                state.apply_action(legal[int(rnd.random() * len(legal))])
                steps += 1
            games += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= budget:
                return steps, games, elapsed

    play(min(0.3, seconds))
    steps, games, elapsed = play(seconds)
    tensor = "observation_tensor" if use_obs else "information_state_tensor"
    return {"steps_per_s": steps / elapsed, "games_per_s": games / elapsed, "steps": steps, "games": games,
            "seconds": elapsed, "tensor": tensor}


def bench_aec(seconds: float) -> dict[str, Any]:
    """bali_v0 in all four variant combinations (4 players) plus the PettingZoo and OpenSpiel anchors."""
    from bali_env.envs.bali_v0 import env as make_env

    results: dict[str, Any] = {}
    for oracle, demon in ((False, False), (True, True)):
        tag = "bali_v0" + ("+oracle+demon" if oracle else "")
        results[tag] = aec_steps_per_second(
            lambda oracle=oracle, demon=demon: make_env(num_players=4, oracle=oracle, demon=demon), seconds
        )
    for name in ("connect_four_v3", "texas_holdem_v4"):
        try:
            results[f"pettingzoo:{name}"] = aec_steps_per_second(_pettingzoo_anchor(name), seconds)
        except Exception as exc:  # noqa: BLE001 - a missing optional dependency is a note, not a crash
            results[f"pettingzoo:{name}"] = {"skipped": f"{type(exc).__name__}: {exc}"}
    for name in ("hearts", "crazy_eights"):
        try:
            results[f"open_spiel:{name}"] = openspiel_steps_per_second(name, seconds)
        except Exception as exc:  # noqa: BLE001
            results[f"open_spiel:{name}"] = {"skipped": f"{type(exc).__name__}: {exc}"}
    return results


# ----------------------------------------------------------------------------- memory
def peak_rss_bytes() -> int | None:
    """The process's peak resident memory (Linux/macOS), or None."""
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)
    except (ImportError, OSError):
        return None


# ----------------------------------------------------------------------------- report
NOT_A_TERMINAL_WIDTH = 100  #: the table's width when the output is not a terminal (a pipe, a log)


def terminal_width() -> int:
    """The terminal's width in columns (``NOT_A_TERMINAL_WIDTH`` when not a terminal)."""
    return shutil.get_terminal_size((NOT_A_TERMINAL_WIDTH, 24)).columns


def _rows(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every measured row of the table and the chart, by label, in table order (skipped anchors included)."""
    rows = list(results["aec"].items())
    rows += [(f"BaliVectorEnv N={n}", r) for n, r in results.get("vector", {}).items()]
    rows += [(f"rollout kernel, {r['threads']} thread(s)", r) for r in results.get("rollout", {}).values()]
    return rows


def anchors_run(results: dict[str, Any]) -> list[str]:
    """The anchor environments (not bali-env) that were measured, not skipped."""
    return [name for name, r in results["aec"].items() if not name.startswith("bali") and "steps_per_s" in r]


def _table(results: dict[str, Any], width: int | None = None) -> str:
    """The printed table: one row per measurement (steps/s and games/s; a note, cut to fit), then
    memory and start-up, every line at most ``width`` columns (default: the terminal's)."""
    import textwrap

    width = width or terminal_width()
    rows = _rows(results)
    name_w = max(len("environment"), *(len(name) for name, _ in rows))
    anchor = results["aec"].get("pettingzoo:connect_four_v3", {}).get("steps_per_s")

    def cut(text: str) -> str:
        return text if len(text) <= width else text[: max(width - 3, 0)] + "..."

    def row(name: str, steps: str, games: str, note: str = "") -> list[str]:
        """The row; a note that does not fit after it goes on the next line (cut to fit: the whole
        text is in bench.json)."""
        text = f"{name:<{name_w}}{steps:>13}{games:>11}"
        if note and len(text) + 2 + len(note) <= width:
            return [f"{text}  {note}"]
        return [cut(text)] + ([cut("    " + note)] if note else [])

    lines = row("environment", "steps/s", "games/s", "note")
    for name, r in rows:
        if "skipped" in r:
            lines += row(name, "-", "-", f"skipped: {r['skipped']}")
            continue
        if anchor and name.startswith(("bali", "BaliVectorEnv")):
            note = f"{r['steps_per_s'] / anchor:,.{1 if name.startswith('bali') else 0}f}x connect_four_v3"
        else:
            note = r.get("tensor", "")
        lines += row(name, f"{r['steps_per_s']:,.0f}", f"{r['games_per_s']:,.1f}", note)
    for note in _notes(results):
        lines += textwrap.wrap(note, width, subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(lines)


def _notes(results: dict[str, Any]) -> list[str]:
    """The lines under the table: memory, start-up, and the pictures', bots' and search's summaries."""
    notes = []
    mem = results.get("memory")
    if mem:
        rss = mem["peak_rss_bytes"]
        notes.append(
            f"memory: {mem['state_bytes_per_game']} bytes of state per game; "
            f"largest batch (N={mem['largest_batch']}) buffers {mem['largest_batch_buffer_bytes'] / 2**20:.1f} MiB; "
            + (f"peak RSS {rss / 2**20:.0f} MiB" if rss else "peak RSS unknown")
        )
    st = results.get("startup")
    if st:
        notes.append(
            f"start-up (import + first step): cold {st['first_step_cold_s']:.1f} s, "
            f"cached {st['first_step_cached_s']:.2f} s "
            f"(import alone: {st['import_cold_s']:.2f} / {st['import_cached_s']:.2f} s)"
        )
        if "tournament_cold_s" in st:
            notes.append(f"first tournament (20 games greedy vs random, 2 workers, files written): "
                         f"cold {st['tournament_cold_s']:.1f} s (interpreted), "
                         f"cached {st['tournament_cached_s']:.1f} s; "
                         f"compiling its kernels once (one process): {st['compile_one_process_s']:.1f} s")
    if results.get("pictures"):
        from bali_env.speed.rendering import summary

        notes += summary(results["pictures"])
    if results.get("bots"):
        from bali_env.speed.bot_protocol import summary as bots_summary

        notes += bots_summary(results["bots"]["protocol"], results["bots"]["faults"])
    if results.get("search"):
        from bali_env.speed.search import summary as search_summary

        notes += search_summary(results["search"])
    if results.get("ways"):
        from bali_env.speed.ways import summary as ways_summary

        notes.append("every way in: " + "; ".join(ways_summary(results["ways"])))
    return notes


def bench_figure(results: dict[str, Any]) -> Any:
    """The chart of ``bench.png`` (a matplotlib Figure): one series per measured row, titled "vs
    anchors" only when an anchor was measured."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    vec = results.get("vector", {})
    if vec:
        sizes = [int(n) for n in vec]
        ax.plot(sizes, [vec[str(n)]["steps_per_s"] for n in sizes], "o-", color="tab:green", lw=2,
                label="BaliVectorEnv (obs every step, all cores)")
    for r in results.get("rollout", {}).values():
        ax.axhline(r["steps_per_s"], color="tab:blue", ls="-." if r["threads"] == 1 else "-",
                   label=f"rollout kernel, {r['threads']} thread(s)")
    styles = iter(["--", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 3)), (0, (8, 2))])
    for name, r in results["aec"].items():
        if "steps_per_s" in r:
            color = "tab:green" if name.startswith("bali") else "tab:gray"
            ax.axhline(r["steps_per_s"], color=color, ls=next(styles, "-"), lw=1.2, label=f"AEC: {name}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size N (games stepped per call)")
    ax.set_ylabel("decisions per second")
    cores = results["machine"]["cores"]
    against = " vs anchors, same run" if anchors_run(results) else " (no anchor installed)"
    ax.set_title(f"bali-env throughput{against} ({cores} cores)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def _plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib.pyplot as plt

    from bali_env.files import replace_when_done

    fig = bench_figure(results)
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def _check_out(out: Path) -> str | None:
    """Why ``--out`` cannot hold the results (None if it can); nothing is created."""
    if out.exists() and not out.is_dir():
        return f"--out {str(out)!r} is a file, not a folder"
    folder = out
    while not folder.exists() and folder != folder.parent:  # the nearest folder that exists
        folder = folder.parent
    if not folder.is_dir():
        return f"--out {str(out)!r}: {str(folder)!r} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"--out {str(out)!r}: cannot write in {str(folder)!r}"
    return None


BENCH_PARENT = Path("results/bench")  #: where a run without ``--out`` gets its new folder


def parents() -> list[argparse.ArgumentParser]:
    """The shared flags ``bali bench`` takes (``bali_env.flags``; imported here, as every
    import of the project in this module, so that ``benchmarks/compare.py`` can run this file as
    its harness on an older checkout)."""
    from bali_env import flags

    return [flags.out(f"output folder of bench.json and bench.png (default: a new folder {BENCH_PARENT}/<date-time>; "
                      "an --out holding an earlier bench.json is refused without --overwrite)"),
            flags.overwrite("benchmark", resume=False)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bali bench`` besides the shared ones."""
    from bali_env.engine.validate import arg_type, check_number

    parser.description = __doc__.split("\n\n")[0]
    parser.add_argument("--seconds", type=arg_type(check_number, 0, 3600, True), default=None,
                        help="timed seconds per measurement, in (0, 3600] (default 3, or 0.2 with --quick)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for smoke tests (0.2 s per measurement)")
    parser.add_argument("--no-startup", action="store_true", help="skip the cold/cached start-up measurement")


def run(args: argparse.Namespace) -> int:
    """``bali bench`` with the options of ``bali``'s parser: check ``--out`` (``UsageError``, before
    anything is measured or created), measure, write; returns the exit code."""
    from bali_env.flags import UsageError

    problem = _check_out(args.out if args.out is not None else BENCH_PARENT)
    if problem:
        raise UsageError(problem)
    from bali_env.files import check_out_folder

    try:
        check_out_folder(args.out, what="benchmark", outputs=("bench.json", "bench.png"), finished="bench.json",
                         overwrite=args.overwrite)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    measure(args)
    return 0


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Run the benchmarks with ``bali bench``'s options and write ``bench.json`` and ``bench.png``
    into ``args.out``; returns the results (what bench.json holds)."""
    seconds = args.seconds if args.seconds is not None else 0.2 if args.quick else 3.0

    results: dict[str, Any] = {"machine": machine_info(), "seconds_per_measurement": seconds}
    if not args.no_startup:
        print("measuring start-up (cold Numba cache, then cached) ...", flush=True)
        results["startup"] = bench_startup()
    print("measuring AEC loops ...", flush=True)
    results["aec"] = bench_aec(seconds)
    sizes = (1, 8, 64) if args.quick else (1, 64, 1024, 8192)
    print(f"measuring BaliVectorEnv at N = {sizes} ...", flush=True)
    results["vector"] = bench_vector(sizes, seconds)
    print("measuring the rollout kernel ...", flush=True)
    results["rollout"] = bench_rollout(200 if args.quick else 20000)
    print("measuring the pictures (SVG, rgb_array, HTML replay) ...", flush=True)
    from bali_env.speed.rendering import bench_pictures

    results["pictures"] = bench_pictures(1 if args.quick else 3)
    print("measuring the bot protocol and a tournament against a bot that hangs ...", flush=True)
    from bali_env.speed.bot_protocol import bench_faults, bench_protocol

    results["bots"] = {"protocol": bench_protocol(min(seconds, 2.0)),
                       "faults": bench_faults(10 if args.quick else 100)}
    print("measuring the search agents (mcts, ppo+search) ...", flush=True)
    from bali_env.speed.search import bench_search

    results["search"] = bench_search(5 if args.quick else 20)
    print("measuring every way in (AEC, Gymnasium, vector, SB3, batch, OpenSpiel) ...", flush=True)
    from bali_env.speed.ways import bench_ways

    results["ways"] = bench_ways(min(seconds, 3.0))
    from bali_env import engine as core

    largest = str(max(sizes))
    results["memory"] = {
        "state_bytes_per_game": core.STATE_SIZE * np.dtype(core.STATE_DTYPE).itemsize,
        "largest_batch": int(largest),
        "largest_batch_buffer_bytes": results["vector"][largest]["buffer_bytes"],
        "peak_rss_bytes": peak_rss_bytes(),
    }

    import textwrap

    m = results["machine"]
    print("\n" + textwrap.fill(f"machine: {m['cpu']}, {m['cores']} cores, python {m['versions']['python']}, "
                               f"numba {m['versions']['numba']}", terminal_width(), subsequent_indent="  "))
    print(_table(results))
    from bali_env.files import new_output_dir, write_text

    if args.out is None:
        args.out = new_output_dir(BENCH_PARENT)
    write_text(args.out / "bench.json", json.dumps(results, indent=2))
    try:
        _plot(results, args.out / "bench.png")
        print(f"\nwrote {args.out / 'bench.json'} and {args.out / 'bench.png'}")
    except ImportError:
        print(f"\nwrote {args.out / 'bench.json'} (no plot: matplotlib is not installed)")
    return results
