"""``shiyi model pull``'s download: the packaged GGUF served by a loopback hub, with faults."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.errors import PullError
from shiyi.llm.local.model import default_gguf_path
from shiyi.llm.pull import pull, source_url
from tests.support.model_servers import FileServer, Served

HUB_PATH = "/org/repo/resolve/main/tiny.gguf"


@pytest.fixture(scope="module")
def gguf() -> bytes:
    return default_gguf_path().read_bytes()


@pytest.fixture(scope="module")
def gguf_sha(gguf: bytes) -> str:
    return hashlib.sha256(gguf).hexdigest()


@pytest.fixture
def hub(gguf: bytes, gguf_sha: str) -> Iterator[FileServer]:
    with FileServer({HUB_PATH: Served(gguf, linked_etag=gguf_sha)}) as server:
        yield server


def test_hub_form_maps_to_a_resolve_url() -> None:
    url = source_url("org/repo/sub/tiny.gguf", "http://127.0.0.1:1/")
    assert url == "http://127.0.0.1:1/org/repo/resolve/main/sub/tiny.gguf"
    with pytest.raises(PullError, match="neither an http"):
        source_url("org/tiny.gguf", "https://huggingface.co")


def test_pull_follows_the_hub_redirect_and_checks_its_sha256(
    hub: FileServer, tmp_path: Path, gguf: bytes, gguf_sha: str
) -> None:
    seen: list[tuple[int, int | None]] = []
    url = source_url("org/repo/tiny.gguf", hub.base_url)

    got = pull(url, tmp_path, progress=lambda done, total, _s: seen.append((done, total)))

    assert got.path == tmp_path / "tiny.gguf" and got.path.read_bytes() == gguf
    assert (got.sha256, got.verified_by) == (gguf_sha, "the hub's checksum")
    assert seen[-1] == (len(gguf), len(gguf))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.gguf"]  # no part left


def test_a_connection_dropped_midway_is_resumed_with_a_range_request(
    tmp_path: Path, gguf: bytes, gguf_sha: str
) -> None:
    served = Served(gguf, drop_after=3_000_000)
    with FileServer({"/m/tiny.gguf": served}) as server:
        got = pull(f"{server.base_url}/m/tiny.gguf", tmp_path, expected_sha256=gguf_sha)

    assert got.path.read_bytes() == gguf and got.verified_by == "--sha256"
    assert server.requests == [("/m/tiny.gguf", None), ("/m/tiny.gguf", "bytes=3000000-")]


def test_a_part_left_by_an_earlier_pull_is_continued(
    hub: FileServer, tmp_path: Path, gguf: bytes
) -> None:
    url = source_url("org/repo/tiny.gguf", hub.base_url)
    (tmp_path / "tiny.gguf.part").write_bytes(gguf[:1_000_000])
    (tmp_path / "tiny.gguf.part.json").write_text(json.dumps({"url": url}))

    got = pull(url, tmp_path)

    assert got.resumed_from == 1_000_000 and got.path.read_bytes() == gguf
    assert hub.requests[0] == (HUB_PATH, "bytes=1000000-")


def test_a_part_of_another_url_is_not_mixed_in(
    hub: FileServer, tmp_path: Path, gguf: bytes
) -> None:
    (tmp_path / "tiny.gguf.part").write_bytes(b"GGUF other file")
    (tmp_path / "tiny.gguf.part.json").write_text(json.dumps({"url": "http://elsewhere/x"}))

    got = pull(source_url("org/repo/tiny.gguf", hub.base_url), tmp_path)

    assert got.resumed_from == 0 and got.path.read_bytes() == gguf


def test_a_wrong_checksum_is_kept_aside_and_never_used(hub: FileServer, tmp_path: Path) -> None:
    url = source_url("org/repo/tiny.gguf", hub.base_url)
    with pytest.raises(PullError, match=r"differs from --sha256 0{64}.*kept as .*rejected"):
        pull(url, tmp_path, expected_sha256="0" * 64)
    assert not (tmp_path / "tiny.gguf").exists()
    assert (tmp_path / "tiny.gguf.rejected").stat().st_size > 0


def test_a_hub_checksum_that_disagrees_rejects_the_file(tmp_path: Path, gguf: bytes) -> None:
    server = FileServer({HUB_PATH: Served(gguf, linked_etag="ab" * 32)})
    with server, pytest.raises(PullError, match="differs from the hub's checksum"):
        pull(source_url("org/repo/tiny.gguf", server.base_url), tmp_path)
    assert not (tmp_path / "tiny.gguf").exists()


def test_a_file_that_is_not_gguf_is_rejected(tmp_path: Path) -> None:
    page = b"<html>Sign in to continue</html>"
    server = FileServer({"/x/tiny.gguf": Served(page)})
    with server, pytest.raises(PullError, match="not a GGUF file"):
        pull(f"{server.base_url}/x/tiny.gguf", tmp_path)
    assert not (tmp_path / "tiny.gguf").exists()


def test_404_names_the_status_and_leaves_nothing_usable(hub: FileServer, tmp_path: Path) -> None:
    url = source_url("org/repo/missing.gguf", hub.base_url)
    with pytest.raises(PullError, match="HTTP 404: no such file"):
        pull(url, tmp_path)
    assert not (tmp_path / "missing.gguf").exists()


def test_a_download_that_keeps_breaking_stops_and_the_next_pull_resumes(
    tmp_path: Path, gguf: bytes, gguf_sha: str
) -> None:
    served = Served(gguf, drop_after=2_000_000, drops=2)
    with FileServer({"/m/tiny.gguf": served}) as server:
        url = f"{server.base_url}/m/tiny.gguf"
        with pytest.raises(PullError, match="run the same command again to resume"):
            pull(url, tmp_path, attempts=2)
        assert (tmp_path / "tiny.gguf.part").stat().st_size == 4_000_000
        assert not (tmp_path / "tiny.gguf").exists()

        got = pull(url, tmp_path, expected_sha256=gguf_sha)

    assert got.resumed_from == 4_000_000 and got.path.read_bytes() == gguf


def test_pulling_a_file_already_there_checks_it(tmp_path: Path, gguf: bytes) -> None:
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF changed")
    with pytest.raises(PullError, match="already exists with sha256"):
        pull("http://127.0.0.1:9/m/tiny.gguf", tmp_path, expected_sha256="1" * 64)
