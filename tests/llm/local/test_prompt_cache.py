"""The on-disk prompt cache, with the real SmolLM2 weights and the engine's saved slots."""

from __future__ import annotations

import logging
import re
import struct
from pathlib import Path

import pytest

from shiyi.config.settings import ModelSettings
from shiyi.llm.local.model import LocalModel
from shiyi.llm.local.prompt_cache import MAX_FILES, SUFFIX, PrefixStateCache, agreed_length
from shiyi.llm.types import Message, TextChunk, ToolSpec

pytestmark = pytest.mark.local_model

TOOLS = [
    ToolSpec(
        "read_file",
        "Read a text file from the workspace and return its lines with numbers, so that you "
        "can quote them or edit them exactly afterwards.",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"],
        },
    ),
    ToolSpec(
        "list_files",
        "List the files and folders under a directory of the workspace, newest first.",
        {"type": "object", "properties": {"path": {"type": "string"}}},
    ),
]
CHAT = [
    Message("system", "You are a helpful assistant."),
    Message("user", "Say hello in one short sentence."),
]


async def reply(model: LocalModel, tools: list[ToolSpec] = TOOLS) -> str:
    stream = model.stream(CHAT, tools=tools, max_tokens=12)
    return "".join([chunk.text async for chunk in stream if isinstance(chunk, TextChunk)])


def fresh(cache_dir: Path) -> LocalModel:
    """A model as a new process would have it: nothing evaluated yet."""
    # The weights as shipped: their Q8_0 copy has its own tests (test_weights.py).
    model = LocalModel(ModelSettings(temperature=0.0, convert_q4_1=False), cache_dir=cache_dir)
    model.load()
    return model


def state_files(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.rglob(f"*{SUFFIX}"))


async def test_a_new_process_loads_the_stable_prefix_and_replies_the_same(
    tmp_path: Path,
) -> None:
    first = fresh(tmp_path)
    await reply(first)
    assert first.prompt_cache is not None
    assert (first.prompt_cache.hits, first.prompt_cache.misses) == (0, 1)
    [tool_section] = state_files(tmp_path)
    assert tool_section.stat().st_size > 1_000_000  # a real KV cache, not an empty marker

    # The same system turn again: the tool section is loaded, and the part of the system
    # text both prompts share is learned and saved as a longer prefix.
    second = fresh(tmp_path)
    said = await reply(second)
    assert second.prompt_cache is not None
    assert (second.prompt_cache.hits, second.prompt_cache.misses) == (1, 0)
    longer = [path for path in state_files(tmp_path) if path != tool_section]
    assert len(longer) == 1 and longer[0].stat().st_size > tool_section.stat().st_size

    third = fresh(tmp_path)  # loads the longer one: nothing of the system turn is evaluated
    loaded = await reply(third)
    assert third.prompt_cache is not None
    assert (third.prompt_cache.hits, third.prompt_cache.misses) == (1, 0)
    assert len(state_files(tmp_path)) == 2
    # The same state gives the same greedy reply.  (Not always the evaluated one's: the
    # prefix evaluated in other batch splits rounds differently, and a near tie between two
    # tokens can go either way; the engine computes prompts in batches of its own.)
    assert said and await reply(fresh(tmp_path)) == loaded


async def test_a_later_request_in_the_same_process_uses_memory_and_writes_nothing(
    tmp_path: Path,
) -> None:
    model = fresh(tmp_path)
    await reply(model)
    saved = state_files(tmp_path)
    await reply(model)
    assert model.prompt_cache is not None
    assert (model.prompt_cache.hits, model.prompt_cache.misses) == (0, 1)
    assert state_files(tmp_path) == saved


