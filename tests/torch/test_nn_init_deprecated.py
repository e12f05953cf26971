"""nn.init's deprecated names without the underscore (`normal` for `normal_`) on fgrad.torch:
the same initializer, and PyTorch's FutureWarning."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

CALLS = {
    "uniform": ((), {"a": -2.0, "b": 3.0}),
    "normal": ((), {"mean": 1.0, "std": 0.5}),
    "constant": ((0.25,), {}),
    "eye": ((), {}),
    "xavier_uniform": ((), {"gain": 2.0}),
    "xavier_normal": ((), {}),
    "kaiming_uniform": ((), {"a": 0.1}),
    "kaiming_normal": ((), {"mode": "fan_out"}),
    "orthogonal": ((), {}),
    "sparse": ((0.5,), {}),
}


@pytest.mark.parametrize("name", sorted(CALLS) + ["dirac"])
def test_deprecated_name_warns_and_initializes_like_the_underscore_one(name):
    args, kwargs = CALLS.get(name, ((), {}))
    shape = (3, 2, 3) if name == "dirac" else (4, 3)
    for lib in (ftorch, torch):
        lib.manual_seed(3)
        expected = getattr(lib.nn.init, name + "_")(lib.empty(*shape), *args, **kwargs)
        lib.manual_seed(3)
        target = lib.empty(*shape)
        with pytest.warns(FutureWarning, match=rf"^`nn.init.{name}` is now deprecated in favor of "
                                               rf"`nn.init.{name}_`.$"):
            out = getattr(lib.nn.init, name)(target, *args, **kwargs)
        assert out is target and out.tolist() == expected.tolist()
        assert getattr(lib.nn.init, name).__name__ == name
        assert name in lib.nn.init.__all__
