"""format() / f-strings of Tensors, against PyTorch: a plain 0-d tensor formats as its number
(training scripts print f"loss {loss}" and f"{loss:.4f}"), everything else as its repr."""
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

CASES = [
    (lambda t: t.tensor(4.0), ""),
    (lambda t: t.tensor(4.0), ".3f"),
    (lambda t: t.tensor(0.1234567, dtype=t.float32), ""),
    (lambda t: t.tensor(3), ""),
    (lambda t: t.tensor(3), "5d"),
    (lambda t: t.tensor(True), ""),
    (lambda t: t.tensor(2.5, requires_grad=True) * 2, ""),
    (lambda t: t.tensor([1.0, 2.0]), ""),
    (lambda t: t.tensor([[1, 2], [3, 4]]), ""),
    (lambda t: t.nn.Parameter(t.tensor(2.0)), ""),
]


@pytest.mark.parametrize("make, spec", CASES)
def test_format_matches_torch(make, spec):
    assert format(make(ftorch), spec) == format(make(torch), spec)


def test_format_spec_on_a_non_scalar_raises_as_torch():
    with pytest.raises(TypeError):
        format(torch.tensor([1.0, 2.0]), ".2f")
    with pytest.raises(TypeError):
        format(ftorch.tensor([1.0, 2.0]), ".2f")


def test_classes_print_under_their_public_module():
    # type(x) prints <class 'torch.Tensor'> in PyTorch: fgrad's is fgrad.torch's, and pickle
    # finds the class there
    import pickle
    for make in (lambda t: t.ones(2), lambda t: t.ones(2, requires_grad=True) * 2,
                 lambda t: t.nn.Parameter(t.ones(2))):
        assert repr(type(make(ftorch))) == repr(type(make(torch))).replace("'torch.", "'fgrad.torch.")
    assert pickle.loads(pickle.dumps(ftorch.Tensor)) is ftorch.Tensor
