"""The one game session of a human at a table with bots (``bali_env.apps.session``), which the
terminal game and the web app both drive: set-up checks, whose turn, refused moves, a failing
bot, and the bots told when the game ends."""

from __future__ import annotations

import pytest

from bali_env.bots import register_agent
from bali_env.bots.random_agent import RandomAgent
from bali_env.apps.session import SessionError, SetupError, TableSession, opponent_seats

CALLS: list[tuple[str, int]] = []


class _Recorder(RandomAgent):
    """A random bot that records the hooks it is called with."""

    def begin_game(self, game: dict) -> None:
        CALLS.append(("begin", game["seat"]))

    def end_game(self, result: dict) -> None:
        CALLS.append(("end", len(result["final_scores"] or [])))


class _Breaks(RandomAgent):
    """A bot whose third decision raises."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.decisions = 0

    def act(self, observation, action_mask):  # noqa: D102 - the test bot
        self.decisions += 1
        if self.decisions == 3:
            raise RuntimeError("out of ideas")
        return super().act(observation, action_mask)


register_agent("test-recorder", _Recorder)
register_agent("test-breaks", _Breaks)


def _play_out(table: TableSession) -> None:
    while table.status == "playing":
        if table.your_turn():
            table.human_move(table.legal()[0])
        else:
            table.bot_move()


def test_a_whole_game_tells_the_bots_it_begins_and_ends():
    CALLS.clear()
    table = TableSession(3, 1, ["test-recorder", "random"], seed=4)
    assert table.labels == ["player_0 (test-recorder)", "player_1 (you)", "player_2 (random)"]
    assert table.agents == ["test-recorder", "human", "random"]
    _play_out(table)
    assert table.status == "over" and table.to_move() is None and table.legal() == []
    assert CALLS == [("begin", 0), ("end", 3)]
    record = table.record()
    assert record["final_scores"] is not None and record["agents"] == table.agents
    assert "Winner" in table.final_scoring() or "Tie at" in table.final_scoring()
    assert table.frame.step == len(record["actions"])


@pytest.mark.parametrize("kwargs, says", [
    ({"num_players": 5}, "num_players must be 2..4"),
    ({"seat": 2}, "seat must be 0..1"),
    ({"seed": -1}, "seed must be an int >= 0"),
    ({"opponents": []}, "at least one opponent"),
    ({"opponents": ["nosuchbot"]}, "opponent 'nosuchbot': unknown agent"),
    ({"opponents": ["mcts:sims=0"]}, "opponent 'mcts:sims=0'"),
])
def test_a_bad_setup_is_refused(kwargs, says):
    args = {"num_players": 2, "seat": 0, "opponents": ["random"], "seed": 1} | kwargs
    with pytest.raises(SetupError, match=says):
        TableSession(**args)


def test_moves_out_of_turn_or_illegal_are_refused_and_change_nothing():
    table = TableSession(2, 0, ["random"], seed=3)
    assert table.your_turn()
    legal = table.legal()
    illegal = next(a for a in range(44) if a not in legal)
    for action, status in ((illegal, 400), (True, 400), ("4", 400)):
        with pytest.raises(SessionError) as info:
            table.human_move(action)
        assert info.value.status == status
    with pytest.raises(SessionError) as info:
        table.bot_move()
    assert info.value.status == 409 and table.frame.step == 0
    table.human_move(legal[0])
    while not table.your_turn():
        table.bot_move()
    assert table.frame.step >= 1


def test_a_failing_bot_ends_the_game_with_its_name_and_why():
    table = TableSession(2, 1, ["test-breaks"], seed=2)
    while table.status == "playing":
        if table.your_turn():
            table.human_move(table.legal()[0])
        else:
            table.bot_move()
    assert table.status == "failed"
    assert table.message == "player_0 (test-breaks) failed (RuntimeError: out of ideas): the game ends here."
    with pytest.raises(SessionError) as info:
        table.human_move(0)
    assert info.value.status == 409
    assert table.record()["final_scores"] is None


def test_the_opponents_cycle_over_the_other_seats():
    assert opponent_seats(4, 2, ["random", "greedy"]) == {0: "random", 1: "greedy", 3: "random"}
    assert opponent_seats(2, 1, ["mcts", "greedy"]) == {0: "mcts"}
