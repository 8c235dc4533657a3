"""Quoted figures cannot go stale: every win rate with an interval in the README, the docs and
training/README.md is what the kept result files (docs/results/) give, and the README's headline
table is the one ``benchmarks.figures`` writes from them (``benchmarks/figures.py`` says how)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import figures

ROOT = Path(__file__).resolve().parent.parent
# the README, the user pages, the research notes (docs/research/) and the training recipes
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "research").glob("*.md")),
         ROOT / "training" / "README.md"]


def test_the_generated_tables_are_written_from_the_result_files():
    """python -m benchmarks.figures --check: the README's strength and speed tables and the speed
    tables of docs/benchmarks.md and docs/training.md equal the ones the result files give."""
    assert figures.stale_blocks() == [], "stale tables: python -m benchmarks.figures --write"
    assert figures.main(["--check"]) == 0


def test_a_changed_table_is_found_stale(tmp_path, monkeypatch):
    """The block check itself: a page whose generated table differs by one figure is stale."""
    page = tmp_path / "README.md"
    text = (ROOT / "README.md").read_text()
    start = text.index("<!-- speed:start -->")
    digit = next(i for i in range(start, len(text)) if text[i].isdigit() and text[i] != "9")
    page.write_text(text[:digit] + str(int(text[digit]) + 1) + text[digit + 1:])
    for other in {page for page, _ in figures.BLOCKS} - {"README.md"}:
        (tmp_path / other).parent.mkdir(exist_ok=True)
        (tmp_path / other).write_text((ROOT / other).read_text())
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    assert figures.stale_blocks() == ["README.md (speed)"]


def test_the_research_notes_are_checked():
    """The figure check reads the research notes too: the AlphaZero and training-history records."""
    names = {str(page.relative_to(ROOT)) for page in PAGES}
    assert {"docs/research/alphazero.md", "docs/research/training-history.md", "docs/training.md"} <= names


@pytest.fixture(scope="module")
def known_figures() -> set:
    """Every win rate a kept result file gives (read once for all the pages)."""
    known = {figures.figure(claim) for claim in figures.CLAIMS}
    known |= {figures.exploit_figure(run) for run in figures.exploit_runs()}  # the kept best responses
    known |= figures.example_figures()  # the kept runs of the examples
    known |= figures.az_figures()  # the kept bali az runs and their tournaments
    known |= figures.league_figures()  # the kept bali league-train runs and their best responses
    return known


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_quoted_win_rate_comes_from_a_result_file(page, known_figures):
    """A win rate with its interval outside a history passage must be one that a claim's files
    give (so a rerun with other results, or a typo, fails here)."""
    known = known_figures
    stale = [f for f in figures.quoted_figures(page.read_text()) if f not in known]
    assert not stale, f"{page.name} quotes figures no result file gives: {stale}"


def test_every_claim_reads_a_kept_tournament_of_its_participant():
    """Each claim's files exist, are bali tournament results with the participant in every
    game's lineup, and their counts are what the files' games say, each deal counted once."""
    for claim in figures.CLAIMS:
        wins = games = 0
        deals = set()
        for name in claim.files:
            doc = figures.load(name)
            assert doc["config"]["games"] == len(doc["games"])
            for game in doc["games"]:
                seats = [s for s, who in enumerate(game["lineup"]) if who == claim.participant]
                assert len(seats) == 1
                if game["seed"] in deals:
                    continue
                deals.add(game["seed"])
                games += 1
                if seats[0] in game["winners"]:
                    wins += 1 / len(game["winners"])
        assert figures.tally(claim) == (pytest.approx(wins), games)


def test_the_check_catches_a_changed_figure():
    """The page check itself: a figure one tenth off is reported; history passages are not read."""
    claim = figures.CLAIMS[0]
    rate, rest = figures.figure(claim).split("%", 1)
    wrong = f"{float(rate) + 0.1:.1f}%{rest}"
    known = {figures.figure(c) for c in figures.CLAIMS}
    assert figures.quoted_figures(f"wins **{wrong}** of games") == [wrong] and wrong not in known
    assert figures.quoted_figures(f"<!-- history -->\nwins {wrong}\n<!-- /history -->") == []


def test_the_league_table_comes_from_its_parts():
    """docs/results/league/league.json (the README's league table) is what its kept parts give:
    the matrix and the ratings recomputed from every part's results.json."""
    import json
    from types import SimpleNamespace

    from bali_env.arena.league import league_result

    folder = ROOT / "docs" / "results" / "league"
    league = json.loads((folder / "league.json").read_text())
    names = league["participants"]
    parts = {}
    for part, info in league["config"]["parts"].items():
        doc = json.loads((folder / part / "results.json").read_text())
        who = [names.index(name) for name in info["participants"]]
        parts[part] = (who, SimpleNamespace(config=doc["config"], games=doc["games"]))
    again = league_result(league["config"], names, parts)
    assert json.loads(json.dumps(again.matrix)) == league["pairwise"]
    assert json.loads(json.dumps(again.ratings)) == league["ratings"]


def test_a_pooled_figure_counts_each_deal_once(tmp_path, monkeypatch):
    """Two runs whose deals overlap (as seeds s and s + 1 did before deals were hashed) pool to the
    distinct deals only: the second run's game on a deal already counted is left out."""
    import json

    def run(name, seeds, winners):
        games = [{"game": k, "seed": s, "lineup": ["a", "b"] if k % 2 == 0 else ["b", "a"], "winners": w}
                 for k, (s, w) in enumerate(zip(seeds, winners, strict=True))]
        doc = {"config": {}, "participants": [{"name": "a", "wins": 0, "games": len(games)}], "games": games}
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))

    run("one", [1, 2, 3, 4], [[0], [0], [1], [0, 1]])  # a wins: game 0 (seat 0), game 1 (a in seat 1: no), ...
    run("two", [2, 3, 4, 5], [[1], [1], [1], [1]])  # only deal 5 is new: a sits in seat 1 and wins
    monkeypatch.setattr(figures, "RESULTS_DIR", tmp_path)
    wins, games = figures.tally(figures.Claim("a", ("one", "two"), "a"))
    assert games == 5
    assert wins == 1 + 0 + 0 + 0.5 + 1  # deal 1: won; 2: b won (seat 0); 3: b won (seat 0); 4: shared; 5: won


