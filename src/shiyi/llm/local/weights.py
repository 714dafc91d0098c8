"""Weights llama.cpp multiplies fast: a Q4_1 GGUF is converted once to Q8_0 and cached.

llama.cpp's CPU backend has matrix-multiply kernels (llamafile's tinyBLAS, repacked Q4_0)
for Q8_0, Q4_0, the K-quants and the float types, but evaluates a Q4_1 prompt one dot
product at a time: ``perf`` put 74% of the prompt's time in ``ggml_vec_dot_q4_1_q8_1``.
The default SmolLM2 package ships Q4_1.  Converted to Q8_0 (1 s, 98 MB -> 145 MB), the same
weights evaluate a prompt about twice as fast on this machine (README, Benchmarks).  Q8_0
rounds each value to 1/254 of its block's largest, about 1/17 of Q4_1's own step, so the
model is the same model; Q4_0 would be faster still but re-rounds 4 bits to 4 bits, and
its greedy answers visibly changed.

The copy is named by the source file's path, size and mtime; it is a cache, rebuilt if
missing or unreadable.  Runs while the model loads (worker thread, load lock held).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import logging
import os
import struct
import threading
import uuid
from pathlib import Path
from typing import BinaryIO

from shiyi.errors import ModelUnavailable
from shiyi.llm.local.gguf_q8 import convert_q4_1_to_q8_0

log = logging.getLogger(__name__)

SLOW_FILE_TYPE = "3"
"""``general.file_type`` of a Q4_1 GGUF (LLAMA_FTYPE_MOSTLY_Q4_1)."""


def converted_path(source: Path, cache_dir: Path) -> Path:
    """Where the Q8_0 copy of ``source`` lives (whether or not it exists yet)."""
    stat = source.stat()
    key = f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cache_dir / f"{source.stem}-{digest}.Q8_0.gguf"


def needs_conversion(metadata: dict[str, str]) -> bool:
    return metadata.get("general.file_type") == SLOW_FILE_TYPE


def fast_weights(source: Path, cache_dir: Path | None) -> Path:
    """The file to load for ``source``: its Q8_0 copy in ``cache_dir`` when it is Q4_1 (made
    now if missing), else ``source`` itself."""
    if cache_dir is None:
        return source
    target = converted_path(source, cache_dir)
    if target.is_file():
        return target
    if file_type(source) != int(SLOW_FILE_TYPE):
        return source
    convert(source, target)
    return target


def file_type(path: Path) -> int | None:
    """``general.file_type`` from a GGUF file's header (None if absent or unreadable)."""
    try:
        with path.open("rb") as file:
            if file.read(4) != b"GGUF":
                return None
            _version, _tensors, count = struct.unpack("<IQQ", file.read(20))
            for _ in range(count):
                key = _read_string(file)
                (kind,) = struct.unpack("<I", file.read(4))
                value = _read_value(file, kind)
                if key == "general.file_type":
                    return int(value) if isinstance(value, int) else None
    except (OSError, struct.error, ValueError):
        return None
    return None


_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
            12: "d"}  # fmt: skip
_STRING, _ARRAY = 8, 9


def _read_string(file: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", file.read(8))
    return file.read(length).decode("utf-8", "replace")


def _read_value(file: BinaryIO, kind: int) -> object:
    if kind == _STRING:
        return _read_string(file)
    if kind == _ARRAY:
        item, count = struct.unpack("<IQ", file.read(12))
        for _ in range(count):
            _read_value(file, item)
        return None
    code = _SCALARS.get(kind)
    if code is None:
        raise ValueError(f"unknown GGUF value type {kind}")
    return struct.unpack("<" + code, file.read(struct.calcsize(code)))[0]


def convert(source: Path, target: Path, threads: int = 1) -> None:
    """Write ``source`` re-quantized to Q8_0 at ``target`` (atomically).

    ``threads`` is kept for callers; the numpy conversion (:mod:`shiyi.llm.local.gguf_q8`) takes
    about a second for SmolLM2 on one core."""
    del threads
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Unique per call: two apps in one process (or two processes) may convert at once; each
    # writes its own file and the last rename wins with identical bytes.
    partial = target.with_name(f"{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial")
    sweep_partials(target)
    # A short `shiyi run` may end while its background load is still converting: at exit
    # it waits a little for the conversion (so the next run finds it done), then removes
    # what is still half-written (as the next conversion does if the process was killed).
    done = threading.Event()
    at_exit = functools.partial(_finish_or_remove, done, partial)
    atexit.register(at_exit)
    try:
        convert_q4_1_to_q8_0(source, partial)
        # in the try too: the cache folder may be gone or unwritable by the time it is done
        # (a background load outliving its home raised from the load thread)
        os.replace(partial, target)
    except (OSError, ValueError, struct.error) as exc:
        partial.unlink(missing_ok=True)
        raise ModelUnavailable(
            f"Could not convert {source} to Q8_0 in {target.parent} ({exc}); set "
            "models.main.convert_q4_1: false to use the file as it is."
        ) from exc
    finally:
        done.set()
        atexit.unregister(at_exit)
    log.info("Converted %s to Q8_0 for faster prompts: %s", source.name, target)


EXIT_WAIT = 15.0
"""Seconds a process at exit waits for a conversion in progress (it takes a few)."""


def _finish_or_remove(done: threading.Event, partial: Path) -> None:
    if not done.wait(EXIT_WAIT):
        partial.unlink(missing_ok=True)


def sweep_partials(target: Path) -> list[Path]:
    """Remove the half-written conversions of ``target`` whose process is gone (each
    ``<name>.<pid>.<id>.partial`` is ~50-145 MB); the removed paths."""
    removed: list[Path] = []
    for leftover in target.parent.glob(f"{target.name}.*.partial"):
        pid = leftover.name[len(target.name) + 1 :].split(".", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            leftover.unlink(missing_ok=True)
            removed.append(leftover)
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True
