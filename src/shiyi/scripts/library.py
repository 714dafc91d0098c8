"""The script library (seed 002's ``scriptRepo``): scripts the agent wrote and saved to reuse.

Each script is two plain files under ``<data dir>/scripts/``: its body (``deploy.sh``,
``report.py``) and its metadata (``deploy.json``: description, language, parameters, when
and by whom it was saved).  Plain files, so a human can read them and ``shiyi scripts
list|show`` works while a server owns the data dir.  Names are checked before they become
paths (``[a-z0-9][a-z0-9_-]{0,63}``), so nothing written here can leave the directory.

A saved script is also a procedural memory (:func:`remember_script`): "how do we deploy?"
finds the deploy script through ``query_memory`` and the prefetch like any other procedure.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from shiyi.errors import NotFound, ScriptError
from shiyi.index.text import query_terms, tokenize
from shiyi.memory.models import FactRecord
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory

log = logging.getLogger(__name__)

Language: TypeAlias = Literal["bash", "sh", "python"]
EXTENSIONS: dict[str, str] = {"bash": "sh", "sh": "sh", "python": "py"}
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
PARAMETER_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
MAX_BODY_BYTES = 64 * 1024
"""A body is handed to its interpreter as one argument (``bash -c BODY``), and Linux caps
one argument at 128 KiB; half of that is plenty for a script worth keeping."""
MAX_DESCRIPTION = 500
MAX_PARAMETERS = 20
MAX_SCRIPTS = 500
MEMORY_KEY_PREFIX = "script:"


@dataclass(slots=True, frozen=True)
class ScriptParameter:
    name: str
    description: str = ""
    required: bool = True


@dataclass(slots=True)
class Script:
    name: str
    description: str
    language: Language
    body: str
    parameters: list[ScriptParameter] = field(default_factory=list)
    created_at: float = 0.0
    updated_at: float = 0.0
    saved_by: str = ""
    """``user_id/agent_id`` of the last save: whose memory holds the procedure."""

    @property
    def file_name(self) -> str:
        return f"{self.name}.{EXTENSIONS[self.language]}"

    def usage(self) -> str:
        """``deploy ENV [TAG]``: the name with its parameters, optional ones bracketed."""
        words = [p.name.upper() if p.required else f"[{p.name.upper()}]" for p in self.parameters]
        return " ".join([self.name, *words])

    def metadata(self) -> dict[str, object]:
        data = asdict(self)
        del data["body"]
        return data


def check_name(name: str) -> str:
    """``name`` if it may name a script, else :class:`ScriptError` saying what may."""
    if not NAME_PATTERN.fullmatch(name):
        raise ScriptError(
            f"{name!r} is not a valid script name: use 1-64 lower-case letters, digits, '-' "
            "and '_', starting with a letter or digit (like deploy or backup-db)."
        )
    return name


def check_script(script: Script) -> None:
    """Raise :class:`ScriptError` naming the first thing wrong with ``script``."""
    check_name(script.name)
    if script.language not in EXTENSIONS:
        raise ScriptError(
            f"language {script.language!r} is not supported; use one of: " + ", ".join(EXTENSIONS)
        )
    size = len(script.body.encode("utf-8"))
    if not script.body.strip():
        raise ScriptError("the script body is empty; pass the script's code as body.")
    if size > MAX_BODY_BYTES or "\0" in script.body:
        raise ScriptError(
            f"the script body is {size} bytes; at most {MAX_BODY_BYTES} (and no NUL bytes) "
            "fit. Keep large code in workspace files the script calls."
        )
    if not script.description.strip() or len(script.description) > MAX_DESCRIPTION:
        raise ScriptError(
            f"a script needs a description of 1-{MAX_DESCRIPTION} characters saying what it "
            "does and when to use it (it is how the script is found again)."
        )
    _check_parameters(script.parameters)


def _check_parameters(parameters: Sequence[ScriptParameter]) -> None:
    if len(parameters) > MAX_PARAMETERS:
        raise ScriptError(f"a script takes at most {MAX_PARAMETERS} parameters.")
    seen: set[str] = set()
    optional = False
    for parameter in parameters:
        if not PARAMETER_PATTERN.fullmatch(parameter.name) or parameter.name in seen:
            raise ScriptError(
                f"parameter name {parameter.name!r} is invalid or repeated: use a unique "
                "identifier of letters, digits and '_' (like env or tag)."
            )
        if optional and parameter.required:
            raise ScriptError(
                f"required parameter {parameter.name!r} follows an optional one; arguments "
                "are positional, so put the required parameters first."
            )
        seen.add(parameter.name)
        optional = optional or not parameter.required


class ScriptLibrary:
    """The scripts in one directory (``<data dir>/scripts``), one body and one JSON each."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> ScriptLibrary:
        """The configured user's library: ``<data dir>/scripts``."""
        return cls(data_dir / "scripts")

    @classmethod
    def for_user(cls, data_dir: Path, user_id: str, *, configured_user: str) -> ScriptLibrary:
        """``user_id``'s own library.  Users of one server do not share scripts: a script
        another user could replace is code this user's agent would run on their word.  The
        configured user keeps ``<data dir>/scripts``; others get ``scripts/users/<dir>``,
        a name no traversal can come from (their ids are free text)."""
        if user_id == configured_user:
            return cls.for_data_dir(data_dir)
        readable = re.sub(r"[^a-z0-9_-]", "", user_id.lower())[:32]
        digest = hashlib.sha256(user_id.encode()).hexdigest()[:12]
        return cls(data_dir / "scripts" / "users" / f"{readable}-{digest}")

    def save(self, script: Script) -> tuple[Script, Script | None]:
        """Write ``script`` (replacing one of the same name); returns it stamped with its
        times, and the script it replaced (None: it is new)."""
        check_script(script)
        old = self.find(script.name)
        if old is None and len(self.names()) >= MAX_SCRIPTS:
            raise ScriptError(
                f"the library holds {MAX_SCRIPTS} scripts, its limit; delete ones no longer "
                "needed first."
            )
        now = time.time()
        script.created_at = old.created_at if old is not None else now
        script.updated_at = now
        self.root.mkdir(parents=True, exist_ok=True)
        if old is not None and old.file_name != script.file_name:
            (self.root / old.file_name).unlink(missing_ok=True)
        # The body first: the metadata is what lists a script, so a crash in between leaves
        # an unlisted body, never a listed script without one.
        _write_atomic(self.root / script.file_name, script.body)
        _write_atomic(self._meta(script.name), json.dumps(script.metadata(), indent=2) + "\n")
        return script, old

    def find(self, name: str) -> Script | None:
        """The script called ``name``, or None (a broken one is logged and skipped)."""
        check_name(name)
        meta = self._meta(name)
        if not meta.is_file():
            return None
        try:
            return _load(self.root, meta)
        except (OSError, ValueError, TypeError, KeyError, ScriptError) as exc:
            log.warning("script %s is unreadable and was skipped: %s", meta, exc)
            return None

    def get(self, name: str) -> Script:
        """The script called ``name``, or :class:`NotFound` saying how to see the names."""
        script = self.find(name)
        if script is None:
            raise NotFound(f"no saved script is called {name!r}; list the scripts to see names.")
        return script

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        found = (p.stem for p in self.root.glob("*.json"))
        return sorted(n for n in found if NAME_PATTERN.fullmatch(n))

    def list_all(self) -> list[Script]:
        """Every readable script, by name."""
        return [s for s in (self.find(n) for n in self.names()) if s is not None]

    def search(self, query: str, limit: int = 10) -> list[Script]:
        """Scripts sharing words (or their stems) with ``query``: the name, description and
        parameters weigh more than the body."""
        terms = set(query_terms(query, stems=True))
        scored = []
        for script in self.list_all():
            score = 3 * _overlap(terms, _summary(script)) + _overlap(terms, script.body)
            if score:
                scored.append((score, script.name, script))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [script for _, _, script in scored[:limit]]

    def exists(self, name: str) -> bool:
        """Whether a script called ``name`` is saved, readable or not."""
        return self._meta(name).is_file()

    def delete(self, name: str) -> None:
        """Remove the script called ``name`` (its metadata and its body), a broken one too:
        one that could not be read had been skipped by ``find``, so ``scripts rm`` said no
        script had its name and its files could only be deleted by hand."""
        meta = self._meta(name)
        if not meta.is_file():
            raise NotFound(f"no saved script is called {name!r}; list the scripts to see names.")
        script = self.find(name)
        bodies = (
            [self.root / script.file_name]
            if script is not None
            else [p for p in self.root.glob(f"{name}.*") if p != meta]
        )
        meta.unlink(missing_ok=True)
        for body in bodies:
            body.unlink(missing_ok=True)

    def _meta(self, name: str) -> Path:
        return self.root / f"{check_name(name)}.json"