def test_kept_deals_and_training_evaluation_deals_are_disjoint():
    """The kept tournaments of docs/results/ deal from deal_seed(seed, k); bali train's evaluation
    plays tournaments with seeds 10,000-10,996 (training/evaluate.py): no deal is shared, and no
    two kept runs of one match share a deal."""
    import json

    from bali_env.arena import deal_seed
    from bali_env.trainers.evaluation.evaluate import EVAL_SEEDS

    kept: dict[str, set[int]] = {}
    fresh: dict[str, set[int]] = {}  # the runs dealt from deal_seed (the others: seed + k, before hashing)
    for path in sorted(figures.RESULTS_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        if "games" in doc and "participants" in doc and "seed" in doc.get("config", {}):
            kept[path.stem] = {g["seed"] for g in doc["games"]}
            if [g["seed"] for g in doc["games"]] == [deal_seed(doc["config"]["seed"], g["game"]) for g in doc["games"]]:
                fresh[path.stem] = kept[path.stem]
    assert len(kept) >= 20
    assert fresh, "no kept run on hashed deals"
    evaluation = {deal_seed(s, k) for s in EVAL_SEEDS for k in range(200)}
    for name, seeds in fresh.items():
        assert not seeds & evaluation, name
    for claim in figures.CLAIMS:
        if all(name in fresh for name in claim.files):
            assert figures.tally(claim)[1] == sum(len(fresh[name]) for name in claim.files), claim.label
