"""torch.utils.data's DataPipe names against PyTorch 2.13: functional forms chaining,
DataChunk, the determinism switches and the type checks, run the same way on both."""
import pytest

import fgrad.torch as ft

torch = pytest.importorskip("torch")


def _pipeline(data, tag):
    class Source(data.IterDataPipe[int]):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            yield from range(self.n)

    @data.functional_datapipe(f"twice_{tag}")
    class Twice(data.IterDataPipe):
        def __init__(self, dp):
            self.dp = dp

        def __iter__(self):
            return (2 * x for x in self.dp)

    @data.functional_datapipe(f"at_{tag}")
    class At(data.MapDataPipe):
        def __init__(self, dp, k):
            self.dp, self.k = dp, k

        def __getitem__(self, i):
            return self.dp[i] + self.k

        def __len__(self):
            return len(self.dp)

    class Table(data.MapDataPipe):
        def __getitem__(self, i):
            return i * 10

        def __len__(self):
            return 3

    src = Source(4)
    out = {"chain": list(getattr(src, f"twice_{tag}")()), "repr": repr(getattr(src, f"twice_{tag}")()),
           "map": [getattr(Table(), f"at_{tag}")(1)[i] for i in range(3)],
           "chunk": (data.DataChunk([1, 2]).as_str("> "), list(data.DataChunk((3, 4)).raw_iterator())),
           "is_dataset": isinstance(src, data.IterableDataset) and isinstance(Table(), data.Dataset)}
    with pytest.raises(Exception, match="already taken"):
        data.functional_datapipe(f"twice_{tag}")(Twice)

    class Strs(data.IterDataPipe[str]):
        @data.runtime_validation
        def __iter__(self):
            yield from ["a", 1]
    with data.runtime_validation_disabled():
        out["disabled"] = list(Strs())
    def f(self):
        return iter(())
    with pytest.raises(TypeError, match="Can not decorate function f with 'runtime_validation'"):
        data.runtime_validation(f)
    return out


def test_datapipes_as_torch():
    assert _pipeline(ft.utils.data, "f") == _pipeline(torch.utils.data, "t")


def test_type_checks():
    """The element-type checks (PyTorch 2.13's DataPipe classes no longer carry the `type`
    these read, so there they raise AttributeError; fgrad's check as documented)."""
    data = ft.utils.data

    class Ints(data.IterDataPipe[int]):
        @data.runtime_validation
        def __iter__(self):
            yield from [1, "a"]

    class Take(data.IterDataPipe):
        @data.argument_validation
        def __init__(self, dp: data.IterDataPipe[int]):
            self.dp = dp

        def __iter__(self):
            return iter(self.dp)

    assert Ints().type is int
    with pytest.raises(RuntimeError, match="Expected an instance as subtype of <class 'int'>"):
        list(Ints())
    with data.runtime_validation_disabled():
        assert list(Ints()) == [1, "a"]
    assert next(iter(Take(Ints()))) == 1
    with pytest.raises(TypeError, match="Expected argument 'dp' as a IterDataPipe"):
        Take([1, 2])

    class Strs(data.IterDataPipe[str]):
        def __iter__(self):
            yield from ()
    with pytest.raises(TypeError, match="Expected type of argument 'dp' as a subtype of hint"):
        Take(Strs())


def test_determinism_switches():
    for data in (ft.utils.data, torch.utils.data):
        class Shuffle(data.IterDataPipe):
            def __init__(self, flag=False):
                self.flag = flag

            def __iter__(self):
                yield from ()
        marked = data.non_deterministic(Shuffle)
        assert isinstance(marked(), Shuffle)
        maybe = data.non_deterministic(lambda flag=False: flag)(Shuffle)
        with data.guaranteed_datapipes_determinism():
            with pytest.raises(TypeError, match="is non-deterministic, but you set"):
                marked()
            assert isinstance(maybe(False), Shuffle)
            with pytest.raises(TypeError, match="is non-deterministic with the inputs"):
                maybe(True)
        assert isinstance(marked(), Shuffle)
        with pytest.raises(TypeError, match="Only `IterDataPipe` can be decorated"):
            data.non_deterministic(int)
