"""Ready-made datasets: `digits()` (bundled with scikit-learn, offline) and `mnist(path)`
(the standard IDX files). Both return (train, test) TensorDatasets of images
float32 [N, 1, H, W] in [0, 1] and labels int64 [N]."""
from __future__ import annotations

import gzip
import os

import numpy as np

from ....core.errors import FgradValueError
from .dataset import TensorDataset, _wrap

__all__ = ["digits", "mnist", "read_idx"]

DIGITS_SEED = 0


def digits(test_fraction: float = 0.2, seed: int = DIGITS_SEED):
    """scikit-learn's 1,797 8x8 handwritten digits, split 80/20 with a fixed seed.

    Returns (train, test): TensorDatasets of images float32 [N, 1, 8, 8] (pixel
    values 0..16 divided by 16) and labels int64 [N]."""
    try:
        # optional dependency (the examples/test extra), needed only for this dataset
        from sklearn.datasets import load_digits
    except ImportError:
        raise ImportError("fgrad.torch.utils.data.datasets.digits() needs scikit-learn, which bundles the "
                          "digits images: pip install scikit-learn") from None
    if not 0.0 < test_fraction < 1.0:
        raise FgradValueError(f"digits: test_fraction must be in (0, 1), got {test_fraction}")
    bunch = load_digits()
    images = (bunch.images.astype(np.float32) / np.float32(16.0)).reshape(-1, 1, 8, 8)
    labels = bunch.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(round(len(labels) * test_fraction))
    test_idx, train_idx = order[:n_test], order[n_test:]
    return (_dataset(images[train_idx], labels[train_idx]),
            _dataset(images[test_idx], labels[test_idx]))


def _dataset(images, labels):
    return TensorDataset(_wrap(np.ascontiguousarray(images)), _wrap(np.ascontiguousarray(labels)))


_IDX_DTYPES = {0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"),
               0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(path) -> np.ndarray:
    """Read one IDX file (gzipped or not): the format of the MNIST distribution."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise FgradValueError(f"{path}: corrupt gzip data ({e})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise FgradValueError(f"{path}: not an IDX file (bad magic number {raw[:4].hex() or 'empty'}; "
                         "expected 00 00 <type> <ndim>)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise FgradValueError(f"{path}: unknown IDX data type code 0x{code:02x}")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise FgradValueError(f"{path}: truncated IDX header ({len(raw)} bytes for {ndim} dimensions)")
    dims = tuple(int(d) for d in np.frombuffer(raw, ">u4", ndim, 4))
    dtype = _IDX_DTYPES[code]
    want = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != want:
        raise FgradValueError(f"{path}: IDX header says shape {dims} ({want} bytes of data) but the file "
                         f"holds {len(raw) - header} bytes after the header")
    return np.frombuffer(raw, dtype, offset=header).reshape(dims).astype(dtype.newbyteorder("="))


_MNIST_FILES = {
    "train_images": ("train-images-idx3-ubyte", "train-images.idx3-ubyte"),
    "train_labels": ("train-labels-idx1-ubyte", "train-labels.idx1-ubyte"),
    "test_images": ("t10k-images-idx3-ubyte", "t10k-images.idx3-ubyte"),
    "test_labels": ("t10k-labels-idx1-ubyte", "t10k-labels.idx1-ubyte"),
}


def _find(root, names):
    for name in names:
        for candidate in (name, name + ".gz"):
            p = os.path.join(root, candidate)
            if os.path.isfile(p):
                return p
    return None


def mnist(path):
    """MNIST (or any dataset in its IDX layout, e.g. Fashion-MNIST) from the directory
    `path` holding train-images-idx3-ubyte, train-labels-idx1-ubyte,
    t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (each optionally .gz; a
    `raw/` or `MNIST/raw/` subdirectory as torchvision leaves it is found too).

    Returns (train, test): images float32 [N, 1, 28, 28] scaled to [0, 1] (divided by
    255) and labels int64 [N]."""
    root = os.fspath(path)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"mnist: directory {root!r} does not exist. Download the four IDX "
                                "files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
                                "t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz) into it.")
    for sub in ("", "raw", os.path.join("MNIST", "raw")):
        d = os.path.join(root, sub)
        found = {k: _find(d, names) for k, names in _MNIST_FILES.items()}
        if all(found.values()):
            break
    else:
        found = {k: _find(root, names) for k, names in _MNIST_FILES.items()}
        missing = [_MNIST_FILES[k][0] for k, v in found.items() if v is None]
        raise FileNotFoundError(f"mnist: {root!r} lacks {', '.join(missing)} (optionally .gz). "
                                "Expected the four standard MNIST IDX files in that directory.")
    out = []
    for split in ("train", "test"):
        images = read_idx(found[f"{split}_images"])
        labels = read_idx(found[f"{split}_labels"])
        if images.ndim != 3:
            raise FgradValueError(f"{found[f'{split}_images']}: expected images of shape [N, H, W], "
                             f"got {images.shape}")
        if labels.ndim != 1:
            raise FgradValueError(f"{found[f'{split}_labels']}: expected labels of shape [N], "
                             f"got {labels.shape}")
        if len(images) != len(labels):
            raise FgradValueError(f"mnist: {split} split has {len(images)} images but {len(labels)} labels")
        scale = np.float32(255.0) if images.dtype == np.uint8 else np.float32(max(images.max(), 1))
        x = (images.astype(np.float32) / scale)[:, None, :, :]
        out.append(_dataset(x, labels.astype(np.int64)))
    return tuple(out)
