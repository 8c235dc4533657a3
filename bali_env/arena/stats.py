"""Tournament statistics from the game records: wins and Wilson intervals, ranks, seat
shares, and a Plackett-Luce rating fitted to all games at once (``choix``)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from bali_env.bots.protocol.messages import FAULTS

Z95 = 1.959963984540054  #: the standard normal quantile of 0.975 (two-sided 95%)



def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a win rate ``wins / n`` (``(0, 1)`` when ``n == 0``)."""
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # the interval always contains p; min/max only undo rounding (e.g. p = 1 and center + half = 1 - 1e-16)
    return max(0.0, min(p, center - half)), min(1.0, max(p, center + half))


def game_ranks(scores: Sequence[int], winners: Sequence[int]) -> list[float]:
    """Rank of every seat (1 = best): winners first, then by final score; tied seats share the
    mean of the positions they span (e.g. two winners both get 1.5)."""
    keys = [(q in winners, scores[q]) for q in range(len(scores))]
    ranks = []
    for key in keys:
        better = sum(k > key for k in keys)
        equal = sum(k == key for k in keys)
        ranks.append(better + (equal + 1) / 2)
    return ranks


ELO_PER_NAT = 400 / math.log(10)  #: rating points per unit of log-strength (the Elo scale)
FIT_ALPHA = 0.001  #: choix's regularisation: keeps the fit finite when a participant wins (or loses) every game


def _orderings(ranks: Sequence[float], lineup_: Sequence[int]) -> list[tuple[int, ...]]:
    """The finishing orders (participant indices, best first) of one game: tied seats (equal
    rank) in every order, so a tie counts as each of its orders equally."""
    groups: dict[float, list[int]] = {}
    for seat, r in enumerate(ranks):
        groups.setdefault(r, []).append(lineup_[seat])
    per_group = [list(itertools.permutations(groups[r])) for r in sorted(groups)]
    return [tuple(p for part in combo for p in part) for combo in itertools.product(*per_group)]


def load_rating_fit() -> None:
    """Import the rating fit's library (choix, and SciPy with it: about a second), e.g. in a
    thread while the games are played."""
    import choix  # noqa: F401


