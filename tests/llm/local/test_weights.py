"""The Q8_0 copy of the default Q4_1 weights (converted in numpy, run by the real engine)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from shiyi.config.settings import ModelSettings
from shiyi.llm.local.model import LocalModel, default_gguf_path
from shiyi.llm.local.weights import convert as convert_weights
from shiyi.llm.local.weights import converted_path
from shiyi.llm.types import Message, TextChunk

pytestmark = pytest.mark.local_model

QUESTION = [Message("user", "Complete: The capital of France is")]


async def answer(model: LocalModel) -> str:
    stream = model.stream(QUESTION, max_tokens=12)
    return "".join([chunk.text async for chunk in stream if isinstance(chunk, TextChunk)])


def loaded(cache_dir: Path | None, **settings: object) -> LocalModel:
    model = LocalModel(ModelSettings(temperature=0.0, **settings), cache_dir=cache_dir)  # type: ignore[arg-type]
    model.load()
    return model


async def test_the_q4_1_default_runs_from_a_q8_0_copy_made_once(tmp_path: Path) -> None:
    copy = converted_path(default_gguf_path(), tmp_path / "models")
    first = loaded(tmp_path)
    assert first.weights_file == copy and copy.is_file()
    made = copy.stat().st_mtime_ns
    said = await answer(first)
    assert "Paris" in said
    assert said == await answer(loaded(None))  # the same greedy answer as the Q4_1 source

    second = loaded(tmp_path)  # a new process: the copy is loaded, not made again
    assert second.weights_file == copy and copy.stat().st_mtime_ns == made
    assert not list(copy.parent.glob("*.partial"))


async def test_a_damaged_copy_is_replaced_and_the_source_is_untouched(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = default_gguf_path()
    source_size = source.stat().st_size
    copy = converted_path(source, tmp_path / "models")
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"GGUF" + b"\0" * 64)  # a truncated file, as from a full disk
    with caplog.at_level(logging.WARNING, logger="shiyi.llm.local.model"):
        model = loaded(tmp_path)
    assert "converted again" in caplog.text
    assert model.weights_file == copy and copy.stat().st_size > 100_000_000
    assert source.stat().st_size == source_size
    assert "Paris" in await answer(model)


def test_it_can_be_turned_off_or_kept_nowhere(tmp_path: Path) -> None:
    assert loaded(tmp_path, convert_q4_1=False).weights_file == default_gguf_path()
    assert loaded(None).weights_file == default_gguf_path()
    assert not (tmp_path / "models").exists()


def test_two_conversions_at_once_both_succeed(tmp_path: Path) -> None:
    """Two apps in one process load the model together (a test opening two apps did):
    each writes its own partial file, and the copy is whole."""
    import threading

    copy = converted_path(default_gguf_path(), tmp_path / "models")
    target = tmp_path / "models" / copy.name
    errors: list[BaseException] = []

    def convert() -> None:
        try:
            convert_weights(default_gguf_path(), target, 1)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=convert) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert loaded(tmp_path).weights_file == copy
    assert not list(copy.parent.glob("*.partial"))


def test_a_copy_that_cannot_be_put_in_place_is_a_clear_error_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """The cache folder changed under the conversion (here a folder stands where the copy
    goes): a ModelUnavailable naming the setting to turn off, no partial file left."""
    from shiyi.errors import ModelUnavailable

    target = tmp_path / "models" / "copy.Q8_0.gguf"
    (target / "in-the-way").mkdir(parents=True)
    with pytest.raises(ModelUnavailable, match="convert_q4_1"):
        convert_weights(default_gguf_path(), target, 1)
    assert not list(target.parent.glob("*.partial"))


def _exit_while_converting(target: Path) -> None:
    """A process that starts the conversion in a daemon thread (as a background model load
    does) and exits at once, as a short `shiyi run` did."""
    import subprocess
    import sys

    script = (
        "import sys, threading\n"
        "from pathlib import Path\n"
        "from shiyi.llm.local.model import default_gguf_path\n"
        "from shiyi.llm.local.weights import convert\n"
        "import time\n"
        "target = Path(sys.argv[1])\n"
        "threading.Thread(target=convert, args=(default_gguf_path(), target, 1),"
        " daemon=True).start()\n"
        "started = time.monotonic()\n"  # exit once the copy is being written
        "while not list(target.parent.glob('*.partial')) and time.monotonic() - started < 30:\n"
        "    time.sleep(0.001)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(target)], check=True, timeout=120)


def test_a_process_ending_mid_conversion_finishes_it_and_leaves_no_partial_file(
    tmp_path: Path,
) -> None:
    target = tmp_path / "models" / converted_path(default_gguf_path(), tmp_path).name
    _exit_while_converting(target)
    assert target.is_file()
    assert not list(target.parent.glob("*.partial"))


def test_a_partial_file_of_a_dead_process_is_swept_and_a_live_ones_kept(tmp_path: Path) -> None:
    import os

    from shiyi.llm.local.weights import sweep_partials

    target = tmp_path / "copy.Q8_0.gguf"
    dead, alive = 2**22 + 12345, os.getppid()  # above Linux's default pid_max: never running
    stale = tmp_path / f"{target.name}.{dead}.abcd1234.partial"
    running = tmp_path / f"{target.name}.{alive}.abcd1234.partial"
    for leftover in (stale, running):
        leftover.write_bytes(b"half")
    assert sweep_partials(target) == [stale]
    assert not stale.exists() and running.exists()
