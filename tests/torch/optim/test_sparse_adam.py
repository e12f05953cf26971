"""optim.SparseAdam against PyTorch 2.13: its argument checks and defaults, and its refusal of
dense gradients (fgrad's gradients are all dense, nn.Embedding(sparse=True)'s too)."""
from __future__ import annotations

import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the exception is what is compared)
        return type(e), str(e).splitlines()[0]
    return None


@pytest.mark.parametrize("kwargs", [dict(lr=0.0), dict(lr=-1.0), dict(eps=0.0), dict(betas=(1.0, 0.9)),
                                    dict(betas=(0.9, -0.1))])
def test_argument_checks_are_torchs(kwargs):
    f = _error(lambda: ftorch.optim.SparseAdam([ftorch.nn.Parameter(ftorch.ones(2))], **kwargs))
    t = _error(lambda: torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(2))], **kwargs))
    assert f is not None and issubclass(f[0], t[0]) and f[1] == t[1]


def test_complex_params_refused_and_defaults():
    for lib in (ftorch, torch):
        with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 1\]\]: SparseAdam does not support"):
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2)),
                                  lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))])
    f = ftorch.optim.SparseAdam([ftorch.nn.Parameter(ftorch.ones(2))])
    t = torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(2))])
    assert f.defaults == t.defaults


def test_dense_gradients_refused_with_torchs_message():
    lin_f, lin_t = ftorch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    lin_f(ftorch.ones(1, 3)).sum().backward()
    lin_t(torch.ones(1, 3)).sum().backward()
    f = _error(ftorch.optim.SparseAdam(lin_f.parameters()).step)
    t = _error(torch.optim.SparseAdam(lin_t.parameters()).step)
    assert issubclass(f[0], t[0]) and f[1].startswith(t[1])
    # nn.Embedding(sparse=True): torch's gradient is sparse and SparseAdam steps; fgrad's is dense
    emb = ftorch.nn.Embedding(5, 2, sparse=True)
    emb(ftorch.tensor([1, 3])).sum().backward()
    assert not emb.weight.grad.is_sparse
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        ftorch.optim.SparseAdam(emb.parameters()).step()
    # no gradient, nothing to refuse: the closure's loss comes back
    opt = ftorch.optim.SparseAdam([ftorch.nn.Parameter(ftorch.ones(2))])
    assert opt.step(lambda: 3.0) == 3.0
