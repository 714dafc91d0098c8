"""Typed settings: env ``SHIYI_*``, ``shiyi.yaml``, presets and the data directory."""

from shiyi.config.loader import load_settings, masked_dump
from shiyi.config.settings import (
    AgentSettings,
    ModelPrice,
    ModelSettings,
    Settings,
    ToolSettings,
)

__all__ = [
    "AgentSettings",
    "ModelPrice",
    "ModelSettings",
    "Settings",
    "ToolSettings",
    "load_settings",
    "masked_dump",
]
