"""Play again the kept tournaments whose figures the docs quote, when a shipped agent changes.

```bash
python -m benchmarks.rerun '2p-*'              # every kept 2-player result file
python -m benchmarks.rerun 2p-ppo-mcts-seed2 --dry-run
python -m benchmarks.figures --write           # then the tables; tests/test_figures.py the prose
```

Every file of ``docs/results/`` whose name (without ``.json``) matches a pattern (``fnmatch``) is
replayed from its own ``config``: the same agent specs, players, games, seed, variants, batch size
and worker count, so a file whose agents did not change comes back game for game the same (the
tournament's results do not depend on timing or workers). The run goes to ``runs/rerun/NAME``
(``--work``), whose journal lets an interrupted rerun go on where it stopped (so do not change
the shipped agents between the two); the new ``results.json`` then replaces the kept file (written
to a temporary file and moved into place), so a file is either the old run or the whole new one,
and the run's folder is removed. The files are replayed one at a time, in name order, and what
changed is printed per file: the first participant's win rate before and after.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from benchmarks import figures

WORK_DIR = Path("runs") / "rerun"  #: where the tournaments run (their journals, for --resume)


def matching(patterns: list[str], results_dir: Path | None = None) -> list[Path]:
    """The kept tournament result files (in ``results_dir``, default docs/results/) matching any
    of ``patterns``, in name order; ValueError naming a pattern that matches none."""
    results_dir = figures.RESULTS_DIR if results_dir is None else results_dir
    files = [f for f in sorted(results_dir.glob("*.json")) if "participants" in json.loads(f.read_text())]
    chosen: dict[Path, None] = {}
    for pattern in patterns:
        hits = [f for f in files if fnmatch.fnmatchcase(f.stem, pattern)]
        if not hits:
            raise ValueError(f"pattern {pattern!r} matches no tournament result file in {results_dir}")
        chosen.update(dict.fromkeys(hits))
    return sorted(chosen)


def tournament_args(config: dict[str, Any]) -> dict[str, Any]:
    """The ``run_tournament`` keyword arguments that replay a kept file's ``config``."""
    return {
        "agents": list(config["agents"]),
        "num_players": config["num_players"],
        "games": config["games_requested"],
        "seed": config["seed"],
        "workers": config["workers"],
        "batch_size": config["batch_size"],
        "oracle": config["oracle"],
        "demon": config["demon"],
        "move_time": config.get("move_time"),
        "game_time": config.get("game_time"),
    }


def first_win_rate(doc: dict[str, Any]) -> str:
    """The first participant's win rate in a results document, as ``name 72.4% [70.2, 74.4]``."""
    p = doc["participants"][0]
    return f"{p['name']} {figures.rate_text(p['win_rate'], *p['win_rate_ci95'])}"


def rerun(path: Path, work_dir: Path = WORK_DIR, progress: bool = True) -> tuple[str, str]:
    """Replay the kept file ``path`` in ``work_dir/NAME`` (going on from its journal if there is one)
    and move the new results into place; returns the first participant's win rate before and after."""
    from bali_env.arena.tournament import run_tournament
    from bali_env.files import write_text

    old = json.loads(path.read_text())
    out = work_dir / path.stem
    resume = (out / "journal.jsonl").exists()
    result = run_tournament(**tournament_args(old["config"]), out_dir=out, progress=progress, resume=resume)
    new = result.to_dict()
    write_text(path, json.dumps(new, indent=1) + "\n")
    shutil.rmtree(out)  # its journal must not be resumed by a later rerun of other agents
    return first_win_rate(old), first_win_rate(new)


def main(argv: list[str] | None = None) -> int:
    """Command line: replay the matching files (see the module docstring); exit 2 on a bad pattern."""
    from bali_env import flags

    p = argparse.ArgumentParser(prog="python -m benchmarks.rerun", description=__doc__.split("\n\n")[0],
                                parents=[flags.progress()])
    p.add_argument("patterns", nargs="+", metavar="PATTERN", help="result file names without .json (fnmatch)")
    p.add_argument("--work", type=Path, default=WORK_DIR, help="where the tournaments run (default: %(default)s)")
    p.add_argument("--dry-run", action="store_true", help="list the files and their commands, play nothing")
    args = p.parse_args(argv)
    try:
        files = matching(args.patterns)
    except ValueError as exc:
        print(f"python -m benchmarks.rerun: {exc}", file=sys.stderr)
        return 2
    for f in files:
        workers = json.loads(f.read_text())["config"]["workers"]
        print(f"{f.stem}: {figures.command(f.stem)} --workers {workers}", flush=True)
        if not args.dry_run:
            before, after = rerun(f, args.work, args.progress)
            print(f"  {before}  ->  {after}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
