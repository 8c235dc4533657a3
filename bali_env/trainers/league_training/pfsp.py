"""Prioritised fictitious self-play (PFSP, AlphaStar's): how often the main meets each member of
its population, from how often it beats them.

The weight of opponent ``o`` is ``f(1 - p_o)``, ``p_o`` the main's latest win rate against ``o``
(the payoff evaluation: the main alone against ``o`` in every other seat), so the opponents it
loses to come most often. ``f`` is ``--pfsp``: ``hard`` f(x) = x² (AlphaStar's "hard": the
opponents it beats almost always nearly vanish), ``linear`` f(x) = x, ``even`` f(x) = 1 (plain
fictitious self-play). No weight falls below ``--pfsp-floor`` (a member the main beats every time
is still met now and then, so forgetting it shows). The main's self-play (``SELF``: main_g
itself, frozen, the copy the generation starts from) counts as an opponent it beats its fair
share of the time, ``p = 1 / players``. The weights are normalised to sum to 1, in the order given, and
written as ``bali train --opponents`` takes them (``opponents_text``).
"""

from __future__ import annotations

from collections.abc import Mapping

SELF = "self"  #: the main's self-play in the weights: the main itself, frozen


def shape(name: str, x: float) -> float:
    """``f(x)`` of the weighting ``name`` (``hard``: x², ``linear``: x, ``even``: 1)."""
    if name == "hard":
        return x * x
    if name == "linear":
        return x
    if name == "even":
        return 1.0
    raise ValueError(f"--pfsp must be hard, linear or even, got {name!r}")


def pfsp_weights(win_rates: Mapping[str, float], players: int, weighting: str = "hard",
                 floor: float = 0.02) -> dict[str, float]:
    """The sampling weight of every opponent of ``win_rates`` (name -> the main's win rate
    against it, in [0, 1]) and of ``SELF`` (the main's fair share, ``1 / players``), each
    ``max(f(1 - p), floor)``, normalised to sum to 1; ``SELF`` first, then the members in order.
    ``pfsp_weights({"main_0": 0.7, "exploiter_0": 0.2}, 2)``: self 0.25, main_0 0.09,
    exploiter_0 0.64, over their sum 0.98."""
    rates = {SELF: 1.0 / players, **dict(win_rates)}
    for name, p in rates.items():
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"win rate against {name!r} must be in [0, 1], got {p!r}")
    raw = {name: max(shape(weighting, 1.0 - p), floor) for name, p in rates.items()}
    total = sum(raw.values())
    if total <= 0:  # every f is 0 and the floor too: an even mix
        return {name: 1.0 / len(raw) for name in raw}
    return {name: w / total for name, w in raw.items()}


def opponents_text(weights: Mapping[str, float], specs: Mapping[str, str]) -> str:
    """``bali train --opponents`` of ``weights`` (name -> weight): each opponent as its agent
    spec ``specs[name]`` (``SELF``'s too: the main's own file), its weight with 6 significant digits."""
    return ",".join(f"{specs[name]}:{weight:.6g}" for name, weight in weights.items())


__all__ = ["SELF", "opponents_text", "pfsp_weights", "shape"]
