"""``shiyi model pull``: download a GGUF file, resumable, checked, and moved in atomically.

The bytes go to ``<name>.part`` beside the final file (its source URL in
``<name>.part.json``): a later pull of the same URL continues it with an HTTP Range request,
and a dropped connection is resumed the same way a few times before giving up.  Once all
bytes are there the file is hashed (sha256); it becomes ``<name>`` only if it is a GGUF (by
its magic) and equal to the expected checksum when there is one (``--sha256``, else the
hub's ``X-Linked-ETag``, the LFS sha256 the Hugging Face hub sends on its redirect).  A file that
fails a check is kept as ``<name>.rejected`` with the reason, never used.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

import httpx

from shiyi.errors import PullError

GGUF_MAGIC = b"GGUF"
_CHUNK = 1 << 20
_HOPS = 5
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*\.gguf$")


@dataclass(frozen=True, slots=True)
class Pulled:
    path: Path
    sha256: str
    verified_by: str | None
    """What the checksum was compared with (``--sha256``, the hub's checksum), or None."""
    resumed_from: int
    already_had: bool = False


Progress = Callable[[int, int | None, float], None]
"""Called with bytes so far, the total (when known) and seconds since the start."""


def source_url(source: str, hub_url: str) -> str:
    """An http(s) URL as given; ``org/repo/path/file.gguf`` as a hub download URL."""
    if source.startswith(("http://", "https://")):
        return source
    parts = [p for p in source.split("/") if p]
    if len(parts) < 3 or not parts[-1].endswith(".gguf") or ".." in parts:
        raise PullError(
            f"{source!r} is neither an http(s) URL nor a hub file (org/repo/file.gguf); "
            "e.g. `shiyi model pull Qwen/Qwen2.5-1.5B-Instruct-GGUF/"
            "qwen2.5-1.5b-instruct-q4_k_m.gguf`"
        )
    org, repo, *path = parts
    return f"{hub_url.rstrip('/')}/{quote(org)}/{quote(repo)}/resolve/main/" + "/".join(
        quote(p) for p in path
    )


def file_name(url: str) -> str:
    name = urlsplit(url).path.rsplit("/", 1)[-1]
    if not _SAFE_NAME.match(name):
        raise PullError(
            f"{url} does not end in a GGUF file name (letters, digits, . _ + -, ending "
            "in .gguf); give the file's own download URL"
        )
    return name


def pull(
    url: str,
    folder: Path,
    *,
    expected_sha256: str | None = None,
    progress: Progress | None = None,
    attempts: int = 4,
    timeout: float = 30.0,
) -> Pulled:
    """Download ``url`` into ``folder``; see the module docstring for the guarantees."""
    expected = _normal_sha(expected_sha256) if expected_sha256 else None
    target = folder / file_name(url)
    if target.exists():
        return _already_had(target, expected)
    folder.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    resumed_from = _reusable_part(part, url)
    published: str | None = None
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:
        for attempt in range(1, attempts + 1):
            try:
                published = _download(client, url, part, progress) or published
                break
            except (httpx.TransportError, _Dropped) as exc:
                if attempt == attempts:
                    raise PullError(
                        f"the download of {url} broke off ({exc or type(exc).__name__}) after "
                        f"{_size(part)} bytes, {attempts} times; run the same command again to "
                        f"resume from {part}"
                    ) from None
    return _finish(part, target, expected, published, resumed_from)


class _Dropped(Exception):
    """The server closed the connection before the announced length arrived."""


def _download(client: httpx.Client, url: str, part: Path, progress: Progress | None) -> str | None:
    """Append the rest of ``url`` to ``part``; returns the hub's published sha256, if any."""
    have = _size(part)
    headers = {"Range": f"bytes={have}-"} if have else {}
    published: str | None = None
    for _hop in range(_HOPS + 1):
        with client.stream("GET", url, headers=headers) as response:
            published = published or _linked_sha(response.headers)
            if response.is_redirect:
                url = _next_hop(url, response.headers.get("location", ""))
                continue
            if response.status_code == 416 and have:  # the part is already whole
                return published
            _check_status(url, response)
            if response.status_code == 200 and have:  # no Range support: start over
                part.unlink()
                have = 0
            _append(response, part, have, progress)
            return published
    raise PullError(f"{url}: more than {_HOPS} redirects; give the file's final URL")


def _append(response: httpx.Response, part: Path, have: int, progress: Progress | None) -> None:
    length = response.headers.get("content-length")
    total = have + int(length) if length and length.isdigit() else None
    started = time.monotonic()
    done = have
    with part.open("ab") as out:
        for chunk in response.iter_bytes():  # as received: a drop loses nothing read
            out.write(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total, time.monotonic() - started)
        out.flush()
        os.fsync(out.fileno())
    if total is not None and done < total:
        raise _Dropped(f"{done - have} of {total - have} bytes arrived")


def _check_status(url: str, response: httpx.Response) -> None:
    if response.status_code in (200, 206):
        return
    hint = {
        401: "the file needs a login (gated repo): download it in a browser, then "
        "`shiyi model use <path>`",
        403: "access refused",
        404: "no such file: check the repo and file name (case matters)",
    }.get(response.status_code, "the server refused")
    raise PullError(f"{url} answered HTTP {response.status_code}: {hint}")


def _next_hop(url: str, location: str) -> str:
    if not location:
        raise PullError(f"{url} redirected without a Location")
    target = urljoin(url, location)
    # A redirect may move to a CDN, never from https down to plain http.
    if urlsplit(url).scheme == "https" and urlsplit(target).scheme != "https":
        raise PullError(f"{url} redirected to {target}, off https; refusing")
    if urlsplit(target).scheme not in ("http", "https"):
        raise PullError(f"{url} redirected to {target!r}, which is not http(s)")
    return target


def _linked_sha(headers: httpx.Headers) -> str | None:
    # Only the hub's LFS header: a plain ETag is an opaque version tag, not a checksum.
    value = headers.get("x-linked-etag", "").strip().removeprefix("W/").strip('"').lower()
    return value if _SHA256.match(value) else None


def _finish(
    part: Path, target: Path, expected: str | None, published: str | None, resumed_from: int
) -> Pulled:
    digest = _sha256_of(part)
    want, by = (expected, "--sha256") if expected else (published, "the hub's checksum")
    with part.open("rb") as head:
        magic = head.read(4)
    if magic != GGUF_MAGIC:
        _reject(part, target, f"it is not a GGUF file (starts with {magic!r})")
    if want is not None and digest != want:
        _reject(part, target, f"sha256 {digest} differs from {by} {want}")
    os.replace(part, target)
    part.with_name(part.name + ".json").unlink(missing_ok=True)
    return Pulled(target, digest, by if want else None, resumed_from)


def _reject(part: Path, target: Path, why: str) -> None:
    kept = target.with_name(target.name + ".rejected")
    os.replace(part, kept)
    part.with_name(part.name + ".json").unlink(missing_ok=True)
    raise PullError(
        f"the download of {target.name} is not usable: {why}. It is kept as {kept} and will "
        "not be used; delete it and pull again (check the URL, or the --sha256 given)"
    )


def _already_had(target: Path, expected: str | None) -> Pulled:
    digest = _sha256_of(target)
    if expected is not None and digest != expected:
        raise PullError(
            f"{target} already exists with sha256 {digest}, not the {expected} asked for; "
            "move it away to pull again"
        )
    return Pulled(target, digest, "--sha256" if expected else None, 0, already_had=True)


def _reusable_part(part: Path, url: str) -> int:
    """Bytes of an earlier pull of the same URL to continue from (another URL's: dropped)."""
    meta = part.with_name(part.name + ".json")
    try:
        same = json.loads(meta.read_text(encoding="utf-8")).get("url") == url
    except (OSError, ValueError, AttributeError):
        same = False
    if not same:
        part.unlink(missing_ok=True)
        meta.write_text(json.dumps({"url": url}), encoding="utf-8")
    return _size(part)


def _normal_sha(value: str) -> str:
    digest = value.strip().lower().removeprefix("sha256:")
    if not _SHA256.match(digest):
        raise PullError(f"--sha256 must be 64 hexadecimal digits (got {value!r})")
    return digest


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
