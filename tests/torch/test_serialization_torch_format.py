"""fgrad.torch.save/load in PyTorch's checkpoint format: files written by real torch load in fgrad
(values, dtypes, shapes, shared storages), files written by fgrad load in real torch
(weights_only=True), whole objects round-trip with weights_only=False, and loading never imports
torch."""
import io
import os
import pickle
import subprocess
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import fgrad.torch as ft
import fgrad.torch.nn as fnn

torch = pytest.importorskip("torch")

DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "uint8", "int8", "int16", "int32", "int64",
          "bool"]


def _torch_bytes(obj, **kw) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    buf.seek(0)
    return buf


def _fgrad_bytes(obj) -> io.BytesIO:
    buf = io.BytesIO()
    ft.save(obj, buf)
    buf.seek(0)
    return buf


def _same(fgrad_t, torch_t):
    assert str(fgrad_t.dtype) == str(torch_t.dtype)
    assert tuple(fgrad_t.shape) == tuple(torch_t.shape)
    np.testing.assert_array_equal(fgrad_t.detach().numpy(), torch_t.detach().numpy())


# --- torch writes, fgrad reads -----------------------------------------------------------------------

def test_torch_state_dicts_of_layers_load_into_fgrad_layers():
    torch.manual_seed(0)
    pairs = [(torch.nn.Linear(3, 4), fnn.Linear(3, 4)),
             (torch.nn.Conv2d(2, 3, 3), fnn.Conv2d(2, 3, 3)),
             (torch.nn.LSTM(3, 5, num_layers=2), fnn.LSTM(3, 5, num_layers=2)),
             (torch.nn.BatchNorm2d(3), fnn.BatchNorm2d(3))]
    pairs[3][0](torch.randn(4, 3, 2, 2))  # running stats and num_batches_tracked move off their defaults
    for tm, fm in pairs:
        sd = ft.load(_torch_bytes(tm.state_dict()))
        assert isinstance(sd, OrderedDict) and list(sd) == list(tm.state_dict())
        for k, v in tm.state_dict().items():
            _same(sd[k], v)
        fm.load_state_dict(sd)
        for k, v in tm.state_dict().items():
            _same(fm.state_dict()[k], v)
    assert pairs[3][1].num_batches_tracked.item() == 1


def test_torch_tensors_of_every_dtype_and_python_values():
    obj = {name: (torch.arange(-3, 3) % 2 == 0 if name == "bool" else torch.arange(6).to(getattr(torch, name)))
           for name in DTYPES}
    obj.update(nested={"list": [torch.ones(2), 1, 2.5, "s", None, True, (3, 4)], "empty": torch.zeros(0, 3)},
               scalar=torch.tensor(7.5), size=torch.Size([2, 3]), dtype=torch.float16, device=torch.device("cpu"),
               raw=b"\x00\xff", c=1 + 2j, s={1, 2})
    out = ft.load(_torch_bytes(obj))
    for name in DTYPES:
        _same(out[name], obj[name])
    nested = out["nested"]
    _same(nested["list"][0], torch.ones(2))
    assert nested["list"][1:] == [1, 2.5, "s", None, True, (3, 4)]
    assert tuple(nested["empty"].shape) == (0, 3) and out["scalar"].item() == 7.5 and out["scalar"].dim() == 0
    assert out["size"] == ft.Size([2, 3]) and isinstance(out["size"], ft.Size)
    assert out["dtype"] is ft.float16 and out["device"] == ft.device("cpu")
    assert out["raw"] == b"\x00\xff" and out["c"] == 1 + 2j and out["s"] == {1, 2}


