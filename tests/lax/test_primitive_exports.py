"""fgrad.lax exports every primitive of lax and the layers below it as `<name>_p`, as jax.lax
does, read from the registry (a new primitive needs no edit to be exported)."""
from __future__ import annotations

import sys

import fgrad.lax
import fgrad.torch  # noqa: F401 (its primitives are in the registry too, and must not be exported)
from fgrad.core.primitive import ALL_PRIMITIVES, Primitive

_BELOW_LAX = ("fgrad.core.", "fgrad.interpreters.", "fgrad.ops.", "fgrad.lax.")


def test_every_primitive_of_lax_and_below_is_exported_by_name():
    homes = {}
    for name, module in list(sys.modules.items()):
        for v in list(vars(module).values()) if name.startswith("fgrad") else ():
            if isinstance(v, Primitive):
                homes.setdefault(id(v), set()).add(name)
    missing, wrong = [], []
    for p in ALL_PRIMITIVES:
        below = any(h.startswith(_BELOW_LAX) or h == "fgrad.lax" for h in homes.get(id(p), ()))
        exported = getattr(fgrad.lax, f"{p.name}_p", None)
        if below and exported is not p:
            missing.append(p.name)
        if not below and exported is p:
            wrong.append(p.name)
    assert not missing, f"primitives fgrad.lax does not export as <name>_p: {missing}"
    assert not wrong, f"primitives of layers above lax exported by fgrad.lax: {wrong}"


def test_exports_are_jax_names_for_the_common_primitives():
    assert fgrad.lax.add_p.name == "add" and fgrad.lax.sin_p.name == "sin"
    assert fgrad.lax.while_p.name == "while" and fgrad.lax.reshape_p.name == "reshape"
    assert not hasattr(fgrad.lax, "rnn_scan_p")  # the facade's own primitive