def _summary(script: Script) -> str:
    params = " ".join(f"{p.name} {p.description}" for p in script.parameters)
    return f"{script.name} {script.name.replace('-', ' ')} {script.description} {params}"


def _overlap(terms: set[str], text: str) -> int:
    return len(terms & set(tokenize(text, stems=True)))


def _load(root: Path, meta: Path) -> Script:
    data = json.loads(meta.read_text(encoding="utf-8"))
    parameters = [ScriptParameter(**p) for p in data.pop("parameters", [])]
    language = data["language"]
    if language not in EXTENSIONS or data["name"] != meta.stem:
        raise ScriptError(f"metadata names {data['name']!r} in {language!r}")
    body = (root / f"{meta.stem}.{EXTENSIONS[language]}").read_text(encoding="utf-8")
    return Script(body=body, parameters=parameters, **data)


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


# --- the procedural memory of a script ------------------------------------------------------


def forgotten_text(count: int) -> str:
    """``1 procedural memory``, ``2 procedural memories``."""
    return f"{count} procedural {'memory' if count == 1 else 'memories'}"


def memory_key(name: str) -> str:
    return f"{MEMORY_KEY_PREFIX}{name}"


def memory_text(script: Script) -> str:
    """What the procedure says: the description, then how to run it."""
    params = ", ".join(p.name if p.required else f"{p.name}?" for p in script.parameters)
    how = f"run script {script.name}" + (f" ({params})" if params else "")
    return f"{script.description.strip()} — {how}"


def saver(viewer: Viewer) -> str:
    """What :attr:`Script.saved_by` holds for a script ``viewer`` saves."""
    return f"{viewer.user_id}/{viewer.agent_id}"


def remember_script(memory: Memory, script: Script) -> FactRecord:
    """Record ``script`` as a procedural memory of ``memory``'s viewer (trigger: its
    description; the one step: running it).  Saving it again with a new description
    supersedes the old procedure, as a new value for the same slot does."""
    return memory.remember(
        memory_text(script),
        kind="procedural",
        key=memory_key(script.name),
        trigger=script.description.strip(),
        steps=[f"run the saved script: scripts run {script.usage()}"],
    )


def forget_script(memory: Memory, name: str) -> int:
    """Forget every version of the procedure of the script called ``name`` in ``memory``
    (the library's owner's view: each user has their own library).  Returns how many
    went."""
    facts = memory.history(key=memory_key(name))
    return memory.forget_ids([f.id for f in facts]).total if facts else 0
