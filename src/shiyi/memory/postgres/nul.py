"""PostgreSQL's ``text`` and ``jsonb`` cannot hold U+0000, which reaches memory whenever a
tool result quotes a binary file.  Records and job payloads are written with it replaced by
U+FFFD (the embedded store keeps it as is: SQLite and Kuzu store it)."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")
_NUL = "\x00"
REPLACEMENT = "\ufffd"


def nul_free(value: T) -> T:
    """``value`` (a string, a record, or lists, tuples and dicts of them) without NULs; the
    same object when it has none, so the common case copies nothing."""
    return _clean(value) if _has_nul(value) else value


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return _NUL in value
    if isinstance(value, list | tuple):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_nul(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(_NUL, REPLACEMENT)
    if isinstance(value, list | tuple):
        return type(value)(_clean(v) for v in value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value) if f.init]
        return dataclasses.replace(value, **{n: _clean(getattr(value, n)) for n in names})
    return value
