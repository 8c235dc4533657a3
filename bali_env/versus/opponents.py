"""Opponents for a learner: who plays the seats the learner does not, in ``bali train``, in the
Gymnasium envs (``gymnasium.make("bali_env/Bali-v0", opponents=...)``) and in the SB3 VecEnv.

``OpponentPool`` holds named opponents with sampling weights (any agent spec the CLI accepts:
random, greedy, ``mcts:sims=N``, ``ppo``, ``ppo:path=FILE.npz``, ``mybot.py:MyBot``, ``cmd:PROGRAM``;
and frozen policies such as ``bali train``'s self-play snapshots ``self@STEP``); a game draws one
per seat when it starts. ``opponent_weights`` reads an opponents spec (``"random:1,greedy:3"``, as
``bali train --opponents`` takes it), ``pool_from_spec`` builds a pool from one, ``opponent``
builds one opponent (a ``cmd:`` bot through ``ForgivingBot``), ``make_policy_opponent`` freezes an
SB3 policy as a NumPy player.
"""

from __future__ import annotations

from typing import Any

import numpy as np

OPPONENT_KINDS = ("random", "greedy", "self", "mcts")  #: the built-in kinds (any agent spec may be weighed too)
DEFAULT_OPPONENTS = "random"  #: the Gymnasium envs' opponents when none are named


class OpponentPool:
    """Named opponents with sampling weights; ``add`` grows it (self-play snapshots)."""

    def __init__(self, seed: int | None = None) -> None:
        self.names: list[str] = []
        self.agents: list[Any] = []
        self.weights: list[float] = []
        self.rng = np.random.default_rng(seed)

    def add(self, name: str, agent: Any, weight: float = 1.0) -> None:
        """Add an opponent (anything with ``act_batch(observations, action_masks)``)."""
        self.names.append(name)
        self.agents.append(agent)
        self.weights.append(float(weight))

    def remove_oldest(self, prefix: str) -> None:
        """Drop the oldest opponent whose name starts with ``prefix`` (a bounded self-play pool)."""
        for i, name in enumerate(self.names):
            if name.startswith(prefix):
                del self.names[i], self.agents[i], self.weights[i]
                return

    def reseed(self, seed: int) -> None:
        """Seed the draws and every opponent's own randomness from ``seed`` (opponent k from
        ``seed + k + 1``): a reset with the same seed replays the same opponents' choices."""
        self.rng = np.random.default_rng(seed)
        for k, agent in enumerate(self.agents):
            agent.seed(seed + k + 1)

    def sample(self) -> int:
        """Index of an opponent drawn with the weights."""
        w = np.asarray(self.weights, dtype=np.float64)
        return int(self.rng.choice(len(w), p=w / w.sum()))

    def __len__(self) -> int:
        return len(self.agents)

    def checkpoint(self) -> dict[str, Any]:
        """Everything needed to rebuild the pool (``from_checkpoint``): names, weights, every
        generator's state (a search's stream too: ``mcts``), and the weights of frozen policy
        snapshots; agents that are not snapshots are rebuilt from their name (an agent spec such as
        ``greedy`` or ``mcts:sims=200``)."""
        from bali_env.bots.ppo import PPOAgent

        entries = []
        for name, agent, weight in zip(self.names, self.agents, self.weights, strict=True):
            snapshot = isinstance(agent, PPOAgent) and agent.path is None and agent._fixed is not None
            entries.append({"name": name, "weight": weight, "rng": agent.rng.bit_generator.state,
                            "policy": agent._fixed.arrays() if snapshot else None,
                            "deterministic": bool(getattr(agent, "deterministic", False)),
                            "stream": None if getattr(agent, "_stream", None) is None else agent._stream.copy()})
        return {"rng": self.rng.bit_generator.state, "entries": entries}

    @classmethod
    def from_checkpoint(cls, saved: dict[str, Any]) -> OpponentPool:
        """The pool ``checkpoint()`` saved, generators included."""
        from bali_env.bots.ppo import ExportedPolicy, PPOAgent

        pool = cls()
        pool.rng.bit_generator.state = saved["rng"]
        for entry in saved["entries"]:
            if entry["policy"] is not None:
                policy = ExportedPolicy.from_arrays(*entry["policy"], where=f"snapshot {entry['name']}")
                agent = PPOAgent(policy=policy, deterministic=entry["deterministic"], name="self")
            else:
                agent = opponent(entry["name"], seed=0)
            agent.rng.bit_generator.state = entry["rng"]
            if entry.get("stream") is not None:
                agent._stream[:] = entry["stream"]
            pool.add(entry["name"], agent, entry["weight"])
        return pool


def make_policy_opponent(policy: Any, seed: int | None = None, deterministic: bool = False) -> Any:
    """A frozen copy of an SB3 (Maskable) policy as an opponent that plays by the NumPy forward
    pass (``bali_env.bots.ppo``): no torch call per opponent move, sampling from the masked policy
    with its own seeded generator (or its most probable action with ``deterministic``)."""
    from bali_env.bots.ppo import ExportedPolicy, PPOAgent

    return PPOAgent(seed=seed, policy=ExportedPolicy.from_sb3(policy), deterministic=deterministic, name="self")


