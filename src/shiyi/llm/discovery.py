"""Find model servers already running on this machine (Ollama, llama-server, LM Studio, vLLM).

Each configured port on 127.0.0.1 is asked at once, in its own thread, within one short
budget: a closed port refuses at once, and a port that accepts but never answers costs at
most the budget.  Only loopback is asked, over plain ``http.client`` (which never follows a
redirect), reading a bounded answer; a listed model name is untrusted text from whatever
program holds the port: names with control characters or of absurd length are dropped, and
what is printed is cleaned again (see :func:`printable`).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import unicodedata
from dataclasses import dataclass
from typing import Any

HOST = "127.0.0.1"
_MAX_BODY = 1_000_000
_MAX_NAME = 200
_SHOWN_NAME = 80

_NOT_CHAT = re.compile(
    r"embed|minilm|\bbge\b|bge-|\be5-|\bgte-|rerank|whisper|\bclip\b|tts\b|bert\b",
    re.IGNORECASE,
)
_CHAT = re.compile(r"instruct|chat|\bit\b|-it[-:.]|-it$|assistant", re.IGNORECASE)
_BASE = re.compile(r"\bbase\b|[-:]text\b|[-:]base[-:.]|[-:]base$", re.IGNORECASE)

_KNOWN_PORTS = {11434: "Ollama", 8080: "llama-server", 1234: "LM Studio", 8000: "vLLM"}
_OWNERS = {"llamacpp": "llama-server", "vllm": "vLLM", "ollama": "Ollama"}


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A server that answered, with the model names it listed (cleaned, in its order)."""

    kind: str
    port: int
    models: tuple[str, ...]

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"


@dataclass(frozen=True, slots=True)
class Choice:
    server: FoundServer
    model: str


def find_servers(ports: list[int], budget: float, *, first: bool = False) -> list[FoundServer]:
    """The servers answering on ``ports`` within ``budget`` seconds, in the ports' order.

    ``first``: stop at the first port, in order, whose server lists a chat model, without
    waiting for the later ones (a silent port after it costs nothing)."""
    found: dict[int, FoundServer] = {}
    deadline = time.monotonic() + budget
    threads = [
        threading.Thread(
            target=_probe_into, args=(port, deadline, found), name=f"probe-{port}", daemon=True
        )
        for port in dict.fromkeys(ports)
    ]
    for thread in threads:
        thread.start()
    for port, thread in zip(dict.fromkeys(ports), threads, strict=True):
        thread.join(max(0.0, deadline - time.monotonic()))
        if first and port in found and choose([found[port]]) is not None:
            break
    return [found[port] for port in dict.fromkeys(ports) if port in found]


def choose(servers: list[FoundServer]) -> Choice | None:
    """The chat model to use: the first server (in port order) listing one; on it, a model
    marked instruct/chat before an unmarked one before a base one, else the server's order
    (Ollama lists the most recently pulled or used first).  Embedding, reranking and
    speech models are never chosen."""
    for server in servers:
        chat = [name for name in server.models if not _NOT_CHAT.search(name)]
        if chat:
            best = min(enumerate(chat), key=lambda item: (_rank(item[1]), item[0]))
            return Choice(server, best[1])
    return None


def _rank(name: str) -> int:
    if _CHAT.search(name):
        return 0
    return 2 if _BASE.search(name) else 1


def printable(text: str, limit: int = _SHOWN_NAME) -> str:
    """``text`` safe to print: no control, format (bidi) or separator characters except
    spaces, at most ``limit`` characters."""
    cleaned = "".join(
        ch if ch == " " or unicodedata.category(ch)[0] not in "CZ" else "?" for ch in text
    )
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def _probe_into(port: int, deadline: float, found: dict[int, FoundServer]) -> None:
    server = _probe(port, deadline)
    if server is not None and time.monotonic() <= deadline:  # late answers do not count
        found[port] = server


def _probe(port: int, deadline: float) -> FoundServer | None:
    tags = _get_json(port, "/api/tags", deadline)
    if isinstance(tags, dict) and isinstance(tags.get("models"), list):
        # Ollama's embedding models are BERT family (nomic-bert, bert): never chat models.
        models = [m for m in tags["models"] if "bert" not in _family(m)]
        return FoundServer("Ollama", port, _names(models, "name"))
    listing = _get_json(port, "/v1/models", deadline)
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        return None
    entries = listing["data"]
    owners = {str(e.get("owned_by", "")).lower() for e in entries if isinstance(e, dict)}
    kind = next((_OWNERS[o] for o in sorted(owners) if o in _OWNERS), None)
    kind = kind or _KNOWN_PORTS.get(port, "an OpenAI-compatible server")
    return FoundServer(kind, port, _names(entries, "id"))


def _family(entry: Any) -> str:
    details = entry.get("details") if isinstance(entry, dict) else None
    return str(details.get("family", "")).lower() if isinstance(details, dict) else ""


def _names(entries: list[Any], key: str) -> tuple[str, ...]:
    names = []
    for entry in entries[:500]:
        name = entry.get(key) if isinstance(entry, dict) else None
        if isinstance(name, str) and _usable_name(name):
            names.append(name)
    return tuple(dict.fromkeys(names))


def _usable_name(name: str) -> bool:
    # A real model id is short printable text; anything else is not sent back to the server.
    return 0 < len(name) <= _MAX_NAME and printable(name, _MAX_NAME) == name


def _get_json(port: int, path: str, deadline: float) -> Any:
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    conn = http.client.HTTPConnection(HOST, port, timeout=left)
    try:
        conn.request("GET", path, headers={"Accept": "application/json"})
        response = conn.getresponse()
        if response.status != 200:  # a redirect is not followed: only this port is trusted
            return None
        return json.loads(response.read(_MAX_BODY + 1)[:_MAX_BODY])
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        conn.close()
