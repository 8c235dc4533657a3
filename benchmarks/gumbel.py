"""PUCT's root against Gumbel's at equal wall time: which search improves the policy more at the
small budgets self-play can afford (issue 45's choice for ``bali az``).

``python -m benchmarks.gumbel [--players 2] [--games 400] [--sims 8,16,32,128] [--out FILE]``
plays, for each budget, the shipped policy searched with a PUCT root
(``ppo+search:sims=S,leaves=L``) and with Gumbel root selection over 16 actions
(``ppo+search:sims=S,leaves=L,gumbel=16``) against the shipped ``ppo`` alone in the other seats,
``--games`` seat-rotated games each on the same deals (seed 45045, which no kept figure, training
or tuning uses), and times each match: both roots spend the same descents, so the same budget is
the same wall time (the printed seconds show it). ``L`` is ``bali az``'s ``leaves``. Prints a
line per match and writes them as JSON (a temporary file moved into place). Run it on a quiet
machine: it is a timing as well as a match.
"""

from __future__ import annotations

import json
import time
from typing import Any

SEED = 45045  #: the deals of every match (disjoint from the kept figures' seeds 1-3 and the runs' streams)
CONSIDERED = 16  #: the actions Gumbel's root considers (Gumbel MuZero's default)


def measure(players: int, games: int, budgets: list[int], workers: int = 2) -> list[dict[str, Any]]:
    """One row per (budget, root): win rate against the shipped ``ppo`` with its interval, and seconds."""
    from bali_env.bots import make_agent
    from bali_env.trainers.alphazero.gate import match
    from bali_env.trainers.alphazero.generations import Config

    leaves = Config().leaves
    make_agent(f"ppo+search:sims=2,leaves=2,gumbel={CONSIDERED}").compile_kernels()
    rows = []
    for sims in budgets:
        for root, extra in (("puct", ""), ("gumbel", f",gumbel={CONSIDERED}")):
            spec = f"ppo+search:sims={sims},leaves={min(leaves, sims)}{extra}"
            t = time.perf_counter()
            result = match([spec] + ["ppo"] * (players - 1), players, games, SEED, workers)
            seconds = time.perf_counter() - t
            rows.append({"sims": sims, "root": root, "agent": spec, **result, "seconds": seconds})
            print(f"{spec} vs ppo: {100 * result['win_rate']:.1f}% [{100 * result['ci_low']:.1f}, "
                  f"{100 * result['ci_high']:.1f}] of {result['games']} games, {seconds:.0f} s", flush=True)
    return rows


def table(matches: list[dict[str, Any]]) -> list[str]:
    """The docs' table of a run's matches (docs/research/alphazero.md), a row per budget: each root's win
    rate against ``ppo`` with its interval, and its seconds."""
    rows = ["| descents a decision | PUCT root: wins vs `ppo` | seconds | Gumbel's root: wins vs `ppo` | seconds |",
            "|---|---|---|---|---|"]
    by: dict[int, dict[str, dict[str, Any]]] = {}
    for m in matches:
        by.setdefault(m["sims"], {})[m["root"]] = m

    def cell(m: dict[str, Any]) -> str:
        return (f"{100 * m['win_rate']:.1f}% [{100 * m['ci_low']:.1f}, {100 * m['ci_high']:.1f}] | "
                f"{m['seconds']:.0f} s")

    return rows + [f"| {sims} | {cell(r['puct'])} | {cell(r['gumbel'])} |" for sims, r in sorted(by.items())]


def main(argv: list[str] | None = None) -> int:
    """Measure, print, write the JSON."""
    from bali_env import flags

    p = flags.Parser(prog="python -m benchmarks.gumbel", description=__doc__.split("\n\n")[0],
                     parents=[flags.players(2), flags.games(400, "games per match"), flags.workers(2),
                              flags.out("where to write the JSON (default: print only)")])
    p.add_argument("--sims", default="8,16,32,128", help="the budgets, comma-separated (default 8,16,32,128)")
    args = p.parse_args(argv)
    try:
        budgets = [int(s) for s in args.sims.split(",") if s]
    except ValueError:
        p.error(f"--sims must be whole numbers separated by commas, got {args.sims!r}")
    if not budgets or min(budgets) < 1:
        p.error(f"--sims must be at least 1, got {args.sims!r}")
    rows = measure(args.players, args.games, budgets, args.workers)
    print("\n".join(table(rows)))
    if args.out is not None:
        from bali_env.files import write_text

        write_text(args.out, json.dumps({"players": args.players, "seed": SEED, "considered": CONSIDERED,
                                         "matches": rows}, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