def test_torch_views_and_shared_storages_stay_shared():
    base = torch.arange(20.0)
    obj = {"base": base, "slice": base[2:8], "t": base.view(4, 5).t(), "step": base[::3], "expand": base[:1].expand(3)}
    out = ft.load(_torch_bytes(obj))
    for k, v in obj.items():
        _same(out[k], v)
    assert all(np.shares_memory(out["base"].numpy(), out[k].numpy()) for k in ("slice", "t", "step", "expand"))
    out["base"][3] = 100.0  # as in torch: one storage, so every view sees the write
    assert out["slice"][1].item() == 100.0 and out["t"][3, 0].item() == 100.0 and out["step"][1].item() == 100.0


def test_torch_parameters_and_requires_grad():
    p = torch.nn.Parameter(torch.ones(2))
    frozen = torch.nn.Parameter(torch.zeros(1), requires_grad=False)
    out = ft.load(_torch_bytes({"p": p, "frozen": frozen, "leaf": torch.ones(3, requires_grad=True)}))
    assert isinstance(out["p"], fnn.Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], fnn.Parameter) and not out["frozen"].requires_grad
    assert out["leaf"].requires_grad and out["leaf"].is_leaf


def test_torch_legacy_format():
    base = torch.arange(6.0)
    buf = _torch_bytes({"w": base, "v": base[1:4], "i": torch.tensor([1, 2])}, _use_new_zipfile_serialization=False)
    assert buf.getvalue()[:2] == b"\x80\x02"
    out = ft.load(buf)
    _same(out["w"], base), _same(out["v"], base[1:4]), _same(out["i"], torch.tensor([1, 2]))
    assert np.shares_memory(out["w"].numpy(), out["v"].numpy())


def test_big_endian_archives_are_swapped():
    # what torch writes on a big-endian machine: byteorder "big" and each storage in that order
    data = _torch_bytes({"w": torch.arange(4.0), "i": torch.tensor([1, -2], dtype=torch.int16)}).getvalue()
    swapped = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(swapped, "w") as dst:
        for info in src.infolist():
            raw = src.read(info)
            if info.filename.endswith("byteorder"):
                raw = b"big"
            elif info.filename.endswith("data/0"):
                raw = np.frombuffer(raw, "<f4").astype(">f4").tobytes()
            elif info.filename.endswith("data/1"):
                raw = np.frombuffer(raw, "<i2").astype(">i2").tobytes()
            dst.writestr(info.filename, raw)
    swapped.seek(0)
    out = ft.load(swapped)
    np.testing.assert_array_equal(out["w"].numpy(), [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out["i"].numpy(), [1, -2])


def test_bfloat16_is_refused_with_the_dtype_named():
    if hasattr(ft, "bfloat16"):
        out = ft.load(_torch_bytes({"b": torch.arange(4.0, dtype=torch.bfloat16)}))
        assert out["b"].dtype == ft.bfloat16
        np.testing.assert_array_equal(out["b"].float().numpy(), np.arange(4.0, dtype=np.float32))
    else:
        with pytest.raises(NotImplementedError, match="bfloat16 tensor"):
            ft.load(_torch_bytes({"b": torch.ones(2, dtype=torch.bfloat16)}))


# --- fgrad writes, torch reads -----------------------------------------------------------------------

def test_fgrad_files_load_in_torch_with_weights_only():
    net = fnn.Sequential(fnn.Linear(3, 4), fnn.BatchNorm1d(4), fnn.LSTM(4, 2))
    obj = {name: (ft.arange(-3, 3) % 2 == 0 if name == "bool" else ft.arange(6).to(getattr(ft, name)))
           for name in DTYPES}
    base = ft.arange(12.0)
    obj.update(sd=net.state_dict(), view=base.reshape(3, 4).t(), step=base[1::4], base=base, epoch=3, lr=0.5,
               tags=["a", None, (1, 2.0)], size=ft.Size([1, 2]), dtype=ft.int8, scalar=ft.tensor(2.5),
               flipped=ft.from_numpy(np.arange(5.0)[::-1]),  # negative strides: torch has none, so a copy
               fortran=ft.from_numpy(np.asfortranarray(np.arange(6.0).reshape(2, 3))))
    out = torch.load(_fgrad_bytes(obj))  # weights_only=True, torch's default
    for k in DTYPES + ["view", "step", "base", "scalar", "flipped", "fortran"]:
        _same(obj[k], out[k])
    assert list(out["sd"]) == list(net.state_dict())
    for k, v in net.state_dict().items():
        _same(v, out["sd"][k])
    assert out["epoch"] == 3 and out["lr"] == 0.5 and out["tags"] == ["a", None, (1, 2.0)]
    assert out["size"] == torch.Size([1, 2]) and out["dtype"] is torch.int8
    # views of one tensor share one storage in torch too
    assert out["view"].untyped_storage().data_ptr() == out["base"].untyped_storage().data_ptr()
    assert out["step"].stride() == (4,) and out["step"].storage_offset() == 1
    # torch loads the state dict into its own layers
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.LSTM(4, 2))
    tnet.load_state_dict(out["sd"])


