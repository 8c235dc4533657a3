"""docs/rules.md section 3, Demon variant: playing a priest moves the demon one column right (column 3
back to 0); no other play moves it; in phase 3 the demon's column cannot be taken from."""

from __future__ import annotations

import pytest
from scenario import COL, FARMERS, PASS, PEANUTS, PLAY_PR, PR, RICE, SH, Game, counts, market

# column 0 (the demon's at first) would give a shrine; columns 1 and 2 give priests; column 3 shrines.
# Every reveal is a priest or a shrine; the priests scored give VP only, never stones.
COLS = market([SH, SH, SH, SH], [PR, PR, PR, PR], [PR, PR, PR, PR], [SH, SH, SH, SH])


def _demon_obs(g: Game, seat: int) -> list[float]:
    return [float(x) for x in g.observe(seat)["observation"][239:243]]


def test_demon_column_cannot_be_taken():
    """Demon: in phase 3 the column the demon stands on (0 at the start) is not a legal take."""
    g = Game(2, prefix=COLS, starters=[0, 1], demon=True)
    g.act(PASS, FARMERS(PEANUTS))  # a farmer: the demon does not move
    sd = g.sd
    assert sd["demon"] == 0 and sd["phase"] == "refill"
    assert g.legal() == [COL(1), COL(2), COL(3)]
    with pytest.raises(ValueError):
        g.env.step(COL(0))
    assert g.sd == sd
    assert list(g.observe(0)["action_mask"][29:33]) == [0, 1, 1, 1]


def test_demon_moves_right_on_priest_and_wraps():
    """Demon: each priest played moves the demon one column right: 0 -> 1 -> 2 -> 3 -> 0."""
    g = Game(2, prefix=COLS, starters=[0, 1], demon=True)
    g.turn(FARMERS(PEANUTS), [COL(1)])  # s0 takes a priest
    g.turn(FARMERS(RICE), [COL(2)])  # s1 takes a priest
    assert g.sd["demon"] == 0  # farmers do not move it
    assert _demon_obs(g, 0) == [1.0, 0.0, 0.0, 0.0]
    expected = [1, 2, 3, 0]
    takes = [COL(2), COL(1), COL(1), COL(2)]
    for i, (col_after, take) in enumerate(zip(expected, takes, strict=True)):
        seat = i % 2
        g.act(PASS)
        assert g.sd["to_move"] == seat and g.sd["hands"][seat][PR] >= 1
        g.act(PLAY_PR)
        sd = g.sd
        assert sd["demon"] == col_after
        assert g.legal() == [COL(c) for c in range(4) if c != col_after]
        for q in (0, 1):
            assert _demon_obs(g, q) == [float(c == col_after) for c in range(4)]
        g.act(take)  # a priest again (columns 1 and 2), keeping one in hand for the next turn
    assert g.sd["demon"] == 0
    assert [t[PR] for t in g.sd["tableaus"]] == [2, 2]
    assert g.sd["hands"][0] == counts(pr=1, bf=1, cf=1)
