"""Choosing llama.cpp's CPU backend variant, in fresh processes (it happens once per process)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shiyi.llm.llama_backends import BUILT_IN, VARIANT_ENV, lib_dirs

pytestmark = pytest.mark.local_model

REPLY = """
from shiyi.llm.llama_backends import load_cpu_backend
from shiyi.llm.local import LocalModel
from shiyi.config.settings import ModelSettings
from shiyi.llm.types import Message
import asyncio

async def main():
    model = LocalModel(ModelSettings(temperature=0.0))
    chunks = [c async for c in model.stream([Message("user", "Hi")], max_tokens=4)]
    print(load_cpu_backend(), len(chunks))

asyncio.run(main())
"""


def variants() -> list[str]:
    _, folder = lib_dirs()
    paths = folder.glob("libggml-cpu-*.so")
    return sorted(path.name.removeprefix("libggml-cpu-").removesuffix(".so") for path in paths)


def run(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def dispatching() -> list[str]:
    """The installed build's variants; scripts/install.sh builds one per x86 level."""
    found = variants()
    assert found, "llama-cpp-python was not built with GGML_CPU_ALL_VARIANTS (install.sh)"
    return found


def test_the_best_variant_that_runs_here_is_chosen_never_amx(
    tmp_path: Path, dispatching: list[str]
) -> None:
    done = run(REPLY, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    chosen, chunks = done.stdout.split()
    assert chosen in dispatching and chosen != "sapphirerapids"
    assert int(chunks) >= 2  # text and the finish: the model ran on it
    assert "load_backend" not in done.stderr  # ggml's chatter stays out of the terminal


def test_a_variant_can_be_chosen_by_hand_and_a_wrong_name_is_explained(
    tmp_path: Path, dispatching: list[str]
) -> None:
    assert "x64" in dispatching
    done = run(REPLY, tmp_path, **{VARIANT_ENV: "x64"})
    assert done.returncode == 0 and done.stdout.split()[0] == "x64", done.stderr[-2000:]
    wrong = run(REPLY, tmp_path, **{VARIANT_ENV: "pentium2"})
    assert wrong.returncode != 0
    assert f"{VARIANT_ENV}=pentium2 names no llama.cpp CPU variant" in wrong.stderr
    assert "haswell" in wrong.stderr  # the choices are listed


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler to build the bait")
def test_a_backend_library_planted_in_the_workspace_is_never_loaded(
    tmp_path: Path, dispatching: list[str]
) -> None:
    """llama.cpp's own search looks in the current directory: the model could plant one."""
    marker = tmp_path / "planted-library-ran"
    source = tmp_path / "bait.c"
    source.write_text(
        "#include <stdio.h>\n"
        f'__attribute__((constructor)) static void run(void) {{ fopen("{marker}", "w"); }}\n'
        "int ggml_backend_score(void) { return 1000000; }\n"
    )
    for name in ("libggml-cpu-bait.so", "libggml-blas-bait.so"):
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-o", str(tmp_path / name), str(source)], check=True
        )
    done = run(REPLY, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not marker.exists()


def test_a_build_without_variants_needs_nothing(tmp_path: Path) -> None:
    from shiyi.llm import llama_backends

    lib = tmp_path / "lib"
    lib.mkdir()
    assert llama_backends._load(lib, lib) == BUILT_IN
