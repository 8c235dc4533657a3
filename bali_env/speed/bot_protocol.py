"""What the bot protocol costs, and whether a tournament survives a bad bot (part of ``bali bench``;
``python -m bali_env.speed.bot_protocol`` runs it alone).

1. Decisions per second of a trivial bot (``first_legal_bot.py``: the first legal action) as a
   ``cmd:`` process, with full messages (the view and the observation) and lean ones (the
   legal actions only, asked for in its hello), against the same rule in-process; the protocol's
   cost per decision is the difference. The floor under it: the round trip of a tiny line to a
   Python echo bot.
2. A 100-game tournament (2 workers) against a bot that hangs once in ten moves
   (``first_legal_bot.py --hang-every 10``, a move time of 0.2 s): the wall time, and that every game is
   accounted for (100 records, each either finished or forfeited, none twice).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
GOAL_US = 50.0  #: the issue's goal: the protocol costs at most this per decision beyond the bot's own time


def _positions(count: int = 200) -> list[tuple[np.ndarray, np.ndarray]]:
    """Observations and masks of a random 4-player game (Oracle and Demon)."""
    from bali_env.envs.bali_v0 import raw_env

    env = raw_env(num_players=4, oracle=True, demon=True)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    out = []
    while len(out) < count:
        if all(env.terminations.values()):
            env.reset()
        o = env.observe(env.agent_selection)
        out.append((o["observation"], o["action_mask"]))
        env.step(int(rng.choice(env.legal_actions())))
    return out


def _rate(decide: Any, positions: list[tuple[np.ndarray, np.ndarray]], seconds: float) -> dict[str, float]:
    """Decisions per second of ``decide(obs, mask)`` over the positions, for about ``seconds``."""
    for o, m in positions[:20]:  # warm up
        decide(o, m)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for o, m in positions:
            decide(o, m)
        count += len(positions)
    elapsed = time.perf_counter() - start
    return {"decisions": count, "seconds": elapsed, "decisions_per_s": count / elapsed,
            "us_per_decision": 1e6 * elapsed / count}


def bench_protocol(seconds: float = 2.0) -> dict[str, Any]:
    """Decisions/s of the trivial bot as a process (full and lean messages) and in-process, the
    protocol's cost per decision, and the echo round trip."""
    from bali_env.bots.base import Agent
    from bali_env.bots.protocol import CommandAgent
    from bali_env.bots.protocol.command_agent import check_bot_input
    from bali_env.bots.protocol.process import BotProcess

    class FirstLegal(Agent):
        """The trivial bot's rule in-process, its input checked as the ``cmd:`` agent checks it."""

        def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
            _, masks = check_bot_input(observation, action_mask)
            return int(np.flatnonzero(masks[0])[0])

    positions = _positions()
    out: dict[str, Any] = {"in_process": _rate(FirstLegal().act, positions, seconds)}
    for name, flag in (("cmd_full", ""), ("cmd_lean", " --lean")):
        bot = CommandAgent(f"{sys.executable} {HERE / 'first_legal_bot.py'}{flag}")
        try:
            bot.start()
            out[name] = _rate(bot.act, positions, seconds)
        finally:
            bot.close()
        out[name]["protocol_us"] = out[name]["us_per_decision"] - out["in_process"]["us_per_decision"]
    with tempfile.TemporaryDirectory() as tmp:
        echo = Path(tmp) / "echo.py"
        echo.write_text("import sys\nfor line in sys.stdin:\n"
                        "    sys.stdout.write('{\"type\":\"hello\",\"version\":1}\\n' if 'hello' in line else '4\\n')\n"
                        "    sys.stdout.flush()\n")
        process = BotProcess([sys.executable, str(echo)])
        try:
            process.start(1.0, None)
            out["echo"] = _rate(lambda o, m: process.request(b"{}\n", 1.0), positions, seconds / 2)
        finally:
            process.close()
    out["goal_us"] = GOAL_US
    return out


def bench_faults(games: int = 100, move_time: float = 0.2, workers: int = 2) -> dict[str, Any]:
    """A tournament against a bot that hangs once in ten moves: its wall time, and every game
    accounted for (each index once; finished or forfeited)."""
    from bali_env.arena import run_tournament

    spec = f"cmd:{sys.executable} {HERE / 'first_legal_bot.py'} --hang-every 10"
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run_tournament([spec, "greedy"], num_players=2, games=games, seed=0, workers=workers,
                                out_dir=Path(tmp) / "t", progress=False, move_time=move_time)
        elapsed = time.perf_counter() - start
    indices = sorted(g["game"] for g in result.games)
    forfeits = sum(1 for g in result.games if g.get("forfeit"))
    return {"games": games, "move_time": move_time, "workers": workers, "seconds": elapsed,
            "records": len(result.games), "every_game_once": indices == list(range(result.config["games"])),
            "forfeits": forfeits, "finished": len(result.games) - forfeits,
            "reasons": sorted({g["forfeit"]["reason"] for g in result.games if g.get("forfeit")})}


def summary(p: dict[str, Any], f: dict[str, Any] | None) -> list[str]:
    """The lines ``bali bench`` prints for the bots."""
    full, lean, echo = p["cmd_full"], p["cmd_lean"], p["echo"]
    lines = [f"bot protocol (a first-legal bot): in-process {p['in_process']['decisions_per_s']:,.0f} decisions/s; "
             f"as a process {full['decisions_per_s']:,.0f}/s with full messages ({full['protocol_us']:.0f} us a "
             f"decision for the protocol), {lean['decisions_per_s']:,.0f}/s lean ({lean['protocol_us']:.0f} us; "
             f"goal <= {p['goal_us']:.0f}); a tiny line's round trip to a Python echo bot "
             f"{echo['us_per_decision']:.0f} us"]
    if f:
        lines.append(f"a bot that hangs once in ten moves ({f['move_time']:g} s a move): {f['games']} games in "
                     f"{f['seconds']:.1f} s on {f['workers']} workers, {f['records']} records, every game once: "
                     f"{f['every_game_once']}, {f['forfeits']} forfeited ({', '.join(f['reasons']) or 'none'}), "
                     f"{f['finished']} finished")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """``python -m bali_env.speed.bot_protocol [--seconds S] [--games N]``: measure and print."""
    import argparse

    from bali_env import flags

    parser = argparse.ArgumentParser(prog="python -m bali_env.speed.bot_protocol", description=__doc__.split("\n\n")[0],
                                     parents=[flags.games(100, "games of the hanging-bot tournament, 1..100000")])
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per rate (default 2)")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 600 or not 1 <= args.games <= 100_000:
        parser.error("--seconds must be in (0, 600] and --games in 1..100000")
    result = {"protocol": bench_protocol(args.seconds), "faults": bench_faults(args.games)}
    print("\n".join(summary(result["protocol"], result["faults"])))
    return result


if __name__ == "__main__":
    main()