def rating_fit(games: Sequence[tuple[Sequence[int], Sequence[float]]], num_participants: int) -> dict[str, list[float]]:
    """Plackett-Luce ratings fitted to all games at once (maximum likelihood, ``choix``), the
    way chess engine testers rate (Ordo, BayesElo): one strength per participant such that a
    finishing order's probability is the product, place by place, of the placed player's share
    of the strengths still in play. ``games`` holds ``(lineup, ranks)`` pairs (participant
    indices by seat, ``game_ranks``); a tie counts as each of its orders with equal weight.

    The games are sorted before fitting, so the ratings do not depend on the order in which
    games were played or finished. Returns ``rating`` (Elo scale: 400 log10 strength, the
    field's mean at 0) and ``ci95`` (half-width of the 95% interval, from the inverse Fisher
    information at the fit) per participant."""
    import choix

    weighted: list[tuple[tuple[int, ...], int]] = []
    for lineup_, ranks in games:
        orders = _orderings(ranks, lineup_)
        weighted.extend((order, len(orders)) for order in orders)
    if not weighted:
        return {"rating": [0.0] * num_participants, "ci95": [math.inf] * num_participants}
    copies = math.lcm(*{k for _, k in weighted})  # a tie's k orders get weight 1/k: replicate the rest
    data = sorted(order for order, k in weighted for _ in range(copies // k))
    theta = choix.ilsr_rankings(num_participants, data, alpha=FIT_ALPHA, max_iter=1000, tol=1e-9)
    theta = theta - theta.mean()
    info = np.zeros((num_participants, num_participants))
    for (order, k), count in sorted(Counter(weighted).items()):  # each distinct order once, weighted
        for t in range(len(order) - 1):  # each place: the softmax over those still in play
            rest = np.array(order[t:])
            p = np.exp(theta[rest] - theta[rest].max())
            p /= p.sum()
            info[np.ix_(rest, rest)] += (np.diag(p) - np.outer(p, p)) * (count / k)
    # the information has the null space of equal shifts (only differences count): invert it on
    # the ratings that sum to 0, exactly (pinv's cut-off is unreliable there)
    shift = np.full((num_participants, num_participants), 1.0 / num_participants)
    se = np.sqrt(np.clip(np.diag(np.linalg.inv(info + shift) - shift), 0.0, None))
    return {"rating": [float(ELO_PER_NAT * v) for v in theta], "ci95": [float(ELO_PER_NAT * Z95 * v) for v in se]}


#: the widest 95% interval (half-width, Elo points) a shown rating may have: wider, the games do
#: not pin a rating down (a clean sweep: no finite rating fits, the fit's value is its
#: regularisation's; or too few games), and the tables say ``n/a`` (the files keep the numbers).
#: 400 points is a factor of 10 in strength either way.
RATING_SHOWN_CI = 400.0
RATING_NA_NOTE = (f"rating n/a: its 95% interval is wider than \u00b1{RATING_SHOWN_CI:.0f} (a clean sweep, which no "
                  "finite rating fits, or too few games)")  #: the note under a table that shows ``n/a``


def rating_shown(rating: dict[str, float]) -> bool:
    """Whether a fitted ``rating`` (``{"elo", "ci95"}``) is pinned down enough to show: its 95%
    half-width is finite and at most ``RATING_SHOWN_CI``."""
    return math.isfinite(rating["ci95"]) and rating["ci95"] <= RATING_SHOWN_CI


def rating_text(rating: dict[str, float]) -> str:
    """A fitted rating as the tables show it: ``+120 ±30``, or ``n/a`` when its interval is too
    wide to mean anything (``rating_shown``; ``RATING_NA_NOTE`` says why)."""
    return f"{rating['elo']:+.0f} \u00b1{rating['ci95']:.0f}" if rating_shown(rating) else "n/a"


def ranking_key(participant: dict[str, Any]) -> tuple[float, float, str]:
    """The order of a results table, best first: by win rate (what the table gives with its
    interval; every participant of a tournament plays the same number of games, so by wins too),
    then by fitted rating (it sees second places too), then by name: more wins never rank below
    fewer, and the order depends on the games only."""
    return -round(participant["win_rate"], 9), -round(participant["rating"]["elo"], 6), participant["name"]


def compute_stats(records: Sequence[dict[str, Any]], names: Sequence[str], num_players: int) -> dict[str, Any]:
    """Per-participant statistics and per-seat win shares from game records (``lineup`` as
    participant indices or names, as in results.json), and the ratings fitted to all games at
    once (``rating_fit``): nothing depends on the order of the records. A game lost by a fault
    (``forfeit``) counts as a loss for the forfeiter and a shared win for the others (ranked
    last and first), has no scores (the mean score is over the games with scores), and counts
    in the forfeiter's ``forfeits`` by reason. Returns ``{"participants": [...],
    "seat_win_share": [...], "mean_decisions": float}``."""
    tally = _Tally(names, num_players)
    for rec in sorted(records, key=lambda r: r["game"]):
        tally.add(rec)
    fit = rating_fit(tally.fit_games, len(names))
    total = max(1, len(records))
    return {
        "participants": tally.participants(names, fit),
        "seat_win_share": [float(v / total) for v in tally.seat_win_total()],
        "mean_decisions": float(tally.decisions / total),
    }


class _Tally:
    """The sums ``compute_stats`` makes over the games, per participant and seat (wins kept as
    lists of shares, summed with ``math.fsum``: exact, in any order)."""

    def __init__(self, names: Sequence[str], num_players: int) -> None:
        m, n = len(names), num_players
        self.n = n
        self.index = {name: p for p, name in enumerate(names)}
        self.games = np.zeros(m)
        self.win_shares: list[list[float]] = [[] for _ in range(m)]
        self.seat_shares: dict[tuple[int, int], list[float]] = {}
        self.score_sum = np.zeros(m)
        self.rank_sum = np.zeros(m)
        self.seat_games = np.zeros((m, n))
        self.fit_games: list[tuple[list[int], list[float]]] = []
        self.decisions = 0
        self.forfeits = np.zeros((m, len(FAULTS)), dtype=np.int64)
        self.scored = np.zeros(m)

    def add(self, rec: dict[str, Any]) -> None:
        """Count one game record."""
        lineup_ = [self.index[p] if isinstance(p, str) else int(p) for p in rec["lineup"]]
        winners = rec["winners"]
        lost = rec.get("forfeit")
        if lost is not None:  # the forfeiter last, the others sharing the win (and first place)
            self.forfeits[lineup_[lost["seat"]], FAULTS.index(lost["reason"])] += 1
        scores = rec["scores"] if rec["scores"] is not None else [0] * len(lineup_)
        ranks = game_ranks(scores, winners)
        share = 1.0 / len(winners) if winners else 0.0
        for seat, p in enumerate(lineup_):
            self.games[p] += 1
            self.seat_games[p, seat] += 1
            if rec["scores"] is not None:
                self.score_sum[p] += scores[seat]
                self.scored[p] += 1
            self.rank_sum[p] += ranks[seat]
            if seat in winners:
                self.win_shares[p].append(share)
                self.seat_shares.setdefault((p, seat), []).append(share)
        self.fit_games.append((lineup_, ranks))
        self.decisions += rec.get("decisions", 0)

    def participants(self, names: Sequence[str], fit: dict[str, list[float]]) -> list[dict[str, Any]]:
        """Every participant's statistics (results.json's ``participants``), ``fit`` their ratings."""
        wins = np.array([math.fsum(w) for w in self.win_shares])
        seat_wins = np.zeros_like(self.seat_games)
        for (p, seat), shares in self.seat_shares.items():
            seat_wins[p, seat] = math.fsum(shares)
        return [self._participant(p, name, fit, wins[p], seat_wins[p]) for p, name in enumerate(names)]

    def seat_win_total(self) -> np.ndarray:
        """The wins taken from each seat, all participants together."""
        return np.array([math.fsum(v for (_, s), shares in self.seat_shares.items() if s == seat for v in shares)
                         for seat in range(self.n)])

    def _participant(self, p: int, name: str, fit: dict[str, list[float]], wins: float,
                     seat_wins: np.ndarray) -> dict[str, Any]:
        """Participant ``p``'s statistics, ``wins`` in all and ``seat_wins`` by seat."""
        g = int(self.games[p])
        lo, hi = wilson_interval(float(wins), g)
        seat_games = self.seat_games[p]
        return {
            "name": name,
            "games": g,
            "wins": round(float(wins), 6),
            "win_rate": float(wins / g) if g else 0.0,
            "win_rate_ci95": [lo, hi],
            "mean_score": float(self.score_sum[p] / self.scored[p]) if self.scored[p] else 0.0,
            "mean_rank": float(self.rank_sum[p] / g) if g else 0.0,
            "rating": {"elo": round(fit["rating"][p], 6), "ci95": round(fit["ci95"][p], 6)},
            "seat_games": [int(v) for v in seat_games],
            "seat_win_rate": [float(seat_wins[s] / seat_games[s]) if seat_games[s] else None for s in range(self.n)],
            "forfeits": {reason: int(self.forfeits[p, k]) for k, reason in enumerate(FAULTS)},
        }


def move_time_stats(records: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per participant (by name): decisions, the mean and the longest decision in milliseconds,
    from the records' ``move_times`` (per seat: decisions, seconds, longest). Timing differs
    from run to run, so it is kept out of results.json (``timing.json``, the table)."""
    index = {name: p for p, name in enumerate(names)}
    count, total, worst = np.zeros(len(names)), np.zeros(len(names)), np.zeros(len(names))
    for rec in records:
        for seat, p in enumerate(rec["lineup"]):
            p = index[p] if isinstance(p, str) else int(p)
            k, seconds, longest = rec.get("move_times", [[0, 0.0, 0.0]] * len(rec["lineup"]))[seat]
            count[p] += k
            total[p] += seconds
            worst[p] = max(worst[p], longest)
    return {name: {"decisions": int(count[p]), "mean_ms": float(1000 * total[p] / count[p]) if count[p] else 0.0,
                   "worst_ms": float(1000 * worst[p])} for p, name in enumerate(names)}
