"""The policy-guided search (``ppo+search``, ``bali_env.bots.puct``) and the value head it reads: the
head is saved and loaded with the policy (older files load without one), the search decides from
the observation alone, deterministically whatever the batch, spends exactly its budget, plays
only legal moves, and refuses a policy without a value head in one line."""

from __future__ import annotations

import numpy as np
import pytest

import bali_env
from bali_env.bots import make_agent
from bali_env.bots.ppo import ExportedPolicy, write_policy
from bali_env.bots.puct import PolicySearchAgent
from bali_env.envs.api_check import CONFIGURATIONS, config_id
from scenario import face_down_twins, play_checked

SHIPPED = "bali_env/bots/policies/bali_2p.npz"


def _value_head(inputs: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, 0.05, (16, inputs)).astype(np.float32), np.zeros(16, np.float32)),
            (rng.normal(0, 0.3, (1, 16)).astype(np.float32), np.array([0.1], np.float32))]


@pytest.fixture(scope="module")
def valued(tmp_path_factory):
    """The shipped 2-player actor with a small random value head, as a file."""
    weights, meta = ExportedPolicy(SHIPPED).arrays()
    path = tmp_path_factory.mktemp("policy") / "valued.npz"
    write_policy(weights, meta, path, value=_value_head(meta["obs_dim"]))
    return path


def test_the_value_head_is_saved_and_loaded(valued, tmp_path):
    """The head comes back exactly; the actor is untouched; the value is a win share in (0, 1)
    and is computed as the file's layers say; a file without a head loads and says it has none."""
    old, new = ExportedPolicy(_without_head(tmp_path)), ExportedPolicy(valued)
    for (w0, b0), (w1, b1) in zip(old.weights, new.weights, strict=True):
        np.testing.assert_array_equal(w0, w1)
        np.testing.assert_array_equal(b0, b1)
    head = _value_head(new.meta["obs_dim"])
    for (w0, b0), (w1, b1) in zip(head, new.value_arrays(), strict=True):
        np.testing.assert_array_equal(w0, w1)
        np.testing.assert_array_equal(b0, b1)
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=4)
    o = env.observe(env.agent_selection)
    x = new.input(o["observation"][None], o["action_mask"][None])
    by_hand = 1 / (1 + np.exp(-(np.maximum(x @ head[0][0].T + head[0][1], 0) @ head[1][0].T + head[1][1])))
    v = new.forward(x, value=True)
    assert v.shape == (1,) and 0 < v[0] < 1
    np.testing.assert_allclose(v, by_hand[:, 0], rtol=1e-5)
    np.testing.assert_array_equal(new.forward(x), old.forward(x))
    assert old.value_arrays() is None
    with pytest.raises(ValueError, match="no value head"):
        old.forward(x, value=True)
    bad = _value_head(new.meta["obs_dim"])
    bad[1] = (np.zeros((2, 16), np.float32), np.zeros(2, np.float32))  # two outputs
    with pytest.raises(ValueError, match="value head gives 2 outputs"):
        write_policy(*old.arrays(), tmp_path / "bad.npz", value=bad)
    assert ExportedPolicy(SHIPPED).value_arrays() is not None  # ppo+search's default reads it
    bad = _value_head(new.meta["obs_dim"] - 1)  # the wrong input size
    with pytest.raises(ValueError, match="value layer 0"):
        write_policy(*old.arrays(), tmp_path / "bad.npz", value=bad)
    assert not (tmp_path / "bad.npz").exists()


def test_a_policy_without_a_value_head_is_refused(tmp_path):
    with pytest.raises(ValueError, match="bali fit-value"):
        make_agent(f"ppo+search:path={_without_head(tmp_path)}")
    for spec, error in (("ppo+search:sims=0", ValueError), ("ppo+search:leaves=-1", ValueError),
                        ("ppo+search:c=-1", ValueError), ("ppo+search:sims=2.5", TypeError),
                        ("ppo+search:gumbel=-1", ValueError)):
        with pytest.raises(error, match="ppo\\+search setting"):
            make_agent(spec)


def _without_head(tmp_path):
    path = tmp_path / "plain.npz"
    write_policy(*ExportedPolicy(SHIPPED).arrays(), path)
    return path


def _positions(config, seed, every=3):
    """Observations and masks along a random game, every few steps."""
    n, oracle, demon = config
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    step = 0
    while not all(env.terminations.values()):
        o = env.observe(env.agent_selection)
        if step % every == 0:
            obs.append(o["observation"])
            masks.append(o["action_mask"])
        env.step(int(rng.choice(env.legal_actions())))
        step += 1
    return np.array(obs), np.array(masks)


