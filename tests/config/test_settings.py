from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.config import load_settings, masked_dump
from shiyi.errors import ConfigError
from shiyi.llm.factory import build_chat_model


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_use_the_local_model_and_xdg_home(tmp_path: Path) -> None:
    settings = load_settings(cwd=tmp_path)
    assert settings.model_role("main").provider == "local"
    assert settings.model_role("fast").provider == "local"
    assert settings.data_dir == tmp_path / "home"  # SHIYI_HOME from the test env
    assert settings.agent.max_iterations == 25


def test_home_falls_back_to_xdg_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHIYI_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    assert load_settings(cwd=tmp_path).data_dir == tmp_path / "xdg-data" / "shiyi"


def test_yaml_in_working_directory_is_read(tmp_path: Path) -> None:
    write(
        tmp_path / "shiyi.yaml",
        "models:\n  main:\n    provider: openai_compat\n"
        "    base_url: http://127.0.0.1:9/v1\n    model: m1\nagent:\n  max_iterations: 7\n",
    )
    settings = load_settings(cwd=tmp_path)
    assert settings.model_role("main").model == "m1"
    assert settings.model_role("fast").model == "m1"  # fast defaults to main
    assert settings.agent.max_iterations == 7


def test_user_config_dir_is_read_when_cwd_has_none(tmp_path: Path) -> None:
    config_dir = tmp_path / "xdg-config" / "shiyi"
    config_dir.mkdir(parents=True)
    write(config_dir / "shiyi.yaml", "agent:\n  max_iterations: 9\n")
    assert load_settings(cwd=tmp_path).agent.max_iterations == 9


def test_env_overrides_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "shiyi.yaml", "agent:\n  max_iterations: 7\n")
    monkeypatch.setenv("SHIYI_AGENT__MAX_ITERATIONS", "11")
    assert load_settings(cwd=tmp_path).agent.max_iterations == 11


def test_preset_deepseek_reads_key_from_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIYI_PRESET", "deepseek")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-abcdef123456")
    settings = load_settings(cwd=tmp_path)
    main = settings.model_role("main")
    assert main.base_url == "https://api.deepseek.com/v1"
    assert main.api_key is not None
    assert main.api_key.get_secret_value() == "sk-abcdef123456"
    dumped = masked_dump(settings)
    assert dumped["models"]["main"]["api_key"] == "****3456"
    assert "sk-abcdef123456" not in str(dumped)


def test_preset_values_can_be_overridden(tmp_path: Path) -> None:
    write(tmp_path / "shiyi.yaml", "preset: ollama\nmodels:\n  main:\n    model: llama3.2\n")
    settings = load_settings(cwd=tmp_path)
    assert settings.model_role("main").model == "llama3.2"
    assert settings.model_role("main").base_url == "http://127.0.0.1:11434/v1"
    assert settings.model_role("fast").model == "qwen2.5:1.5b"


def test_missing_api_key_for_hosted_endpoint_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIYI_PRESET", "deepseek")
    settings = load_settings(cwd=tmp_path)
    with pytest.raises(ConfigError, match="DEEPSEEK_API_KEY"):
        build_chat_model(settings)


def test_invalid_value_names_key_and_fix(tmp_path: Path) -> None:
    write(tmp_path / "shiyi.yaml", "models:\n  main:\n    provider: gpt\n")
    with pytest.raises(ConfigError) as info:
        load_settings(cwd=tmp_path)
    message = str(info.value)
    assert "models.main.provider" in message
    assert "'openai_compat', 'local' or 'scripted'" in message
    assert str(tmp_path / "shiyi.yaml") in message


def test_unknown_key_is_an_error_not_ignored(tmp_path: Path) -> None:
    write(tmp_path / "shiyi.yaml", "agent:\n  max_iteration: 3\n")
    with pytest.raises(ConfigError, match=r"agent\.max_iteration"):
        load_settings(cwd=tmp_path)


def test_broken_yaml_reports_the_line(tmp_path: Path) -> None:
    write(tmp_path / "shiyi.yaml", "agent:\n  max_iterations: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML at line"):
        load_settings(cwd=tmp_path)


def test_explicit_config_that_does_not_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIYI_CONFIG", str(tmp_path / "nope.yaml"))
    with pytest.raises(ConfigError, match="SHIYI_CONFIG points to"):
        load_settings(cwd=tmp_path)


def test_openai_compat_without_base_url(tmp_path: Path) -> None:
    write(tmp_path / "shiyi.yaml", "models:\n  main:\n    provider: openai_compat\n")
    with pytest.raises(ConfigError, match=r"models\.main\.base_url is required"):
        build_chat_model(load_settings(cwd=tmp_path))


def test_bad_base_url_scheme(tmp_path: Path) -> None:
    write(
        tmp_path / "shiyi.yaml",
        "models:\n  main:\n    provider: openai_compat\n    base_url: localhost:8000\n",
    )
    with pytest.raises(ConfigError, match="must start with http"):
        load_settings(cwd=tmp_path)


@pytest.mark.parametrize("where", ["cwd", "user_dir", "SHIYI_CONFIG"])
def test_the_loaded_file_is_protected_from_the_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Wherever the config came from, the agent's tools are told not to touch it."""
    places = {
        "cwd": tmp_path / "shiyi.yaml",
        "user_dir": tmp_path / "xdg-config" / "shiyi" / "shiyi.yaml",  # XDG_CONFIG_HOME
        "SHIYI_CONFIG": tmp_path / "elsewhere" / "prod.yaml",
    }
    path = places[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    write(path, "agent:\n  max_iterations: 7\n")
    if where == "SHIYI_CONFIG":
        monkeypatch.setenv("SHIYI_CONFIG", str(path))
    settings = load_settings(cwd=tmp_path)
    assert settings.agent.max_iterations == 7
    assert settings.tools.protected_paths == [path.resolve()]


def test_no_config_file_protects_nothing_extra(tmp_path: Path) -> None:
    assert load_settings(cwd=tmp_path).tools.protected_paths == []


@pytest.mark.parametrize(
    ("written", "mode"),
    [
        ("{bash_sandbox: off}", "off"),  # README's spelling: YAML reads it as false
        ("{bash_sandbox: no}", "off"),
        ("{bash_sandbox: false}", "off"),
        ("{bash_sandbox: on}", "bwrap"),  # asking for a sandbox requires one
        ("{bash_sandbox: true}", "bwrap"),
        ("{bash_sandbox: auto}", "auto"),
        ('{bash_sandbox: "off"}', "off"),
    ],
)
def test_bash_sandbox_accepts_yaml_booleans(tmp_path: Path, written: str, mode: str) -> None:
    write(tmp_path / "shiyi.yaml", f"tools: {written}\n")
    assert load_settings(cwd=tmp_path).tools.bash_sandbox == mode


def test_bash_sandbox_rejects_other_values(tmp_path: Path) -> None:
    write(tmp_path / "shiyi.yaml", "tools: {bash_sandbox: maybe}\n")
    with pytest.raises(ConfigError, match=r"tools\.bash_sandbox"):
        load_settings(cwd=tmp_path)
