"""The data dir shiyi makes is its owner's alone; one the user made keeps its mode."""

from __future__ import annotations

import stat
from pathlib import Path

from shiyi.config.loader import load_settings
from shiyi.config.private_dir import ensure_private_dir
from shiyi.memory.service import Memory


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_folder_it_makes_is_0700_and_an_existing_one_is_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    home = shared / "users" / "ada" / "shiyi"
    ensure_private_dir(home)
    assert [mode(p) for p in (home, home.parent, home.parent.parent)] == [0o700] * 3
    assert mode(shared) == 0o755
    ensure_private_dir(home)  # present: nothing to do
    assert mode(home) == 0o700


def test_a_memory_opened_on_a_new_data_dir_keeps_other_accounts_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_settings(home=home, workspace=tmp_path)
    settings.memory.embedder = "none"
    memory = Memory.open(settings, start_worker=False)
    try:
        memory.remember("I keep my diary here")
    finally:
        memory.close()
    assert mode(home) == 0o700
    assert (home / "memory" / "graph.kuzu").exists()  # inside the private folder