@pytest.mark.parametrize("config", [c for c in CONFIGURATIONS if c[0] == 2], ids=config_id)
def test_batched_search_is_one_search_per_row(valued, config):
    """Row i's choice is what ``seed(keys[i])`` then ``act`` gives, whatever else is in the batch
    and whatever the thread count; every choice is legal; the root's children get exactly the
    budget (rounded up to whole rounds)."""
    import numba

    obs, masks = _positions(config, seed=3, every=4)
    keys = np.arange(len(obs), dtype=np.uint64) * np.uint64(7919) + np.uint64(1)
    agent = PolicySearchAgent(seed=0, sims=20, leaves=6, path=valued)
    batched = agent.act_batch_keyed(obs, masks, keys)
    assert (masks[np.arange(len(obs)), batched] == 1).all() and (masks.sum(axis=1) > 1).sum() > 5
    for i in range(0, len(obs), 5):
        agent.seed(int(keys[i]))
        assert agent.act(obs[i], masks[i]) == batched[i]
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        odd = np.arange(1, len(obs), 2)
        assert (agent.act_batch_keyed(obs[odd], masks[odd], keys[odd]) == batched[odd]).all()
    finally:
        numba.set_num_threads(before)
    rows = np.flatnonzero(masks.sum(axis=1) > 1)[:4]
    visits = agent.search(obs[rows], masks[rows], keys[rows], ExportedPolicy(valued))
    assert (visits.sum(axis=1) == 24).all()  # 20 descents rounded up to 4 rounds of 6
    assert (visits[masks[rows] == 0] == 0).all()


def test_the_search_reads_only_the_observation(valued):
    """Two games that differ only in what the watcher cannot see (the other player's face-down
    offering) look the same to it, and its search is the same (the same visits, the same key)."""
    twins = face_down_twins(2)
    assert twins is not None, "no face-down offering with two choices found"
    a_env, b_env, watcher = twins
    assert a_env.state_dict() != b_env.state_dict()
    oa, ob = a_env.observe(watcher), b_env.observe(watcher)
    np.testing.assert_array_equal(oa["observation"], ob["observation"])
    policy = ExportedPolicy(valued)
    agent = PolicySearchAgent(seed=0, sims=16, leaves=4, path=valued)
    mask, key = np.ones((1, 44), np.int8), np.array([5], np.uint64)
    one = agent.search(oa["observation"][None], mask, key, policy)
    two = agent.search(ob["observation"][None], mask, key, policy)
    np.testing.assert_array_equal(one, two)
    assert one.sum() == 16
    gumbel = PolicySearchAgent(seed=0, sims=16, leaves=4, path=valued, gumbel=16)
    one, two = (gumbel.search_root(o["observation"][None], mask, key, policy) for o in (oa, ob))
    np.testing.assert_array_equal(one["visits"], two["visits"])
    assert one["action"] == two["action"]


@pytest.mark.parametrize("gumbel", [0, 16])
def test_plays_whole_games_deterministically(valued, gumbel):
    """The same seed plays the same 2-player game against greedy, with a PUCT root and with
    Gumbel's; every move is legal."""
    def play(seed):
        bots = [PolicySearchAgent(seed=1, sims=12, leaves=4, path=valued, gumbel=gumbel), make_agent("greedy", seed=2)]
        return play_checked(bots, seed, num_players=2)

    assert play(21) == play(21)


SHIPPED_4P = "bali_env/bots/policies/bali_4p.npz"


def _seat_head(inputs: int, seats: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.normal(0, 0.05, (16, inputs)).astype(np.float32), np.zeros(16, np.float32)),
            (rng.normal(0, 0.3, (seats, 16)).astype(np.float32), np.arange(seats, dtype=np.float32) / 10)]


def test_a_per_seat_value_head_gives_every_seats_share(tmp_path):
    """A 4-player file may carry a head with one output per seat: its softmax is every seat's
    share (rows add up to 1, the reading seat's is what ``forward(value=True)`` gives); a
    one-output head splits the rest equally among the others; a head with another count of
    outputs is refused, and so is a per-seat head in 2 players (one output says it all there)."""
    weights, meta = ExportedPolicy(SHIPPED_4P).arrays()
    head = _seat_head(meta["obs_dim"], 4)
    write_policy(weights, meta, tmp_path / "seats.npz", value=head)
    policy = ExportedPolicy(tmp_path / "seats.npz")
    env = bali_env.raw_env(num_players=4)
    env.reset(seed=3)
    o = env.observe(env.agent_selection)
    x = policy.input(o["observation"][None], o["action_mask"][None])
    out = np.maximum(x @ head[0][0].T + head[0][1], 0) @ head[1][0].T + head[1][1]
    by_hand = np.exp(out) / np.exp(out).sum()
    shares = policy.seat_values(x, 4)
    assert shares.shape == (1, 4)
    np.testing.assert_allclose(shares, by_hand, rtol=1e-5)
    np.testing.assert_allclose(policy.forward(x, value=True), by_hand[:, 0], rtol=1e-5)
    one = ExportedPolicy.from_arrays(weights, meta, value=_value_head(meta["obs_dim"]))
    v = one.forward(x, value=True)[0]
    np.testing.assert_allclose(one.seat_values(x, 4), [[v, (1 - v) / 3, (1 - v) / 3, (1 - v) / 3]], rtol=1e-6)
    with pytest.raises(ValueError, match="gives 3 outputs, expected 1 or 4"):
        write_policy(weights, meta, tmp_path / "bad.npz", value=_seat_head(meta["obs_dim"], 3))
    w2, meta2 = ExportedPolicy(SHIPPED).arrays()
    with pytest.raises(ValueError, match="gives 2 outputs, expected 1$"):
        write_policy(w2, meta2, tmp_path / "bad.npz", value=_seat_head(meta2["obs_dim"], 2))
    assert not (tmp_path / "bad.npz").exists()


