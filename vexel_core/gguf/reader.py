"""Reading GGUF files strictly: metadata as plain Python values, tensors memory-mapped.

Every malformed file ends in `GGUFError` naming the file, where the problem is (``header``,
``key <name>``, ``tensor <name>``, ...) and why. That is why this module parses the header
itself instead of using ``gguf.GGUFReader``: the latter trusts the counts in the file (an
array length of 2**40 makes it loop and allocate until MemoryError) and fails with ValueError,
IndexError or KeyError elsewhere. Here every count and length is checked against the bytes
left in the file *before* anything is allocated, so time and memory stay proportional to the
header's real size. The format's constants (value types, tensor types, block sizes) come from
the ``gguf`` package.

Layout (little-endian): magic ``GGUF``, version u32, tensor count u64, key-value count u64,
the key-values, the tensor infos (name, n_dims u32, dims u64 innermost first, type u32, offset
u64 relative to the data section), padding to ``general.alignment``, the tensor data.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import reprlib
import stat
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from gguf import (
    GGML_QUANT_SIZES,
    GGUF_DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    GGMLQuantizationType,
    GGUFValueType,
)
from gguf.quants import dequantize as gguf_dequantize

from vexel_core.errors import GGUFError

SUPPORTED_VERSIONS = (2, 3)  # version 1 used 32-bit counts and is long gone
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_TENSOR_NAME_BYTES = 63  # llama.cpp's GGML_MAX_NAME (64) less the terminating NUL
# Caps far beyond any real model (vocabularies ~256k tokens, merges ~1M, templates ~10 KB)
# that keep a corrupted count inside a multi-gigabyte file from becoming gigabytes of
# Python objects.
MAX_STRING_BYTES = 1 << 24
MAX_METADATA_ARRAY_ELEMENTS = 1 << 23

# struct format of each fixed-size value type (numpy reads arrays with the same strings)
_FORMATS: dict[GGUFValueType, str] = {
    GGUFValueType.UINT8: "<B",
    GGUFValueType.INT8: "<b",
    GGUFValueType.UINT16: "<H",
    GGUFValueType.INT16: "<h",
    GGUFValueType.UINT32: "<I",
    GGUFValueType.INT32: "<i",
    GGUFValueType.UINT64: "<Q",
    GGUFValueType.INT64: "<q",
    GGUFValueType.FLOAT32: "<f",
    GGUFValueType.FLOAT64: "<d",
    GGUFValueType.BOOL: "<B",
}
# The smallest encoding of one key-value (key length, empty key, type, one-byte value) and of
# one tensor info (name length, empty name, n_dims, one dim, type, offset): the header's
# counts are checked against these before any loop runs.
_MIN_KV_BYTES = 8 + 4 + 1
_MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8

# Tensor types that gguf.quants.dequantize does not cover but numpy reads directly.
_PLAIN_DTYPES: dict[GGMLQuantizationType, str] = {
    GGMLQuantizationType.F64: "<f8",
    GGMLQuantizationType.I8: "<i1",
    GGMLQuantizationType.I16: "<i2",
    GGMLQuantizationType.I32: "<i4",
    GGMLQuantizationType.I64: "<i8",
}

ValueTypes = tuple[GGUFValueType, ...]  # (type,) for a scalar, (ARRAY, item type) for an array


@dataclass(frozen=True, eq=False)
class TensorInfo:
    """One tensor of a GGUF file; its bytes stay in the file until someone converts them.

    ``shape`` is in numpy order (rows first: GGUF's dims reversed). ``raw`` is a read-only
    uint8 view of the memory-mapped file holding one row of blocks per matrix row:
    ``shape[:-1] + (row_bytes,)``, i.e. ``(rows, row_bytes)`` for a matrix, 1-D for a vector.
    """

    path: Path  # the file it lives in, for error messages
    name: str
    shape: tuple[int, ...]
    ggml_type: GGMLQuantizationType
    offset: int  # absolute byte offset of the data in the file
    raw: np.ndarray

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return int(self.raw.nbytes)

    @property
    def row_bytes(self) -> int:
        return int(self.raw.shape[-1])

    def dequantize(self) -> np.ndarray:
        """The tensor as float32 of ``shape`` (the reference: ``gguf.quants.dequantize``).

        A type that neither numpy nor gguf reads (llama.cpp's activation-only Q8_1 and Q8_K,
        which no model stores, and the newest types) is `GGUFError`, not NotImplementedError.
        """
        plain = _PLAIN_DTYPES.get(self.ggml_type)
        if plain is not None:
            values = self.raw.view(plain)
        else:
            try:
                values = gguf_dequantize(self.raw, self.ggml_type)
            except NotImplementedError:
                raise GGUFError(self.path, f"tensor {self.name}",
                                f"type {self.ggml_type.name} cannot be dequantized (the gguf "
                                "package has no reader for it)") from None
        return np.asarray(values, dtype=np.float32).reshape(self.shape)


class GGUFFile:
    """A GGUF file opened for reading; also a context manager (``with GGUFFile(p) as g:``).

    Opening parses and validates the whole header and the placement of every tensor; tensor
    data is memory-mapped, never read here. ``general.architecture`` is required.
    """

    path: Path
    version: int
    alignment: int
    data_offset: int  # where the tensor data section starts
    file_size: int
    # key -> str, int, float, bool, or a list of one of those; a float32 scalar is given as the
    # shortest decimal that reads back as the same float32
    metadata: Mapping[str, Any]
    value_types: Mapping[str, ValueTypes]  # key -> how the file stores it
    architecture: str

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._mmap: mmap.mmap | None = _open_mapping(self.path)
        self._tensors: Mapping[str, TensorInfo] | None = None
        try:
            self._parse(self._mmap)
        except BaseException:
            self._release()
            raise

    @property
    def tensors(self) -> Mapping[str, TensorInfo]:
        if self._tensors is None:
            raise GGUFError(self.path, "file", "closed; its tensors are no longer available")
        return self._tensors

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)

    def require(self, key: str, kind: type | tuple[type, ...]) -> Any:
        """The value of *key*, which must exist and be of *kind*, else `GGUFError`.

        ``bool`` never passes for ``int``; an integer passes for ``float`` (converted).
        """
        if key not in self.metadata:
            raise GGUFError(self.path, f"key {key}", "missing (required)")
        value = self.metadata[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
            return value
        if float in kinds and type(value) is int:
            return float(value)
        raise GGUFError(
            self.path, f"key {key}",
            f"expected {' or '.join(k.__name__ for k in kinds)}, "
            f"found {type(value).__name__} {reprlib.repr(value)}",  # short even for a vocabulary
        )

    def arch_key(self, suffix: str, default: Any = None) -> Any:
        """The value of ``f"{architecture}.{suffix}"``, or *default*."""
        return self.metadata.get(f"{self.architecture}.{suffix}", default)

    def require_arch(self, suffix: str, kind: type | tuple[type, ...]) -> Any:
        """`require` of ``f"{architecture}.{suffix}"``."""
        return self.require(f"{self.architecture}.{suffix}", kind)

    def tensor(self, name: str) -> TensorInfo:
        info = self.tensors.get(name)
        if info is None:
            raise GGUFError(
                self.path, f"tensor {name}", f"missing (the file has {len(self.tensors)} tensors)"
            )
        return info

    def close(self) -> None:
        """Forget the tensors and unmap the file.

        Arrays already handed out (``TensorInfo.raw``) stay valid: the mapping then goes away
        with the last of them.
        """
        self._tensors = None
        self._release()

    def __enter__(self) -> GGUFFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._tensors is None else f"{len(self._tensors)} tensors"
        return f"GGUFFile({str(self.path)!r}, {self.architecture!r}, {state})"

    def _parse(self, buf: mmap.mmap) -> None:
        cur = _Cursor(self.path, buf)
        self.file_size = cur.size
        magic = cur.scalar("<I")
        if magic != GGUF_MAGIC:
            raise cur.fail(
                f"bad magic {struct.pack('<I', magic)!r} (expected b'GGUF'): not a GGUF file"
            )
        self.version = cur.scalar("<I")
        if self.version not in SUPPORTED_VERSIONS:
            if self.version & 0xFFFF == 0:  # a small number read in the other byte order
                raise cur.fail("big-endian GGUF files are not supported")
            raise cur.fail(
                f"unsupported GGUF version {self.version} "
                f"(supported: {', '.join(map(str, SUPPORTED_VERSIONS))})"
            )
        n_tensors = cur.scalar("<Q")
        n_kv = cur.scalar("<Q")
        if n_kv * _MIN_KV_BYTES + n_tensors * _MIN_TENSOR_INFO_BYTES > cur.left:
            raise cur.fail(
                f"{n_kv} key-values and {n_tensors} tensor infos cannot fit in the "
                f"{cur.left} bytes left in the file"
            )
        metadata, value_types = _read_metadata(cur, n_kv)
        infos = _read_tensor_infos(cur, n_tensors)
        self.metadata = MappingProxyType(metadata)
        self.value_types = MappingProxyType(value_types)
        self.alignment = self._read_alignment()
        self.data_offset = -(-cur.pos // self.alignment) * self.alignment
        self.architecture = self.require("general.architecture", str)
        self._tensors = MappingProxyType(self._place_tensors(buf, infos))

    def _read_alignment(self) -> int:
        if "general.alignment" not in self.metadata:
            return GGUF_DEFAULT_ALIGNMENT
        value = self.metadata["general.alignment"]
        if self.value_types["general.alignment"] != (GGUFValueType.UINT32,):
            raise GGUFError(self.path, "key general.alignment", "must be a uint32")
        if value == 0 or value & (value - 1):
            raise GGUFError(self.path, "key general.alignment", f"{value} is not a power of two")
        return int(value)

    def _place_tensors(self, buf: mmap.mmap, infos: list[_RawTensorInfo]) -> dict[str, TensorInfo]:
        """Check that every tensor's bytes lie aligned, inside the file and apart; map them."""
        tensors: dict[str, TensorInfo] = {}
        for info in infos:
            where = f"tensor {info.name}"
            if info.offset % self.alignment:
                raise GGUFError(
                    self.path, where,
                    f"data offset {info.offset} is not a multiple of the alignment "
                    f"{self.alignment}",
                )
            start = self.data_offset + info.offset
            end = start + info.nbytes
            if end > self.file_size:
                raise GGUFError(
                    self.path, where,
                    f"data [{start}, {end}) lies past the end of the file "
                    f"({self.file_size} bytes)",
                )
            shape = tuple(reversed(info.dims))
            block_elems, block_bytes = GGML_QUANT_SIZES[info.ggml_type]
            row_bytes = info.dims[0] // block_elems * block_bytes
            raw = np.frombuffer(buf, dtype=np.uint8, count=info.nbytes, offset=start)
            tensors[info.name] = TensorInfo(self.path, info.name, shape, info.ggml_type, start,
                                            raw.reshape(shape[:-1] + (row_bytes,)))
        by_offset = sorted(tensors.values(), key=lambda t: t.offset)
        for before, after in pairwise(by_offset):
            if before.offset + before.nbytes > after.offset:
                raise GGUFError(
                    self.path, f"tensor {after.name}",
                    f"data at offset {after.offset} overlaps tensor {before.name} "
                    f"[{before.offset}, {before.offset + before.nbytes})",
                )
        return tensors

    def _release(self) -> None:
        buf, self._mmap = self._mmap, None
        if buf is not None:
            # Arrays handed out may still view it; then it is unmapped when they go.
            with contextlib.suppress(BufferError):
                buf.close()


@dataclass(frozen=True)
class _RawTensorInfo:
    name: str
    dims: tuple[int, ...]  # GGUF order: innermost (the row length) first
    ggml_type: GGMLQuantizationType
    offset: int  # relative to the data section
    nbytes: int


class _Cursor:
    """Reads little-endian values from the mapped file and never past its end."""

    def __init__(self, path: Path, buf: mmap.mmap) -> None:
        self.path = path
        self.buf = buf
        self.size = len(buf)
        self.pos = 0
        self.where = "header"  # what is being read, for error messages

    def fail(self, reason: str) -> GGUFError:
        return GGUFError(self.path, self.where, reason)

    @property
    def left(self) -> int:
        return self.size - self.pos

    def take(self, n: int) -> int:
        """Step over *n* bytes; return where they start."""
        if n > self.left:
            raise self.fail(
                f"file truncated: {n} bytes needed at offset {self.pos}, "
                f"but the file ends at byte {self.size}"
            )
        start = self.pos
        self.pos += n
        return start

    def scalar(self, fmt: str) -> Any:
        start = self.take(struct.calcsize(fmt))
        return struct.unpack_from(fmt, self.buf, start)[0]

    def string(self, what: str) -> str:
        length = self.scalar("<Q")
        if length > MAX_STRING_BYTES:
            raise self.fail(f"{what} length {length} exceeds the limit of {MAX_STRING_BYTES}")
        start = self.take(length)
        try:
            return self.buf[start : start + length].decode("utf-8")
        except UnicodeDecodeError as err:
            raise self.fail(f"{what} is not valid UTF-8 (byte {err.start})") from None

    def value_type(self) -> GGUFValueType:
        raw = self.scalar("<I")
        try:
            return GGUFValueType(raw)
        except ValueError:
            raise self.fail(f"unknown value type {raw}") from None

    def value(self) -> tuple[Any, ValueTypes]:
        """A type tag and the value it announces."""
        vtype = self.value_type()
        if vtype == GGUFValueType.STRING:
            return self.string("string value"), (vtype,)
        if vtype == GGUFValueType.ARRAY:
            item_type = self.value_type()
            return self.array(item_type), (vtype, item_type)
        value = self.scalar(_FORMATS[vtype])
        if vtype == GGUFValueType.BOOL:
            value = bool(value)
        elif vtype == GGUFValueType.FLOAT32:
            # the shortest decimal of the same float32: 1e-05, not 9.999999747378752e-06
            value = float(str(np.float32(value)))
        return value, (vtype,)

    def array(self, item_type: GGUFValueType) -> list[Any]:
        count = self.scalar("<Q")
        if count > MAX_METADATA_ARRAY_ELEMENTS:
            raise self.fail(
                f"array length {count} exceeds the limit of {MAX_METADATA_ARRAY_ELEMENTS}"
            )
        if item_type == GGUFValueType.ARRAY:
            raise self.fail("arrays of arrays are not supported")
        if item_type == GGUFValueType.STRING:
            if count * 8 > self.left:  # each string takes at least its 8-byte length
                raise self.fail(f"array length {count} cannot fit in the {self.left} bytes left")
            return [self.string(f"array element {i}") for i in range(count)]
        fmt = _FORMATS[item_type]
        start = self.take(count * struct.calcsize(fmt))
        items = np.frombuffer(self.buf, dtype=fmt, count=count, offset=start)
        if item_type == GGUFValueType.BOOL:
            items = items.astype(bool)
        values: list[Any] = items.tolist()
        return values


def _open_mapping(path: Path) -> mmap.mmap:
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise GGUFError(path, "file", "is a directory, not a GGUF file")
        if not stat.S_ISREG(mode):
            raise GGUFError(path, "file", "is not a regular file")
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise GGUFError(path, "header", "file is empty: not a GGUF file")
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise GGUFError(path, "file", "no such file") from None
    except PermissionError:
        raise GGUFError(path, "file", "permission denied") from None
    except (OSError, ValueError) as err:
        raise GGUFError(path, "file", f"cannot be read: {err}") from None


def _read_metadata(cur: _Cursor, count: int) -> tuple[dict[str, Any], dict[str, ValueTypes]]:
    metadata: dict[str, Any] = {}
    types: dict[str, ValueTypes] = {}
    for i in range(count):
        cur.where = f"metadata entry {i}"
        key = cur.string("key")
        cur.where = f"key {key}"
        if key in metadata:
            raise cur.fail("appears twice")
        metadata[key], types[key] = cur.value()
    return metadata, types


def _read_tensor_infos(cur: _Cursor, count: int) -> list[_RawTensorInfo]:
    infos: list[_RawTensorInfo] = []
    names: set[str] = set()
    for i in range(count):
        cur.where = f"tensor info {i}"
        name = cur.string("tensor name")
        cur.where = f"tensor {name}"
        if len(name.encode()) > MAX_TENSOR_NAME_BYTES:
            raise cur.fail(f"name longer than {MAX_TENSOR_NAME_BYTES} bytes")
        if name in names:
            raise cur.fail("appears twice")
        names.add(name)
        n_dims = cur.scalar("<I")
        if not 1 <= n_dims <= MAX_DIMS:
            raise cur.fail(f"{n_dims} dimensions (expected 1 to {MAX_DIMS})")
        dims = tuple(cur.scalar("<Q") for _ in range(n_dims))
        if 0 in dims:
            raise cur.fail(f"empty dimension in shape {dims} (GGUF order)")
        raw_type = cur.scalar("<I")
        try:
            ggml_type = GGMLQuantizationType(raw_type)
            block_elems, block_bytes = GGML_QUANT_SIZES[ggml_type]
        except (ValueError, KeyError):
            raise cur.fail(f"unknown tensor type {raw_type}") from None
        if dims[0] % block_elems:
            raise cur.fail(
                f"row length {dims[0]} is not a multiple of the {ggml_type.name} block size "
                f"{block_elems}"
            )
        nbytes = math.prod(dims) // block_elems * block_bytes  # Python ints: no overflow
        offset = cur.scalar("<Q")
        infos.append(_RawTensorInfo(name, dims, ggml_type, offset, nbytes))
    return infos
