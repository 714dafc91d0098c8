"""Re-quantize a GGUF file's Q4_1 tensors to Q8_0 in numpy (no llama.cpp needed).

The prebuilt engine has no quantizer API, so :mod:`shiyi.llm.local.weights` does it here:
the header and metadata are copied byte for byte (``general.file_type`` set to Q8_0), the
tensor table is rewritten with the new types and offsets, and each Q4_1 block of 32 values
(``d * q + m``, 4-bit q) is dequantized and rounded to Q8_0 (``d' * q'``, 8-bit q', ``d' =
max|x| / 127``) as llama.cpp's reference quantizer does; other tensors are copied as they are.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

import numpy as np

Q4_1, Q8_0 = 3, 8
"""ggml_type ids."""
MOSTLY_Q8_0 = 7
"""llama_ftype for general.file_type."""
_BLOCK = 32
_Q4_1_BYTES, _Q8_0_BYTES = 20, 34
_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
_DEFAULT_ALIGNMENT = 32


class _Tensor:
    __slots__ = ("dims", "kind", "name", "offset")

    def __init__(self, name: bytes, dims: tuple[int, ...], kind: int, offset: int) -> None:
        self.name, self.dims, self.kind, self.offset = name, dims, kind, offset

    @property
    def count(self) -> int:
        return int(np.prod(self.dims, dtype=np.int64))


def convert_q4_1_to_q8_0(source: Path, target: Path) -> None:
    """Write ``source`` with its Q4_1 tensors as Q8_0 to ``target`` (not atomically)."""
    with source.open("rb") as file:
        head, tensors, alignment, file_type_at = _read_header(file)
        data_start = _aligned(file.tell(), alignment)
        sizes = _sizes(tensors, source.stat().st_size - data_start)
        out_head = bytearray(head)
        if file_type_at is not None:
            out_head[file_type_at : file_type_at + 4] = struct.pack("<I", MOSTLY_Q8_0)
        with target.open("wb") as out:
            out.write(out_head)
            offset = 0
            new_offsets = []
            for tensor in tensors:
                new_offsets.append(offset)
                size = _new_size(tensor, sizes[tensor.name])
                offset = _aligned(offset + size, alignment)
            for tensor, new_offset in zip(tensors, new_offsets, strict=True):
                kind = Q8_0 if tensor.kind == Q4_1 else tensor.kind
                out.write(struct.pack("<Q", len(tensor.name)) + tensor.name)
                out.write(struct.pack("<I", len(tensor.dims)))
                out.write(struct.pack(f"<{len(tensor.dims)}Q", *tensor.dims))
                out.write(struct.pack("<IQ", kind, new_offset))
            _pad(out, alignment)
            base = out.tell()
            for tensor, new_offset in zip(tensors, new_offsets, strict=True):
                file.seek(data_start + tensor.offset)
                raw = file.read(sizes[tensor.name])
                out.seek(base + new_offset)
                out.write(_q8_0(raw) if tensor.kind == Q4_1 else raw)
            _pad(out, alignment)


def _read_header(file: BinaryIO) -> tuple[bytes, list[_Tensor], int, int | None]:
    """(header and metadata bytes, tensor table, alignment, where file_type's value is)."""
    start = file.read(24)
    magic, _version, n_tensors, n_kv = struct.unpack("<4sIQQ", start)
    if magic != b"GGUF":
        raise ValueError("not a GGUF file")
    alignment, file_type_at = _DEFAULT_ALIGNMENT, None
    for _ in range(n_kv):
        key = _string(file)
        (kind,) = struct.unpack("<I", file.read(4))
        if key == b"general.file_type" and kind == _UINT32:
            file_type_at = file.tell()
        if key == b"general.alignment" and kind == _UINT32:
            (alignment,) = struct.unpack("<I", file.read(4))
            continue
        _skip(file, kind)
    head_end = file.tell()
    tensors = []
    for _ in range(n_tensors):
        name = _string(file)
        (n_dims,) = struct.unpack("<I", file.read(4))
        dims = struct.unpack(f"<{n_dims}Q", file.read(8 * n_dims))
        kind, offset = struct.unpack("<IQ", file.read(12))
        tensors.append(_Tensor(name, dims, kind, offset))
    after_table = file.tell()
    file.seek(0)
    head = file.read(head_end)
    file.seek(after_table)
    return head, tensors, alignment, file_type_at


def _string(file: BinaryIO) -> bytes:
    (length,) = struct.unpack("<Q", file.read(8))
    return file.read(length)


def _skip(file: BinaryIO, kind: int) -> None:
    if kind == _STRING:
        _string(file)
    elif kind == _ARRAY:
        item, count = struct.unpack("<IQ", file.read(12))
        if item in _SCALARS:
            file.seek(_SCALARS[item] * count, 1)
        else:
            for _ in range(count):
                _skip(file, item)
    else:
        file.seek(_SCALARS[kind], 1)


def _sizes(tensors: list[_Tensor], data_bytes: int) -> dict[bytes, int]:
    """Each tensor's byte size, from the gap to the next offset (padding included for all
    but Q4_1, whose exact size is known): no table of every ggml type is needed."""
    ordered = sorted(tensors, key=lambda tensor: tensor.offset)
    sizes = {}
    for index, tensor in enumerate(ordered):
        end = ordered[index + 1].offset if index + 1 < len(ordered) else data_bytes
        exact = tensor.count // _BLOCK * _Q4_1_BYTES if tensor.kind == Q4_1 else None
        sizes[tensor.name] = exact if exact is not None else end - tensor.offset
    return sizes


def _new_size(tensor: _Tensor, size: int) -> int:
    return tensor.count // _BLOCK * _Q8_0_BYTES if tensor.kind == Q4_1 else size


def _q8_0(raw: bytes) -> bytes:
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, _Q4_1_BYTES)
    d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
    m = blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
    qs = blocks[:, 4:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32)
    values = q * d + m
    amax = np.abs(values).max(axis=1, keepdims=True)
    scale = amax / 127.0
    inverse = np.divide(1.0, scale, out=np.zeros_like(scale), where=scale != 0)
    q8 = np.round(values * inverse).astype(np.int8)
    out = np.empty((len(blocks), _Q8_0_BYTES), dtype=np.uint8)
    out[:, 0:2] = scale.astype(np.float16).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q8.view(np.uint8)
    return out.tobytes()


def _aligned(offset: int, alignment: int) -> int:
    return (offset + alignment - 1) // alignment * alignment


def _pad(out: BinaryIO, alignment: int) -> None:
    out.write(b"\0" * (_aligned(out.tell(), alignment) - out.tell()))
