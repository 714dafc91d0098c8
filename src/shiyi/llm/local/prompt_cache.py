"""Evaluated prompt prefixes kept on disk as saved engine slots, so a fresh process skips them.

The embedded model's prompt opens with the tool section (the tools' names, descriptions and
schemas), then the caller's system text (persona, workspace, the tools line: the context
builder keeps the time, memories and notes out of it).  Evaluating that opening is most of
a first reply's wait on a small CPU.  Once evaluated alone in one of the engine's slots,
that slot's KV cache is saved to a file (llama.cpp server's slot save); a later process with
the same model file, llama.cpp build, context size and tokens restores it into a slot (tens
of MB, tens of ms) and evaluates only the rest there.

How far the saved prefix reaches is learned, not configured: always the tool section, and
as far as this prompt agrees with the previous one (both within the system turn), so from
the second process on the whole system turn is loaded while a changed persona or workspace
is not.  Nothing above this module has to mark where the stable part ends.

The index beside the files keeps no prompt text and no token ids: the previous system
turn is kept as hashes of its prefixes (every ``CHECKPOINT`` tokens, and the whole turn), a
saved state as its length (its file name is the hash of its tokens).  The prompt below the
system turn (messages, recalled memories, tool output) never reaches the disk, so a forget
has nothing to find here.

A file is named by a hash of everything that shapes the state, so a changed tool, model or
build never loads a stale one.  This is a cache: a file that fails to load is removed,
logged and rebuilt from the prompt, and nothing else is lost.  At most ``MAX_FILES`` are
kept, the least recently used go first.  Runs in the model's worker thread.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shiyi.llm.local.xllama import EmbeddedServer

log = logging.getLogger(__name__)

MAX_FILES = 4
"""One per tool set in use (CLI, server, plan mode); each is ~23 KB per token for SmolLM2."""
SLOTS_REMEMBERED = 4
"""Latest prompts whose prefixes count as in the engine (it has 2 slots and a RAM cache)."""
MIN_TOKENS = 64
"""Shorter prefixes evaluate faster than their file loads."""
SUFFIX = ".llstate"
STATE_MAGIC = b"qsgg"
"""The first bytes of a llama.cpp sequence state file (LLAMA_STATE_SEQ_MAGIC, little-endian)."""
CHECKPOINT = 8
"""Tokens between the hashes of the previous system turn: a prefix learned from it ends on
one of them (or at the whole turn), at most this many tokens short of the shared part."""


class PrefixStateCache:
    """KV-cache snapshots of prompt prefixes for one model file, in one directory."""

    def __init__(self, directory: Path, identity: str) -> None:
        self.directory = directory
        self._identity = identity
        self.hits = 0
        self.misses = 0
        self._recent: list[list[int]] = []
        """This process's latest prompts (in memory only), which the engine's slots hold."""

    @classmethod
    def for_model(
        cls, directory: Path, model_file: Path, runtime: str, n_ctx: int
    ) -> PrefixStateCache:
        """A cache keyed by the model file (path, size, mtime), llama.cpp build and n_ctx.

        ``directory`` must be the engine's slot save folder (its ``slot_save_path``)."""
        stat = model_file.stat()
        identity = "|".join(
            (str(model_file.resolve()), str(stat.st_size), str(stat.st_mtime_ns), runtime,
             str(n_ctx))
        )  # fmt: skip
        return cls(directory, identity)

    def path_for(self, tokens: Sequence[int]) -> Path:
        digest = hashlib.sha256(self._identity.encode())
        digest.update(b"\0" + b",".join(str(token).encode() for token in tokens))
        return self.directory / f"{digest.hexdigest()[:32]}{SUFFIX}"

    def _checkpoints(self, tokens: Sequence[int]) -> dict[int, str]:
        """``{length: hash of tokens[:length]}`` every ``CHECKPOINT`` tokens and at the end."""
        digest = hashlib.sha256(b"last\0" + self._identity.encode())
        marks: dict[int, str] = {}
        for start in range(0, len(tokens), CHECKPOINT):
            piece = tokens[start : start + CHECKPOINT]
            digest.update(b"".join(b",%d" % token for token in piece))
            marks[start + len(piece)] = digest.hexdigest()[:24]
        return marks

    def prime(
        self, server: EmbeddedServer, prompt: Sequence[int], floor: int, ceiling: int
    ) -> tuple[int, str]:
        """Leave the prompt's stable prefix evaluated in one of the engine's slots; that
        slot (-1: any, the engine picks the one sharing the longest prefix) and how.

        ``floor``: tokens always worth caching (the tool section); ``ceiling``: where the
        system turn's text ends.
        """
        system = list(prompt[:ceiling])
        learned = self._learned(system)
        self._remember(system)
        target = min(max(floor, learned), ceiling, len(prompt) - 1)
        if target < MIN_TOKENS:
            return -1, "short"
        prefix = list(prompt[:target])
        seen = max((_common_prefix(earlier, prefix) for earlier in self._recent), default=0)
        self._recent = [list(prompt), *self._recent[: SLOTS_REMEMBERED - 1]]
        if seen >= target:
            # The engine keeps evaluated prompts in its slots (and a RAM cache of them) and
            # reuses the longest shared prefix by itself.  Not saved from here even when
            # new: the next process learns it when it evaluates anyway.
            return -1, "memory"
        slot = server.idle_slot()
        for saved in self._saved_prefixes(prefix, longer_than=0):
            if self._load(server, slot, saved):
                self.hits += 1
                if len(saved) == len(prefix):
                    return slot, "disk"
                break
        else:
            self.misses += 1
        # Evaluated alone (no token generated) so the file holds the prefix and nothing of
        # the conversation after it; the reply then reuses it in the same slot.
        server.complete_once(
            {"prompt": prefix, "max_tokens": 0, "id_slot": slot, "cache_prompt": True}
        )
        self._save(server, slot, prefix)
        return slot, "evaluated"

    def _saved_prefixes(self, prefix: Sequence[int], longer_than: int) -> list[list[int]]:
        """Saved prefixes of ``prefix``, longest first (a file is named by its tokens' hash,
        so the index needs only each one's length)."""
        saved = self._index().get("states", {})
        lengths = {n for n in saved.values() if isinstance(n, int) and not isinstance(n, bool)}
        found = [
            list(prefix[:length])
            for length in sorted(lengths, reverse=True)
            if longer_than < length <= len(prefix) and self.path_for(prefix[:length]).name in saved
        ]
        return found

    def _learned(self, system: Sequence[int]) -> int:
        """How much of ``system`` the previous prompt's system turn shared (to a checkpoint)."""
        last = self._index().get("last", {})
        if not isinstance(last, dict):
            return 0  # an index of an older release (raw tokens): rewritten below
        marks = self._checkpoints(system)
        agreed = [n for n, mark in marks.items() if last.get(str(n)) == mark]
        return max(agreed, default=0)

    def _remember(self, system: Sequence[int]) -> None:
        index = self._index()
        index["last"] = {str(n): mark for n, mark in self._checkpoints(system).items()}
        self._write_index(index)

    def _index_path(self) -> Path:
        name = hashlib.sha256(self._identity.encode()).hexdigest()[:16]
        return self.directory / f"index-{name}.json"

    def _index(self) -> dict[str, Any]:
        """``{"last": {length: hash} of the previous system turn, "states": {file name:
        length}}``."""
        try:
            data = json.loads(self._index_path().read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write_index(self, index: dict[str, Any]) -> None:
        states = index.get("states", {})
        index["states"] = {
            name: length
            for name, length in states.items()
            if isinstance(length, int) and (self.directory / name).is_file()
        }
        sizes = index.get("sizes", {})
        index["sizes"] = {name: sizes[name] for name in index["states"] if name in sizes}
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            partial = self._index_path().with_suffix(f".{os.getpid()}.partial")
            partial.write_text(json.dumps(index))
            os.replace(partial, self._index_path())
        except OSError as exc:
            log.warning("Could not write the prompt cache index in %s (%s).", self.directory, exc)

    def _load(self, server: EmbeddedServer, slot: int, prefix: Sequence[int]) -> bool:
        path = self.path_for(prefix)
        # llama.cpp aborts the process on a state file cut short: the size it was written
        # with, and its magic, are checked before the engine reads it.
        restored = server.restore_slot(slot, path.name) if self._intact(path) else 0
        if restored != len(prefix):
            log.warning(
                "The prompt cache file %s could not be used (damaged, or written by another "
                "llama.cpp build): removed; the prompt is evaluated and saved again.",
                path,
            )
            path.unlink(missing_ok=True)
            return False
        os.utime(path)  # recently used: last to be evicted
        return True

    def _save(self, server: EmbeddedServer, slot: int, prefix: Sequence[int]) -> None:
        path = self.path_for(prefix)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            log.warning("No prompt cache: cannot create %s (%s).", self.directory, exc)
            return
        # Written aside and renamed: a reader in another process never sees half a file.
        partial = f"{path.name}.{os.getpid()}.partial"
        if server.save_slot(slot, partial) and (self.directory / partial).is_file():
            os.replace(self.directory / partial, path)
            self._evict()
            index = self._index()
            index.setdefault("states", {})[path.name] = len(prefix)
            index.setdefault("sizes", {})[path.name] = path.stat().st_size
            self._write_index(index)
        else:
            (self.directory / partial).unlink(missing_ok=True)
            log.warning("Could not write the prompt cache file %s; continuing without.", path)

    def _intact(self, path: Path) -> bool:
        size = self._index().get("sizes", {}).get(path.name)
        try:
            with path.open("rb") as file:
                magic = file.read(4)
            return magic == STATE_MAGIC and size == path.stat().st_size
        except OSError:
            return False

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
