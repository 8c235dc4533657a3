"""``bali bench`` shows what it measured: one table row per measurement, in steps/s and games/s,
each figure equal to the counts and seconds recorded in bench.json; the chart's title and series
match the rows that ran ("vs anchors" only when an anchor was measured); the table fits the
terminal; a bad option stops it before anything is measured or created. No timing assertion."""

from __future__ import annotations

import json
import struct

import pytest

from bali_env.apps.cli import main as cli_main
from bali_env.speed.run import _table, bench_figure

AEC_ROWS = ["bali_v0", "bali_v0+oracle+demon", "pettingzoo:connect_four_v3", "pettingzoo:texas_holdem_v4",
            "open_spiel:hearts", "open_spiel:crazy_eights"]  #: the AEC loops bali bench runs, in table order


def _row_cells(table: list[str], label: str) -> list[str]:
    """The cells after ``label`` on its table row (steps/s, games/s, then the note's words)."""
    [line] = [line for line in table if line.startswith(label + " ")]
    return line[len(label):].split()


def _chart(results: dict) -> tuple[str, list[str]]:
    """The chart's title and its series, as a reader of bench.png sees them."""
    import matplotlib.pyplot as plt

    fig = bench_figure(results)
    ax = fig.axes[0]
    title, labels = ax.get_title(), [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(fig)
    return title, labels


@pytest.mark.slow
def test_bench_prints_and_draws_what_it_measured(tmp_path, capsys, monkeypatch):
    """`bali bench --quick`: the printed rows are the measurements of bench.json, each steps/s and
    games/s its counts divided by its seconds; the chart's series are the rows that ran."""
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("COLUMNS", "90")  # the width the table must fit
    out_dir = tmp_path / "new" / "bench"
    assert cli_main(["bench", "--quick", "--no-startup", "--seconds", "0.05", "--out", str(out_dir)]) == 0
    data = json.loads((out_dir / "bench.json").read_text())
    printed = capsys.readouterr().out
    table = printed[printed.index("\nenvironment") + 1: printed.index("\nwrote")].strip().splitlines()
    assert max(len(line) for line in table) <= 90
    assert table[0].split() == ["environment", "steps/s", "games/s", "note"]  # the units

    assert list(data["aec"]) == AEC_ROWS
    assert list(data["vector"]) == ["1", "8", "64"]
    assert data["seconds_per_measurement"] == 0.05
    measured = [(name, data["aec"][name]) for name in AEC_ROWS]
    measured += [(f"BaliVectorEnv N={n}", data["vector"][n]) for n in ("1", "8", "64")]
    measured += [(f"rollout kernel, {r['threads']} thread(s)", r) for r in data["rollout"].values()]
    labels = [line.split("  ")[0] for line in table[1:] if not line.startswith(" ")]  # not the notes below rows
    assert labels[:len(measured)] == [name for name, _ in measured]
    for name, r in measured:
        cells = _row_cells(table, name)
        if "skipped" in r:  # the reason follows on the row, or below it when it does not fit
            assert cells[:2] == ["-", "-"], name
            at = next(i for i, line in enumerate(table) if line.startswith(name + " "))
            assert ("skipped: " + r["skipped"])[:40] in " ".join(table[at: at + 2]), name
            continue
        assert r["steps"] > 0 and r["seconds"] > 0, name
        assert cells[0] == f"{r['steps'] / r['seconds']:,.0f}", name  # steps/s = steps / seconds
        assert cells[1] == f"{r['games'] / r['seconds']:,.1f}", name
    assert data["aec"]["bali_v0"]["games"] >= 1
    state_bytes = data["memory"]["state_bytes_per_game"]
    assert f"memory: {state_bytes} bytes of state per game" in printed
    flat, pictures = " ".join(printed.split()), data["pictures"]  # the pictures' lines, wrapped to fit
    assert f"SVG {pictures['svg_ms_per_frame']:.2f} ms per frame" in flat
    assert f"HTML replay of a 4-player game: {pictures['html_s']['mean']:.2f} s" in flat
    assert f"{pictures['html_mb']['mean']:.2f} MB" in flat
    bots = data["bots"]
    assert f"as a process {bots['protocol']['cmd_full']['decisions_per_s']:,.0f}/s with full messages" in flat
    assert bots["faults"]["every_game_once"] and bots["faults"]["records"] == bots["faults"]["games"] == 10
    assert f"{bots['faults']['records']} records, every game once: True" in flat
    if "rgb_ms" in pictures:
        assert f"rgb_array 1280x720: mean {pictures['rgb_ms']['mean']:.1f} ms" in flat
        assert pictures["rgb_ms"]["shape"] == [720, 1280, 3]
    search = data["search"]
    assert list(search) == ["mcts", "ppo+search"] and search["ppo+search"]["settings"]["sims"] == 800
    for spec, r in search.items():
        assert r["ms_per_decision"] > 0 and r["batch"] == 64 and r["ms_per_decision_busy"] > 0
        assert f"{r['ms_per_decision_busy']:.1f} ms one at a time beside a competing process" in flat
        assert f"{spec} (" in flat and f"{r['ms_per_decision']:.1f} ms a decision one at a time" in flat

    png = (out_dir / "bench.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (935, 605)  # 8.5 x 5.5 in
    title, series = _chart(data)
    ran = [name for name in AEC_ROWS if "steps_per_s" in data["aec"][name]]
    assert series == ["BaliVectorEnv (obs every step, all cores)",
                      *(f"rollout kernel, {r['threads']} thread(s)" for r in data["rollout"].values()),
                      *(f"AEC: {name}" for name in ran)]
    assert ("vs anchors" in title) == any(not name.startswith("bali") for name in ran)


def _results(anchors: bool) -> dict:
    """The results of a small run: two bali AEC rows, connect_four measured or skipped, one batch size."""
    row = {"steps_per_s": 1000.0, "games_per_s": 10.0, "steps": 2000, "games": 20, "seconds": 2.0}
    skipped = {"skipped": "ModuleNotFoundError: No module named 'rlcard' " + "(a long explanation) " * 8}
    return {
        "machine": {"cores": 2},
        "aec": {"bali_v0": row, "bali_v0+oracle+demon": row,
                "pettingzoo:connect_four_v3": dict(row, steps_per_s=250.0) if anchors else skipped,
                "open_spiel:hearts": skipped},
        "vector": {"64": dict(row, steps_per_s=64000.0)},
        "rollout": {"1_threads": dict(row, threads=1)},
    }


@pytest.mark.parametrize("anchors", [True, False])
def test_chart_says_vs_anchors_only_when_an_anchor_ran(anchors):
    """The title names the anchors only when one was measured; skipped ones are not drawn."""
    pytest.importorskip("matplotlib")
    title, series = _chart(_results(anchors))
    assert ("vs anchors" in title) is anchors
    assert ("AEC: pettingzoo:connect_four_v3" in series) is anchors
    assert "AEC: open_spiel:hearts" not in series and "AEC: bali_v0" in series


@pytest.mark.parametrize("width", [60, 100])
def test_table_fits_the_width_and_compares_with_the_anchor(width):
    """Every line fits (a note that does not fit its row goes below it); a bali row says how it
    compares with connect_four_v3 when that ran, and a skipped anchor says why."""
    with_anchor = _table(_results(True), width).splitlines()
    assert max(len(line) for line in with_anchor) <= width
    assert _row_cells(with_anchor, "bali_v0")[:2] == ["1,000", "10.0"]
    assert _row_cells(with_anchor, "BaliVectorEnv N=64")[:2] == ["64,000", "10.0"]
    notes = [line.split() for line in with_anchor if "x connect_four_v3" in line]
    assert [words[-2] for words in notes] == ["4.0x", "4.0x", "256x"]  # bali_v0 (both), N=64
    without = _table(_results(False), width).splitlines()
    assert max(len(line) for line in without) <= width
    assert _row_cells(without, "bali_v0") == ["1,000", "10.0"]
    assert not any("connect_four_v3" in line for line in without if not line.startswith("pettingzoo:"))
    skipped = "\n".join(without)
    assert skipped.count("skipped: ModuleNotFoundError") == 2


@pytest.mark.parametrize(("argv", "says"), [
    (["--seconds", "0"], "--seconds"),
    (["--seconds", "nan"], "--seconds"),
    (["--seconds", "-1"], "--seconds"),
    (["--out", "FILE"], "is a file"),
    (["--out", "FILE/sub"], "is not a folder"),
])
def test_bad_options_stop_before_anything_is_measured_or_created(tmp_path, capsys, argv, says):
    """Exit code 2 naming the option; nothing printed to stdout, no folder created."""
    (tmp_path / "FILE").write_text("x")
    argv = [str(tmp_path / a) if a.startswith("FILE") else a for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "out")]
    with pytest.raises(SystemExit) as exc:
        cli_main(["bench", *argv])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and says in captured.err.splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


@pytest.mark.parametrize(("argv", "says"), [
    (["--players", "1"], "--players"),
    (["--players", "5"], "--players"),
    (["--decisions", "0"], "--decisions"),
])
def test_search_bench_refuses_bad_options_before_timing(capsys, argv, says):
    """``python -m bali_env.speed.search``: exit code 2 naming the option, nothing timed or printed."""
    from bali_env.speed import search

    with pytest.raises(SystemExit) as exc:
        search.main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and says in captured.err.splitlines()[-1]


def test_search_bench_lines_name_the_player_count_and_keep_the_goal_for_two():
    """The 20 ms goal is the 2-player one: a 4-player line gives its players and no goal; results
    written before ``--players`` read as 2-player ones."""
    from bali_env.speed.search import summary

    row = {"settings": {"sims": 800}, "ms_per_decision": 31.25, "ms_per_decision_batched": 4.5, "batch": 64}
    four, old = summary({"ppo+search": {**row, "players": 4}}), summary({"ppo+search": row})
    assert four == ["ppo+search (sims=800, 4 players): 31.2 ms a decision one at a time, 4.5 ms in batches of 64"]
    assert old == ["ppo+search (sims=800, 2 players): 31.2 ms a decision one at a time (goal: at most 20 ms), "
                   "4.5 ms in batches of 64"]


def test_search_bench_out_keeps_quiet_and_busy_figures_of_one_run(tmp_path, monkeypatch, capsys):
    """``--out FILE`` writes what was printed, with the date and the machine, and the docs' busy
    table reads a file of that shape (busy / quiet from the same run)."""
    import datetime

    from bali_env.speed import search

    row = {"players": 2, "settings": {"sims": 800}, "ms_per_decision": 40.0, "ms_per_decision_batched": 20.0,
           "ms_per_decision_busy": 50.0, "decisions": 1, "batch": 64}
    monkeypatch.setattr(search, "bench_search", lambda decisions, players: {"ppo+search": row})
    out = tmp_path / "kept" / "search-busy.json"
    assert search.main(["--decisions", "1", "--out", str(out)]) == {"ppo+search": row}
    kept = json.loads(out.read_text())
    assert kept["date"] == datetime.date.today().isoformat() and kept["machine"]["cores"] >= 1
    assert kept["search"] == {"ppo+search": row}
    assert f"wrote {out}" in capsys.readouterr().out

    from benchmarks import figures

    monkeypatch.setattr(figures, "load", lambda name: kept)
    assert "| `ppo+search` | 40.0 ms | 50.0 ms | 1.25 |" in figures.busy_table().splitlines()
