"""torch.optim.swap_in_optimizer_params_and_state: run an optimizer's API on other parameters
and another state_dict-shaped state for the duration of a `with` block, then restore it."""
from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ...core.errors import FgradRuntimeError
from .._tensor.tensor import Tensor
from .optimizer import Optimizer

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state: Any) -> dict:
    if not isinstance(state, dict):
        raise FgradRuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed "
                                f"parameter ids to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise FgradRuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed "
                                "parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise FgradRuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_group(idx: int, group: dict, swapin_group: Any) -> list:
    if not isinstance(swapin_group, dict):
        raise FgradRuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise FgradRuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
                                "keyed by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise FgradRuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the "
                                "live optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise FgradRuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match "
                                f"the live optimizer group keys for group {idx}. Keys only in swap-in: "
                                f"{swapin_only}. Keys only in live: {live_only}.")
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Within the block, `optimizer` works on `swapin_parameters` (in the order of its groups'
    parameters) with the state and group options of `swapin_optim_state` (an
    optimizer.state_dict()-shaped dict); on exit its own parameters, options and state come
    back. In-place updates of the swapped-in state's tensors stay in them (fgrad's step
    counters, which its optimizers replace rather than edit, are written back into the
    given tensors, so they advance as PyTorch's in-place counters do); other changes to the
    swapped-in structure stay local.

    Args:
        optimizer: the live optimizer (its state already initialised).
        swapin_parameters: name -> tensor, in the optimizer's parameter order.
        swapin_optim_state: {"state": {id: {...}}, "param_groups": [{..., "params": [ids]}]}.

    Yields:
        None.

    Raises:
        RuntimeError: an uninitialised optimizer, or a swap-in state that does not match its
            groups (PyTorch's checks and messages)."""
    if not optimizer.state:
        raise FgradRuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise FgradRuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise FgradRuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
                                f"dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise FgradRuntimeError("swapin_optim_state has a different number of parameter groups than the live "
                                "optimizer.")
    flat = list(swapin_parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (group, sgroup) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _check_group(idx, group, sgroup)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise FgradRuntimeError(f"{_NAME} requires the explicit parameter state to match "
                                    "optimizer.param_groups ordering.")
        plan.append((group, sgroup, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise FgradRuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter "
                                f"ids from param_groups[*]['params']; got extra keys {extra!r}.")
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    given: list[tuple[dict, dict]] = []
    try:
        swapped: defaultdict = defaultdict(dict)
        for group, sgroup, params in plan:
            group["params"] = params
            for k, v in sgroup.items():
                if k != "params":
                    group[k] = v
            for p, pid in zip(params, sgroup["params"]):
                original = state.get(pid, {})
                swapped[p] = dict(original)
                given.append((original, swapped[p]))
        optimizer.state = swapped
        yield
    finally:
        for original, local in given:
            for k, t in original.items():
                new = local.get(k)
                if isinstance(t, Tensor) and isinstance(new, Tensor) and new is not t \
                        and tuple(new.shape) == tuple(t.shape):
                    t._value[...] = new._value
                    t._vbox[0] += 1
        for group, snap in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snap)
        optimizer.state = original_state
