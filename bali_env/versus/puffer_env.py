"""The learner-vs-opponents games as a native PufferLib environment, a masked policy for
PufferLib's own trainer (``PuffeRL``), and what that trainer needs to run on a CPU-only PyTorch.

    pip install torch==2.13.0 && pip install -e ".[pufferlib]"
    python examples/pufferlib_bali.py --steps 500000 --games 1000

The environment
    ``BaliPufferEnv(num_envs=256, opponents="random", num_players=2, ...)`` is a
    ``pufferlib.PufferEnv`` over a ``BaliGymVectorEnv`` (``bali_env.versus.vector``: ``num_envs``
    games on the batched engine, the learner's seat rotating per game, the opponents moving inside
    the batch). Each game is one PufferLib agent (``num_agents == num_envs``). As PufferLib's own
    environments, it writes into the buffers the caller hands it (``buf``: ``observations``,
    ``rewards``, ``terminals``, ``truncations``, ``masks``, ``actions``; ``pufferlib.vector``'s
    ``Serial`` and ``Multiprocessing`` hand slices of theirs, shared memory for the latter) or,
    without ``buf``, into its own; ``reset``/``step`` return those arrays and a list of info dicts.
    A game that ends is replaced at once, in the same step (PufferLib's convention, the Gymnasium
    env's ``SAME_STEP`` autoreset): ``terminals[i]`` and the learner's terminal reward come with
    the next game's first observation, which is what PuffeRL's advantage (``1 - done[t+1]``)
    expects. ``truncations`` stays False (a game always ends). Creating one starts Numba's thread
    pool (``bali_env.engine.thread_pool``) and keeps PyTorch's thread count as it was: the pool
    shares PyTorch's OpenMP runtime, and its start would reset the count to the cores' (a
    ``torch.set_num_threads(1)`` made before the first env was found at 2, and PuffeRL ran 7x
    slower beside other jobs on 2 cores).

The action mask
    PufferLib has no action-mask convention, so the mask travels in the observation:
    ``observations[i]`` is float32 ``[337]``, the learner's 293-float observation (``OBS_DIM``,
    docs/observation.md) followed by its 44 legal-action flags as 0.0/1.0 (``OBS_SIZE = 293 + 44``).
    Every mask holds a legal action (at a game's end it is already the next game's).
    ``BaliPufferPolicy`` (an actor and a critic MLP over the 293 floats, PuffeRL's
    ``forward_eval``/``forward`` interface) sets the logits of the illegal actions to
    ``ILLEGAL_LOGIT`` (-1e9): PufferLib's ``sample_logits`` gives them probability 0.

Rules as the Gymnasium vector env's
    An illegal action ends that game with -1 for the learner (the info says ``illegal_action``);
    ``actions`` must be ``num_envs`` integers (ValueError otherwise). Seeding: ``reset(seed=s)``
    deals game j from the seed ``s * num_envs + j`` (and reseeds the opponents), so the same seed
    deals the same games and ``pufferlib.vector``'s per-environment seeds ``s, s + 1, ...`` never
    deal a game twice; ``reset()`` without a seed uses the constructor's ``seed`` the first time
    and goes on dealing afterwards. The infos: when games ended in a step, one dict of lists with a
    value per ended game: ``episode_return``, ``win`` (1, or 1/k of a win shared by k winners) and
    ``illegal_action``; PuffeRL averages them into its ``environment/...`` statistics.

PuffeRL on a CPU-only PyTorch (``load_pufferl``)
    ``pufferlib-core`` 3.0.20 to 3.0.23 pin ``torch==2.9.0`` (the CUDA build) and their compiled
    ``pufferlib/_C`` links ``libcudart``: they cannot be installed beside ``torch 2.13.0+cpu``,
    hence the extra's ``pufferlib-core>=3.0.17,<3.0.20``. In 3.0.17 to 3.0.19
    ``pufferlib/pufferl.py`` imports ``pufferlib._C`` and raises ImportError when it fails, and it
    fails on a CPU-only PyTorch (3.0.18/3.0.19: ``libcudart.so.12`` is missing; 3.0.17's build does
    not match torch 2.13's ABI). ``_C`` only registers one operator that PuffeRL calls,
    ``torch.ops.pufferlib.compute_puff_advantage`` (PufferLib's V-trace-clipped GAE; its CPU
    kernel is ``extensions/pufferlib.cpp``). ``install_advantage_kernel()`` leaves a ``_C`` that
    imports alone; otherwise it registers that operator with ``torch.library`` (same schema,
    ``puff_advantage``: the C++ loop in NumPy, vectorised over the rows, in float32, the same
    result) and puts a stand-in module at ``sys.modules["pufferlib._C"]``. ``load_pufferl()``
    does that, then imports ``pufferlib.pufferl`` and undoes three things its import does to the
    whole process: it turns every ``RuntimeWarning`` into an error, makes Ctrl+C call
    ``os._exit(0)``, and installs rich's traceback hook.

``make_trainer(config, vecenv, policy)`` builds PuffeRL (its full-screen dashboard off unless asked
for); ``puffer_config(**overrides)`` is PuffeRL's configuration for this env on the CPU (PuffeRL takes a
plain dict; ``pufferlib-core`` ships no ``config/default.ini`` for ``load_config``): Adam (the
default Muon needs heavyball), no ``torch.compile``, float32, uniform minibatch sampling
(``prio_alpha=0``), ``bali train``'s PPO sizes (64 steps a game per rollout, minibatches of 2048,
2 epochs).
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
import types
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import pufferlib
import pufferlib.pytorch
import torch
from gymnasium.vector import AutoresetMode

from bali_env import engine as C
from bali_env.engine.thread_pool import start_thread_pool
from bali_env.engine.validate import check_int, check_seed
from bali_env.versus.opponents import DEFAULT_OPPONENTS, OpponentPool
from bali_env.versus.vector import BaliGymVectorEnv

__all__ = ["BaliPufferEnv", "BaliPufferPolicy", "ILLEGAL_LOGIT", "OBS_SIZE", "install_advantage_kernel",
           "load_pufferl", "make_trainer", "puff_advantage", "puffer_config"]

OBS_SIZE = C.OBS_DIM + C.N_ACTIONS  #: the observation (293 floats) followed by the action mask (44)
ILLEGAL_LOGIT = -1e9  #: an illegal action's logit: probability 0 after the softmax
_BUFFERS = ("observations", "rewards", "terminals", "truncations", "teacher_actions", "masks", "actions")


class BaliPufferEnv(pufferlib.PufferEnv):
    """``num_envs`` learner-vs-opponents games as one native PufferLib env (see the module docstring)."""

    def __init__(self, num_envs: int = 256, opponents: str | OpponentPool = DEFAULT_OPPONENTS, num_players: int = 2,
                 oracle: bool = False, demon: bool = False, reward: str = "win_loss", seed: int | None = 0,
                 buf: dict[str, np.ndarray] | None = None) -> None:
        self._seed = None if seed is None else check_seed(seed)
        threads = torch.get_num_threads()
        start_thread_pool()  # Numba's OpenMP pool shares PyTorch's runtime: its start resets PyTorch's threads
        torch.set_num_threads(threads)
        self.gym = BaliGymVectorEnv(num_envs, opponents=opponents, num_players=num_players, oracle=oracle,
                                    demon=demon, reward=reward, autoreset_mode=AutoresetMode.SAME_STEP)
        self.num_agents = self.gym.num_envs
        low = np.zeros(OBS_SIZE, dtype=np.float32)
        high = np.concatenate([C.OBS_HIGH, np.ones(C.N_ACTIONS)]).astype(np.float32)
        self.single_observation_space = gymnasium.spaces.Box(low=low, high=high, dtype=np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(C.N_ACTIONS)
        if buf is not None:
            _check_buffers(buf, self.num_agents)
        super().__init__(buf)
        self.infos: list[dict[str, Any]] = []
        self._dealt = False

    @property
    def num_players(self) -> int:
        """Seats per game."""
        return self.gym.num_players

    @property
    def learner_seat(self) -> np.ndarray:
        """The learner's seat in each game now."""
        return self.gym.learner_seat

    @property
    def episode_returns(self) -> list[float]:
        """The learner's return of every finished game, in order."""
        return self.gym.episode_returns

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions now, bool ``[num_envs, 44]`` (the observation's last 44 floats)."""
        return self.observations[:, C.OBS_DIM:] > 0.5

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Deal every game (game j from seed ``seed * num_envs + j``), seat the learners, play the
        opponents up to them; ``(observations, [])``."""
        if seed is None and not self._dealt:
            seed = self._seed
        if seed is not None:
            seed = check_seed(seed) * self.num_agents
        obs, infos = self.gym.reset(seed=seed)
        self._dealt = True
        self._write(obs, infos["action_mask"])
        self.rewards[:] = 0.0
        self.terminals[:] = False
        self.truncations[:] = False
        self.infos = []
        return self.observations, self.infos

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """The learner's action in every game, then the opponents' moves; the buffers, written in
        place, and the ended games' results (see the module docstring)."""
        if not self._dealt:
            raise RuntimeError("call reset() before step()")
        obs, rewards, terminated, truncated, infos = self.gym.step(np.asarray(actions))
        self._write(obs, infos["action_mask"])
        self.rewards[:] = rewards
        self.terminals[:] = terminated
        self.truncations[:] = truncated
        self.infos = _results(rewards, terminated, infos)
        return self.observations, self.rewards, self.terminals, self.truncations, self.infos

    def close(self) -> None:
        """Release the opponents."""
        self.gym.close()

    def _write(self, obs: np.ndarray, masks: np.ndarray) -> None:
        self.observations[:, :C.OBS_DIM] = obs
        self.observations[:, C.OBS_DIM:] = masks


def _check_buffers(buf: Any, n: int) -> None:
    """PufferLib's buffers for ``n`` agents: every array, each of the right shape and dtype."""
    if not isinstance(buf, dict):
        raise TypeError(f"buf must be a dict of PufferLib's buffers or None, got {type(buf).__name__}")
    missing = [name for name in _BUFFERS if name not in buf]
    if missing:
        raise ValueError(f"buf lacks {', '.join(missing)}")
    wanted = {"observations": ((n, OBS_SIZE), np.float32), "rewards": ((n,), np.float32),
              "terminals": ((n,), np.bool_), "truncations": ((n,), np.bool_), "masks": ((n,), np.bool_)}
    for name, (shape, dtype) in wanted.items():
        array = buf[name]
        if not isinstance(array, np.ndarray) or array.shape != shape or array.dtype != dtype:
            got = f"{array.dtype} {array.shape}" if isinstance(array, np.ndarray) else type(array).__name__
            raise ValueError(f"buf[{name!r}] must be {np.dtype(dtype)} {shape}, got {got}")


def _results(rewards: np.ndarray, terminated: np.ndarray, infos: dict[str, Any]) -> list[dict[str, Any]]:
    """One dict of lists, a value per game that ended (none: an empty list)."""
    ended = np.flatnonzero(terminated)
    if not ended.size:
        return []
    final = infos["final_info"]
    seats = final["learner_seat"][ended]
    winners = final["winners"][ended]
    shares = winners[np.arange(len(ended)), seats] / np.maximum(winners.sum(axis=1), 1)
    return [{"episode_return": rewards[ended].astype(float).tolist(), "win": shares.astype(float).tolist(),
             "illegal_action": final["illegal_action"][ended].astype(float).tolist()}]


class BaliPufferPolicy(torch.nn.Module):
    """A masked actor-critic for PuffeRL: an actor and a critic MLP over the 293 observation floats
    (``hidden`` units each, ReLU, PufferLib's orthogonal ``layer_init``), the illegal actions'
    logits set to ``ILLEGAL_LOGIT`` from the mask that ends each observation. ``env`` (optional,
    PufferLib's ``policy_cls(env)`` convention) is checked to be a Bali PufferLib env."""

    def __init__(self, env: Any = None, hidden: Sequence[int] = (128, 128)) -> None:
        super().__init__()
        if env is not None:
            shape = getattr(env.single_observation_space, "shape", None)
            if shape != (OBS_SIZE,) or getattr(env.single_action_space, "n", None) != C.N_ACTIONS:
                raise ValueError(f"env must have observations of shape ({OBS_SIZE},) and 44 actions (a "
                                 f"BaliPufferEnv), got {shape} and {env.single_action_space}")
        if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Sequence) or not hidden:
            raise TypeError(f"hidden must be a non-empty sequence of layer sizes, got {hidden!r}")
        self.hidden = tuple(check_int("hidden", h, 1) for h in hidden)
        self.hidden_size = self.hidden[-1]
        self.actor = _mlp(C.OBS_DIM, self.hidden, C.N_ACTIONS, last_std=0.01)
        self.critic = _mlp(C.OBS_DIM, self.hidden, 1, last_std=1.0)

    def forward_eval(self, observations: torch.Tensor, state: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(masked logits [B, 44], values [B, 1])`` of a batch of observations ``[B, 337]``."""
        obs = observations.float()
        x, legal = obs[:, :C.OBS_DIM], obs[:, C.OBS_DIM:] > 0.5
        logits = self.actor(x).masked_fill(~legal, ILLEGAL_LOGIT)
        return logits, self.critic(x)

    def forward(self, observations: torch.Tensor, state: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        """PuffeRL's training pass: the same as ``forward_eval``."""
        return self.forward_eval(observations, state)

    @torch.no_grad()
    def act(self, observations: np.ndarray, greedy: bool = True) -> np.ndarray:
        """Actions for a batch of observations ``[B, 337]``: the most likely legal one, or sampled."""
        logits, _ = self.forward_eval(torch.as_tensor(observations))
        if greedy:
            return logits.argmax(dim=1).numpy()
        return torch.multinomial(torch.softmax(logits, dim=1), 1).squeeze(1).numpy()


def _mlp(inputs: int, hidden: tuple[int, ...], outputs: int, last_std: float) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    for width in hidden:
        layers += [pufferlib.pytorch.layer_init(torch.nn.Linear(inputs, width)), torch.nn.ReLU()]
        inputs = width
    layers.append(pufferlib.pytorch.layer_init(torch.nn.Linear(inputs, outputs), std=last_std))
    return torch.nn.Sequential(*layers)


# ---------------------------------------------------------------------------------------------- PuffeRL on the CPU
ADVANTAGE_SCHEMA = ("compute_puff_advantage(Tensor(a!) values, Tensor(b!) rewards, Tensor(c!) dones, "
                    "Tensor(d!) importance, Tensor(e!) advantages, float gamma, float lambda, float rho_clip, "
                    "float c_clip) -> ()")  #: the operator ``pufferlib/_C`` defines (extensions/pufferlib.cpp)
_STAND_IN = "BALI_ENV_STAND_IN"  # the attribute that marks our pufferlib._C stand-in
_LIBRARY: list[Any] = []  # the torch.library registration, kept alive


def puff_advantage(values: torch.Tensor, rewards: torch.Tensor, dones: torch.Tensor, importance: torch.Tensor,
                   advantages: torch.Tensor, *constants: float) -> None:
    """PufferLib's advantage kernel in NumPy, called as the operator is: the five tensors, then
    ``gamma, lam, rho_clip, c_clip``. The loop of its C++ CPU kernel over every row of the
    float32 ``[rows, horizon]`` tensors at once, each operation in float32 in the C++ order (the
    constants rounded to float32 first): for t from ``horizon - 2`` down to 0, with
    ``n = 1 - dones[t+1]``, ``delta = min(importance[t], rho_clip) * (rewards[t+1] + gamma *
    values[t+1] * n - values[t])`` and ``advantages[t] = delta + gamma * lam * min(importance[t],
    c_clip) * advantages[t+1] * n`` (0 for the last column's successor; the last column is left as
    it is). Writes ``advantages`` in place; ValueError for tensors that are not float32, 2-D,
    contiguous, on the CPU and of one shape."""
    if len(constants) != 4:
        raise TypeError(f"puff_advantage takes 4 floats after the tensors (gamma, lam, rho_clip, c_clip), "
                        f"got {len(constants)}")
    gamma, lam, rho_clip, c_clip = constants
    tensors = {"values": values, "rewards": rewards, "dones": dones, "importance": importance,
               "advantages": advantages}
    for name, t in tensors.items():
        if (t.dim() != 2 or t.dtype != torch.float32 or not t.is_contiguous() or t.shape != values.shape
                or t.device.type != "cpu"):
            raise ValueError(f"{name} must be a contiguous 2-D float32 CPU tensor shaped like values "
                             f"{tuple(values.shape)}, got {t.dtype} {tuple(t.shape)} on {t.device}")
    f32 = np.float32
    g, gl = f32(gamma), f32(gamma) * f32(lam)
    imp = importance.detach().numpy()
    # one contiguous row per time step: the loop below reads columns
    v, r = values.detach().numpy().T.copy(), rewards.detach().numpy().T.copy()
    n = (f32(1.0) - dones.detach().numpy()).T.copy()
    rho, c = np.fmin(imp, f32(rho_clip)).T.copy(), np.fmin(imp, f32(c_clip)).T.copy()
    out = np.empty_like(v)
    last = np.zeros(v.shape[1], dtype=f32)
    for t in range(v.shape[0] - 2, -1, -1):
        delta = rho[t] * (r[t + 1] + g * v[t + 1] * n[t + 1] - v[t])
        last = delta + gl * c[t] * last * n[t + 1]
        out[t] = last
    advantages.detach().numpy()[:, :-1] = out[:-1].T


def _register_advantage_op() -> None:
    """Define ``pufferlib::compute_puff_advantage`` (unless defined) with ``puff_advantage`` as its
    CPU kernel (nothing when the operator already has one: the check PuffeRL itself makes)."""
    defined = hasattr(torch.ops.pufferlib, "compute_puff_advantage")
    if defined and torch._C._dispatch_has_kernel_for_dispatch_key("pufferlib::compute_puff_advantage", "CPU"):
        return
    library = torch.library.Library("pufferlib", "FRAGMENT")
    if not defined:
        library.define(ADVANTAGE_SCHEMA)
    library.impl("compute_puff_advantage", puff_advantage, "CPU")
    _LIBRARY.append(library)


def install_advantage_kernel() -> str:
    """Make ``from pufferlib import _C`` work: ``"pufferlib._C"`` when PufferLib's compiled module
    imports (nothing is changed), else register the operator (``puff_advantage``) and put a
    stand-in module at ``sys.modules["pufferlib._C"]``: ``"stand-in"``."""
    current = sys.modules.get("pufferlib._C")
    if getattr(current, _STAND_IN, False):
        return "stand-in"
    try:
        importlib.import_module("pufferlib._C")
        return "pufferlib._C"
    except ImportError:
        pass
    _register_advantage_op()
    stand_in = types.ModuleType("pufferlib._C", "bali-env's stand-in for PufferLib's compiled module: "
                                "torch.ops.pufferlib.compute_puff_advantage is bali_env.versus.puffer_env"
                                ".puff_advantage (PufferLib's own _C did not load)")
    setattr(stand_in, _STAND_IN, True)
    sys.modules["pufferlib._C"] = stand_in
    pufferlib._C = stand_in
    return "stand-in"


def load_pufferl() -> types.ModuleType:
    """``pufferlib.pufferl`` (PuffeRL), its advantage kernel installed first
    (``install_advantage_kernel``); the warning filters, the Ctrl+C handler and ``sys.excepthook``
    are as they were before the import."""
    install_advantage_kernel()
    if "pufferlib.pufferl" in sys.modules:
        return sys.modules["pufferlib.pufferl"]
    main = threading.current_thread() is threading.main_thread()
    handler, hook = signal.getsignal(signal.SIGINT) if main else None, sys.excepthook
    try:
        with warnings.catch_warnings():  # pufferl does warnings.filterwarnings("error", category=RuntimeWarning)
            module = importlib.import_module("pufferlib.pufferl")
    finally:
        sys.excepthook = hook
        if main and handler is not None:
            signal.signal(signal.SIGINT, handler)
    return module


#: PuffeRL's settings for Bali on the CPU (every key its trainer reads); see ``puffer_config``
PUFFERL_DEFAULTS: dict[str, Any] = {
    "env": "bali", "seed": 0, "torch_deterministic": True, "device": "cpu", "cpu_offload": False,
    "use_rnn": False, "compile": False, "compile_mode": "default", "compile_fullgraph": False,
    "precision": "float32", "optimizer": "adam", "learning_rate": 3e-4, "adam_beta1": 0.9, "adam_beta2": 0.999,
    "adam_eps": 1e-8, "anneal_lr": False, "total_timesteps": 1_000_000, "batch_size": "auto", "bptt_horizon": 64,
    "minibatch_size": 2048, "max_minibatch_size": 2048, "update_epochs": 2, "gamma": 0.997, "gae_lambda": 0.95,
    "clip_coef": 0.2, "vf_coef": 0.5, "vf_clip_coef": 0.2, "ent_coef": 0.01, "max_grad_norm": 0.5,
    "vtrace_rho_clip": 1.0, "vtrace_c_clip": 1.0, "prio_alpha": 0.0, "prio_beta0": 1.0,
    "checkpoint_interval": 1_000_000, "data_dir": "experiments",
}


def puffer_config(**overrides: Any) -> dict[str, Any]:
    """``PUFFERL_DEFAULTS`` with ``overrides`` (ValueError naming a key PuffeRL does not read)."""
    unknown = sorted(set(overrides) - set(PUFFERL_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown PuffeRL settings: {', '.join(unknown)} (known: {', '.join(PUFFERL_DEFAULTS)})")
    return {**PUFFERL_DEFAULTS, **overrides}


_QUIET: list[type] = []  # the quiet PuffeRL class, made on first use (pufferl is imported late)


def make_trainer(config: dict[str, Any], vecenv: Any, policy: torch.nn.Module, dashboard: bool = False) -> Any:
    """``pufferlib.pufferl.PuffeRL(config, vecenv, policy)`` (``load_pufferl``), without its
    full-screen dashboard unless ``dashboard`` (it redraws after every update), and without the
    warning its float32 autocast gives on the CPU (autocast takes only 16-bit types there: off)."""
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict (puffer_config()), got {type(config).__name__}")
    pufferl = load_pufferl()
    cls = pufferl.PuffeRL if dashboard else _quiet_trainer(pufferl)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="In CPU autocast", category=UserWarning)
        return cls(config, vecenv, policy)


def _quiet_trainer(pufferl: types.ModuleType) -> type:
    """PuffeRL with a dashboard that draws nothing (made once)."""
    if not _QUIET:
        _QUIET.append(type("QuietPuffeRL", (pufferl.PuffeRL,), {"print_dashboard": lambda self, *a, **k: None}))
    return _QUIET[0]

