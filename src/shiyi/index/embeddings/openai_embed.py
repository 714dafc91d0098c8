"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (sync client).

Requests go out in batches of 128 texts.  Rate limits (429), server errors (5xx), timeouts
and connection failures are retried with :class:`~shiyi.llm.retry.RetryPolicy` backoff,
honouring Retry-After; the SDK's own retries are disabled so the policy is the only one.
Vectors are L2-normalised and must have the configured dimension.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from shiyi.errors import ConfigError, ModelError, ModelUnavailable
from shiyi.llm.retry import RetryPolicy, retry_after_seconds

if TYPE_CHECKING:
    from openai import OpenAI

BATCH_SIZE = 128


def _normalise(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if norm == 0.0:
        return [float(x) for x in vector]
    return [float(x) / norm for x in vector]


def _is_retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


class OpenAIEmbedder:
    """Remote embedder; ``model_id`` is ``"openai:<model>"`` so vectors never mix models."""

    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        model: str,
        dimension: int,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        if dimension < 1:
            raise ConfigError(f"embedding dimension must be positive (got {dimension})")
        self._model = model
        self._dimension = dimension
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._batch_size = batch_size
        self._client = self._make_client(base_url, api_key, timeout)

    @staticmethod
    def _make_client(base_url: str | None, api_key: str | None, timeout: float) -> OpenAI:
        try:
            from openai import OpenAI
        except ImportError as exc:
            raise ModelUnavailable(
                "The openai package is missing. Fix: pip install openai"
            ) from exc
        # Local servers often need no key, but the SDK insists on one.
        return OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0
        )

    @property
    def model_id(self) -> str:
        return f"openai:{self._model}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            vectors.extend(self._embed_batch(batch))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        raw = self._call_with_retry(batch)
        if len(raw) != len(batch):
            raise ModelError(
                f"Embedding endpoint returned {len(raw)} vectors for {len(batch)} texts "
                f"(model {self._model})."
            )
        for vector in raw:
            self._check_dimension(vector)
        return [_normalise(vector) for vector in raw]

    def _check_dimension(self, vector: Sequence[float]) -> None:
        if len(vector) != self._dimension:
            raise ConfigError(
                f"Embedding model {self._model!r} returns {len(vector)}-dimensional vectors, "
                f"but the configured dimension is {self._dimension}. Fix: set the embedding "
                f"dimension to {len(vector)} (existing vectors must then be re-embedded)."
            )

    def _call_with_retry(self, batch: list[str]) -> list[list[float]]:
        attempts = 0
        while True:
            attempts += 1
            try:
                return self._request(batch)
            except ModelError as exc:
                if not exc.retryable or not self._retry.can_retry(attempts):
                    raise
                self._sleep(self._retry.delay(attempts, exc.retry_after))

    def _request(self, batch: list[str]) -> list[list[float]]:
        import openai

        try:
            # "float" explicitly: the SDK's default base64 is unsupported by some local servers.
            response = self._client.embeddings.create(
                model=self._model, input=batch, encoding_format="float"
            )
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise ModelError(
                f"Embedding endpoint unreachable ({type(exc).__name__}: {exc}). "
                "Fix: check base_url and that the server is running.",
                retryable=True,
            ) from exc
        except openai.OpenAIError as exc:
            raise ModelError(f"Embedding request failed: {exc}") from exc
        items = sorted(response.data, key=lambda item: item.index)
        return [list(item.embedding) for item in items]

    def _status_error(self, exc: Any) -> ModelError:
        status = int(exc.status_code)
        if status in (401, 403, 404):
            return ModelUnavailable(
                f"Embedding endpoint answered HTTP {status}: {exc.message}. Fix: check the API "
                f"key and that the server serves embedding model {self._model!r}.",
                status=status,
            )
        headers = getattr(exc.response, "headers", None)
        return ModelError(
            f"Embedding endpoint answered HTTP {status}: {exc.message}.",
            retryable=_is_retryable_status(status),
            status=status,
            retry_after=retry_after_seconds(dict(headers) if headers else None),
        )