def _items(text: str) -> list[str]:
    """``--opponents`` split into its items at commas, except a comma that starts another setting
    of the same spec (``mcts:sims=200,c=1.4:2`` is one item)."""
    items: list[str] = []
    for chunk in text.split(","):
        head = chunk.strip().split(":")[0]
        if items and "=" in head and head.split("=")[0].isidentifier():
            items[-1] += "," + chunk.strip()
        else:
            items.append(chunk.strip())
    return items


def opponent_weights(text: str) -> dict[str, float]:
    """Parse ``--opponents``: comma-separated agent specs, each with an optional weight after its
    last colon (``random:1,greedy:3,self:1``, ``greedy:1,self:1,ppo:2``, ``mcts:sims=400:2``,
    ``ppo:path=runs/a/final.npz:1``, ``cmd:python3 bot.py:1``; ``self`` = past snapshots of the
    learner, ``mcts`` = ``mcts:sims=--mcts-sims``). Every spec is checked (``make_agent``);
    ValueError saying what is wrong."""
    from bali_env.bots import make_agent

    weights: dict[str, float] = {}
    for item in _items(text):
        spec, _, w = item.rpartition(":")
        try:
            weight = float(w)
        except ValueError:  # no weight: the whole item is the spec
            spec, weight = item, 1.0
        if not spec:
            raise ValueError(f"an opponent without a spec in {text!r}")
        if not weight >= 0 or weight == float("inf"):
            raise ValueError(f"opponent weight of {spec!r} must be >= 0, got {w!r}")
        if spec not in ("self", "mcts"):
            try:
                make_agent(spec, seed=0).close()
            except Exception as exc:  # noqa: BLE001 - unknown kind, missing file, program not found
                raise ValueError(f"opponent {spec!r}: " + " ".join(str(exc).split())) from None
        weights[spec] = weight
    if sum(weights.values()) <= 0:
        raise ValueError(f"at least one opponent needs a positive weight, got {text!r}")
    return weights


def opponent(spec: str, seed: int) -> Any:
    """The agent of an opponent spec; a ``cmd:`` bot plays through ``ForgivingBot`` (a training
    run goes on when the bot fails a decision)."""
    from bali_env.bots import make_agent

    agent = make_agent(spec, seed=seed)
    return ForgivingBot(agent) if spec.partition(":")[0] == "cmd" else agent


class ForgivingBot:
    """A ``cmd:`` bot as a training opponent: it sees decisions of many games interleaved (no
    ``start``/``end``: ``game`` is null), and when it fails one (a timeout, a crash...) a random
    legal action is played instead, the failure is counted (``faults``) and said on stderr, and
    the bot is restarted at its next decision."""

    def __init__(self, agent: Any) -> None:
        self.agent, self.faults = agent, 0
        self.rng = agent.rng
        self.name = agent.name

    def seed(self, seed: int | None = None) -> None:
        """Reseed the bot's own generator (and the random moves that stand in for its faults)."""
        self.agent.seed(seed)
        self.rng = self.agent.rng

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row, from the bot, or random where it failed."""
        import sys

        from bali_env.bots.protocol import BotFault

        out = np.empty(len(observations), dtype=np.int64)
        for i, (o, m) in enumerate(zip(observations, action_masks, strict=True)):
            try:
                out[i] = self.agent.act(o, m)
            except BotFault as exc:
                self.faults += 1
                if self.faults <= 10 or self.faults % 1000 == 0:
                    print(f"opponent {self.name}: {exc} (a random move instead; {self.faults} so far)",
                          file=sys.stderr)
                out[i] = int(self.rng.choice(np.flatnonzero(m)))
        return out


def pool_from_spec(text: str, seed: int | None = None, mcts_sims: int = 200) -> OpponentPool:
    """A pool of the opponents an opponents spec names (``opponent_weights``), each built with
    its own seed (``mcts`` alone: ``mcts:sims=mcts_sims``; ``self`` is not a spec a pool can
    build: a learner's snapshots join the pool as it trains). ValueError saying what is wrong."""
    weights = opponent_weights(text)
    if "self" in weights:
        raise ValueError("'self' (the learner's own snapshots) exists only in bali train; name agents")
    pool = OpponentPool(seed=seed)
    base = 0 if seed is None else int(seed)
    for spec, weight in weights.items():
        if weight > 0:
            spec = f"mcts:sims={mcts_sims}" if spec == "mcts" else spec
            pool.add(spec, opponent(spec, seed=base + len(pool)), weight)
    return pool


__all__ = ["DEFAULT_OPPONENTS", "ForgivingBot", "OPPONENT_KINDS", "OpponentPool", "make_policy_opponent", "opponent",
           "opponent_weights", "pool_from_spec"]
