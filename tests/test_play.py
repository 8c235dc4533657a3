"""``bali play`` (``bali_env.apps.terminal``): scripted full games, input handling, saved records, the CLI
entry (options checked before anything is printed, Ctrl-C and SIGTERM exit 130), and that the
display shows only what the human may know (built from their observation alone)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from bali_env.bots.registry import make_agent
from bali_env.apps import terminal as P
from bali_env.apps.cli import parse_command
from bali_env.apps.session import opponent_seats
from bali_env.engine.decode import decode_observation
from bali_env.engine.events import move_events
from bali_env.engine.ids import ACTION_NAMES
from bali_env.envs.bali_v0 import raw_env
from bali_env.envs.records import load_record, validate_record
from bali_env.pictures.narrate import TurnNarrator, explain_final_scoring
from bali_env.pictures.text import describe_move, render_view


def play(argv: list[str], input_fn: Callable[[str], str] | None = None) -> int:
    """``bali play ARGV`` answering the prompts with ``input_fn``: its exit code."""
    return P.run(parse_command(["play", *argv]), input_fn=input_fn)


def scripted(answers: list[str], then: str | None = "1") -> Callable[[str], str]:
    """An input function answering ``answers`` in order, then ``then`` forever (EOF if None)."""
    it: Iterator[str] = iter(answers)

    def fn(prompt: str = "") -> str:
        try:
            return next(it)
        except StopIteration:
            if then is None:
                raise EOFError from None
            return then

    return fn


class Out:
    """Collects everything ``play_game`` prints."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, *args: object, **kwargs: object) -> None:
        self.lines.append(" ".join(str(a) for a in args))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def test_full_game_against_random_replays() -> None:
    out = Out()
    record = P.play_game(2, ["random"], seed=3, seat=0, input_fn=scripted([]), print_fn=out)
    assert record["final_scores"] is not None and record["winners"]
    assert record["agents"] == ["human", "random"]
    env = validate_record(record)
    assert env.state_dict()["scores"] == record["final_scores"]
    assert "=== Final scoring ===" in out.text
    assert "Winner: " in out.text or "Tie at " in out.text
    assert "player_1 (random): " in out.text
    # the final scoring lists each part for both players, and totals match the scores
    for q, _score in enumerate(record["final_scores"]):
        assert f"player_{q} (" in out.text
    totals = [int(line.split()[-1]) for line in out.lines[-1].splitlines() if line.strip().startswith("total")]
    assert totals == record["final_scores"]


@pytest.mark.parametrize("oracle,demon,seat", [(True, True, 1), (True, False, 2)])
def test_variants_and_seats_finish(oracle: bool, demon: bool, seat: int) -> None:
    out = Out()
    n = 3
    record = P.play_game(n, ["random", "greedy"], seed=11, seat=seat, oracle=oracle, demon=demon,
                         input_fn=scripted([]), print_fn=out)
    validate_record(record)
    assert record["agents"][seat] == "human"
    assert sorted(a for i, a in enumerate(record["agents"]) if i != seat) == ["greedy", "random"]
    assert f"you are player_{seat}" in out.text


def test_opponents_cycle_when_too_few() -> None:
    assert opponent_seats(4, 2, ["random", "greedy"]) == {0: "random", 1: "greedy", 3: "random"}


def test_bad_inputs_give_hints_and_the_game_goes_on() -> None:
    out = Out()
    # seat 0's first decision is phase 1 with 2 stones: only "pass" (#4) is legal, so #3 is illegal
    bad = ["", "xyz", "99", "#44", "#3", "#x", "take", "?", "t"]
    record = P.play_game(2, ["random"], seed=5, seat=0, input_fn=scripted(bad), print_fn=out)
    validate_record(record)
    assert record["final_scores"] is not None
    hints = [line for line in out.lines if line.startswith("hint:")]
    assert len(hints) == 7
    assert "no key 99" in out.text and "#44 is not an action id" in out.text
    assert "#3 (take chilies) is not legal now" in out.text
    assert "How to answer" in out.text  # the help
    assert "Traceback" not in out.text


def test_eof_ends_cleanly() -> None:
    out = Out()
    record = P.play_game(2, ["random"], seed=5, seat=0, input_fn=scripted(["1", "1"], then=None), print_fn=out)
    assert record["final_scores"] is None
    assert "end of input" in out.lines[-1]
    validate_record(record)  # the unfinished game still replays


def test_q_quits() -> None:
    out = Out()
    record = P.play_game(2, ["random"], seed=5, seat=1, input_fn=scripted(["q"]), print_fn=out)
    assert record["final_scores"] is None
    assert "you left the game" in out.lines[-1]


