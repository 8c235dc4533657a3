"""The run's best candidate (``best.npz``): which main to keep, and why.

The rule: among the mains whose exploitability was measured (``--yardstick-steps``), those not
weaker against the reference baseline (``greedy`` when it is one of ``--baselines``, else the
first baseline) are eligible: a main is weaker when its 95% interval against that baseline lies
wholly below another measured main's (its upper bound under the other's lower bound). Of the
eligible mains the one whose best response wins least (the lowest exploitability) is the best,
the later generation on a tie. Without a yardstick (``--yardstick-steps 0``) the best is the last
main; without a baseline every measured main is eligible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def reference_baseline(baselines: Sequence[str]) -> str | None:
    """The baseline the rule compares mains against: ``greedy`` when it is one, else the first
    (None without baselines)."""
    if "greedy" in baselines:
        return "greedy"
    return baselines[0] if baselines else None


def best_candidate(exploitability: Mapping[int, Mapping[str, Any]], against_baseline: Mapping[int, Mapping[str, Any]],
                   last: int, baseline: str | None = None) -> dict[str, Any]:
    """The best main by the module's rule: ``exploitability`` (generation -> the yardstick's
    ``win_rate``, ``ci_low``, ``ci_high``), ``against_baseline`` (generation -> the main's entry
    against the reference ``baseline``), ``last`` (the last main's generation). Returns
    ``generation``, ``reason`` (in words) and ``eligible`` (the generations the rule chose among)."""
    if not exploitability:
        return {"generation": last, "eligible": [], "reason": f"no yardstick ran (--yardstick-steps 0): the last "
                                                              f"main, main_{last}"}
    measured = sorted(exploitability)
    entries = {g: against_baseline[g] for g in measured if g in against_baseline}
    floor = max((e["ci_low"] for e in entries.values()), default=None)
    eligible = [g for g in measured if floor is None or g not in entries or entries[g]["ci_high"] >= floor]
    best = min(eligible, key=lambda g: (exploitability[g]["win_rate"], -g))
    e = exploitability[best]
    reason = (f"the lowest exploitability ({100 * e['win_rate']:.1f}% [{100 * e['ci_low']:.1f}, "
              f"{100 * e['ci_high']:.1f}] for its best response) among the mains "
              + (f"not weaker against {baseline}" if baseline and entries else "measured")
              + f" ({', '.join(f'main_{g}' for g in eligible)})")
    return {"generation": best, "eligible": eligible, "reason": reason}


__all__ = ["best_candidate", "reference_baseline"]
