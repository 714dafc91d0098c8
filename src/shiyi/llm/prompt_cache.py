"""Evaluated prompt prefixes kept on disk as llama.cpp state, so a fresh process skips them.

The embedded model's prompt opens with the tool section (the tools' names, descriptions and
schemas), then the caller's system text (persona, workspace, the tools line: the context
builder keeps the time, memories and notes out of it).  Evaluating that opening is most of
a first reply's wait on a small CPU.  Once evaluated, its KV cache is written with
``llama_state_save_file``; a later process with the same model file, llama.cpp build,
context size and tokens loads it (tens of MB, tens of ms) and evaluates only the rest.

How far the saved prefix reaches is learned, not configured: always the tool section, and
as far as this prompt agrees with the previous one (both within the system turn), so from
the second process on the whole system turn is loaded while a changed persona or workspace
is not.  Nothing above this module has to mark where the stable part ends.

A file is named by a hash of everything that shapes the state, so a changed tool, model or
build never loads a stale one.  This is a cache: a file that fails to load is removed,
logged and rebuilt from the prompt, and nothing else is lost.  At most ``MAX_FILES`` are
kept, the least recently used go first.  Runs in the model's worker thread, lock held.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAX_FILES = 4
"""One per tool set in use (CLI, server, plan mode); each is ~23 KB per token for SmolLM2."""
MIN_TOKENS = 64
"""Shorter prefixes evaluate faster than their file loads."""
SUFFIX = ".llstate"


class PrefixStateCache:
    """KV-cache snapshots of prompt prefixes for one model file, in one directory."""

    def __init__(self, directory: Path, identity: str) -> None:
        self.directory = directory
        self._identity = identity
        self.hits = 0
        self.misses = 0

    @classmethod
    def for_model(cls, directory: Path, model_file: Path, n_ctx: int) -> PrefixStateCache:
        """A cache keyed by the model file (path, size, mtime), llama.cpp build and n_ctx."""
        import llama_cpp

        stat = model_file.stat()
        identity = "|".join(
            (
                str(model_file.resolve()),
                str(stat.st_size),
                str(stat.st_mtime_ns),
                llama_cpp.__version__,
                str(n_ctx),
            )
        )
        return cls(directory, identity)

    def path_for(self, tokens: Sequence[int]) -> Path:
        digest = hashlib.sha256(self._identity.encode())
        digest.update(b"\0" + b",".join(str(token).encode() for token in tokens))
        return self.directory / f"{digest.hexdigest()[:32]}{SUFFIX}"

    def prime(self, llama: Any, prompt: Sequence[int], floor: int, ceiling: int) -> str:
        """Leave the prompt's stable prefix evaluated in ``llama``'s KV cache; say how.

        ``floor``: tokens always worth caching (the tool section); ``ceiling``: where the
        system turn's text ends.  ``llama.generate`` then reuses the prefix.
        """
        learned = _common_prefix(self._last_prompt(), prompt[:ceiling])
        self._remember(prompt)
        target = min(max(floor, learned), ceiling, len(prompt) - 1)
        if target < MIN_TOKENS:
            return "short"
        prefix = list(prompt[:target])
        start = _common_prefix(llama.input_ids[: llama.n_tokens], prefix)
        if start >= target:
            # Not saved from here even when new: cutting the KV cache back to the prefix
            # would cost this reply the re-evaluation of everything after it (a chat turn
            # measured 1.5 -> 1.9 s).  The next process learns it when it evaluates anyway.
            return "memory"
        how = "evaluated"
        for saved in self._saved_prefixes(prefix, longer_than=start):
            if self._load(llama, self.path_for(saved), saved):
                self.hits += 1
                start, how = len(saved), "disk"
                break
        if start < target:
            if how == "evaluated":
                self.misses += 1
            llama.n_tokens = start  # eval() drops the KV cache from here on
            llama.eval(prefix[start:])
            self._save(llama, self.path_for(prefix), prefix)
        return how

    def _saved_prefixes(self, prefix: Sequence[int], longer_than: int) -> list[list[int]]:
        """Saved prefixes of ``prefix``, longest first."""
        found = [
            tokens
            for tokens in self._index().get("states", {}).values()
            if longer_than < len(tokens) <= len(prefix) and list(prefix[: len(tokens)]) == tokens
        ]
        return sorted(found, key=len, reverse=True)

    def _last_prompt(self) -> list[int]:
        last = self._index().get("last", [])
        return last if isinstance(last, list) else []

    def _remember(self, prompt: Sequence[int]) -> None:
        index = self._index()
        index["last"] = list(prompt)
        self._write_index(index)

    def _index_path(self) -> Path:
        name = hashlib.sha256(self._identity.encode()).hexdigest()[:16]
        return self.directory / f"index-{name}.json"

    def _index(self) -> dict[str, Any]:
        """``{"last": tokens of the previous prompt, "states": {file name: tokens}}``."""
        try:
            data = json.loads(self._index_path().read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write_index(self, index: dict[str, Any]) -> None:
        states = index.get("states", {})
        index["states"] = {
            name: tokens for name, tokens in states.items() if (self.directory / name).is_file()
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = self._index_path().with_suffix(f".{os.getpid()}.partial")
            partial.write_text(json.dumps(index))
            os.replace(partial, self._index_path())
        except OSError as exc:
            log.warning("Could not write the prompt cache index in %s (%s).", self.directory, exc)

    def _load(self, llama: Any, path: Path, prefix: Sequence[int]) -> bool:
        import llama_cpp

        tokens = (llama_cpp.llama_token * len(prefix))()
        count = ctypes.c_size_t(0)
        loaded = llama_cpp.llama_state_load_file(
            llama.ctx, str(path).encode(), tokens, len(prefix), ctypes.byref(count)
        )
        if not loaded or list(tokens[: count.value]) != list(prefix):
            log.warning(
                "The prompt cache file %s could not be used (damaged, or written by another "
                "llama.cpp build): removed; the prompt is evaluated and saved again.",
                path,
            )
            path.unlink(missing_ok=True)
            llama.reset()
            return False
        llama.input_ids[: len(prefix)] = prefix
        llama.n_tokens = len(prefix)
        os.utime(path)  # recently used: last to be evicted
        return True

    def _save(self, llama: Any, path: Path, prefix: Sequence[int]) -> None:
        import llama_cpp

        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            log.warning("No prompt cache: cannot create %s (%s).", self.directory, exc)
            return
        # Written aside and renamed: a reader in another process never sees half a file.
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        tokens = (llama_cpp.llama_token * len(prefix))(*prefix)
        if llama_cpp.llama_state_save_file(llama.ctx, str(partial).encode(), tokens, len(prefix)):
            os.replace(partial, path)
            self._evict()
            index = self._index()
            index.setdefault("states", {})[path.name] = list(prefix)
            self._write_index(index)
        else:
            partial.unlink(missing_ok=True)
            log.warning("Could not write the prompt cache file %s; continuing without.", path)

    def _evict(self) -> None:
        files = sorted(
            self.directory.glob(f"*{SUFFIX}"), key=lambda file: file.stat().st_mtime, reverse=True
        )
        for stale in files[MAX_FILES:]:
            stale.unlink(missing_ok=True)


def _common_prefix(left: Sequence[int], right: Sequence[int]) -> int:
    count = 0
    for a, b in zip(left, right, strict=False):
        if a != b:
            break
        count += 1
    return count


def agreed_length(prompt: Sequence[int], prefix_text_tokens: Sequence[int]) -> int:
    """How many of the prompt's tokens a tokenized prefix of its text agrees with.

    A prefix tokenized alone can end differently from the same text inside the whole prompt
    (a merge across the boundary), so only the tokens both agree on count.
    """
    return _common_prefix(prompt, prefix_text_tokens)
