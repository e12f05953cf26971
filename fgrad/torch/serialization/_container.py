"""torch.PyTorchFileReader / torch.PyTorchFileWriter: the record container under PyTorch's
checkpoints (a zip archive whose members `<archive>/<record>` are stored uncompressed, each
one's data aligned to 64 bytes), read and written record by record."""
from __future__ import annotations

import io
import os
import secrets
import zipfile
from typing import Any

from ...core.errors import FgradRuntimeError, FgradTypeError
from ._read import _member_offset
from ._write import _write_record

_PRODUCED_VERSION = 3  # the file format version PyTorch 2.x writes unless set_min_version raises it


class PyTorchFileReader:
    """Read the records of a PyTorch checkpoint archive (a path or a binary file object):
    record names are relative to the archive's top directory (`data.pkl`, `data/0`, `version`)."""

    def __init__(self, file: Any) -> None:
        if isinstance(file, (str, os.PathLike)):
            self._fh = open(os.fspath(file), "rb")  # noqa: SIM115 (kept open while the reader lives)
        elif hasattr(file, "read") and hasattr(file, "seek"):
            self._fh = file
        else:
            raise FgradTypeError(f"PyTorchFileReader: expected a path or a binary file object, got "
                                 f"{type(file).__name__}")
        try:
            self._zf = zipfile.ZipFile(self._fh)
        except zipfile.BadZipFile:
            raise FgradRuntimeError("PytorchStreamReader failed reading zip archive: failed finding central "
                                    "directory (not a PyTorch checkpoint archive)") from None
        names = self._zf.namelist()
        if not names or "/" not in names[0]:
            raise FgradRuntimeError("PytorchStreamReader: the archive has no top directory (not a PyTorch "
                                    "checkpoint archive)")
        self._prefix = names[0].split("/", 1)[0] + "/"
        self._infos = {n[len(self._prefix):]: self._zf.getinfo(n) for n in names if n.startswith(self._prefix)}

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = self._infos.get(name)
        if info is None:
            raise FgradRuntimeError(f"PytorchStreamReader failed locating file {name}: file not found; the archive "
                                    f"holds {sorted(self._infos)}")
        return info

    def get_all_records(self) -> list:
        """The records' names, in the archive's order.

        Returns:
            A list of strings.
        """
        return list(self._infos)

    def has_record(self, name: str) -> bool:
        """Whether the archive holds record `name`.

        Args:
            name: a record name.

        Returns:
            A bool.
        """
        return name in self._infos

    def get_record(self, name: str) -> bytes:
        """The bytes of record `name`.

        Args:
            name: a record name.

        Returns:
            bytes.

        Raises:
            RuntimeError: no such record.
        """
        return self._zf.read(self._info(name))

    def get_record_size(self, name: str) -> int:
        """The size of record `name` in bytes.

        Args:
            name: a record name.

        Returns:
            An int.
        """
        return self._info(name).file_size

    def get_record_offset(self, name: str) -> int:
        """Where record `name`'s data starts in the file.

        Args:
            name: a record name.

        Returns:
            An int (a multiple of the writer's alignment).
        """
        return _member_offset(self._fh, self._info(name))

    def get_record_header_offset(self, name: str) -> int:
        """Where record `name`'s local zip header starts in the file.

        Args:
            name: a record name.

        Returns:
            An int.
        """
        return self._info(name).header_offset

    def serialization_id(self) -> str:
        """The id the writer gave the archive (`.data/serialization_id`; "" when absent).

        Returns:
            A string.
        """
        if ".data/serialization_id" not in self._infos:
            return ""
        return self.get_record(".data/serialization_id").decode()


class PyTorchFileWriter:
    """Write a PyTorch checkpoint archive record by record, to a path or a binary file object:
    `write_record(name, data, size)` for each record, then `write_end_of_file()`, which adds the
    `version`, `byteorder` and `.data/serialization_id` records and closes the archive."""

    def __init__(self, file: Any, compute_crc32: bool = True, storage_alignment: int = 64) -> None:
        if isinstance(file, (str, os.PathLike)):
            path = os.fspath(file)
            stem = os.path.splitext(os.path.basename(path))[0]
            self._archive = stem if stem and "/" not in stem else "archive"
            self._fh = open(path, "wb")  # noqa: SIM115 (closed by write_end_of_file)
            self._owns = True
        elif hasattr(file, "write"):
            self._archive, self._fh, self._owns = "archive", file, False
        else:
            raise FgradTypeError(f"PyTorchFileWriter: expected a path or a binary file object, got "
                                 f"{type(file).__name__}")
        if int(storage_alignment) < 1:
            raise FgradRuntimeError(f"PyTorchFileWriter: storage_alignment must be positive, got {storage_alignment}")
        # (zipfile computes every record's CRC-32; compute_crc32=False only skips that work in PyTorch)
        self._alignment = int(storage_alignment)
        self._zf = zipfile.ZipFile(self._fh, "w", zipfile.ZIP_STORED)
        self._written: list = []
        self._version = _PRODUCED_VERSION
        self._id = ""
        self._finalized = False

    def archive_name(self) -> str:
        """The archive's top directory ("archive" for a file object, the file's stem for a path).

        Returns:
            A string.
        """
        return self._archive

    def set_min_version(self, version: int) -> None:
        """Raise the format version written to the `version` record to at least `version`.

        Args:
            version: an int.
        """
        self._version = max(self._version, int(version))

    def write_record(self, name: str, data: Any, size: int) -> None:
        """Write record `name`: the first `size` bytes of `data`.

        Args:
            name: the record name (relative to the archive directory).
            data: bytes, a str (its UTF-8 bytes) or any object with the buffer protocol.
            size: how many bytes of `data` to write.

        Raises:
            RuntimeError: the archive was finished, or `name` was written already.
        """
        if self._finalized:
            raise FgradRuntimeError(f"PyTorchFileWriter: cannot write record {name!r} after write_end_of_file()")
        if name in self._written:
            raise FgradRuntimeError(f"Tried to serialize file twice: {name}")
        view = memoryview(data.encode() if isinstance(data, str) else data).cast("B")
        if not 0 <= int(size) <= view.nbytes:
            raise FgradRuntimeError(f"PyTorchFileWriter: size {size} for record {name!r} is outside the data's "
                                    f"{view.nbytes} bytes")
        _write_record(self._zf, f"{self._archive}/{name}", view[:int(size)], self._alignment)
        self._written.append(name)

    def get_all_written_records(self) -> set:
        """The names of the records written so far.

        Returns:
            A set of strings.
        """
        return set(self._written)

    def write_end_of_file(self) -> None:
        """Write the `version`, `byteorder` and `.data/serialization_id` records (those not
        written already) and close the archive."""
        if self._finalized:
            return
        for name, data in (("version", f"{self._version}\n".encode()), ("byteorder", b"little")):
            if name not in self._written:
                self.write_record(name, data, len(data))
        self._id = str(secrets.randbits(128)).zfill(40)
        if ".data/serialization_id" not in self._written:
            self.write_record(".data/serialization_id", self._id.encode(), len(self._id))
        self._zf.close()
        if self._owns:
            self._fh.close()
        elif isinstance(self._fh, io.IOBase) and hasattr(self._fh, "flush"):
            self._fh.flush()
        self._finalized = True

    def serialization_id(self) -> str:
        """The archive's id (set by write_end_of_file; "" before).

        Returns:
            A string.
        """
        return self._id
