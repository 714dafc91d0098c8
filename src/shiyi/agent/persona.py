"""Where the persona at the top of the system prompt comes from.

Order: ``context.persona_file`` if configured, else ``persona.md`` in the user config
directory if the user wrote one, else the default shipped with the package.  A configured
file that is missing is an error: silently falling back would hide a typo in the path.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from shiyi.config.loader import user_config_dir
from shiyi.config.settings import Settings
from shiyi.errors import ConfigError

PERSONA_FILE_NAME = "persona.md"


def load_persona(settings: Settings) -> str:
    """The persona text for ``settings``, stripped of surrounding whitespace."""
    configured = settings.context.persona_file
    if configured is not None:
        return _read_configured(configured.expanduser())
    user_file = user_config_dir() / PERSONA_FILE_NAME
    if user_file.is_file():
        return _read(user_file, what=str(user_file))
    return default_persona()


def default_persona() -> str:
    """The persona shipped with shiyi (``shiyi/agent/persona.md``)."""
    # importlib.resources, not a path next to __file__: it also works from a wheel or zip.
    resource = resources.files("shiyi.agent").joinpath(PERSONA_FILE_NAME)
    return resource.read_text(encoding="utf-8").strip()


def _read_configured(path: Path) -> str:
    if not path.is_file():
        raise ConfigError(
            f"context.persona_file points to {path}, which is not a file. "
            "Create it, fix the path, or remove the setting to use the default persona."
        )
    return _read(path, what=f"context.persona_file ({path})")


def _read(path: Path, *, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read persona file {what}: {exc}. It must be UTF-8 text."
        ) from exc