def test_tied_weights_are_written_once_and_stay_tied():
    emb, dec = fnn.Embedding(5, 3), fnn.Linear(3, 5)
    dec.weight = emb.weight  # tied, as in word_language_model's --tied
    sd = {"emb": emb.state_dict()["weight"], "dec": dec.state_dict()["weight"], "bias": dec.state_dict()["bias"]}
    buf = _fgrad_bytes(sd)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        records = [n for n in z.namelist() if "/data/" in n]
    assert len(records) == 2  # the shared weight once, the bias
    out = torch.load(buf)
    assert out["emb"].untyped_storage().data_ptr() == out["dec"].untyped_storage().data_ptr()
    buf.seek(0)
    back = ft.load(buf)
    assert np.shares_memory(back["emb"].numpy(), back["dec"].numpy())


def test_higher_pickle_protocols():
    # torch's weights_only reader knows protocol 2's opcodes only (not 4's frames), for its own files too
    for protocol in (2, 4, 5):
        buf = io.BytesIO()
        ft.save({"w": ft.arange(3.0), "n": 1}, buf, pickle_protocol=protocol)
        buf.seek(0)
        assert torch.load(buf, weights_only=protocol == 2)["w"].tolist() == [0.0, 1.0, 2.0]
        buf.seek(0)
        assert ft.load(buf)["w"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="pickle_protocol"):
        ft.save({}, io.BytesIO(), pickle_protocol=1)


def test_fgrad_archive_layout_matches_torch():
    path_buf = _fgrad_bytes({"w": ft.ones(3), "i": ft.arange(5)})
    data = path_buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        assert {"archive/data.pkl", "archive/version", "archive/byteorder", "archive/data/0", "archive/data/1",
                "archive/.data/serialization_id"} <= set(names)
        assert z.read("archive/byteorder") == b"little"
        assert z.read("archive/data.pkl")[:2] == b"\x80\x02"  # pickle protocol 2
        for info in z.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            n, m = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
                int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
            assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename


# --- weights_only, whole objects -----------------------------------------------------------------------

class Point:
    def __init__(self, x):
        self.x = x


def test_whole_module_round_trip_needs_weights_only_false(tmp_path):
    net = fnn.Sequential(fnn.Linear(3, 4), fnn.ReLU(), fnn.BatchNorm1d(4), fnn.Linear(4, 1))
    net(ft.randn(6, 3))
    net.eval()
    path = tmp_path / "model.pt"
    ft.save(net, path)
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)`weights_only` set to `False`.*Unsupported global: "
                                                     r"GLOBAL fgrad\.torch\.nn\.\S*Sequential.*add_safe_globals"):
        ft.load(path)
    back = ft.load(path, weights_only=False)
    assert type(back) is fnn.Sequential and not back.training
    x = ft.randn(2, 3)
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())
    assert all(isinstance(p, fnn.Parameter) and p.requires_grad for p in back.parameters())
    back[3].weight.sum().backward()
    assert back[3].weight.grad is not None