def test_parse_choice() -> None:
    legal = [29, 30, 31]
    assert P.parse_choice("2", legal) == 30
    assert P.parse_choice(" #31 ", legal) == 31
    assert P.parse_choice("Take column 1", legal) == 30
    assert P.parse_choice("help", legal) == "help" and P.parse_choice("Q", legal) == "quit"
    assert P.parse_choice("shrine reward: v", [38, 39]) == 39
    assert P.parse_choice("pass", [0, 4]) == 4
    with pytest.raises(ValueError, match="several"):
        P.parse_choice("shrine", [7, 38, 39])
    for bad in ("", "0", "4", "#29x", "take", "#5", "banana"):
        with pytest.raises(ValueError):
            P.parse_choice(bad, legal)


def test_display_never_reads_the_true_state_during_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """state_dict() holds hidden information: play_game may use it only once the game is over."""
    real = raw_env.state_dict

    def guarded(self: raw_env) -> dict:
        assert all(self.terminations.values()), "state_dict() read before the game was over"
        return real(self)

    monkeypatch.setattr(raw_env, "state_dict", guarded)
    monkeypatch.setattr(raw_env, "render", lambda self: pytest.fail("render() shows the true state"))
    record = P.play_game(3, ["greedy", "random"], seed=2, oracle=True, input_fn=scripted([]), print_fn=Out())
    assert record["final_scores"] is not None


def _face_down_branches() -> tuple[raw_env, raw_env]:
    """Two copies of one game that differ only in seat 1's face-down offering (hidden from seat 0)."""
    bots = [make_agent("random", seed=s) for s in range(2)]
    for seed in range(50):
        env = raw_env(num_players=2)
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            agent = env.agent_selection
            obs = env.observe(agent)
            legal = np.flatnonzero(obs["action_mask"])
            view = decode_observation(obs["observation"])
            if agent == "player_1" and view.decision == "offer_face_down" and len(legal) >= 2:
                a, b = copy.deepcopy(env), copy.deepcopy(env)
                a.step(int(legal[0]))
                b.step(int(legal[1]))
                return a, b
            env.step(int(bots[env.agent_name_mapping[agent]].act(obs["observation"], obs["action_mask"])))
    pytest.fail("no face-down offering with a choice found")


def test_render_depends_only_on_the_observers_observation() -> None:
    a, b = _face_down_branches()
    assert a.state_dict()["offerings"] != b.state_dict()["offerings"]  # the true states differ
    labels = ["player_0 (you)", "player_1 (random)"]
    obs_a, obs_b = (e.observe("player_0")["observation"] for e in (a, b))
    assert np.array_equal(obs_a, obs_b)  # seat 0 cannot tell the branches apart...
    text_a = render_view(decode_observation(obs_a), 0, labels)
    text_b = render_view(decode_observation(obs_b), 0, labels)
    assert text_a == text_b  # ...and neither can its display
    assert "1 unknown" in text_a
    # the player who offered knows which card: their display differs between the branches
    labels1 = ["player_0 (random)", "player_1 (you)"]
    own_a = render_view(decode_observation(a.observe("player_1")["observation"]), 1, labels1)
    own_b = render_view(decode_observation(b.observe("player_1")["observation"]), 1, labels1)
    assert own_a != own_b


def test_bot_moves_hide_face_down_and_oracle_choices() -> None:
    for c in range(4):
        assert describe_move("offer_face_down", 21 + c) == "offer a card face down"
        assert describe_move("offer_face_up", 21 + c) == ACTION_NAMES[21 + c]
    for d in range(4):
        assert describe_move("oracle", 33 + d) == "oracle: take a card"
    assert describe_move("oracle", 37) == "oracle: take none"
    assert describe_move("refill", 30) == "take column 1"


def test_relative_seats_use_real_names() -> None:
    env = raw_env(num_players=3)
    env.reset(seed=1)
    labels = ["player_0 (greedy)", "player_1 (random)", "player_2 (you)"]
    view = decode_observation(env.observe("player_2")["observation"])
    text = render_view(view, 2, labels)
    # player_0 is active and to decide; from seat 2 that is relative seat 1
    assert "To decide: player_0 (greedy): phase 1" in text
    assert " >player_0 (greedy) [active]: stones 2" in text
    assert "player_2 (you): stones 4" in text


