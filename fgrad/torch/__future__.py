"""torch.__future__ on fgrad.torch: the switches of how `Module.to()`/`.float()`/... and
`load_state_dict` hand new values to a module's parameters.

By default a module's parameters keep their identity and take the converted values in place.
`set_overwrite_module_params_on_conversion(True)` makes conversions put new Parameter objects in
their place instead; `set_swap_module_params_on_conversion(True)` makes conversions (and
`load_state_dict`) exchange the old and new tensors' contents with `torch.utils.swap_tensors`,
so each parameter object stays, with the new one's class, attributes and gradient state.
"""
from __future__ import annotations

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]

_STATE = {"overwrite": False, "swap": False}


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions (`to`, `float`, `double`, ...) replace each parameter by a new
    Parameter object (True) rather than updating it in place (False, the default).

    Args:
        value: the new setting.

    Returns:
        None.
    """
    _STATE["overwrite"] = bool(value)


def get_overwrite_module_params_on_conversion() -> bool:
    """The setting `set_overwrite_module_params_on_conversion` made (False by default).

    Returns:
        True or False.
    """
    return _STATE["overwrite"]


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether module conversions and `load_state_dict` swap each parameter with its new value
    through `torch.utils.swap_tensors` (True), which takes precedence over the overwrite setting.

    Args:
        value: the new setting.

    Returns:
        None.
    """
    _STATE["swap"] = bool(value)


def get_swap_module_params_on_conversion() -> bool:
    """The setting `set_swap_module_params_on_conversion` made (False by default).

    Returns:
        True or False.
    """
    return _STATE["swap"]
