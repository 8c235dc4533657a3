"""Golden playthroughs (OpenSpiel style): checked-in games replayed step by step must give the
very same seat to move, legal actions, observations (every seat's, by hash; the mover's in full),
actions and final rewards. Any unintended rule or encoding change fails here loudly; after an
intended one, regenerate with ``python tests/golden/generate.py`` and say why in the commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bali_env.records import playthrough, validate_record

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.json"))


def test_there_are_golden_files_for_every_player_count_and_variant():
    """At least one file per player count, and the variants are covered."""
    records = [json.loads(p.read_text()) for p in GOLDEN]
    assert {r["num_players"] for r in records} == {2, 3, 4}
    assert {(r["variants"]["oracle"], r["variants"]["demon"]) for r in records} == {
        (False, False), (True, True), (True, False), (False, True)}


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_playthrough_replays_exactly(path):
    """The record replays to its scores, and every step of its playthrough is unchanged."""
    record = json.loads(path.read_text())
    validate_record(record)
    expected = record["playthrough"]
    actual = playthrough(record)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a == e, f"{path.name}: step {i} differs (first differing keys: {[k for k in e if a.get(k) != e[k]]})"