async def test_a_damaged_file_is_removed_logged_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await reply(fresh(tmp_path))
    [saved] = state_files(tmp_path)
    saved.write_bytes(saved.read_bytes()[:4096])  # cut short, as by a full disk

    model = fresh(tmp_path)
    with caplog.at_level(logging.WARNING, logger="shiyi.llm.local.prompt_cache"):
        assert await reply(model)
    assert "could not be used" in caplog.text and saved.name in caplog.text
    assert model.prompt_cache is not None and model.prompt_cache.misses == 1
    assert not saved.exists()
    [rebuilt] = state_files(tmp_path)
    assert rebuilt.stat().st_size > 1_000_000


async def test_other_tools_get_their_own_file_and_old_files_are_evicted(tmp_path: Path) -> None:
    model = fresh(tmp_path)
    for count in range(MAX_FILES + 1):
        extra = ToolSpec(f"tool_{count}", f"Does task number {count}.", {"type": "object"})
        await reply(model, [*TOOLS, extra])
    assert len(state_files(tmp_path)) == MAX_FILES


async def test_without_a_directory_nothing_is_written(tmp_path: Path) -> None:
    model = LocalModel(ModelSettings(temperature=0.0), cache_dir=None)
    assert await reply(model)
    assert model.prompt_cache is None
    assert not state_files(tmp_path)


async def test_no_message_text_or_token_ids_reach_the_cache(tmp_path: Path) -> None:
    """Issue 29: the index kept the whole last prompt's token ids (messages, recalled
    memories, tool output) under <data dir>/cache/, where no forget reached them.  Now only
    the system turn's states and hashes are kept: a message never reaches the disk."""
    marker = "the vault code is zebra quartz lantern 4471"
    chat = [CHAT[0], Message("user", f"Remember this: {marker}. Say ok.")]
    for _ in range(2):  # the second process learns and saves the longer (system) prefix
        model = fresh(tmp_path)
        stream = model.stream(chat, tools=TOOLS, max_tokens=4)
        assert [chunk async for chunk in stream]
    assert len(state_files(tmp_path)) == 2

    assert model._server is not None
    ids = model._server.tokenize(f" {marker}")
    inner = ids[1:-1]  # the ends may merge with the text around them in the prompt
    assert len(inner) >= 5
    assert_nowhere(tmp_path, marker, inner)


def assert_nowhere(root: Path, marker: str, tokens: list[int]) -> None:
    """No file below ``root`` holds ``marker``, or ``tokens`` as int32 (llama.cpp state) or
    as numbers in a row (a JSON index)."""
    packed = struct.pack(f"<{len(tokens)}i", *tokens)
    files = [path for path in root.rglob("*") if path.is_file()]
    assert any(path.suffix == ".json" for path in files)
    for path in files:
        data = path.read_bytes()
        assert marker.encode() not in data and b"zebra" not in data, path
        assert packed not in data, path
        numbers = [int(n) for n in re.findall(rb"\d+", data)] if path.suffix == ".json" else []
        assert not _holds(numbers, tokens), path


def _holds(numbers: list[int], run: list[int]) -> bool:
    return any(numbers[i : i + len(run)] == run for i in range(len(numbers) - len(run) + 1))


def test_only_tokens_the_whole_prompt_agrees_with_are_cached() -> None:
    assert agreed_length([1, 2, 3, 4, 5], [1, 2, 9]) == 2
    assert agreed_length([1, 2, 3], [1, 2, 3, 4]) == 3


def test_a_changed_model_file_or_build_gets_another_name(tmp_path: Path) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"v1")
    before = PrefixStateCache.for_model(tmp_path, weights, "b1", 8192).path_for([1, 2, 3])
    assert PrefixStateCache.for_model(tmp_path, weights, "b1", 4096).path_for([1, 2, 3]) != before
    assert PrefixStateCache.for_model(tmp_path, weights, "b2", 8192).path_for([1, 2, 3]) != before
    weights.write_bytes(b"v2 longer")
    assert PrefixStateCache.for_model(tmp_path, weights, "b1", 8192).path_for([1, 2, 3]) != before
    assert PrefixStateCache.for_model(tmp_path, weights, "b1", 8192).path_for([1, 2]) != before