def test_each_node_gains_the_share_of_the_seat_that_moved_into_it():
    """``puct_expand`` backs every seat's share up the path: with seat 1 to move at the leaf and
    the head saying (0.1, 0.2, 0.3, 0.4) for seats 1, 2, 3, 0, a node entered by seat 2's move
    gains 0.2, one entered by seat 3's 0.3, one entered by seat 0's 0.4, one by seat 1's 0.1."""
    from bali_env.bots import puct_search as K
    from bali_env.engine import N_ACTIONS, S_NUM_PLAYERS, S_TO_MOVE, STATE_DTYPE, STATE_SIZE

    cap = 6
    value = np.zeros((1, cap))
    mover = np.array([[0, 2, 3, 0, 1, 0]], dtype=np.int64)
    states = np.zeros((1, STATE_SIZE), dtype=STATE_DTYPE)
    states[0, S_NUM_PLAYERS], states[0, S_TO_MOVE] = 4, 1
    paths = np.zeros((1, 8), dtype=np.int64)
    paths[0, :5] = [0, 1, 2, 3, 4]
    logits = np.zeros((1, cap, N_ACTIONS), dtype=np.float32)
    prior_v, expanded = np.zeros((1, cap)), np.zeros((1, cap), dtype=np.int8)
    descents = K.Descents(states, paths, np.array([4]), np.zeros((1, 1), np.float32), np.zeros((1, 1), np.int8))
    tree = K.PuctTrees(np.zeros((1, cap, N_ACTIONS), np.int32), np.zeros((1, cap), np.int64), value, mover, logits,
                       prior_v, expanded, np.zeros(1, np.int64))
    K.puct_expand(np.array([0]), np.zeros((1, N_ACTIONS)), np.array([[0.1, 0.2, 0.3, 0.4]]), descents, tree)
    np.testing.assert_allclose(value[0], [0.0, 0.2, 0.3, 0.4, 0.1, 0.0])
    assert prior_v[0, 4] == 0.1 and expanded[0].tolist() == [0, 0, 0, 0, 1, 0]


def test_plays_four_player_games_with_a_per_seat_head(tmp_path):
    """``ppo+search`` on a per-seat head plays whole 4-player games, legally and reproducibly."""
    weights, meta = ExportedPolicy(SHIPPED_4P).arrays()
    write_policy(weights, meta, tmp_path / "seats.npz", value=_seat_head(meta["obs_dim"], 4))

    def play(seed):
        bots = [PolicySearchAgent(seed=1, sims=8, leaves=4, path=tmp_path / "seats.npz")]
        bots += [make_agent("greedy", seed=k) for k in (2, 3, 4)]
        return play_checked(bots, seed, num_players=4)

    assert play(5) == play(5)


def _first_choice(players: int, seed: int = 2) -> dict:
    """The observation of a new game's first decision with a choice (after the forced first pass:
    a forced move is played without searching)."""
    env = bali_env.raw_env(num_players=players)
    env.reset(seed=seed)
    env.step(int(env.observe(env.agent_selection)["action_mask"].argmax()))
    o = env.observe(env.agent_selection)
    assert o["action_mask"].sum() >= 2
    return o


def test_a_per_seat_head_is_cut_to_fewer_seats_and_refused_for_more(tmp_path):
    """A per-seat head searched in a game of fewer seats is cut to them (the 4-player file in 3
    players: three seats' shares, as ``for_players`` gives); in a game of more seats, which its
    outputs cannot cover (the kernels would read past them), check_players and a move both raise
    one line naming the counts, before any search."""
    four = PolicySearchAgent(seed=0, sims=8, leaves=4, path=SHIPPED_4P)
    four.check_players(3)
    searched = four._network_for(3)
    assert searched.value_weights[-1][0].shape[1] == 3 and searched.meta["num_players"] == 3
    cut = ExportedPolicy(SHIPPED_4P).for_players(3)
    assert all(np.array_equal(a, b) for pair in zip(searched.value_weights, cut.value_weights, strict=True)
               for a, b in zip(*pair, strict=True))
    o = _first_choice(3)
    assert o["action_mask"][four.act(o["observation"], o["action_mask"])] == 1

    weights, meta = cut.arrays()
    write_policy(weights, meta, tmp_path / "three.npz", value=cut.value_arrays())
    three = PolicySearchAgent(seed=0, sims=8, leaves=4, path=tmp_path / "three.npz")
    says = "gives 3 seats' shares, fewer than the 4 seats of this game"
    with pytest.raises(ValueError, match=says):
        three.check_players(4)
    o = _first_choice(4)
    with pytest.raises(ValueError, match=says):
        three.act(o["observation"], o["action_mask"])
