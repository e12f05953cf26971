"""torch.PyTorchFileReader / PyTorchFileWriter against torch 2.13: archives written by one are
read by the other record for record (names, bytes, 64-byte-aligned offsets), a checkpoint that
torch.save wrote reads the same through both readers, and the errors (missing record, a record
written twice, writing after the end)."""
from __future__ import annotations

import io

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

RECORDS = [("data.pkl", b"\x80\x02}q\x00."), ("data/0", np.arange(5, dtype=np.float32).tobytes()),
           ("notes", "text record")]


def _write(lib, buf):
    w = lib.PyTorchFileWriter(buf)
    for name, data in RECORDS:
        w.write_record(name, data, len(data))
    assert w.get_all_written_records() == {name for name, _ in RECORDS}
    w.write_end_of_file()
    sid = w.serialization_id()
    assert len(sid) == 40 and sid.isdigit()
    return buf.getvalue()


@pytest.mark.parametrize("writer,reader", [(ftorch, torch), (torch, ftorch), (ftorch, ftorch)],
                         ids=["fgrad->torch", "torch->fgrad", "fgrad->fgrad"])
def test_round_trip(writer, reader):
    raw = _write(writer, io.BytesIO())
    r = reader.PyTorchFileReader(io.BytesIO(raw))
    assert r.get_all_records() == [n for n, _ in RECORDS] + ["version", "byteorder", ".data/serialization_id"]
    for name, data in RECORDS:
        assert r.has_record(name)
        assert r.get_record(name) == (data.encode() if isinstance(data, str) else data)
        assert r.get_record_offset(name) % 64 == 0
    assert r.get_record("version") == b"3\n" and r.get_record("byteorder") == b"little"
    assert not r.has_record("nope")
    assert len(r.serialization_id()) == 40


def test_same_offsets_as_torch_on_a_checkpoint(tmp_path):
    path = tmp_path / "model.pt"
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "b": torch.ones(2)}, path)
    f, t = ftorch.PyTorchFileReader(str(path)), torch.PyTorchFileReader(str(path))
    assert f.get_all_records() == t.get_all_records()
    for name in t.get_all_records():
        assert f.get_record(name) == t.get_record(name)
        assert f.get_record_offset(name) == t.get_record_offset(name)
        assert f.get_record_header_offset(name) == t.get_record_header_offset(name)
    assert f.serialization_id() == t.serialization_id()
    out = ftorch.load(str(path))
    np.testing.assert_array_equal(out["w"].numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3))


def test_archive_name_and_errors(tmp_path):
    for lib in (ftorch, torch):
        w = lib.PyTorchFileWriter(str(tmp_path / f"ckpt_{lib.__name__}.pt"))
        assert w.archive_name() == f"ckpt_{lib.__name__}"
        w.write_record("a", b"x", 1)
        with pytest.raises(RuntimeError, match="Tried to serialize file twice: a"):
            w.write_record("a", b"y", 1)
        w.write_end_of_file()
        with pytest.raises(RuntimeError):
            w.write_record("b", b"z", 1)
        r = lib.PyTorchFileReader(str(tmp_path / f"ckpt_{lib.__name__}.pt"))
        with pytest.raises(RuntimeError, match="failed locating file nope"):
            r.get_record("nope")
        assert lib.PyTorchFileWriter(io.BytesIO()).archive_name() == "archive"
    with pytest.raises(RuntimeError, match="zip"):
        ftorch.PyTorchFileReader(io.BytesIO(b"not a zip"))
    with pytest.raises(TypeError, match="path or a binary file"):
        ftorch.PyTorchFileWriter(3)
