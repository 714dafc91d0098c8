"""``model_sources``: where a main model comes from when none is configured, and pulls."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

WELL_KNOWN_PORTS = (11434, 8080, 1234, 8000)
"""Ollama, llama.cpp's llama-server, LM Studio, vLLM: their default ports on loopback."""


class ModelSourceSettings(BaseModel):
    """Finding a model server already running here, and downloading GGUF files."""

    model_config = ConfigDict(extra="forbid")

    detect: bool = Field(
        default=True,
        description="With no model configured (no models.main, no preset), `shiyi chat`, "
        "`run` and `serve` ask the usual local servers on 127.0.0.1 (Ollama, llama-server, "
        "LM Studio, vLLM) for their models and use a chat model found there; else the "
        "embedded model. Configured models always win.",
    )
    detect_ports: list[int] = Field(
        default_factory=lambda: list(WELL_KNOWN_PORTS),
        description="Loopback ports asked, in order of preference (only 127.0.0.1 is asked).",
    )
    detect_timeout: float = Field(
        default=0.25,
        gt=0,
        le=5,
        description="Seconds the whole search may take (the ports are asked at once).",
    )
    hub_url: str = Field(
        default="https://huggingface.co",
        description="Where `shiyi model pull org/repo/file.gguf` downloads from "
        "(<hub_url>/org/repo/resolve/main/file.gguf).",
    )
    models_dir: Path | None = Field(
        default=None, description="Where pulled GGUF files go (default: <data dir>/models)."
    )
    _main_configured: bool = PrivateAttr(default=True)
    """Set by the loader: whether the user named a main model (models.main or a preset).
    Settings built in code count as configured, so only the commands detect."""
    _fast_configured: bool = PrivateAttr(default=True)
    """Likewise for the fast role (models.fast or a preset): a found server leaves it be."""

    @property
    def main_configured(self) -> bool:
        return self._main_configured

    @property
    def fast_configured(self) -> bool:
        return self._fast_configured

    @field_validator("detect_ports")
    @classmethod
    def _ports(cls, value: list[int]) -> list[int]:
        for port in value:
            if not 0 < port < 65536:
                raise ValueError(f"{port} is not a TCP port (1-65535)")
        return value

    @field_validator("hub_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https:// (got {value!r})")
        return value.rstrip("/")
