"""Compare the speed of this checkout with another commit, in one run: ``python -m
benchmarks.compare --base REV``.

The other commit is checked out into a temporary git worktree; the same measurements as ``bali
bench`` (with this checkout's timed loops, ``bali_env/speed/loops.py``, for both sides: the AEC env,
``BaliVectorEnv`` at N = 1, 64, 1024, 8192, the rollout kernel on 1 and all threads) then run in
fresh processes, alternating base and current ``--rounds`` times (in ABBA order, so that neither
side always runs first) after one untimed warm-up each (Numba compiles into each tree's own
cache). With ``--commands`` two commands a user waits for are timed too, from the start of the
process to its end: ``bali tournament`` (greedy against random, 400 games on one worker: games
per second) and ``bali train`` (65,536 env steps, no evaluation: env steps per second). Each row
reports the best round of each side and the ratio current / base; on a shared machine single
rounds vary by 10-30%, so use 4 or more rounds. Writes ``compare.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_MEASURE = """
import importlib.util, json, sys
import bali_env
spec = importlib.util.spec_from_file_location("bench_run", sys.argv[3])  # one harness for both sides
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
aec_steps_per_second, bench_rollout, bench_vector = bench.aec_steps_per_second, bench.bench_rollout, bench.bench_vector
seconds, quick = float(sys.argv[1]), sys.argv[2] == "1"
rows = {}
for oracle in (False, True):
    tag = "bali_v0 AEC, 4 players" + (", oracle+demon" if oracle else "")
    make = lambda: bali_env.env(num_players=4, oracle=oracle, demon=oracle)
    rows[tag] = aec_steps_per_second(make, seconds)["steps_per_s"]
for n, r in bench_vector((1, 8) if quick else (1, 64, 1024, 8192), seconds).items():
    rows[f"BaliVectorEnv N={n}"] = r["steps_per_s"]
for r in bench_rollout(200 if quick else 20000).values():
    rows[f"rollout kernel, {r['threads']} thread(s)"] = r["steps_per_s"]
print(json.dumps(rows))
"""


def measure(tree: Path, seconds: float, quick: bool) -> dict[str, float]:
    """Steps per second of every row, measured in a fresh process on the code of ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    harness = str(ROOT / "bali_env" / "speed" / "loops.py")
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(seconds), "1" if quick else "0", harness], cwd=tree,
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"measuring {tree} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


#: the commands ``--commands`` times: row -> (arguments after ``bali``, units the rate counts)
COMMANDS = {
    "bali tournament, games/s": (["tournament", "--agents", "greedy", "random", "--players", "2", "--games", "400",
                                  "--workers", "1", "--seed", "1", "--no-progress"], 400),
    "bali train, env steps/s": (["train", "--players", "2", "--steps", "65536", "--eval-every", "0",
                                 "--final-eval-games", "0", "--no-progress"], 65536),
}


def time_commands(tree: Path) -> dict[str, float]:
    """Units per second of each of ``COMMANDS``, run as ``python -m bali_env.apps.cli`` on the code
    of ``tree`` (the whole process timed: start-up, the work, writing its files)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    rows = {}
    for row, (argv, units) in COMMANDS.items():
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "bali_env.apps.cli", *argv, "--out", f"{out}/run"], cwd=tree,
                                  env=env, capture_output=True, text=True)
            elapsed = time.perf_counter() - t0
        if done.returncode != 0:
            raise RuntimeError(f"{row} failed on {tree} (exit {done.returncode}):\n{done.stderr[-3000:]}")
        rows[row] = units / elapsed
    return rows


def compare(base: str, rounds: int, seconds: float, quick: bool, commands: bool = False) -> dict[str, Any]:
    """Measure ``base`` and this checkout alternately; return the best of each side per row."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), base], check=True,
                       capture_output=True)
        try:
            sides = {"base": tree, "current": ROOT}
            for name, path in sides.items():  # warm-up: compile into each tree's cache
                print(f"warming up {name} ({path}) ...", flush=True)
                measure(path, 0.2, True)
                if commands:
                    time_commands(path)
            best: dict[str, dict[str, float]] = {"base": {}, "current": {}}
            for k in range(rounds):  # ABBA order: neither side always runs first
                order = list(sides.items()) if k % 2 == 0 else list(sides.items())[::-1]
                for name, path in order:
                    print(f"round {k + 1}/{rounds}: {name} ...", flush=True)
                    rows = measure(path, seconds, quick) | (time_commands(path) if commands else {})
                    for row, v in rows.items():
                        best[name][row] = max(v, best[name].get(row, 0.0))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False,
                           capture_output=True)
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", base], capture_output=True, text=True)
    return {"base": rev.stdout.strip() or base, "rounds": rounds, "seconds": seconds, "rows": {
        row: {"base": best["base"][row], "current": best["current"].get(row), "ratio": best["current"].get(row, 0.0)
              / best["base"][row]} for row in best["base"]}}


def table(result: dict[str, Any]) -> str:
    """The comparison as a Markdown table."""
    lines = [f"| per second (best of {result['rounds']}) | base {result['base']} | current | current / base |",
             "|---|---:|---:|---:|"]
    for row, r in result["rows"].items():
        lines.append(f"| {row} | {r['base']:,.0f} | {r['current']:,.0f} | {r['ratio']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse the options, compare, print the table and write ``compare.json``."""
    from bali_env import flags

    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.splitlines()[0],
                                     parents=[flags.out("output folder of compare.json (default: %(default)s)",
                                                        default=Path("results/bench"))])
    parser.add_argument("--base", default="HEAD", help="the commit to compare with (default HEAD)")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds per side (default 4)")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement (default 2)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for smoke tests")
    parser.add_argument("--commands", action="store_true", help="also time bali tournament and bali train")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be >= 1 and --seconds > 0")
    result = compare(args.base, args.rounds, args.seconds, args.quick, args.commands)
    print(table(result))
    args.out.mkdir(parents=True, exist_ok=True)
    from bali_env.files import write_text

    write_text(args.out / "compare.json", json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
