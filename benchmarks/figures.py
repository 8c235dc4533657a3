"""The figures the README and the docs quote, computed from the result files that produced them.

Every strength figure (a win rate with its 95% interval) that the README or a page of ``docs/``
states about a shipped agent is a ``CLAIMS`` row here: the ``results.json`` files of the
``bali tournament`` runs it comes from (kept in ``docs/results/``, named after the run, with the
command in their ``config``) and the participant whose wins it counts, pooled over the files.
The README's tables, docs/benchmarks.md's and docs/training.md's speed tables are written from
these rows and from the kept ``bali bench`` (``docs/results/bench.json``) and
``python -m benchmarks.throughput`` (``docs/results/throughput.json``) runs, between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers (``python -m benchmarks.figures
--write``; ``--check`` says whether they are up to date), and ``tests/test_figures.py`` fails when
a block or any win rate in the README or the docs is not what its files give, so a quoted figure
cannot go stale.
Passages about earlier policies and experiments, whose runs were not kept, stand between
``<!-- history -->`` and ``<!-- /history -->`` and are left out of that check.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bali_env.arena.stats import wilson_interval

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "docs" / "results"  #: the kept results.json files, one per tournament run
README = ROOT / "README.md"
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
    Claim("`ppo+search` (800 simulations a move) vs shipped `ppo`, 2 players", ("2p-search-ppo-seed1",),
          "ppo+search"),
    Claim("`ppo+search` vs `mcts` (1,000 simulations a move), 2 players",
          ("2p-search-mcts-seed1", "2p-search-mcts-seed2"), "ppo+search"),
    Claim("`ppo+search` vs `mcts`, 2 players, seed 1", ("2p-search-mcts-seed1",), "ppo+search", headline=False),
    Claim("`ppo+search` vs `mcts`, 2 players, seed 2", ("2p-search-mcts-seed2",), "ppo+search", headline=False),
    Claim("`ppo+search` vs three shipped `ppo`, 4 players", ("4p-search-ppo-seed1",), "ppo+search",
          "(equal share 25%)"),
    Claim("`ppo+search` vs three `mcts`, 4 players", ("4p-search-mcts-seed1", "4p-search-mcts-seed2"),
          "ppo+search", "(equal share 25%)"),
    Claim("`ppo+search` vs three `mcts`, 4 players, seed 1", ("4p-search-mcts-seed1",), "ppo+search",
          "(equal share 25%)", headline=False),
    Claim("`ppo+search` vs three `mcts`, 4 players, seed 2", ("4p-search-mcts-seed2",), "ppo+search",
          "(equal share 25%)", headline=False),
    Claim("`ppo+search` vs `greedy`, 2 players", ("2p-search-greedy-seed1",), "ppo+search", headline=False),
    Claim("`ppo+search` vs three `greedy`, 4 players", ("4p-search-greedy-seed1", "4p-search-greedy-seed2"),
          "ppo+search", headline=False),
    Claim("`ppo+search` vs three `greedy`, 4 players, seed 1", ("4p-search-greedy-seed1",), "ppo+search",
          headline=False),
    Claim("`ppo+search` vs three `greedy`, 4 players, seed 2", ("4p-search-greedy-seed2",), "ppo+search",
          headline=False),
    Claim("`mcts` vs three `greedy`, 4 players", ("4p-mcts-greedy-seed1",), "mcts", headline=False),
    Claim("shipped `ppo` vs `mcts` (1,000 simulations a move), 2 players",
          ("2p-ppo-mcts-seed1", "2p-ppo-mcts-seed2", "2p-ppo-mcts-seed3"), "ppo"),
    Claim("shipped `ppo` vs `mcts`, 2 players, seed 1", ("2p-ppo-mcts-seed1",), "ppo", headline=False),
    Claim("shipped `ppo` vs `mcts`, 2 players, seed 2", ("2p-ppo-mcts-seed2",), "ppo", headline=False),
    Claim("shipped `ppo` vs `mcts`, 2 players, seed 3", ("2p-ppo-mcts-seed3",), "ppo", headline=False),
    Claim("shipped `ppo` vs `greedy`, 2 players", ("2p-ppo-greedy-seed1",), "ppo"),
    Claim("shipped `ppo` vs `greedy`, 2 players, seed 2", ("2p-ppo-greedy-seed2",), "ppo", headline=False),
    Claim("shipped `ppo` vs three `greedy`, 4 players", ("4p-ppo-greedy-seed1", "4p-ppo-greedy-seed2"), "ppo",
          "(equal share 25%)"),
    Claim("shipped `ppo` vs three `greedy`, 4 players, seed 1", ("4p-ppo-greedy-seed1",), "ppo", headline=False),
    Claim("shipped `ppo` vs three `greedy`, 4 players, seed 2", ("4p-ppo-greedy-seed2",), "ppo", headline=False),
    Claim("shipped `ppo` vs three `mcts`, 4 players", ("4p-ppo-mcts-seed1", "4p-ppo-mcts-seed2"), "ppo",
          "(equal share 25%)"),
    Claim("shipped `ppo` vs three `mcts`, 4 players, seed 1", ("4p-ppo-mcts-seed1",), "ppo", headline=False),
    Claim("shipped `ppo` vs three `mcts`, 4 players, seed 2", ("4p-ppo-mcts-seed2",), "ppo", headline=False),
    Claim("shipped `ppo` vs two `greedy`, 3 players", ("3p-ppo-greedy-seed1",), "ppo", "(equal share 33.3%)",
          headline=False),
    Claim("shipped `ppo` vs two `mcts`, 3 players", ("3p-ppo-mcts-seed1",), "ppo", "(equal share 33.3%)",
          headline=False),
    Claim("`ppo+search` vs two `mcts`, 3 players", ("3p-search-mcts-seed1",), "ppo+search", "(equal share 33.3%)",
          headline=False),
    Claim("`mcts` vs `greedy`, 2 players", ("2p-mcts-greedy-seed1",), "mcts"),
    Claim("`greedy` vs three `random`, 4 players", ("4p-greedy-random-seed1",), "greedy"),
    Claim("`greedy` vs `random`, 2 players", ("2p-greedy-random-seed1",), "greedy", headline=False),
)


def load(name: str) -> dict:
    """The kept ``results.json`` of the run ``name`` (docs/results/NAME.json)."""
    return json.loads((RESULTS_DIR / f"{name}.json").read_text())


def tally(claim: Claim) -> tuple[float, int]:
    """The participant's wins (a shared win counts 1/k) and games, pooled over the claim's files from
    their game records, **each deal counted once**: a game whose deal seed an earlier game of the
    claim (in file order) already used is left out, so runs whose deals overlap (seeds ``s`` and
    ``s + 1`` before deals were hashed shared all but one) never count a deal twice."""
    wins, games, seen = 0.0, 0, set()
    for name in claim.files:
        doc = load(name)
        if claim.participant not in [p["name"] for p in doc["participants"]]:
            raise ValueError(f"{name}.json has no participant {claim.participant!r}")
        for game in doc["games"]:
            if game["seed"] in seen or claim.participant not in game["lineup"]:
                continue
            seen.add(game["seed"])
            games += 1
            if game["lineup"].index(claim.participant) in game["winners"]:
                wins += 1 / len(game["winners"])
    return wins, games


def rate_text(rate: float, low: float, high: float) -> str:
    """``72.4% [70.2, 74.4]``: a win rate and its interval (fractions) as pages quote them."""
    return f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def example_figures() -> set[str]:
    """The win rates of the kept example runs (``docs/results/examples/*.json``: per run its wins
    and games), as pages quote them."""
    out = set()
    for path in sorted((RESULTS_DIR / "examples").glob("*.json")):
        for run in json.loads(path.read_text())["runs"].values():
            out.add(rate_text(run["wins"] / run["games"], *wilson_interval(run["wins"], run["games"])))
    return out


def league_figures() -> set[str]:
    """The win rates of the kept ``bali league-train`` runs (``docs/results/league/RUN/``: its
    ``league.json`` payoff rows, exploiters' and yardsticks' figures, the ``exploit-*.json`` of
    the best responses trained against its mains and the ``results.json`` of its tournaments,
    ``tournament-*.json``), as pages quote them."""
    out = set()
    for run in sorted((RESULTS_DIR / "league").glob("*/league.json")):
        data = json.loads(run.read_text())
        found = [e for row in data["payoff"].values() for e in row]
        found += [job[key] for job in data["jobs"].values() for key in ("vs_target", "exploitability") if key in job]
        out |= {rate_text(f["win_rate"], f["ci_low"], f["ci_high"]) for f in found}
        out |= {exploit_figure(json.loads(path.read_text())) for path in sorted(run.parent.glob("exploit-*.json"))}
        for path in sorted(run.parent.glob("tournament-*.json")):
            out |= {rate_text(p["wins"] / p["games"], *wilson_interval(p["wins"], p["games"]))
                    for p in json.loads(path.read_text())["participants"]}
    return out


AZ_RUNS = tuple(Path(__file__).resolve().parent.parent / "training" / name  #: the kept ``bali az`` runs
                for name in ("az2p", "az2p-gumbel", "az2p-sims400", "az3p", "az4p-gumbel", "az4p-gumbel4"))


def az_figures() -> set[str]:
    """The win rates the AlphaZero page quotes: the kept tournaments of ``docs/results/az/`` and
    its folders (the first participant's; ``ppo-policy/`` keeps the PPO policy's results from
    before generation 9 was shipped, its best response included), the matches of the kept root
    comparison (``benchmarks.gumbel``), and every gate and curve match of the kept ``bali az``
    runs (``AZ_RUNS``), their first n gates pooled, and their gates against one best pooled (from
    the first against it)."""
    out = _az_result_figures()
    for run in AZ_RUNS:
        out |= _az_run_figures(run)
    return out


def _az_result_figures() -> set[str]:
    """The win rates of ``docs/results/az/`` and its folders: a tournament's first participant,
    an exploitability run's final figure, every match."""
    out = set()
    for path in sorted((RESULTS_DIR / "az").rglob("*.json")):
        doc = json.loads(path.read_text())
        if "participants" in doc:
            p = doc["participants"][0]
            out.add(rate_text(p["win_rate"], *p["win_rate_ci95"]))
        if "final" in doc:
            out.add(exploit_figure(doc))
        for m in doc.get("matches", []):
            out.add(rate_text(m["win_rate"], m["ci_low"], m["ci_high"]))
    return out


def _az_run_figures(run: Path) -> set[str]:
    """The win rates of one kept ``bali az`` run: every gate and curve match, its first n gates
    pooled, and its gates against one best pooled (from the first against it)."""
    out = set()
    for path in [*sorted(run.glob("gate/*.json")), *sorted(run.glob("curve/*.json"))]:
        doc = json.loads(path.read_text())
        for r in doc if isinstance(doc, list) else [doc]:
            out.add(rate_text(r["win_rate"], r["ci_low"], r["ci_high"]))
    gates = [json.loads(path.read_text()) for path in sorted(run.glob("gate/*.json"))]
    wins = games = 0.0
    for doc in gates:  # the gates of generations 1..n pooled, for every n
        wins, games = wins + doc["win_rate"] * doc["games"], games + doc["games"]
        out.add(rate_text(wins / games, *wilson_interval(wins, games)))
    # and the gates against one best pooled, from the first against it to every later one
    rows = list(csv.DictReader((run / "generations.csv").open()))
    opponents = [0] + [int(r["best"]) for r in rows[:-1]]  # the best a generation's gate played
    wins = games = 0.0
    for k, doc in enumerate(gates):
        if k and opponents[k] != opponents[k - 1]:
            wins = games = 0.0
        wins, games = wins + doc["win_rate"] * doc["games"], games + doc["games"]
        out.add(rate_text(wins / games, *wilson_interval(wins, games)))
    return out


def figure(claim: Claim) -> str:
    """``72.4% [70.2, 74.4]``: the claim's win rate and 95% Wilson interval, as pages quote it."""
    wins, games = tally(claim)
    return rate_text(wins / games, *wilson_interval(wins, games))


def command(name: str) -> str:
    """The ``bali tournament`` command of the kept run ``name`` (from its config; the worker count
    is left out: it does not change the results)."""
    c = load(name)["config"]
    flags = "".join(f" --{flag}" for flag in ("oracle", "demon") if c[flag])
    return (f"bali tournament --agents {' '.join(c['agents'])} --players {c['num_players']} "
            f"--games {c['games_requested']} --seed {c['seed']}{flags}")


def fresh_deals(name: str) -> bool:
    """Whether the kept run ``name`` was dealt from ``deal_seed(seed, k)`` (hashed deals, which no
    training, checkpoint choice or tuning has looked at) rather than the earlier ``seed + k``."""
    from bali_env.engine.seeds import deal_seed

    doc = load(name)
    return all(g["seed"] == deal_seed(doc["config"]["seed"], g["game"]) for g in doc["games"])


OLD_DEALS_NOTE = ("† measured before deals were hashed: game k of seed s was dealt from s + k, the deals the "
                  "shipped policies and search settings were chosen on, and runs of seeds s and s + 1 shared all "
                  "but one deal (counted once here); not yet measured again on fresh deals "
                  "(`python -m benchmarks.rerun NAME`).")  #: said under the table when a row has such a run


def headline_table() -> str:
    """The README's table of strength figures, from the claims marked ``headline`` (a row with a
    run on the earlier deals is marked †, explained under the table)."""
    lines = ["| what | result | command (result file) |", "|---|---|---|"]
    old = False
    for claim in CLAIMS:
        if not claim.headline:
            continue
        rate, interval = figure(claim).split(" ", 1)
        games = tally(claim)[1]
        files = "; ".join(f"`{command(name)}` ([{name}](docs/results/{name}.json))" for name in claim.files)
        note = f" {claim.note}" if claim.note else ""
        mark = "" if all(fresh_deals(name) for name in claim.files) else " †"
        old = old or bool(mark)
        lines.append(f"| {claim.label} | `{claim.participant}` wins **{rate}** {interval} of {games:,} games"
                     f"{note}{mark} | {files} |")
    return "\n".join(lines + (["", OLD_DEALS_NOTE] if old else []))


def quoted_figures(text: str) -> list[str]:
    """Every win rate with an interval in a page, outside its history passages, as ``figure``
    writes it (bold marks and line breaks ignored)."""
    text = " ".join(HISTORY.sub("", text).replace("**", "").split())
    return [f"{rate}% [{lo}, {hi}]" for rate, lo, hi in FIGURE.findall(text)]


def _int(v: float) -> str:
    return f"{v:,.0f}"


def speed_rows() -> list[tuple[str, str]]:
    """The README's speed figures from the kept ``bali bench`` and ``benchmarks.throughput`` runs."""
    bench, train = load("bench"), load("throughput")
    aec, vec, roll = bench["aec"], bench["vector"], bench["rollout"]
    c4 = aec["pettingzoo:connect_four_v3"]["steps_per_s"]
    default = next(r for r in train if r["config"] == "default" and r["opponents"] != "random")
    return [
        ("`BaliVectorEnv`, N=1024, both cores", f"**{_int(vec['1024']['steps_per_s'])}** decisions/s"),
        ("rollout kernel, 2 threads", f"**{_int(roll['2_threads']['steps_per_s'])}** decisions/s"),
        ("`bali_v0` AEC env, 4 players", f"{_int(aec['bali_v0']['steps_per_s'])} decisions/s, "
                                         f"{aec['bali_v0']['steps_per_s'] / c4:.1f}x PettingZoo's `connect_four_v3`"),
        ("state", f"{bench['memory']['state_bytes_per_game']:,} bytes per game"),
        ("`bali train` (MaskablePPO, default settings, default opponents)",
         f"{_int(default['env_steps_per_s'])} env steps/s"),
        *picture_rows(bench),
    ]


def picture_rows(bench: dict) -> list[tuple[str, str]]:
    """The speed of the pictures, of the bot protocol and of the search agents, from the kept
    ``bali bench`` run."""
    p, b = bench["pictures"], bench["bots"]
    rgb, html, proto, faults = p["rgb_ms"], p["html_s"], b["protocol"], b["faults"]
    return [
        ("`render_mode=\"rgb_array\"`, 1280 x 720, a 4-player game", f"{rgb['mean']:.1f} ms a frame on average "
         f"(median {rgb['median']:.1f}, 95th percentile {rgb['p95']:.1f}); the SVG {p['svg_ms_per_frame']:.2f} ms"),
        ("HTML replay of a whole 4-player game", f"{html['mean']:.2f} s, {p['html_mb']['mean']:.2f} MB"),
        ("a `cmd:` bot (a first-legal Python bot)",
         f"{_int(proto['cmd_lean']['decisions_per_s'])} decisions/s with lean messages "
         f"({proto['cmd_lean']['protocol_us']:.0f} us a decision for the protocol), "
         f"{_int(proto['cmd_full']['decisions_per_s'])} with full ones"),
        ("a tournament against a bot that hangs once in ten moves",
         f"{faults['games']} games in {faults['seconds']:.1f} s, every game accounted for"),
    ] + [(f"a `{spec}` decision ({', '.join(f'{k}={v:g}' for k, v in r['settings'].items())}), 2 players",
          f"{r['ms_per_decision']:.1f} ms one at a time, {r['ms_per_decision_batched']:.1f} ms in batches of "
          f"{r['batch']}" + (f"; {r['ms_per_decision_busy']:.1f} ms one at a time beside a competing process"
                             if "ms_per_decision_busy" in r else ""))
        for spec, r in bench.get("search", {}).items()]


def speed_table() -> str:
    """The README's speed table (``speed_rows``) with the machine the runs were measured on."""
    m = load("bench")["machine"]
    lines = [f"Measured on {m['cpu']}, {m['cores']} cores, Python {m['versions']['python']}, Numba "
             f"{m['versions']['numba']} (`docs/results/bench.json`, `docs/results/throughput.json`):", "",
             "| what | result |", "|---|---|"]
    return "\n".join(lines + [f"| {what} | {result} |" for what, result in speed_rows()])


def bench_table() -> str:
    """docs/benchmarks.md's table and summary, from the kept ``bali bench`` run."""
    bench = load("bench")
    aec, vec, roll, mem, start = bench["aec"], bench["vector"], bench["rollout"], bench["memory"], bench["startup"]
    c4 = aec["pettingzoo:connect_four_v3"]["steps_per_s"]
    m = bench["machine"]
    lines = [f"Measured on {m['cpu']}, {m['cores']} cores, Python {m['versions']['python']}, Numba "
             f"{m['versions']['numba']}, {bench['seconds_per_measurement']:g} s a row "
             "([`bench.json`](results/bench.json)):", "",
             "| what (same run, after JIT warm-up) | decisions/s | games/s | vs connect_four_v3 |",
             "|---|---:|---:|---:|"]
    names = {"bali_v0": "`bali_v0` AEC env, 4 players, random masked actions",
             "bali_v0+oracle+demon": "`bali_v0` AEC env, 4 players, oracle + demon",
             "pettingzoo:connect_four_v3": "PettingZoo `connect_four_v3` (same loop)",
             "pettingzoo:texas_holdem_v4": "PettingZoo `texas_holdem_v4` (same loop)",
             "open_spiel:hearts": "OpenSpiel `hearts` (information-state tensor each decision)",
             "open_spiel:crazy_eights": "OpenSpiel `crazy_eights` (observation tensor each decision)"}
    for key, label in names.items():
        row = aec.get(key, {})
        if "steps_per_s" not in row:
            lines.append(f"| {label} | not measured ({row.get('skipped', 'absent')}) | | |")
            continue
        ratio = f"{row['steps_per_s'] / c4:.1f}x" if key.startswith("bali") else ("1x" if "connect_four" in key else "")
        lines.append(f"| {label} | {_int(row['steps_per_s'])} | {_int(row['games_per_s'])} | {ratio} |")
    for n, row in vec.items():
        lines.append(f"| `BaliVectorEnv` N={n} | {_int(row['steps_per_s'])} | {_int(row['games_per_s'])} | "
                     f"{row['steps_per_s'] / c4:.0f}x |")
    for row in roll.values():
        lines.append(f"| rollout kernel, {row['threads']} thread{'s' if row['threads'] > 1 else ''} | "
                     f"{_int(row['steps_per_s'])} | {_int(row['games_per_s'])} | |")
    lines += ["", f"State: **{mem['state_bytes_per_game']:,} bytes per game**; the N={mem['largest_batch']} batch's "
              f"buffers take {mem['largest_batch_buffer_bytes'] / 2**20:.1f} MiB; the benchmark process peaked at "
              f"{mem['peak_rss_bytes'] / 2**20:.0f} MiB RSS. Start-up, from `import bali_env` to the first step in a "
              f"fresh process: **{start['first_step_cold_s']:.1f} s cold** (Numba compiles the kernels into its "
              f"on-disk cache), **{start['first_step_cached_s']:.2f} s cached**; a whole first tournament (20 games "
              f"greedy vs random, 2 workers, files written): {start['tournament_cold_s']:.1f} s cold (played "
              f"interpreted), {start['tournament_cached_s']:.1f} s cached; compiling its kernels in one process: "
              f"{start['compile_one_process_s']:.1f} s."]
    lines += ["", "| pictures, bots and search | result |", "|---|---|"]
    lines += [f"| {what} | {result} |" for what, result in picture_rows(bench)]
    if "search_note" in bench:
        note = re.sub(r" on \d{4}-\d{2}-\d{2}", "", bench["search_note"])  # the date stays in bench.json
        for then, now in MOVED_MODULES.items():  # the note names a module as it was; the page as it is
            note = note.replace(then, now)
        lines += ["", f"(The search rows: {note}.)"]
    return "\n".join(lines)


def throughput_table() -> str:
    """docs/training.md's table of training speed, from the kept ``benchmarks.throughput`` run."""
    rows = load("throughput")
    labels = {"default": "default: MaskablePPO, 512 games, 128x128 ReLU, `greedy-v1` features, n-steps 64, "
                         "minibatch 2048, 2 epochs, 2 threads",
              "lean": "the same with `--trainer lean`",
              "lean-obs": "`--trainer lean --features none` (the observation alone)",
              "previous": "previous: MaskablePPO, 64 games, 256x256 tanh, no features, n-steps 128, minibatch "
                          "2048, 4 epochs, 1 thread"}
    speed = {(r["config"], r["opponents"] == "random"): r["env_steps_per_s"] for r in rows}
    lines = ["| configuration | vs the default mix (self-play included) | vs random |", "|---|---:|---:|"]
    lines += [f"| {label} | {_int(speed[(key, False)])} | {_int(speed[(key, True)])} |"
              for key, label in labels.items()]
    return "\n".join(lines + ["", f"({rows[0]['steps']:,} timed env steps a row, "
                                   "[`throughput.json`](results/throughput.json).)"])


def league_table() -> str:
    """The README's league table (``docs/results/league/league.json``, the kept ``bali league``
    run): ratings, then each agent's 2-player win rate against each other, % with intervals."""
    league = json.loads((RESULTS_DIR / "league" / "league.json").read_text())
    names, ratings, matrix = league["participants"], league["ratings"], league["pairwise"]
    order = sorted(range(len(names)), key=lambda p: -ratings[p]["elo"])
    head = "| | rating (all games) | " + " | ".join(f"vs `{names[q]}`" for q in order) + " |"
    lines = [head, "|---|---|" + "---|" * len(order)]
    for p in order:
        cells = []
        for q in order:
            c = matrix[p][q]
            cells.append("" if c is None else
                         f"{100 * c['win_rate']:.0f}% [{100 * c['ci95'][0]:.0f}, {100 * c['ci95'][1]:.0f}]")
        lines.append(f"| `{names[p]}` | {ratings[p]['elo']:+.0f} ±{ratings[p]['ci95']:.0f} | " + " | ".join(cells)
                     + " |")
    c = league["config"]
    left_out = ", ".join(c.get("skipped", {})) or "none"
    note = (f"`bali league --agents {' '.join(c['agents'])} --games {c['games']} --seed {c['seed']}`: {c['games']} "
            f"games per part ({', '.join(c['parts'])}; left out: {left_out}); the 2-player win rate of the row "
            "against the column with its 95% interval; ratings: Plackett-Luce fit of every game of the league "
            "(Elo scale, mean 0) ± 95%.")
    return "\n".join(lines) + "\n\n" + note


#: the kept runs of the README's exploitability table, in its order (``docs/results/exploit/NAME.json``:
#: the agent's name, ``-4p`` for a run in 4 players)
EXPLOITED = ("random", "greedy", "mcts", "ppo", "ppo-4p")


def exploit_runs() -> list[dict]:
    """The kept ``bali exploit`` runs (``docs/results/exploit/NAME.json``), in ``EXPLOITED`` order."""
    folder = RESULTS_DIR / "exploit"
    return [json.loads((folder / f"{name}.json").read_text()) for name in EXPLOITED
            if (folder / f"{name}.json").is_file()]


def exploit_figure(run: dict) -> str:
    """A best response's final win rate as pages quote it (``figure``'s format)."""
    f = run["final"]
    return rate_text(f["win_rate"], f["ci_low"], f["ci_high"])


def exploit_budget(run: dict) -> str:
    """A best response's budget as its command gave it: ``--minutes M`` or ``--steps N``."""
    return f"--minutes {run['minutes']:g}" if run.get("steps") is None else f"--steps {run['steps']:.0f}"


def exploit_table() -> str:
    """The README's exploitability table: per agent, the best response's final win rate."""
    lines = ["| agent | a fresh learner's win rate against it after the budget | env steps | command |",
             "|---|---|---:|---|"]
    for run in exploit_runs():
        rate, interval = exploit_figure(run).split(" ", 1)
        f = run["final"]
        lines.append(f"| `{run['agent']}` | **{rate}** {interval} of {f['games']:,} games "
                     f"(equal share {100 / run['players']:.0f}%) | {f['env_steps']:,} | `bali exploit {run['agent']} "
                     f"--players {run['players']} {exploit_budget(run)} --seed {run['seed']}` |")
    return "\n".join(lines)


#: every way into the game, for docs/environment.md: (``bali_env.speed.ways`` key, the way, its
#: construction, its conventions, the ecosystem's own checks it passes in tests/test_ecosystem.py)
WAY_ROWS = [
    ("pettingzoo_aec", "PettingZoo AEC", "`import bali_env`; `bali_env.env(num_players=2)`",
     "every seat a player; reward at the end (+1 each winner, -1 the others); `action_mask` in each "
     "observation (`observation=\"flat\"`: a `Box`, the mask in `infos`); an illegal move ends the game, -1 for "
     "the mover (`raw_env`: raises)",
     "`api_test`, `seed_test`, `render_test`; SuperSuit (below)"),
    ("gymnasium", "Gymnasium", '`import gymnasium, bali_env`; `gymnasium.make("bali_env/Bali-v0", opponents="random")`',
     "the learner's seat against bots; reward at the end; `info[\"action_mask\"]`, `action_masks()`; an "
     "illegal move ends the episode with -1; `terminated` at the end, never truncated",
     "Gymnasium's and SB3's `check_env`, every render mode"),
    ("gymnasium_vector_random", "Gymnasium vector",
     '`import gymnasium, bali_env`; `gymnasium.make_vec("bali_env/Bali-v0", num_envs=256)`',
     "the batched engine, opponents inside the batch; `NEXT_STEP` autoreset (or `SAME_STEP`: "
     "`infos[\"final_obs\"]`); `infos[\"action_mask\"]`, never empty; an illegal move ends that game with -1",
     "Gymnasium's vector wrappers; a CleanRL-style masked loop"),
    ("sb3_vec_env", "SB3 VecEnv", '`from bali_env.versus.sb3_vecenv import BaliSB3VecEnv` (the `train` extra); '
     '`BaliSB3VecEnv(256, "random")`',
     "SB3's convention: the next game at once, `terminal_observation` in the info; `env_method(\"action_masks\")`",
     "`VecMonitor`; MaskablePPO trains on it"),
    ("pufferlib", "PufferLib", '`from bali_env.versus.puffer_env import BaliPufferEnv` (the `pufferlib` extra); '
     '`BaliPufferEnv(256, "random")`',
     "a native `PufferEnv`: PufferLib's buffers written in place, the next game at once; the 44 mask flags "
     "after the 293 observation floats; an illegal move ends that game with -1",
     "`pufferlib.vector` (Serial, Multiprocessing); PuffeRL trains on it"),
    ("batched", "pgx-style batch", "`from bali_env import BaliVectorEnv`; `BaliVectorEnv(1024, num_players=2)`",
     "every seat: `to_move`, per-player `rewards`; same-step autoreset; `action_masks`; an illegal action "
     "raises; `num_actions`, `observation_shape`",
     "the project's API checker"),
    ("openspiel", "OpenSpiel", '`import pyspiel, bali_env.envs.openspiel` (the `openspiel` extra); '
     '`pyspiel.load_game("python_bali", {"players": 2})`',
     "explicit chance nodes; `returns()` at the end; `legal_actions()`; `resample_from_infostate`; serialization",
     "`random_sim_test` with serialization; `evaluate_bots`, outcome-sampling MCCFR, ISMCTS, RL environment"),
]


def ways_table() -> str:
    """docs/environment.md's table of every way in, with the kept ``bali_env.speed.ways`` run."""
    run = load("ways")
    ways = run["ways"]
    lines = [f"Speed: {run['players']}-player games, uniform random legal actions, "
             f"`python -m bali_env.speed.ways` (`docs/results/ways.json`; vector envs {run['vector_envs']} games).", "",
             "| way in | construction | conventions | checked with | speed |", "|---|---|---|---|---:|"]
    for key, way, construction, conventions, checks in WAY_ROWS:
        r = ways.get(key, {})
        speed = f"{_int(r['per_s'])} {r['unit']}" if "per_s" in r else "-"
        lines.append(f"| {way} | {construction} | {conventions} | {checks} | {speed} |")
    extra = [f"{_int(ways[k]['per_s'])} with {k.rsplit('_', 1)[1]}" for k in ways
             if k.startswith("gymnasium_vector_") and "per_s" in ways[k]]
    lines += ["", "The Gymnasium vector env's learner steps per second by opponents: " + ", ".join(extra) + ". A "
              "learner step is one learner decision and the opponents' up to its next (about two decisions in 2 "
              "players); `bali bench` measures them too."]
    return "\n".join(lines)


def busy_table() -> str:
    """docs/benchmarks.md's table of a search decision quiet and beside a competing process, both
    timed in one run (``python -m bali_env.speed.search --out docs/results/search-busy.json``)."""
    run = load("search-busy")
    lines = ["Measured by `python -m bali_env.speed.search --out docs/results/search-busy.json` "
             "(`docs/results/search-busy.json`), quiet and busy in the same run, milliseconds a decision one at "
             "a time in 2 players:", "", "| agent | quiet | beside a competing process | busy / quiet |",
             "|---|---|---|---:|"]
    for spec, r in run["search"].items():
        quiet, busy = r["ms_per_decision"], r["ms_per_decision_busy"]
        lines.append(f"| `{spec}` | {quiet:.1f} ms | {busy:.1f} ms | {busy / quiet:.2f} |")
    return "\n".join(lines)


#: the generated blocks: (page, marker name) -> what writes it
#: modules a kept result's note names that have moved since: then -> now
MOVED_MODULES = {"bali_env.bench.": "bali_env.speed."}

BLOCKS = {
    ("README.md", "exploit"): lambda: exploit_table(),
    ("README.md", "league"): lambda: league_table(),
    ("README.md", "headline"): lambda: headline_table(),
    ("README.md", "speed"): lambda: speed_table(),
    ("docs/benchmarks.md", "bench"): lambda: bench_table(),
    ("docs/benchmarks.md", "busy"): lambda: busy_table(),
    ("docs/training.md", "throughput"): lambda: throughput_table(),
    ("docs/environment.md", "ways"): lambda: ways_table(),
}


def block(text: str, name: str) -> str:
    """The generated part of a page between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in text or end not in text:
        raise ValueError(f"the page lacks the {start} ... {end} markers")
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def stale_blocks() -> list[str]:
    """The generated blocks whose page does not hold what the result files give."""
    return [f"{page} ({name})" for (page, name), make in BLOCKS.items()
            if block((ROOT / page).read_text(), name) != make()]


def write_blocks() -> None:
    """Write every generated block into its page."""
    from bali_env.files import write_text

    for (page, name), make in BLOCKS.items():
        text = (ROOT / page).read_text()
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        before, rest = text.split(start, 1)
        write_text(ROOT / page, before + start + "\n" + make() + "\n" + end + rest.split(end, 1)[1])


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.figures [--write | --check]``: print the generated blocks, write
    them into their pages, or exit 1 when a page's block is not what the result files give."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.figures", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write the blocks into their pages")
    group.add_argument("--check", action="store_true", help="exit 1 when a page's block is not up to date")
    args = parser.parse_args(argv)
    if args.write:
        write_blocks()
    elif args.check:
        stale = stale_blocks()
        print("stale: " + ", ".join(stale) + " (python -m benchmarks.figures --write)" if stale
              else "every generated block is up to date", file=sys.stderr)
        return 1 if stale else 0
    else:
        for (page, name), make in BLOCKS.items():
            print(f"{page} ({name}):\n{make()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
