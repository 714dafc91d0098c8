"""What the CLI prints is shown, never obeyed, by the terminal.

Memories, documents, script descriptions, session logs and a model's replies are text from
outside: an imported chat or a web page can hold terminal control sequences.  Printed as
they were, ``\\e]52;c;...`` wrote the user's clipboard (OSC 52), ``\\e]8;;http://...``
made a hidden link (OSC 8), and ``\\e[2J`` cleared the screen.  Every line-based command
therefore writes through :class:`SafeStream`: an escape or other control character is
printed as ``\\x1b`` (visible, copyable), except colours and the end-of-line erase that
shiyi's own progress lines use (``\\e[...m``, ``\\e[K``), which change nothing but how the
text looks.  The terminal UI (``shiyi chat`` on a TTY) draws with rich and keeps its own
stream; what it shows is rich's rendering, which prints control characters as text.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

# ESC not opening a colour or erase-to-end-of-line; C0 controls other than tab, newline and
# carriage return; DEL; C1 controls (0x9b and 0x9d open CSI and OSC on some terminals).
_UNSAFE = re.compile(r"\x1b(?!\[[0-9;]{0,32}[mK])|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def shown(text: str, *, colours: bool = True) -> str:
    """``text`` with every control sequence a terminal would obey written out as text;
    ``colours=False``: colours too (rich lays text out itself and would miscount them)."""
    unsafe = _UNSAFE if colours else _CONTROL
    return unsafe.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


class SafeStream:
    """A text stream that writes :func:`shown` text to ``inner``."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(shown(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer ...
        return getattr(self._inner, name)


def guard_output(argv: list[str]) -> None:
    """Wrap stdout and stderr for every command but the terminal UI and the MCP server
    (its stdout is the protocol)."""
    command = next((a for a in argv[1:] if not a.startswith("-")), "")
    if command in ("chat", "mcp"):
        return
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)