def test_cli_save_writes_a_loadable_record(tmp_path, capsys) -> None:
    path = tmp_path / "new" / "game.json"
    assert play(["--players", "2", "--opponents", "random", "--seed", "7", "--save", str(path)],
                  input_fn=lambda prompt: "1") == 0
    record = load_record(path)
    assert record["agents"] == ["human", "random"] and record["final_scores"] is not None
    assert "saved the game record" in capsys.readouterr().out


def test_cli_quit_and_errors(capsys) -> None:
    assert play(["--players", "2", "--opponents", "nosuchbot"]) == 2
    assert "nosuchbot" in capsys.readouterr().err
    assert play(["--players", "2", "--seat", "5", "--opponents", "random"]) == 2
    assert play(["--players", "2", "--opponents", "random", "--seed", "1"], input_fn=lambda prompt: "q") == 0
    assert "Bye" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "says"), [
    (["--seat", "2"], "--seat must be 0..1"),
    (["--seed", "-1"], "--seed must be an int >= 0"),
    (["--opponents", "mcts:sims=0"], "opponent 'mcts:sims=0'"),
    (["--save", "FOLDER"], "is a folder"),
    (["--save", "FILE/game.json"], "is not a folder"),
])
def test_bad_options_stop_before_anything_is_printed_or_written(tmp_path, capsys, argv, says) -> None:
    """One line on stderr, exit code 2; nothing on stdout, nothing created."""
    (tmp_path / "FILE").write_text("x")
    (tmp_path / "FOLDER").mkdir()
    argv = [str(tmp_path / a) if a.startswith(("FILE", "FOLDER")) else a for a in argv]
    asked: list[str] = []
    assert play(["--players", "2", "--opponents", "random", *argv], input_fn=asked.append) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and asked == []
    [line] = captured.err.strip().splitlines()
    assert line.startswith("bali play: error: ") and says in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE", "FOLDER"] and not any((tmp_path / "FOLDER").iterdir())