class Tagged(ft.Tensor):
    """A user's Tensor subclass with an attribute."""


def test_tensor_subclasses_keep_their_class_and_attributes():
    t = ft.arange(3.0).as_subclass(Tagged) if hasattr(ft.Tensor, "as_subclass") else Tagged([0.0, 1.0, 2.0])
    t.tag = "kept"
    back = ft.load(_fgrad_bytes({"t": t}), weights_only=False)["t"]
    assert type(back) is Tagged and back.tag == "kept"
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0])


class TiedLM(fnn.Module):
    """word_language_model's shape: an encoder and a decoder sharing one weight."""

    def __init__(self):
        super().__init__()
        self.encoder = fnn.Embedding(7, 4)
        self.rnn = fnn.LSTM(4, 4)
        self.decoder = fnn.Linear(4, 7)
        self.decoder.weight = self.encoder.weight

    def forward(self, ids):
        out, _ = self.rnn(self.encoder(ids))
        return self.decoder(out)


def test_whole_user_module_keeps_tied_weights():
    model = TiedLM()
    back = ft.load(_fgrad_bytes(model), weights_only=False)
    assert type(back) is TiedLM and back.decoder.weight is back.encoder.weight
    ids = ft.tensor([[1, 2], [3, 4]])
    np.testing.assert_array_equal(back(ids).detach().numpy(), model(ids).detach().numpy())


def test_whole_torch_modules_load_as_fgrad_modules():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.ReLU(), torch.nn.BatchNorm2d(3), torch.nn.Flatten())
    tm(torch.randn(4, 2, 5, 5))
    tm.eval()
    lstm = torch.nn.LSTM(3, 2, num_layers=2, batch_first=True)
    out = ft.load(_torch_bytes({"net": tm, "lstm": lstm}), weights_only=False)
    assert type(out["net"]) is fnn.Sequential and type(out["net"][2]) is fnn.BatchNorm2d and not out["net"].training
    x = np.random.RandomState(0).randn(2, 2, 5, 5).astype(np.float32)
    np.testing.assert_allclose(out["net"](ft.from_numpy(x)).detach().numpy(),
                               tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    seq = x[:, 0, :, :3]
    np.testing.assert_allclose(out["lstm"](ft.from_numpy(seq))[0].detach().numpy(),
                               lstm(torch.from_numpy(seq))[0].detach().numpy(), rtol=1e-5, atol=1e-6)


def test_safe_globals_allow_a_class(tmp_path):
    buf = _fgrad_bytes({"p": Point(3)})
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {__name__}.Point was not an allowed global"):
        ft.load(buf)
    with ft.serialization.safe_globals([Point]):
        buf.seek(0)
        assert ft.load(buf)["p"].x == 3
    ft.serialization.add_safe_globals([(Point, f"{__name__}.Point")])
    try:
        buf.seek(0)
        assert ft.load(buf)["p"].x == 3
    finally:
        ft.serialization.clear_safe_globals()


# --- map_location, mmap, damaged files, old files --------------------------------------------------

def test_map_location_forms():
    buf = _torch_bytes({"w": torch.arange(3.0)})
    seen = []

    def keep(storage, location):
        seen.append(location)
        return storage

    for ml in ("cpu", ft.device("cpu"), {"cpu": "cpu"}, keep, lambda s, loc: None):
        buf.seek(0)
        np.testing.assert_array_equal(ft.load(buf, map_location=ml)["w"].numpy(), [0.0, 1.0, 2.0])
    assert seen == ["cpu"]
    if not ft.cuda.is_available():
        buf.seek(0)
        with pytest.raises(RuntimeError, match="CUDA device"):
            ft.load(buf, map_location={"cpu": "cuda:0"})
    buf.seek(0)
    with pytest.raises(ValueError, match="map_location"):
        ft.load(buf, map_location=3.5)


def test_mmap_reads_copy_on_write(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.arange(100.0), "v": torch.ones(3, dtype=torch.int64)}, path)
    before = path.read_bytes()
    out = ft.load(path, mmap=True)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(100.0))
    out["w"][0] = -1.0
    assert out["w"][0].item() == -1.0 and path.read_bytes() == before
    with pytest.raises(ValueError, match="mmap=True needs a path"):
        ft.load(io.BytesIO(before), mmap=True)


