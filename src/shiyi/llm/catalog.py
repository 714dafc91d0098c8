"""``shiyi model list`` and ``use``: the models at hand, and making one the main model.

At hand: the packaged default (SmolLM2, embedded), GGUF files pulled into the models
directory, and the chat models of servers running on loopback.  ``use`` writes
``models.main`` into the config file in effect (``SHIYI_CONFIG``, ``./shiyi.yaml``, else the
user config dir's, created), keeping the previous file as ``shiyi.yaml.bak``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from shiyi.config.loader import CONFIG_FILE_NAME, find_config_file, read_yaml, user_config_dir
from shiyi.config.settings import ModelSettings, Settings
from shiyi.errors import ConfigError
from shiyi.llm.discovery import FoundServer, find_servers, printable

PACKAGED = "SmolLM2-135M-Instruct-Q4_1"
"""The embedded default's model name (``shiyi model use default`` also selects it)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One model at hand: how ``use`` names it, where it is, and its role settings."""

    name: str
    where: str
    role: dict[str, Any]


def models_dir(settings: Settings) -> Path:
    return (settings.model_sources.models_dir or settings.data_dir / "models").expanduser()


def packaged_entry() -> Entry:
    where = "packaged, embedded"
    try:
        from shiyi.llm.local.model import default_gguf_path

        where = f"packaged, embedded: {default_gguf_path()}"
    except Exception:  # not installed: still selectable, the error comes when it loads
        where = "packaged, embedded (weights not installed)"
    return Entry(PACKAGED, where, {"provider": "local", "model": PACKAGED})


def pulled_entries(settings: Settings) -> list[Entry]:
    folder = models_dir(settings)
    files = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
    return [
        _file_entry(path, f"pulled, {path.stat().st_size / 1e9:.2f} GB: {path}") for path in files
    ]


def _file_entry(path: Path, where: str) -> Entry:
    return Entry(
        path.name, where, {"provider": "local", "model": path.stem, "model_path": str(path)}
    )


def server_entries(servers: list[FoundServer]) -> list[Entry]:
    return [
        Entry(
            name,
            f"{server.kind} at {server.address}",
            {"provider": "openai_compat", "base_url": server.base_url, "model": name},
        )
        for server in servers
        for name in server.models
    ]


def at_hand(settings: Settings) -> list[Entry]:
    sources = settings.model_sources
    servers = find_servers(sources.detect_ports, sources.detect_timeout)
    return [packaged_entry(), *pulled_entries(settings), *server_entries(servers)]


def in_use(entry: Entry, main: ModelSettings) -> bool:
    role = entry.role
    if role["provider"] != main.provider:
        return False
    if main.provider == "local":
        path = str(main.model_path.expanduser().resolve()) if main.model_path else None
        return path == role.get("model_path", None)
    same_server = (main.base_url or "").rstrip("/") == role["base_url"]
    return same_server and main.model == str(role["model"])


def find_entry(name: str, settings: Settings) -> Entry:
    """The model ``name`` designates: ``default``, a GGUF path, a pulled file (with or
    without ``.gguf``), or a model listed by a server running here."""
    if name in ("default", "embedded", PACKAGED):
        return packaged_entry()
    path = Path(name).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return _file_entry(path.resolve(), str(path.resolve()))
    entries = at_hand(settings)
    for entry in entries:
        if name in (entry.name, entry.name.removesuffix(".gguf")):
            return entry
    known = ", ".join(printable(e.name) for e in entries)
    raise ConfigError(
        f"no model named {name!r} here. Known: {known}. Give a GGUF file's path, pull one "
        "with `shiyi model pull`, or start the server that has it."
    )


def config_target(cwd: Path) -> Path:
    """The config file ``use`` writes: the one in effect, else the user config dir's."""
    return find_config_file(os.environ, cwd) or user_config_dir() / CONFIG_FILE_NAME


def write_main_model(target: Path, role: dict[str, Any]) -> Path | None:
    """Set ``models.main`` in ``target`` to ``role`` (replacing what was there); returns the
    backup of the previous file, if there was one.  Comments in the file are not kept (the
    backup has them)."""
    data = read_yaml(target) if target.is_file() else {}
    models = data.get("models")
    if not isinstance(models, dict):
        models = {}
    models["main"] = role
    data["models"] = models
    ModelSettings.model_validate(role)
    backup = None
    if target.is_file():
        backup = target.with_name(target.name + ".bak")
        shutil.copy2(target, backup)
    target.parent.mkdir(parents=True, exist_ok=True)
    fresh = target.with_name(target.name + ".tmp")
    fresh.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    os.replace(fresh, target)
    return backup
