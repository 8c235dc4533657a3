"""The environments' names in the ecosystems' registries: ``register_envs`` puts
``bali_env/Bali-v0`` in Gymnasium's (``gymnasium.make``; ``gymnasium.make_vec`` on the batched
engine) and ``bali_v0`` in PettingZoo's, when the installed PettingZoo has one.

Cheap and idempotent: it registers names and entry points as strings (nothing of the environments
is imported until one is made), each only once, however often it is called; it reads Gymnasium's
registry from ``gymnasium.envs.registration``, which is whole even while ``gymnasium`` itself is
still being imported. It is the package's ``gymnasium.envs`` entry point (``pyproject.toml``):

- Gymnasium before 1.0 calls it when ``gymnasium`` is imported, so ``gymnasium.make("bali_env/Bali-v0")``
  works without ``import bali_env``;
- Gymnasium 1.0 dropped entry-point plugins: there ``gymnasium.make("bali_env:bali_env/Bali-v0")`` imports
  the package (which registers) and makes the env, without an ``import bali_env`` of one's own.
"""

from __future__ import annotations

GYMNASIUM_ID = "bali_env/Bali-v0"  #: ``gymnasium.make(GYMNASIUM_ID)``: one learner's seat against bots
GYMNASIUM_MAKE_ID = f"bali_env:{GYMNASIUM_ID}"  #: the same through Gymnasium's ``module:id`` (imports bali_env)
PETTINGZOO_ID = "bali_v0"  #: the AEC env in PettingZoo's registry (it writes it ``bali-v0``)


def register_envs() -> None:
    """Register ``GYMNASIUM_ID`` with Gymnasium and ``PETTINGZOO_ID`` with PettingZoo's registry
    (when there is one); a name already there is left as it is."""
    from gymnasium.envs.registration import register, registry

    if GYMNASIUM_ID not in registry:
        register(id=GYMNASIUM_ID, entry_point="bali_env.versus.single:BaliSingleAgentEnv",
                 vector_entry_point="bali_env.versus.vector:BaliGymVectorEnv")
    try:
        from pettingzoo.env_registry.registration import aec_registry, register as pettingzoo_register
    except ImportError:  # older PettingZoo: no registry
        return
    if not {PETTINGZOO_ID, PETTINGZOO_ID.replace("_", "-")} & set(aec_registry):
        pettingzoo_register("aec", PETTINGZOO_ID, entry_point="bali_env.envs.bali_v0:env")


__all__ = ["GYMNASIUM_ID", "GYMNASIUM_MAKE_ID", "PETTINGZOO_ID", "register_envs"]
