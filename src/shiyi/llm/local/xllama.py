"""llama.cpp's own server engine, run in this process by ``xllamacpp`` (prebuilt wheels).

One :class:`EmbeddedServer` per model file and process: the ``main`` and ``fast`` roles on
the same weights share it (:func:`shared_server`), so the weights are in memory once and
every reply or background request is one of its slots (``SLOTS``, continuous batching over
one KV cache).  Requests go through ``xllamacpp.Server.handle_completions`` in-process; what
that API lacks (tokenising, the model's chat template, saving and restoring a slot's KV
cache to disk) goes to the same engine's HTTP listener on loopback, which a random API key
closes to every other process.  ``xllamacpp`` is imported on first use only.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from shiyi.errors import ModelError, ModelUnavailable

log = logging.getLogger(__name__)

RUNTIME_PACKAGE = "xllamacpp"
RUNTIME_VERSION = "2026.10.11549"
RUNTIME_INSTALL = (
    f'pip install "shiyi[local]" (or: pip install {RUNTIME_PACKAGE}=={RUNTIME_VERSION})'
)
LOG_ENV = "SHIYI_LLAMA_LOG"
SLOTS = 2
"""Requests computed at once: a reply and one background request (or two replies)."""
_GGUF_MAGIC = b"GGUF"
_HTTP_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class ServerKey:
    """What makes two models share one engine: the same file, context and threads."""

    weights: Path
    n_ctx: int
    threads: int
    save_dir: Path | None


class EmbeddedServer:
    """An ``xllamacpp.Server`` and a loopback client for its HTTP-only endpoints."""

    def __init__(self, key: ServerKey) -> None:
        self.key = key
        xllamacpp = import_runtime()
        check_gguf(key.weights)
        self.version = str(xllamacpp.__version__)
        params = xllamacpp.CommonParams()
        params.model.path = str(key.weights)
        # One KV cache of n_ctx shared by the slots (kv_unified): each request may use the
        # whole context, as with the one-sequence runtime before, at the memory of one.
        params.n_ctx = key.n_ctx
        params.n_parallel = SLOTS
        params.kv_unified = True
        params.cpuparams.n_threads = key.threads
        params.cpuparams_batch.n_threads = key.threads
        # llama.cpp writes its logs to fd 2 itself: silent, so `shiyi run --json` and the
        # terminal UI keep their output; failures are reported by the requests' answers.
        # SHIYI_LLAMA_LOG=3 shows them (debugging the engine).
        params.verbosity = int(os.environ.get(LOG_ENV, "-1"))
        params.warmup = False  # one empty decode: a first reply's wait for nothing
        params.endpoint_slots = True
        if key.save_dir is not None:
            key.save_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            params.slot_save_path = f"{key.save_dir}/"  # llama.cpp appends the file name
        self._api_key = secrets.token_urlsafe(24)
        params.api_keys = [self._api_key]  # the HTTP listener answers this process only
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:  # "Failed to init server": the file is no usable model
            raise ModelUnavailable(
                f"llama.cpp could not load the model {key.weights} ({exc}). Point "
                "models.main.model_path at a GGUF chat model."
            ) from exc
        self._http = httpx.Client(
            base_url=str(self._server.listening_address),
            headers={"Authorization": f"Bearer {self._api_key}"},
            timeout=_HTTP_TIMEOUT,
            trust_env=False,  # loopback: never through a configured proxy
        )

    @property
    def n_ctx(self) -> int:
        return self.key.n_ctx

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` (special tokens parsed, no BOS added), as a prompt is."""
        body = {"content": text, "add_special": False, "parse_special": True}
        tokens = self._post("/tokenize", body)["tokens"]
        return [int(token) for token in tokens]

    def apply_template(self, turns: Sequence[dict[str, str]]) -> str:
        """The prompt the model's own chat template makes of ``turns`` (ChatML if it has
        none), ending where the assistant answers."""
        try:
            return str(self._post("/apply-template", {"messages": list(turns)})["prompt"])
        except ModelError as exc:
            raise ModelError(f"The chat template rejected the messages: {exc}") from exc

    def idle_slot(self) -> int:
        """A slot computing nothing now (the first if all are busy)."""
        slots = self._get("/slots")
        idle = [slot["id"] for slot in slots if not slot.get("is_processing")]
        return int(idle[0]) if idle else 0

    def save_slot(self, slot: int, filename: str) -> bool:
        try:
            self._post(f"/slots/{slot}?action=save", {"filename": filename})
        except ModelError as exc:
            log.warning("Could not save the prompt state %s: %s", filename, exc)
            return False
        return True

    def restore_slot(self, slot: int, filename: str) -> int:
        """Tokens restored into ``slot`` from ``filename``; 0 if the file is unusable."""
        try:
            answer = self._post(f"/slots/{slot}?action=restore", {"filename": filename})
        except ModelError as exc:
            log.debug("restoring %s failed: %s", filename, exc)
            return 0
        return int(answer.get("n_restored", 0))

    def complete(self, request: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> None:
        """Stream one completion; ``on_chunk`` returns True to stop it (blocks; thread-safe).

        An error answer (a grammar that does not parse, a prompt over the context) raises
        :class:`ModelError`."""
        errors: list[str] = []

        def forward(chunk: dict[str, Any]) -> bool:
            if "error" in chunk:
                errors.append(_error_text(chunk))
                return True
            return on_chunk(chunk)

        answer = self._server.handle_completions({**request, "stream": True}, forward)
        if isinstance(answer, dict) and "error" in answer:
            errors.append(_error_text(answer))
        if errors:
            raise ModelError(f"Local model generation failed: {errors[0]}")

    def complete_once(self, request: dict[str, Any]) -> dict[str, Any]:
        """One completion, not streamed (blocks)."""
        answer = self._server.handle_completions({**request, "stream": False})
        if not isinstance(answer, dict) or "error" in answer:
            raise ModelError(f"Local model generation failed: {_error_text(answer)}")
        return answer

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        return self._answer(lambda: self._http.post(path, json=body))

    def _get(self, path: str) -> Any:
        return self._answer(lambda: self._http.get(path))

    @staticmethod
    def _answer(send: Callable[[], httpx.Response]) -> Any:
        try:
            response = send()
            data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ModelError(f"The embedded llama.cpp server did not answer ({exc}).") from exc
        if response.status_code != 200 or (isinstance(data, dict) and "error" in data):
            raise ModelError(_error_text(data))
        return data


def _error_text(answer: object) -> str:
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        return str(answer["error"].get("message", answer["error"]))
    return str(answer)


def import_runtime() -> Any:
    """The ``xllamacpp`` module, or :class:`ModelUnavailable` naming the install."""
    try:
        xllamacpp = _import_deep_bound()
    except ImportError as exc:
        raise ModelUnavailable(
            f"The embedded model needs the llama.cpp runtime {RUNTIME_PACKAGE}, which is not "
            f"installed ({exc}). Install it with `{RUNTIME_INSTALL}` or `bash scripts/"
            "install.sh`; or bring your own model server (models.main.provider: "
            "openai_compat, or preset: ollama)."
        ) from exc
    return xllamacpp


_import_lock = threading.Lock()


def _import_deep_bound() -> Any:
    """Import ``xllamacpp`` bound to its own symbols first (RTLD_DEEPBIND).

    kuzu loads its extension with RTLD_GLOBAL, so its C++ symbols interpose on libraries
    loaded after it: ``import kuzu`` then ``import xllamacpp`` aborted the process
    (std::bad_alloc in xllamacpp's static initialisers), which is what ``shiyi run`` does
    when the memory opens before the model loads."""
    loaded = sys.modules.get("xllamacpp")
    if loaded is not None:
        return loaded
    with _import_lock:
        flags = sys.getdlopenflags()
        deep = getattr(os, "RTLD_DEEPBIND", 0)  # Linux (glibc) only
        sys.setdlopenflags(os.RTLD_NOW | deep)
        try:
            import xllamacpp
        finally:
            sys.setdlopenflags(flags)
    return xllamacpp


def check_gguf(path: Path) -> None:
    """A clear error for a file llama.cpp would only call "Failed to init server"."""
    try:
        with path.open("rb") as file:
            magic = file.read(4)
    except OSError as exc:
        raise ModelUnavailable(
            f"Could not read the local model {path} ({exc}). Point models.main.model_path at "
            "a GGUF chat model."
        ) from exc
    if magic != _GGUF_MAGIC:
        raise ModelUnavailable(
            f"Could not load the local model {path}: not a GGUF file. Point "
            "models.main.model_path at a GGUF chat model."
        )


# Weak: an engine (weights and KV cache, ~300 MB for SmolLM2) lives while a model uses it.
_servers: weakref.WeakValueDictionary[ServerKey, EmbeddedServer] = weakref.WeakValueDictionary()
_servers_lock = threading.Lock()


def shared_server(key: ServerKey) -> EmbeddedServer:
    """The process's engine for ``key``, started on first use (one copy of the weights)."""
    with _servers_lock:
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = EmbeddedServer(key)
        return server
