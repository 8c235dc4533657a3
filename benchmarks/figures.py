"""The figures the README and the docs quote, computed from the result files that produced them.

Every strength figure (a win rate with its 95% interval) that the README or a page of ``docs/``
states about a shipped agent is a ``CLAIMS`` row here: the ``results.json`` files of the
``bali tournament`` runs it comes from (kept in ``docs/results/``, named after the run, with the
command in their ``config``) and the participant whose wins it counts, pooled over the files.
The README's headline table is written from these rows (``python -m benchmarks.figures --write``;
``--check`` says whether it is up to date), and ``tests/test_figures.py`` fails when any figure in
the README or the docs is not what its files give, so a quoted figure cannot go stale.
Passages about earlier policies and experiments, whose runs were not kept, stand between
``<!-- history -->`` and ``<!-- /history -->`` and are left out of that check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from agents.tournament.stats import wilson_interval

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "docs" / "results"  #: the kept results.json files, one per tournament run
README = ROOT / "README.md"
START, END = "<!-- headline:start -->", "<!-- headline:end -->"  #: the README's generated table
FIGURE = re.compile(r"(\d+\.\d)%(?:\*\*)? \[(\d+\.\d), (\d+\.\d)\]")  #: "72.4%** [70.2, 74.4]" in a page
HISTORY = re.compile(r"<!-- history -->.*?<!-- /history -->", re.S)


@dataclass(frozen=True)
class Claim:
    """One quoted figure: ``participant``'s wins over the games of ``files`` (in docs/results/)."""

    label: str  #: what was measured, as the README's table says it
    files: tuple[str, ...]  #: result files (without .json), pooled
    participant: str  #: whose wins are counted
    note: str = ""  #: said after the figure (e.g. the equal share)
    headline: bool = True  #: a row of the README's table


CLAIMS: tuple[Claim, ...] = (
    Claim("shipped `ppo` vs `mcts` (1,000 simulations a move), 2 players",
          ("2p-ppo-mcts-seed1", "2p-ppo-mcts-seed2", "2p-ppo-mcts-seed3"), "ppo"),
    Claim("shipped `ppo` vs `mcts`, 2 players, seed 1", ("2p-ppo-mcts-seed1",), "ppo", headline=False),
    Claim("shipped `ppo` vs `mcts`, 2 players, seed 2", ("2p-ppo-mcts-seed2",), "ppo", headline=False),
    Claim("shipped `ppo` vs `mcts`, 2 players, seed 3", ("2p-ppo-mcts-seed3",), "ppo", headline=False),
    Claim("shipped `ppo` vs `greedy`, 2 players", ("2p-ppo-greedy-seed1",), "ppo"),
    Claim("shipped `ppo` vs `greedy`, 2 players, seed 2", ("2p-ppo-greedy-seed2",), "ppo", headline=False),
    Claim("shipped `ppo` vs three `greedy`, 4 players", ("4p-ppo-greedy-seed1",), "ppo", "(equal share 25%)"),
    Claim("shipped `ppo` vs three `greedy`, 4 players, seed 2", ("4p-ppo-greedy-seed2",), "ppo", headline=False),
    Claim("`mcts` vs `greedy`, 2 players", ("2p-mcts-greedy-seed1",), "mcts"),
    Claim("`greedy` vs three `random`, 4 players", ("4p-greedy-random-seed1",), "greedy"),
    Claim("`greedy` vs `random`, 2 players", ("2p-greedy-random-seed1",), "greedy", headline=False),
)


def load(name: str) -> dict:
    """The kept ``results.json`` of the run ``name`` (docs/results/NAME.json)."""
    return json.loads((RESULTS_DIR / f"{name}.json").read_text())


def tally(claim: Claim) -> tuple[float, int]:
    """The participant's wins (a shared win counts 1/k) and games, pooled over the claim's files."""
    wins, games = 0.0, 0
    for name in claim.files:
        rows = [p for p in load(name)["participants"] if p["name"] == claim.participant]
        if len(rows) != 1:
            raise ValueError(f"{name}.json has no participant {claim.participant!r}")
        wins += rows[0]["wins"]
        games += rows[0]["games"]
    return wins, games


def figure(claim: Claim) -> str:
    """``72.4% [70.2, 74.4]``: the claim's win rate and 95% Wilson interval, as pages quote it."""
    wins, games = tally(claim)
    lo, hi = wilson_interval(wins, games)
    return f"{100 * (wins / games):.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"  # as the table rounds it


def headline_table() -> str:
    """The README's table of strength figures, from the claims marked ``headline``."""
    lines = ["| what | result | result files |", "|---|---|---|"]
    for claim in CLAIMS:
        if not claim.headline:
            continue
        rate, interval = figure(claim).split(" ", 1)
        games = tally(claim)[1]
        files = ", ".join(f"[{name}](docs/results/{name}.json)" for name in claim.files)
        note = f" {claim.note}" if claim.note else ""
        lines.append(f"| {claim.label} | `{claim.participant}` wins **{rate}** {interval} of {games:,} games{note} "
                     f"| {files} |")
    return "\n".join(lines)


def quoted_figures(text: str) -> list[str]:
    """Every win rate with an interval in a page, outside its history passages, as ``figure``
    writes it (bold marks and line breaks ignored)."""
    text = " ".join(HISTORY.sub("", text).replace("**", "").split())
    return [f"{rate}% [{lo}, {hi}]" for rate, lo, hi in FIGURE.findall(text)]


def readme_block(text: str) -> str:
    """The generated part of the README (between the headline markers)."""
    if START not in text or END not in text:
        raise ValueError(f"README.md lacks the {START} ... {END} markers")
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n")


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.figures [--write | --check]``: print the README's headline table,
    write it into README.md, or exit 1 when README.md's differs."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.figures", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write the table into README.md")
    group.add_argument("--check", action="store_true", help="exit 1 when README.md's table is not up to date")
    args = parser.parse_args(argv)
    table = headline_table()
    if args.write:
        from bali_env.files import write_text

        text = README.read_text()
        before, rest = text.split(START, 1)
        write_text(README, before + START + "\n" + table + "\n" + END + rest.split(END, 1)[1])
    elif args.check:
        same = readme_block(README.read_text()) == table
        print("README.md's headline table is up to date" if same else "README.md's headline table is stale: "
              "python -m benchmarks.figures --write", file=sys.stderr)
        return 0 if same else 1
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
