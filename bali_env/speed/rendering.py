"""How fast the pictures are (part of ``bali bench``): the SVG of a frame, the ``rgb_array`` frame
of the AEC env (goal: at most 20 ms at 1280 x 720), and the HTML replay of a whole 4-player game
(goal: under 2 s and under 2 MB), over games played by the greedy agent (Oracle and Demon
variants: every kind of decision). ``python -m bali_env.speed.rendering`` runs this part alone."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

GOALS = {"rgb_ms": 20.0, "html_s": 2.0, "html_mb": 2.0}  #: the issue's goals


def greedy_records(games: int, num_players: int = 4, seed: int = 0) -> list[dict[str, Any]]:
    """Records of ``games`` greedy games (Oracle and Demon variants)."""
    from bali_env.envs.bali_v0 import raw_env
    from bali_env.bots.greedy import GreedyAgent

    records = []
    for g in range(games):
        env = raw_env(num_players=num_players, oracle=True, demon=True)
        env.reset(seed=seed + g)
        bot = GreedyAgent(seed=seed + g)
        while not all(env.terminations.values()):
            o = env.observe(env.agent_selection)
            env.step(int(bot.act(o["observation"], o["action_mask"])))
        records.append(env.game_record(["greedy"] * num_players))
    return records


def bench_pictures(games: int = 3) -> dict[str, Any]:
    """Milliseconds per SVG frame and per ``rgb_array`` frame, seconds and megabytes per HTML
    replay, over ``games`` 4-player greedy games; ``rgb_array`` is skipped (with a note) when the
    render extra is not installed."""
    from bali_env.engine.contract import dealt_state
    from bali_env.pictures.frames import Spectator, frame_parts, labels_for, record_frames
    from bali_env.pictures.html import replay_html
    from bali_env.pictures.style import DEFS
    from bali_env.pictures.svg import SVG_CLOSE, SVG_OPEN

    records = greedy_records(games)
    out: dict[str, Any] = {"games": games, "moves": [len(r["actions"]) for r in records], "goals": GOALS}
    record_frames(records[0])  # warm up (kernels compiled, modules loaded)
    frames, t0 = 0, time.perf_counter()
    for r in records:
        spectator = Spectator(labels_for(4, r["agents"]))
        for f in record_frames(r):
            svg = SVG_OPEN + DEFS + "".join(frame_parts(f, spectator)) + SVG_CLOSE
            frames += 1
    out["svg_ms_per_frame"] = 1000 * (time.perf_counter() - t0) / frames
    out["svg_bytes"] = len(svg.encode())
    out["svg_frames"] = frames
    seconds, sizes = [], []
    for r in records:
        t = time.perf_counter()
        page = replay_html(r, title="game.json")
        seconds.append(time.perf_counter() - t)
        sizes.append(len(page.encode()))
    out["html_s"] = {"mean": float(np.mean(seconds)), "max": float(np.max(seconds))}
    out["html_mb"] = {"mean": float(np.mean(sizes)) / 1e6, "max": float(np.max(sizes)) / 1e6}
    try:
        import PIL  # noqa: F401
        import resvg_py  # noqa: F401
    except ImportError:
        out["rgb_skipped"] = "the render extra is not installed (pip install -e '.[render]')"
        return out
    from bali_env.envs.bali_v0 import raw_env

    times, first = [], None
    for r in records:
        env = raw_env(num_players=4, oracle=True, demon=True, render_mode="rgb_array")
        env.reset(seed=r["seed"])
        assert np.array_equal(env.unwrapped.state(), dealt_state(4, True, True, r["seed"]))
        for i, action in enumerate([None, *r["actions"]]):
            if action is not None:
                env.step(action)
            t = time.perf_counter()
            frame = env.render()
            dt = time.perf_counter() - t
            if first is None:
                first = dt  # the first frame of a fresh process: every sprite drawn by resvg
            elif i > 0 or r is not records[0]:
                times.append(dt)
    ms = 1000 * np.array(times)
    out["rgb_ms"] = {"mean": float(ms.mean()), "median": float(np.median(ms)), "p95": float(np.percentile(ms, 95)),
                     "first_frame": 1000 * first, "frames": int(ms.size), "shape": list(frame.shape)}
    return out


def summary(p: dict[str, Any]) -> list[str]:
    """The lines ``bali bench`` prints for the pictures."""
    moves = p["moves"]
    lines = [f"pictures ({p['games']} greedy 4-player games, Oracle + Demon, {min(moves)}-{max(moves)} moves): "
             f"SVG {p['svg_ms_per_frame']:.2f} ms per frame ({p['svg_bytes'] / 1e3:.0f} kB)"]
    rgb = p.get("rgb_ms")
    if rgb:
        lines.append(f"rgb_array 1280x720: mean {rgb['mean']:.1f} ms, median {rgb['median']:.1f} ms, 95th percentile "
                     f"{rgb['p95']:.1f} ms per frame (goal <= {GOALS['rgb_ms']:.0f}); first frame of a process "
                     f"{rgb['first_frame']:.0f} ms")
    else:
        lines.append(f"rgb_array: skipped: {p['rgb_skipped']}")
    lines.append(f"HTML replay of a 4-player game: {p['html_s']['mean']:.2f} s (worst {p['html_s']['max']:.2f} s), "
                 f"{p['html_mb']['mean']:.2f} MB (largest {p['html_mb']['max']:.2f} MB); goals < "
                 f"{GOALS['html_s']:.0f} s, < {GOALS['html_mb']:.0f} MB")
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """``python -m bali_env.speed.rendering [--games N] [--json]``: measure and print (``--json``: the
    figures too)."""
    import argparse

    from bali_env import flags

    parser = argparse.ArgumentParser(prog="python -m bali_env.speed.rendering", description=__doc__.split("\n\n")[0],
                                     parents=[flags.games(3, "4-player greedy games to measure over, 1..100")])
    parser.add_argument("--json", action="store_true", help="also print every figure as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= 100:
        parser.error(f"--games must be 1..100, got {args.games}")
    result = bench_pictures(args.games)
    print("\n".join(summary(result)))
    if args.json:
        print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
