"""The journal of a tournament's output folder (``journal.jsonl``: a header, then one line
per finished game as it ends) and resuming from it."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bali_env.arena.errors import TournamentError

JOURNAL = "journal.jsonl"  #: the append-only journal of finished games in a tournament's output folder
FINISHED = "results.json"  #: written last: a folder holding it holds a finished tournament
#: everything a tournament writes in its folder (what ``--overwrite`` removes, and nothing else)
RUN_OUTPUTS = (FINISHED, "results.csv", "ratings.png", "index.html", "timing.json", JOURNAL, "records", "replays",
               "logs")


def _journal_header(config: dict[str, Any]) -> dict[str, Any]:
    """What a journal must agree on to be resumed: everything that decides the games."""
    keys = ("agents", "num_players", "games", "seed", "oracle", "demon", "save_records", "move_time", "game_time")
    return {"journal": "bali-tournament", "version": 1, **{k: config.get(k) for k in keys}}


def read_journal(path: Path) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """The header and the finished games (by index) of a journal; a last line cut short by an
    interruption is ignored. ValueError for a file that is not a tournament journal."""
    lines = path.read_bytes().split(b"\n")
    try:
        header = json.loads(lines[0])
    except (ValueError, IndexError):
        raise ValueError(f"{path} is not a tournament journal") from None
    if not isinstance(header, dict) or header.get("journal") != "bali-tournament":
        raise ValueError(f"{path} is not a tournament journal")
    games: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                break  # the last line, cut short
            raise ValueError(f"{path}: line {number} is not a game record") from None
        games[int(rec["game"])] = rec
    return header, games


def start_journal(out: Path, config: dict[str, Any], resume: bool) -> tuple[Any, dict[int, dict[str, Any]]]:
    """Open the journal in ``out`` for appending: the finished games of the run it holds
    (``resume``), or a new journal; an earlier run's files (``RUN_OUTPUTS``), there only when
    the run was told to overwrite them (``check_out_folder``), are removed first (said on stderr)."""
    path = out / JOURNAL
    header = _journal_header(config)
    done: dict[int, dict[str, Any]] = {}
    if resume:
        if not path.exists():
            raise TournamentError(f"nothing to resume: {path} does not exist")
        try:
            old, done = read_journal(path)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
        differ = [k for k in header if old.get(k) != header[k]]
        if differ:
            raise TournamentError(f"cannot resume {path}: it was run with other settings ({', '.join(differ)}: "
                                  f"{', '.join(repr(old.get(k)) for k in differ)})")
        done = {k: r for k, r in done.items() if 0 <= k < config["games"]}
        with path.open("rb+") as fh:  # drop a last line cut short, so appends start on a new line
            data = fh.read()
            keep = data.rfind(b"\n") + 1
            fh.truncate(keep)
        return path.open("a", encoding="utf-8"), done
    from bali_env.files import remove_outputs

    earlier = remove_outputs(out, RUN_OUTPUTS)  # only with overwrite: check_out_folder refused it otherwise
    if earlier:
        print(f"--overwrite: replaced the earlier run in {out} ({', '.join(earlier)})", file=sys.stderr)
    fh = path.open("w", encoding="utf-8")
    fh.write(json.dumps(header) + "\n")
    fh.flush()
    return fh, done


@contextlib.contextmanager
def claim_out_dir(out: Path) -> Iterator[Path]:
    """Within the block this run alone writes to ``out`` (created if needed): an exclusive lock
    on the folder itself (``bali_env.files.lock_folder``: no lock file is left in it);
    TournamentError when another run holds it (two runs given the same ``--out`` at once)."""
    from bali_env.files import lock_folder

    try:
        with lock_folder(out) as folder:
            yield folder
    except BlockingIOError:
        raise TournamentError(f"another tournament is writing to {str(out)!r}: wait for it, or choose "
                              "another --out") from None
