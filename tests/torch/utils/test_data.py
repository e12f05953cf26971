"""fgrad.torch.utils.data: datasets, DataLoader, digits() and the MNIST IDX reader."""
import gzip
import struct

import numpy as np
import pytest

import fgrad
from fgrad.torch.utils.data import DataLoader, Dataset, TensorDataset, datasets


def test_tensor_dataset_indexing_and_errors():
    x = fgrad.torch.arange(10).reshape(5, 2)
    y = fgrad.torch.tensor([0, 1, 0, 1, 1])
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    xi, yi = ds[2]
    assert xi.tolist() == [4, 5] and yi.item() == 0
    with pytest.raises(ValueError, match="different first dimensions"):
        TensorDataset(x, fgrad.torch.zeros(4))


def test_dataloader_batches_in_order_and_drop_last():
    x = fgrad.torch.arange(10, dtype=fgrad.torch.float32).reshape(10, 1)
    y = fgrad.torch.arange(10)
    dl = DataLoader(TensorDataset(x, y), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and [tuple(b[0].shape) for b in batches] == [(4, 1), (4, 1), (2, 1)]
    assert isinstance(batches[0][0], fgrad.torch.Tensor) and batches[0][0].dtype == fgrad.torch.float32
    assert batches[2][1].tolist() == [8, 9]
    dl = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True)
    assert len(dl) == 2 and len(list(dl)) == 2


def test_dataloader_shuffle_covers_everything_and_is_seedable():
    ds = TensorDataset(fgrad.torch.arange(50), fgrad.torch.arange(50) * 2)
    fgrad.torch.manual_seed(5)
    first = [b[0].tolist() for b in DataLoader(ds, batch_size=7, shuffle=True)]
    fgrad.torch.manual_seed(5)
    again = [b[0].tolist() for b in DataLoader(ds, batch_size=7, shuffle=True)]
    assert first == again
    flat = [v for b in first for v in b]
    assert sorted(flat) == list(range(50)) and flat != list(range(50))
    for xb, yb in DataLoader(ds, batch_size=7, shuffle=True):
        assert (yb.numpy() == 2 * xb.numpy()).all()  # rows stay aligned
    g1 = [b[0].tolist() for b in DataLoader(ds, batch_size=50, shuffle=True, generator=3)]
    g2 = [b[0].tolist() for b in DataLoader(ds, batch_size=50, shuffle=True, generator=3)]
    assert g1 == g2


def test_dataloader_collates_a_generic_dataset():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": np.full(2, i, np.float32), "y": i * i, "w": float(i)}

    batches = list(DataLoader(Squares(), batch_size=2))
    assert len(batches) == 3
    b = batches[1]
    assert b["x"].tolist() == [[2.0, 2.0], [3.0, 3.0]] and b["x"].dtype == fgrad.torch.float32
    assert b["y"].tolist() == [4, 9] and b["y"].dtype == fgrad.torch.int64
    # Python floats collate to float64, as PyTorch's default_collate does (not the default dtype)
    assert b["w"].tolist() == [2.0, 3.0] and b["w"].dtype == fgrad.torch.float64
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(Squares(), batch_size=0)


def test_digits_dataset():
    pytest.importorskip("sklearn")
    train, test = datasets.digits()
    x, y = train.tensors
    assert len(train) + len(test) == 1797 and len(test) == 359
    assert tuple(x.shape) == (1438, 1, 8, 8) and x.dtype == fgrad.torch.float32 and y.dtype == fgrad.torch.int64
    xv = x.numpy()
    assert xv.min() == 0.0 and xv.max() == 1.0
    assert set(np.unique(y.numpy())) == set(range(10))
    train2, _ = datasets.digits()
    np.testing.assert_array_equal(train2.tensors[1].numpy(), y.numpy())  # fixed split


def _idx(array, code=0x08):
    array = np.asarray(array)
    header = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(">u1" if code == 0x08 else ">f4").tobytes()


def _write_mnist(root, n_train=6, n_test=3, gz=True, h=28):
    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    data = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        imgs = rng.integers(0, 256, (n, h, h), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        for kind, arr in (("images-idx3-ubyte", imgs), ("labels-idx1-ubyte", labels)):
            name = f"{prefix}-{kind}"
            blob = _idx(arr)
            if gz:
                (root / (name + ".gz")).write_bytes(gzip.compress(blob))
            else:
                (root / name).write_bytes(blob)
        data[prefix] = (imgs, labels)
    return data


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_reads_idx_files(tmp_path, gz):
    data = _write_mnist(tmp_path, gz=gz)
    train, test = datasets.mnist(tmp_path)
    x, y = train.tensors
    assert tuple(x.shape) == (6, 1, 28, 28) and x.dtype == fgrad.torch.float32 and y.dtype == fgrad.torch.int64
    np.testing.assert_allclose(x.numpy()[:, 0], data["train"][0] / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y.numpy(), data["train"][1])
    assert len(test) == 3


def test_mnist_finds_torchvision_layout(tmp_path):
    _write_mnist(tmp_path / "MNIST" / "raw")
    train, test = datasets.mnist(tmp_path)
    assert len(train) == 6


def test_mnist_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        datasets.mnist(tmp_path / "nowhere")
    _write_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte"):
        datasets.mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(b"\x08\x03\x00\x01garbage")
    with pytest.raises(ValueError, match="not an IDX file"):
        datasets.mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(_idx(np.zeros(3, np.uint8))[:-1])
    with pytest.raises(ValueError, match="holds 2 bytes"):
        datasets.mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(_idx(np.zeros(4, np.uint8)))
    with pytest.raises(ValueError, match="3 images but 4 labels"):
        datasets.mnist(tmp_path)


def test_read_idx_float_data(tmp_path):
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    (tmp_path / "f.idx").write_bytes(_idx(arr, code=0x0D))
    out = datasets.read_idx(tmp_path / "f.idx")
    np.testing.assert_array_equal(out, arr)
    assert out.dtype.isnative
