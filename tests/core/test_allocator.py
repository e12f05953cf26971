"""glibc's malloc thresholds (fgrad/core/allocator.py): set once, by the first backward pass of
a process (either door), unless the user opted out or set them; and what they are for: an
eager gradient loop on mid-sized arrays reuses its freed memory instead of faulting it in."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.core import allocator


@pytest.fixture
def fresh_state(monkeypatch):
    calls = []
    monkeypatch.setitem(allocator._STATE, "tuned", False)
    monkeypatch.setattr(allocator, "tune_malloc", lambda: calls.append(1) or True)
    monkeypatch.delenv("FGRAD_TUNE_MALLOC", raising=False)
    return calls


def test_the_first_backward_pass_tunes_once(fresh_state):
    fgrad.grad(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3))
    fgrad.grad(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3))
    assert fresh_state == [1]


def test_the_facades_first_backward_tunes_too(fresh_state):
    import fgrad.torch as torch
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    assert fresh_state == [1]
    torch.optim.SGD([x], lr=0.1)  # (an optimizer alone changes nothing)
    assert fresh_state == [1]


def test_opting_out_keeps_glibcs_defaults(fresh_state, monkeypatch):
    monkeypatch.setenv("FGRAD_TUNE_MALLOC", "0")
    fgrad.grad(lambda x: fnp.sum(x * x))(np.ones(3))
    assert fresh_state == []


@pytest.mark.parametrize("env", [{"MALLOC_TRIM_THRESHOLD_": "1000000"}, {"MALLOC_MMAP_THRESHOLD_": "65536"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1000000"}])
def test_settings_the_user_made_are_left_alone(monkeypatch, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert allocator.tune_malloc() is False


_LOOP = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    import fgrad, fgrad.numpy as fnp

    def chain(x):
        for _ in range(20):
            x = fnp.sin(x) * 1.01 + fnp.tanh(x) * 0.5
        return fnp.sum(x)
    g = fgrad.grad(chain)
    for n in (1000, 10_000):  # (the smaller size first: glibc's own adjustment has not run)
        x = np.linspace(-1, 1, n)
        for _ in range(10):
            g(x)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(20):
            g(x)
    print(json.dumps((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20))
""")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc")
def test_an_eager_gradient_loop_reuses_its_memory():
    """Without the tuning, each call of this loop's gradient at 10^4 elements faulted in ~1,000
    fresh pages (its freed arrays went back to the kernel), a third of its time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "FGRAD_TUNE_MALLOC"}
    proc = subprocess.run([sys.executable, "-c", _LOOP], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) < 50