def test_damaged_and_foreign_files_are_refused(tmp_path):
    data = _torch_bytes({"w": torch.arange(8.0)}).getvalue()
    short = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(short, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info)[:4] if info.filename.endswith("data/0") else src.read(info))
    short.seek(0)
    with pytest.raises(ValueError, match="holds 4 bytes, its storage needs 32"):
        ft.load(short)
    np.savez(tmp_path / "plain.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="not a file written by fgrad.torch.save or torch.save"):
        ft.load(tmp_path / "plain.npz")
    with pytest.raises(ValueError, match="neither a zip archive nor a pickle"):
        ft.load(io.BytesIO(b"hello"))


def test_old_fgrad_npz_checkpoints_still_load(tmp_path):
    structure = {"format": "fgrad-state-v1", "root": {"t": "odict", "items": [
        [["s", "w"], {"t": "tensor", "a": 0, "rg": False, "param": False, "device": "cpu"}],
        [["s", "epoch"], {"t": "py", "v": 2}]]}}
    import json
    path = tmp_path / "old.pt"
    with open(path, "wb") as fh:
        np.savez(fh, a0=np.arange(3.0), __fgrad_structure__=np.frombuffer(json.dumps(structure).encode(), np.uint8))
    out = ft.load(path)
    assert out["epoch"] == 2 and isinstance(out, OrderedDict)
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(3.0))


def test_unpicklable_objects_are_named():
    with pytest.raises(TypeError, match="cannot save an object of type dict.*lambda"):
        ft.save({"f": lambda: 0}, io.BytesIO())


# --- without torch ----------------------------------------------------------------------------------

def test_loading_never_imports_torch(tmp_path):
    path = tmp_path / "sd.pt"
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    torch.save({"sd": lin.state_dict(), "v": torch.arange(6.0).view(2, 3).t()}, path)
    code = (
        "import sys; sys.modules['torch'] = None\n"  # any `import torch` now raises ImportError
        "import fgrad.torch as ft, numpy as np\n"
        f"out = ft.load({str(path)!r})\n"
        "m = ft.nn.Linear(3, 2); m.load_state_dict(out['sd'])\n"
        "ft.save(m.state_dict(), sys.argv[1])\n"
        "print(float(m.weight.sum()), out['v'].shape)\n")
    back = tmp_path / "back.pt"
    run = subprocess.run([sys.executable, "-c", code, str(back)], capture_output=True, text=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert abs(float(run.stdout.split()[0]) - float(lin.weight.detach().sum())) < 1e-6
    assert "torch.Size([3, 2])" in run.stdout
    again = torch.load(back)
    for k, v in lin.state_dict().items():
        torch.testing.assert_close(again[k], v, rtol=0, atol=0)


# --- safetensors (not a dependency; its NumPy API needs no adapter) ----------------------------------

def test_safetensors_numpy_round_trip(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    net = fnn.Sequential(fnn.Linear(3, 4), fnn.BatchNorm1d(4))
    path = str(tmp_path / "m.safetensors")
    st.save_file({k: v.numpy() for k, v in net.state_dict().items()}, path)
    other = fnn.Sequential(fnn.Linear(3, 4), fnn.BatchNorm1d(4))
    other.load_state_dict({k: ft.from_numpy(a) for k, a in st.load_file(path).items()})
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(other.state_dict()[k].numpy(), v.numpy())
