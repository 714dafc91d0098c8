"""shiyi: an agent runtime with a real long-term memory.

The library's entry points, imported on first use (``import shiyi`` stays cheap)::

    from shiyi import Agent, App, Memory, load_settings

* :func:`load_settings`: the effective settings (config file, environment, overrides);
* :class:`App`: the composition root; ``App.open(settings)`` builds the models, the memory
  and the tools once, and ``app.agent()`` hands them to an :class:`Agent`;
* :class:`Agent`: one conversation's agent (``agent.send(message)`` streams events);
* :class:`Memory`: shiyi's native memory facade (:class:`shiyi.memory.service.Memory`,
  ``Memory.open(settings)``), not the mem0-shaped API: that one is
  :class:`shiyi.compat.mem0.Memory`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from shiyi.agent import Agent
    from shiyi.app import App
    from shiyi.config import load_settings
    from shiyi.memory.service import Memory

_LAZY = {
    "Agent": "shiyi.agent",
    "App": "shiyi.app",
    "Memory": "shiyi.memory.service",
    "load_settings": "shiyi.config",
}
__all__ = ["Agent", "App", "Memory", "__version__", "load_settings"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value  # the next access skips this function
        return value
    raise AttributeError(f"module 'shiyi' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
