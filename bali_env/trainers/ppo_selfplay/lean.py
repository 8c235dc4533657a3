"""A lean PPO trainer beside MaskablePPO: the same network, losses and settings, less overhead.

``bali train --trainer lean`` uses it; ``--trainer sb3`` (the default, the supported trainer) uses
sb3-contrib's ``MaskablePPO``. Both play the same ``BaliSB3VecEnv`` games against the same
opponent pool and write the same files (``final.npz``, ``summary.json``, ``progress.csv``...;
the lean model itself is saved as ``.pt`` instead of ``.zip``).

Why a second trainer: with 512 games and a 128x128 network, MaskablePPO trains at about 21,000
env steps/s against random opponents on 2 cores, short of 30,000. What is left besides the
network's arithmetic is per-step Python around PyTorch: a ``MaskableCategorical`` distribution
object per forward pass (re-masking every logit row, ``logsumexp``), per-step conversions and
copies into the rollout buffer, and the buffer's sample reshuffling. ``LeanPPO`` keeps the
algorithm and swaps the machinery:

- one forward pass per step computes logits and values; illegal actions get -1e8 (as
  MaskablePPO), the action is drawn by the Gumbel-max trick from a seeded generator;
- the rollout is stored in preallocated tensors (observations read straight from the env);
- the update is MaskablePPO's: GAE (gamma, lambda 0.95), advantages normalised per minibatch,
  clipped surrogate (0.2), value loss MSE x 0.5, entropy bonus over the legal actions, gradients
  clipped to norm 0.5, Adam (eps 1e-5), orthogonal initialisation as in SB3.

The network has SB3's layout (``mlp_extractor.policy_net``/``value_net``, ``action_net``,
``value_net``), so ``bali_env.bots.ppo.export_policy`` exports either trainer's policy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from bali_env.engine import N_ACTIONS, OBS_DIM

MASKED = -1e8  #: the logit of an illegal action (what MaskablePPO uses)


def _mlp(inputs: int, sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip([inputs, *sizes[:-1]], sizes, strict=True):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs of the given hidden sizes (SB3's ``MlpPolicy`` layout); the
    critic also reads ``critic_extra`` privileged features when given
    (``bali_env.trainers.ppo_selfplay.privileged``)."""

    def __init__(self, sizes: list[int], activation: type[nn.Module], critic_extra: int = 0,
                 inputs: int = OBS_DIM) -> None:
        super().__init__()
        self.activation_fn = activation
        self.mlp_extractor = nn.Module()
        self.mlp_extractor.policy_net = _mlp(inputs, sizes, activation)
        self.mlp_extractor.value_net = _mlp(inputs + critic_extra, sizes, activation)
        self.action_net = nn.Linear(sizes[-1], N_ACTIONS)
        self.value_net = nn.Linear(sizes[-1], 1)
        gain = float(np.sqrt(2))
        for module, g in ((self.mlp_extractor, gain), (self.action_net, 0.01), (self.value_net, 1.0)):
            for layer in module.modules():
                if isinstance(layer, nn.Linear):
                    nn.init.orthogonal_(layer.weight, gain=g)
                    nn.init.zeros_(layer.bias)

    def forward(self, obs: torch.Tensor, masks: torch.Tensor,
                extra: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked action log-probabilities [B, N_ACTIONS] and values [B]."""
        logits = self.action_net(self.mlp_extractor.policy_net(obs)).masked_fill(~masks, MASKED)
        critic_in = obs if extra is None else torch.cat([obs, extra], dim=1)
        values = self.value_net(self.mlp_extractor.value_net(critic_in)).squeeze(-1)
        return torch.log_softmax(logits, dim=-1), values


@dataclass(frozen=True)
class PPOSettings:
    """PPO's settings, by MaskablePPO's names: Adam's learning rate ``lr``, ``n_steps`` steps per
    env per rollout, minibatches of ``batch_size``, ``n_epochs`` passes per update, the discount
    ``gamma``, the entropy bonus ``ent_coef``; GAE's ``gae_lambda``, the surrogate's
    ``clip_range``, the value loss's weight ``vf_coef`` and the gradients' norm ``max_grad_norm``
    at SB3's defaults."""

    lr: float
    n_steps: int
    batch_size: int
    n_epochs: int
    gamma: float
    ent_coef: float
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


class LeanPPO:
    """PPO with action masks over a ``BaliSB3VecEnv`` (see the module docstring): the ``ppo``
    settings, a network of ``net`` hidden units with ``activation``, seeded by ``seed``; the
    critic reads the privileged features too with ``privileged_critic``, and only the critic
    learns for the first ``critic_warmup`` env steps."""

    def __init__(self, venv: Any, ppo: PPOSettings, *, net: list[int], activation: type[nn.Module], seed: int,
                 privileged_critic: bool = False, critic_warmup: float = 0.0) -> None:
        torch.manual_seed(seed)
        self.critic_warmup = critic_warmup
        self.venv = venv
        self.extra = 0
        if privileged_critic:
            from bali_env.trainers.ppo_selfplay.privileged import N_PRIVILEGED

            self.extra = N_PRIVILEGED
        inputs = int(venv.observation_space.shape[0])  # the observation, plus the env's features
        self.policy = ActorCritic(net, activation, self.extra, inputs)
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=ppo.lr, eps=1e-5)
        self.n_steps, self.batch_size, self.n_epochs = ppo.n_steps, ppo.batch_size, ppo.n_epochs
        self.gamma, self.gae_lambda, self.clip_range = ppo.gamma, ppo.gae_lambda, ppo.clip_range
        self.ent_coef, self.vf_coef, self.max_grad_norm = ppo.ent_coef, ppo.vf_coef, ppo.max_grad_norm
        self.generator = torch.Generator().manual_seed(seed)
        self.num_timesteps = 0
        self.logger: Any = None
        n, t = venv.num_envs, ppo.n_steps
        self._obs = torch.zeros((t, n, inputs))
        self._masks = torch.zeros((t, n, N_ACTIONS), dtype=torch.bool)
        self._actions = torch.zeros((t, n), dtype=torch.int64)
        self._logp = torch.zeros((t, n))
        self._values = torch.zeros((t, n))
        self._rewards = torch.zeros((t, n))
        self._dones = torch.zeros((t, n))
        self._extra = torch.zeros((t, n, self.extra))
        self._extra_now = np.zeros((n, self.extra), dtype=np.float32)
        self._last_obs: np.ndarray | None = None

    def _privileged(self) -> torch.Tensor | None:
        """The critic's privileged features of every game now (None without them)."""
        if not self.extra:
            return None
        from bali_env.trainers.ppo_selfplay.privileged import privileged_features

        privileged_features(self.venv.games.states, self.venv.learner_seat, self._extra_now)
        return torch.from_numpy(self._extra_now)

    def set_logger(self, logger: Any) -> None:
        """An SB3 logger (``record``/``dump``) for the training metrics."""
        self.logger = logger

    def save(self, path: str | Path | Any) -> None:
        """The network's weights (``torch.save``) to a path or an open binary file."""
        torch.save(self.policy.state_dict(), path)

    def checkpoint(self) -> dict[str, Any]:
        """What ``restore`` needs to continue training: weights, optimizer, generator, step count."""
        return {"policy": self.policy.state_dict(), "optimizer": self.optimizer.state_dict(),
                "generator": self.generator.get_state(), "num_timesteps": self.num_timesteps}

    def restore(self, saved: dict[str, Any]) -> None:
        """Continue from ``checkpoint()``; the next rollout starts from the env's current games."""
        self.policy.load_state_dict(saved["policy"])
        self.optimizer.load_state_dict(saved["optimizer"])
        self.generator.set_state(saved["generator"])
        self.num_timesteps = int(saved["num_timesteps"])
        self._last_obs = self.venv.observations()

    def _act(self, obs: np.ndarray, masks: np.ndarray, extra: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        with torch.no_grad():
            o, m = torch.from_numpy(obs), torch.from_numpy(masks)
            logp, values = self.policy(o, m, extra)
            u = torch.rand(logp.shape, generator=self.generator).clamp_(1e-12, 1.0)
            actions = torch.argmax(logp - torch.log(-torch.log(u)), dim=-1)
            return o, m, actions, logp.gather(1, actions[:, None]).squeeze(1), values

    def collect(self, on_step: Callable[[int], bool]) -> bool:
        """Play ``n_steps`` learner moves in every game; False when ``on_step`` asks to stop."""
        venv = self.venv
        if self._last_obs is None:
            self._last_obs = venv.reset()
        for t in range(self.n_steps):
            extra = self._privileged()
            if extra is not None:
                self._extra[t] = extra
            o, m, actions, logp, values = self._act(self._last_obs, venv.action_masks(), extra)
            self._obs[t], self._masks[t], self._actions[t], self._logp[t], self._values[t] = o, m, actions, logp, values
            venv.step_async(actions.numpy())
            self._last_obs, rewards, dones, _ = venv.step_wait()
            self._rewards[t] = torch.from_numpy(rewards)
            self._dones[t] = torch.from_numpy(dones.astype(np.float32))
            self.num_timesteps += venv.num_envs
            if not on_step(self.num_timesteps):
                return False
        return True

    def _advantages(self) -> tuple[torch.Tensor, torch.Tensor]:
        """GAE advantages and returns of the stored rollout ([T, N] each)."""
        with torch.no_grad():
            _, last = self.policy(torch.from_numpy(self._last_obs), torch.from_numpy(self.venv.action_masks()),
                                  self._privileged())
        adv = torch.zeros_like(self._rewards)
        gae = torch.zeros_like(last)
        for t in reversed(range(self.n_steps)):
            following = last if t == self.n_steps - 1 else self._values[t + 1]
            going = 1.0 - self._dones[t]
            delta = self._rewards[t] + self.gamma * following * going - self._values[t]
            gae = delta + self.gamma * self.gae_lambda * going * gae
            adv[t] = gae
        return adv, adv + self._values

    def _actor(self) -> list[nn.Parameter]:
        """The actor's weights (its MLP and action layer; the critic shares none of them)."""
        return [*self.policy.mlp_extractor.policy_net.parameters(), *self.policy.action_net.parameters()]

    def update(self) -> dict[str, float]:
        """PPO epochs over the stored rollout; returns the training metrics. While the run has played
        at most ``critic_warmup`` env steps, the actor is frozen (no gradient, Adam leaves it alone)
        and only the critic learns: a fresh critic under a trained actor (``--init FILE.npz``)
        first learns its values instead of pushing the actor with noisy advantages."""
        frozen = self.num_timesteps <= self.critic_warmup
        for weight in self._actor():
            weight.requires_grad_(not frozen)
        try:
            out = self._update()
        finally:
            for weight in self._actor():
                weight.requires_grad_(True)
        if self.critic_warmup:
            out["actor_frozen"] = float(frozen)
        return out

    def _update(self) -> dict[str, float]:
        """The PPO epochs of ``update``."""
        adv, returns = self._advantages()
        flat = {"obs": self._obs.flatten(0, 1), "masks": self._masks.flatten(0, 1),
                "actions": self._actions.flatten(), "logp": self._logp.flatten(), "adv": adv.flatten(),
                "returns": returns.flatten(), "extra": self._extra.flatten(0, 1)}
        size = flat["actions"].shape[0]
        stats: dict[str, list[float]] = {"policy_gradient_loss": [], "value_loss": [], "entropy_loss": [],
                                         "approx_kl": [], "clip_fraction": []}
        for _ in range(self.n_epochs):
            order = torch.randperm(size, generator=self.generator)
            for start in range(0, size, self.batch_size):
                idx = order[start : start + self.batch_size]
                logp_all, values = self.policy(flat["obs"][idx], flat["masks"][idx],
                                               flat["extra"][idx] if self.extra else None)
                logp = logp_all.gather(1, flat["actions"][idx, None]).squeeze(1)
                a = flat["adv"][idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                ratio = torch.exp(logp - flat["logp"][idx])
                pg = -torch.min(a * ratio, a * ratio.clamp(1 - self.clip_range, 1 + self.clip_range)).mean()
                v_loss = nn.functional.mse_loss(values, flat["returns"][idx])
                probs = logp_all.exp()
                entropy = -(probs * logp_all).where(flat["masks"][idx], 0.0).sum(-1).mean()
                loss = pg - self.ent_coef * entropy + self.vf_coef * v_loss
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    log_ratio = logp - flat["logp"][idx]
                    stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clip_fraction"].append(float(((ratio - 1).abs() > self.clip_range).float().mean()))
                stats["policy_gradient_loss"].append(pg.item())
                stats["value_loss"].append(v_loss.item())
                stats["entropy_loss"].append(-entropy.item())
        values, rets = self._values.flatten(), returns.flatten()
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        out["explained_variance"] = float(1 - torch.var(rets - values) / torch.var(rets).clamp_min(1e-12))
        return out

    def learn(self, total_timesteps: int, on_step: Callable[[int], bool]) -> None:
        """Alternate rollouts and updates until ``total_timesteps`` env steps or ``on_step(steps)``
        returns False (it is called after every env step, like an SB3 callback)."""
        start = time.time()
        while self.num_timesteps < total_timesteps:
            if not self.collect(on_step):
                return
            metrics = self.update()
            if self.logger is not None:
                for key, value in metrics.items():
                    self.logger.record(f"train/{key}", value)
                self.logger.record("time/total_timesteps", self.num_timesteps)
                self.logger.record("time/fps", int(self.num_timesteps / max(time.time() - start, 1e-9)))
                self.logger.dump(self.num_timesteps)
