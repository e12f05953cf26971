"""fgrad.ad_checkpoint: JAX's jax.ad_checkpoint (checkpoint, checkpoint_name,
checkpoint_policies); see fgrad.custom.checkpoint for what fgrad saves."""
from .custom import checkpoint, checkpoint_name, checkpoint_policies, remat  # noqa: F401

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
