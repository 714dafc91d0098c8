"""Load :class:`Settings` from defaults, ``shiyi.yaml``, ``SHIYI_*`` env and presets."""

from __future__ import annotations

import contextvars
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from shiyi.config.presets import DEFAULT_PRICES, PRESETS
from shiyi.config.settings import ModelPrice, ModelSettings, Settings
from shiyi.errors import ConfigError

CONFIG_FILE_NAME = "shiyi.yaml"
_yaml_data: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("_yaml_data")


class _YamlSource(PydanticBaseSettingsSource):
    """Feeds the already-parsed YAML mapping to pydantic-settings below env vars."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return _yaml_data.get({}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_yaml_data.get({}))


class _LoadedSettings(Settings):
    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlSource(settings_cls))


def user_config_dir() -> Path:
    from platformdirs import user_config_dir as _dir

    return Path(_dir("shiyi", appauthor=False))


def default_data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("shiyi", appauthor=False))


def find_config_file(env: Mapping[str, str], cwd: Path) -> Path | None:
    """``SHIYI_CONFIG`` if set, else ``./shiyi.yaml``, else the user config dir's."""
    explicit = env.get("SHIYI_CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"SHIYI_CONFIG points to {path}, which is not a file. "
                "Create it or unset SHIYI_CONFIG."
            )
        return path
    for candidate in (cwd / CONFIG_FILE_NAME, user_config_dir() / CONFIG_FILE_NAME):
        if candidate.is_file():
            return candidate
    return None


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path} is not valid YAML{where}: {exc}. Fix the syntax.") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(_not_utf8(path, exc)) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a mapping of settings at the top level.")
    return data


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    """Where the first byte that is not UTF-8 sits, as line and byte offset."""
    raw = exc.object if isinstance(exc.object, bytes) else b""
    line = raw.count(b"\n", 0, exc.start) + 1
    return (
        f"{path} is not valid UTF-8: byte 0x{raw[exc.start]:02x} at byte offset {exc.start} "
        f"(line {line}) cannot be decoded. Save the file as UTF-8 (an editor's encoding "
        "setting, or `iconv -t UTF-8`) and try again."
    )


def _format_validation_error(exc: ValidationError, source: Path | None) -> ConfigError:
    lines = []
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"])
        got = err.get("input")
        shown = "" if isinstance(got, dict) else f" (got {got!r})"
        lines.append(f"  {key}: {err['msg']}{shown}")
        env_name = "SHIYI_" + "__".join(str(part).upper() for part in err["loc"])
    where = f"{source}" if source else "your shiyi.yaml"
    return ConfigError(
        "Invalid configuration:\n"
        + "\n".join(lines)
        + f"\nFix the key in {where} or the {env_name} environment variable "
        "(`shiyi config show` prints the effective settings)."
    )


def _apply_preset(settings: Settings) -> None:
    preset = PRESETS.get(settings.preset or "local", PRESETS["local"])
    roles: tuple[Literal["main", "fast"], ...] = ("main", "fast")
    for role_name in roles:
        given = settings.models.get(role_name)
        explicit = given.model_dump(exclude_unset=True) if given else {}
        if (
            given is None
            and role_name == "fast"
            and "main" in settings.models
            and not settings.preset
        ):
            explicit = settings.models["main"].model_dump(exclude_unset=True)
        merged = (
            {**preset[role_name], **explicit}
            if _same_provider(preset[role_name], explicit)
            else explicit
        )
        settings.models[role_name] = ModelSettings.model_validate(merged)


def _same_provider(preset_role: dict[str, Any], explicit: dict[str, Any]) -> bool:
    return "provider" not in explicit or explicit["provider"] == preset_role["provider"]


def _resolve_keys(settings: Settings, env: Mapping[str, str]) -> None:
    for role in settings.models.values():
        if role.api_key is None and role.api_key_env and env.get(role.api_key_env):
            role.api_key = SecretStr(env[role.api_key_env])


def load_settings(
    *,
    cwd: Path | None = None,
    config_file: Path | None = None,
    **overrides: Any,
) -> Settings:
    """Build the effective settings; raises :class:`ConfigError` with the key and the fix.

    Environment variables are read from ``os.environ`` (``SHIYI_*`` and provider key names).
    """
    env = os.environ
    cwd = cwd or Path.cwd()
    source = config_file or find_config_file(env, cwd)
    data = read_yaml(source) if source else {}
    token = _yaml_data.set(data)
    try:
        settings: Settings = _LoadedSettings(**overrides)
    except ValidationError as exc:
        raise _format_validation_error(exc, source) from None
    finally:
        _yaml_data.reset(token)
    # Before the preset fills the roles: whether the user named a main model at all.
    given = settings.model_sources
    given._main_configured = bool(settings.preset) or "main" in settings.models
    given._fast_configured = bool(settings.preset) or "fast" in settings.models
    _apply_preset(settings)
    _resolve_keys(settings, env)
    settings.home = (settings.home or default_data_dir()).expanduser()
    if settings.tools.repo_map.cache is None:
        settings.tools.repo_map.cache = settings.home / "repomap.sqlite3"
    settings.workspace = settings.workspace.expanduser().resolve()
    if source is not None:  # the agent's tools must not read or rewrite their own settings
        settings.tools.protected_paths.append(source.expanduser().resolve())
    for model, price in DEFAULT_PRICES.items():
        settings.prices.setdefault(model, ModelPrice(**price))
    return settings


def _mask(secret: str) -> str:
    return "****" + secret[-4:] if len(secret) > 8 else "****"


def masked_dump(settings: Settings) -> dict[str, Any]:
    """The effective settings as plain data, API keys masked."""
    data = settings.model_dump(mode="json", exclude={"models"})
    key = settings.memory.embed_api_key
    data["memory"]["embed_api_key"] = _mask(key.get_secret_value()) if key else None
    # A postgresql:// store URL may carry a password: user:****@host.
    data["memory"]["store"] = re.sub(r"(://[^:/@]+):[^@]*@", r"\1:****@", settings.memory.store)
    token = settings.server.token
    data["server"]["token"] = _mask(token.get_secret_value()) if token else None
    data["models"] = {}
    for role, model in settings.models.items():
        dumped = model.model_dump(mode="json")
        dumped["api_key"] = _mask(model.api_key.get_secret_value()) if model.api_key else None
        data["models"][role] = dumped
    return data
