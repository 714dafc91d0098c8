"""Zero the unused bytes of the graph file's header page, which Kuzu fills with stale memory.

Kuzu 0.11.3 keeps its database header in page 0 of the file: 28 bytes (the magic ``KUZU``, the
storage version, the catalog's and the metadata's page ranges).  It writes that page from a
buffer it does not clear, so the other 4,068 bytes hold whatever the process's heap held
before.  Found by the forget test's one-off failure (CI run 112) and reproduced: two loops of
60 forgets with compaction, side by side, left the forgotten word in ``graph.kuzu`` twice,
with no row holding it; the page carried SQLite FTS5 index pages of the keyword index
("berlin", "live", "river" with their position lists), freed memory the process reused.
A forget promises no file keeps the words, and memory of any user could land there, so the
page's slack is zeroed whenever Kuzu may have written it: after the database closes and
after every write transaction's commit (a commit may checkpoint by itself; checking the page
costs 17 us, against milliseconds for the transaction).  Nothing reads past the header (a
file with the slack zeroed opens, and replays its write-ahead log, as before: tested).  A
file whose first bytes are not this layout (another Kuzu version) is left alone.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

PAGE_BYTES = 4096
HEADER_BYTES = 28
"""Magic (4), storage version (8), catalog and metadata page ranges (2 x 2 x 4)."""
MAGIC = b"KUZU"
STORAGE_VERSION = 39
"""Kuzu 0.11.3's; another version may lay the page out otherwise."""


def clear_header_slack(path: Path) -> bool:
    """Zero page 0 of ``path`` after the header; True if it held anything there."""
    try:
        with path.open("r+b") as file:
            page = file.read(PAGE_BYTES)
            if not _known_layout(page):
                log.debug("graph header of %s not in Kuzu 0.11.3's layout: left alone", path)
                return False
            if not page[HEADER_BYTES:].strip(b"\0"):
                return False
            file.seek(HEADER_BYTES)
            file.write(bytes(PAGE_BYTES - HEADER_BYTES))
            file.flush()
            os.fsync(file.fileno())
            return True
    except FileNotFoundError:
        return False
    except OSError as exc:  # a read-only file or disk: the store works on, the slack stays
        log.warning("could not clear the unused header bytes of %s: %s", path, exc)
        return False


def _known_layout(page: bytes) -> bool:
    version = int.from_bytes(page[len(MAGIC) : len(MAGIC) + 8], "little")
    return len(page) == PAGE_BYTES and page.startswith(MAGIC) and version == STORAGE_VERSION
