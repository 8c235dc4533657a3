"""What self-play costs with each root, Gumbel's and PUCT's, timed in turns in one process.

``python -m benchmarks.roots_selfplay [--players 2] [--games 16] [--rounds 4] [--sims 128] [--out OUT]``
plays ``--games`` self-play games of the shipped policy with ``bali az``'s settings for each root
(``--gumbel 16``, and ``--gumbel 0`` with its root noise and drawn moves), in this process, in
``--rounds`` rounds that alternate which root goes first (other deals each round, the same for both
roots), so that a machine whose speed drifts (a shared one) weighs on both alike. It prints each
round and the milliseconds per position of each root, and writes them as JSON (a temporary file
moved into place). Run it on a quiet machine: it is a timing. The kernels are compiled first.
"""

from __future__ import annotations

import time
from typing import Any

ROOTS = (16, 0)  #: ``--gumbel`` of the two roots: Gumbel's over 16 actions, PUCT's


def measure(players: int, games: int, rounds: int, sims: int) -> dict[str, Any]:
    """Seconds and positions of each root's self-play, per round and in all."""
    from bali_env.bots.ppo import ExportedPolicy, shipped_policy
    from bali_env.trainers.alphazero.generations import Config, selfplay_job
    from bali_env.trainers.alphazero.selfplay import play_chunk

    policy = ExportedPolicy(shipped_policy(players))
    jobs = {g: selfplay_job(Config(players=players, sims=sims, gumbel=g), policy, 0) for g in ROOTS}
    for job in jobs.values():
        play_chunk(job, [10**6])  # compile (or load) the kernels, untimed
    out: dict[str, Any] = {"players": players, "games_per_round": games, "rounds": rounds, "sims": sims,
                           "rounds_measured": []}
    for r in range(rounds):
        for g in ROOTS if r % 2 == 0 else ROOTS[::-1]:
            start = time.perf_counter()
            rows = play_chunk(jobs[g], list(range(r * games, (r + 1) * games)))
            seconds = time.perf_counter() - start
            out["rounds_measured"].append({"round": r, "gumbel": g, "seconds": seconds,
                                           "positions": len(rows)})
            print(f"round {r + 1}, {'Gumbel' if g else 'PUCT'} root: {games} games, {len(rows)} positions "
                  f"in {seconds:.1f} s", flush=True)
    for g in ROOTS:
        mine = [m for m in out["rounds_measured"] if m["gumbel"] == g]
        seconds, positions = sum(m["seconds"] for m in mine), sum(m["positions"] for m in mine)
        out["gumbel" if g else "puct"] = {"seconds": seconds, "positions": positions,
                                          "ms_per_position": 1e3 * seconds / positions}
    return out


def summary(result: dict[str, Any]) -> str:
    """The line that compares the two roots."""
    gumbel, puct = result["gumbel"], result["puct"]
    return (f"self-play, {result['players']} players, {result['sims']} descents: Gumbel's root "
            f"{gumbel['ms_per_position']:.2f} ms a position ({gumbel['positions']:,} positions), PUCT's "
            f"{puct['ms_per_position']:.2f} ms ({puct['positions']:,}): Gumbel / PUCT "
            f"{gumbel['ms_per_position'] / puct['ms_per_position']:.2f}")


def main(argv: list[str] | None = None) -> int:
    """Measure, print, and write ``--out`` if given."""
    from bali_env import flags
    from bali_env.engine.validate import arg_type, check_int

    parser = flags.Parser(prog="python -m benchmarks.roots_selfplay", description=__doc__.split("\n\n")[0],
                          parents=[flags.players(2, detail="2 or 4, the counts with a shipped policy"),
                                   flags.games(16, "games per root and round"),
                                   flags.out("write the result there as JSON")])
    parser.add_argument("--rounds", type=arg_type(check_int, 1, 100), default=4, help="rounds (default 4)")
    parser.add_argument("--sims", type=arg_type(check_int, 2, 4096), default=128,
                        help="descents a decision (default 128)")
    args = parser.parse_args(argv)
    if args.players not in (2, 4):
        parser.error(f"--players must be 2 or 4 (the counts with a shipped policy), got {args.players}")
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    result = measure(args.players, args.games, args.rounds, args.sims)
    print(summary(result))
    if args.out:
        from benchmarks import write_result

        print(f"wrote {write_result(result, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