def test_ctrl_c_and_sigterm_exit_130_with_one_line(tmp_path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C at the prompt (the input raising KeyboardInterrupt), and a SIGTERM during the game
    through the ``bali`` entry point: one line on stderr, exit code 130, nothing saved."""
    import os
    import signal

    from bali_env.apps.cli import main as cli_main

    def ctrl_c(prompt: str) -> str:
        raise KeyboardInterrupt

    def sigterm(prompt: str = "") -> str:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(10**6):  # the handler runs within a few bytecodes
            pass
        return "1"

    save = tmp_path / "game.json"
    argv = ["--players", "2", "--opponents", "random", "--seed", "3", "--save", str(save)]
    assert play(argv, input_fn=ctrl_c) == 130
    previous = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr("builtins.input", sigterm)
    try:
        assert cli_main(["play", *argv]) == 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    captured = capsys.readouterr()
    assert [line for line in captured.err.splitlines() if line] == ["bali play: interrupted"] * 2
    assert captured.out.count("Bali: you are player_0") == 2 and "Bye" not in captured.out
    assert not save.exists()


def _final(shrines: list[int], stones: list[int], scores: list[int], winners: list[int], decided_by: str) -> str:
    state = {"num_players": 2, "altar": [0, 0, 1], "tableaus": [[0, 0, s, 0, 0, 0, 0] for s in shrines],
             "stones": stones, "offerings": [[1, 0, 0, 0], [0, 2, 0, 0]]}
    breakdown = [{"vp_tokens": 0, "shrines": 4 * shrines[q], "stones": stones[q] // 5,
                  "offerings": {"rice": 3 * (1 - q), "peanuts": 2 * 2 * q, "bananas": 0, "chilies": 0},
                  "total": scores[q]} for q in range(2)]
    info = {"final_scores": scores, "winners": winners, "score_breakdown": breakdown, "decided_by": decided_by}
    return explain_final_scoring(state, info, ["player_0 (you)", "player_1 (greedy)"])


def test_final_scoring_explains_values_and_tie_breaks() -> None:
    text = _final([2, 1], [0, 0], [11, 11], [0], "shrines")
    assert "rice 2 cards -> worth 3" in text and "peanuts 1 cards -> worth 2" in text
    assert "peanuts  2 cards x 2" in text and "shrines  2 x 4" in text
    assert "broken by shrines (2, 1): winner player_0 (you)" in text
    assert "broken by stones (5, 9): winner player_1 (greedy)" in _final([1, 1], [5, 9], [8, 8], [1], "stones")
    assert "shared win for player_0 (you) and player_1 (greedy)" in _final([1, 1], [5, 5], [8, 8], [0, 1], "shared")
    assert "Winner: player_1 (greedy) with 9 points." in _final([1, 1], [5, 5], [8, 9], [1], "score")


def _four_player_games(count: int) -> list[list[str]]:
    """The printed lines of ``count`` scripted 4-player games (variants and seats vary)."""
    games = []
    for seed in range(count):
        out = Out()
        rng = np.random.default_rng(seed)
        answers = [str(int(rng.integers(1, 4))) for _ in range(3000)]
        P.play_game(4, ["greedy", "random", "mcts:sims=10"], seed=seed, seat=seed % 4, oracle=seed % 2 == 0,
                    demon=seed % 3 == 0, input_fn=scripted(answers), print_fn=out)
        games.append(out.text.split("\n"))
    return games


def test_play_fits_80_columns_and_a_24_line_screen() -> None:
    """Every printed line fits 80 columns, and each 4-player table with its options and the
    prompt line fits a 24-line terminal."""
    worst = 0
    for lines in _four_player_games(6):
        assert max(len(line) for line in lines) <= 80
        for start in (i for i, line in enumerate(lines) if line.startswith("=== Bali")):
            end = next(i for i in range(start, len(lines)) if lines[i].startswith(("player_", "hint", "---")))
            worst = max(worst, end - start + 1)  # + the prompt line, in place of the move line
    assert 18 <= worst <= 24


def test_options_show_their_cost_and_what_they_give() -> None:
    """The menu prices offering cards and plays from the engine's rules and names what a take gives."""
    from bali_env.pictures.text import option_text, options_text

    env = raw_env(num_players=2)
    env.reset(seed=5)
    view = decode_observation(env.observe("player_0")["observation"])
    farmers = view.tableaus[0][3:7]
    for c in range(4):
        price = max(0, 5 - int(farmers[c]))
        assert option_text(view, c) == ACTION_NAMES[c] + (f" ({price} stones)" if price > 1 else
                                                          " (1 stone)" if price == 1 else " (free)")
    assert option_text(view, 7) == "play shrine (7 stones)"
    assert option_text(view, 9) == "play 2 rice farmers (1 stone)" and option_text(view, 8).endswith("(free)")
    for col in range(4):
        assert option_text(view, 29 + col) == f"take column {col}: " + \
            ("Stone", "Priest", "Shrine", "Rice", "Peanut", "Banana", "Chili")[view.market[col][0]]
    menu = options_text(view, [0, 1, 2, 3, 4])
    assert menu.startswith("Options: 1) take rice") and "5) pass" in menu and len(menu.splitlines()) == 2


def test_turn_summaries_name_the_scored_type_and_what_everyone_received() -> None:
    """After every turn, a line names the scored type and each player's reward, told from the
    engine's public events; the numbers add up to the changes in the state. Newly dealt columns
    and the end of the game are announced."""
    seen = {"scoring": 0, "dealt": 0, "oracles": 0, "end": 0}
    for lines in _four_player_games(4):
        text = "\n".join(lines)
        seen["scoring"] += text.count("  scoring ")
        seen["dealt"] += text.count(" dealt: ")
        seen["oracles"] += text.count("removed)")
        seen["end"] += text.count("the deck ran out: the game ends")
    assert seen["scoring"] > 100 and seen["dealt"] > 20 and seen["oracles"] > 0 and seen["end"] == 4
    # exact numbers: a stonecutter scoring gives every player one stone per stonecutter
    narrator = TurnNarrator(["player_0 (you)", "player_1 (greedy)"], 0)
    env = raw_env(num_players=2)
    env.reset(seed=1)
    bot = make_agent("greedy", seed=0)
    lines: list[str] = []
    while not all(env.terminations.values()):
        before = env.state().copy()
        mover = env.agent_name_mapping[env.agent_selection]
        obs = env.observe(env.agent_selection)
        action = bot.act(obs["observation"], obs["action_mask"])
        stones_before = [env.state_dict()["stones"][q] for q in range(2)]
        tableaus = [env.state_dict()["tableaus"][q][0] for q in range(2)]
        env.step(action)
        said = narrator.move(mover, ACTION_NAMES[action], move_events(before, int(action), env.state()))
        line = next((x for x in said if x.startswith("  scoring stonecutter")), None)
        if line and env.state_dict()["phase"] != "game_over":
            gained = [env.state_dict()["stones"][q] - stones_before[q] for q in range(2)]
            for q, label in enumerate(["player_0 (you)", "player_1 (greedy)"]):
                if gained[q]:
                    assert f"{label} +{gained[q]} stone" in line
                    assert gained[q] >= tableaus[q]  # one per stonecutter (+1 majority bonus)
            lines.append(line)
    assert lines
