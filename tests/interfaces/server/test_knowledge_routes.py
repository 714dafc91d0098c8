"""``/v1/knowledge`` on a real server: list, search, add by path or upload, re-index and
remove; paths outside the workspace and protected files are refused."""

from __future__ import annotations

from pathlib import Path

import httpx
from pydantic import SecretStr

from shiyi.config.server_settings import ServerUser
from tests.interfaces.server.conftest import LiveFactory

GUIDE = """# Guide

Intro to the platform.

## Deploying

Ship with the blue-green pipeline.

### Rollback

To roll back a kubernetes release run helm rollback with the previous revision.
"""


def write_guide(workspace: Path) -> Path:
    path = workspace / "docs" / "guide.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(GUIDE, encoding="utf-8")
    return path


def documents(client: httpx.Client) -> list[dict[str, object]]:
    listing = client.get("/v1/knowledge")
    assert listing.status_code == 200, listing.text
    return list(listing.json()["documents"])


def error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["error"]["message"])


def test_empty_until_a_document_is_added(live: LiveFactory) -> None:
    listing = live().client.get("/v1/knowledge").json()
    assert listing == {"exists": False, "documents": []}


def test_add_a_workspace_directory_list_and_search_it(live: LiveFactory, workspace: Path) -> None:
    guide = write_guide(workspace)
    server = live()
    added = server.client.post("/v1/knowledge/paths", json={"path": "docs"})
    assert added.status_code == 200, added.text
    assert added.json()["added"] == [str(guide.resolve())] and added.json()["chunks"] >= 1

    [doc] = documents(server.client)
    assert doc["shown"] == "docs/guide.md" and doc["title"] == "Guide"
    assert doc["bytes"] == len(GUIDE.encode()) and doc["sections"] == 3
    assert doc["chunks"] >= 1 and doc["added_at"] > 0 and doc["missing"] is False

    found = server.client.get("/v1/knowledge/search", params={"q": "helm rollback revision"})
    assert found.status_code == 200, found.text
    top = found.json()["passages"][0]
    assert top["heading_path"] == "Guide › Deploying › Rollback"
    assert "helm rollback" in top["chunk"] and top["chunk"] in top["text"]
    assert top["doc_id"] == doc["id"]
    assert found.json()["read_as"] == {}
    slipped = server.client.get("/v1/knowledge/search", params={"q": "helm rollbakc revision"})
    assert slipped.json()["read_as"] == {"rollbakc": "rollback"}
    assert slipped.json()["passages"][0]["heading_path"] == "Guide › Deploying › Rollback"


def test_paths_outside_the_workspace_or_protected_are_refused(
    live: LiveFactory, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nnot for the knowledge base\n", encoding="utf-8")
    (workspace / ".env").write_text("API_KEY=hunter2\n", encoding="utf-8")
    docs = write_guide(workspace).parent
    (docs / "shiyi.yaml").write_text("server:\n  token: hunter2\n", encoding="utf-8")
    (docs / "leak.md").symlink_to(outside)
    server = live()
    post = server.client.post
    assert "outside the workspace" in error(
        post("/v1/knowledge/paths", json={"path": "../outside.md"}), 409
    )
    absolute = error(post("/v1/knowledge/paths", json={"path": str(outside)}), 409)
    assert "outside the workspace" in absolute and "upload it" in absolute
    assert "allow_outside_workspace" not in absolute  # a setting the server never reads
    assert "protected" in error(post("/v1/knowledge/paths", json={"path": ".env"}), 409)
    assert "protected" in error(post("/v1/knowledge/paths", json={"path": "docs/shiyi.yaml"}), 409)

    added = post("/v1/knowledge/paths", json={"path": "docs"}).json()
    assert [Path(p).name for p in added["added"]] == ["guide.md"]  # no yaml, no link out
    found = server.client.get("/v1/knowledge/search", params={"q": "hunter2 secret"}).json()
    assert all("hunter2" not in p["text"] and "Secret" not in p["text"] for p in found["passages"])


def test_reindex_refuses_a_document_replaced_by_a_link_to_the_config(
    live: LiveFactory, workspace: Path
) -> None:
    """Issue 29: docs/n.md added, then replaced by a link to ../shiyi.yaml; re-indexing it
    read the config into the base, and search handed its secrets back."""
    (workspace / "shiyi.yaml").write_text("server:\n  token: hunter2-config\n", "utf-8")
    note = workspace / "docs" / "n.md"
    note.parent.mkdir()
    note.write_text("# Note\n\nThe kettle is in the second cupboard.\n", encoding="utf-8")
    server = live()
    post = server.client.post
    assert post("/v1/knowledge/paths", json={"path": "docs/n.md"}).status_code == 200
    [doc] = documents(server.client)
    note.unlink()
    note.symlink_to(Path("..") / "shiyi.yaml")

    message = error(post(f"/v1/knowledge/{doc['id']}/reindex"), 409)
    assert "cannot re-index" in message and "protected" in message and "shiyi.yaml" in message
    assert [d["id"] for d in documents(server.client)] == [doc["id"]]
    for query in ("hunter2-config", "server token"):
        found = server.client.get("/v1/knowledge/search", params={"q": query}).json()
        assert all("hunter2" not in p["text"] for p in found["passages"]), found

    outside = workspace.parent / "outside.md"
    outside.write_text("# Outside\n\nhunter2-outside\n", encoding="utf-8")
    note.unlink()
    note.symlink_to(outside)
    assert "outside the workspace" in error(post(f"/v1/knowledge/{doc['id']}/reindex"), 409)


def test_reindex_refuses_an_upload_replaced_by_a_link(live: LiveFactory, workspace: Path) -> None:
    (workspace / "shiyi.yaml").write_text("server:\n  token: hunter2-config\n", "utf-8")
    server = live()
    assert server.client.put("/v1/knowledge/uploads/u.md", content=b"# U\n\nu\n").is_success
    [doc] = documents(server.client)
    stored = Path(str(doc["path"]))
    stored.unlink()
    stored.symlink_to(workspace / "shiyi.yaml")
    message = error(server.client.post(f"/v1/knowledge/{doc['id']}/reindex"), 409)
    assert "outside the upload folder" in message
    found = server.client.get("/v1/knowledge/search", params={"q": "hunter2-config"}).json()
    assert all("hunter2" not in p["text"] for p in found["passages"]), found


def test_upload_reindex_and_remove(live: LiveFactory) -> None:
    server = live()
    put = server.client.put
    body = b"# Notes\n\nThe espresso machine needs descaling every month.\n"
    uploaded = put("/v1/knowledge/uploads/notes.md", content=body)
    assert uploaded.status_code == 200, uploaded.text
    [doc] = documents(server.client)
    assert doc["shown"].endswith("uploads/notes.md") and doc["bytes"] == len(body)
    stored = Path(str(doc["path"]))
    assert stored.read_bytes() == body

    stored.write_text("# Notes\n\nThe grinder burrs are replaced yearly.\n", encoding="utf-8")
    again = server.client.post(f"/v1/knowledge/{doc['id']}/reindex")
    assert again.status_code == 200 and again.json()["updated"] == [str(stored)]
    hits = server.client.get("/v1/knowledge/search", params={"q": "grinder burrs"}).json()
    assert "grinder burrs" in hits["passages"][0]["chunk"]

    removed = server.client.delete(f"/v1/knowledge/{doc['id']}")
    assert removed.status_code == 200 and removed.json()["removed"][0]["id"] == doc["id"]
    assert documents(server.client) == [] and not stored.exists()
    assert error(server.client.delete(f"/v1/knowledge/{doc['id']}"), 404)


def test_uploads_must_be_plain_names_of_readable_types_within_the_body_limit(
    live: LiveFactory,
) -> None:
    server = live(max_body_bytes=2048)
    put = server.client.put
    for name in (".env", "tool.exe", "..%2Fescape.md", "a%5Cb.md"):
        refused = put(f"/v1/knowledge/uploads/{name}", content=b"A=1")
        assert refused.status_code in (400, 404, 422), (name, refused.text)  # never stored
    assert "empty" in error(put("/v1/knowledge/uploads/a.md", content=b""), 400)
    too_big = put("/v1/knowledge/uploads/big.md", content=b"# Big\n\n" + b"x" * 4096)
    assert too_big.status_code == 413
    assert server.client.get("/v1/knowledge").json()["exists"] is False


def test_uploads_take_ordinary_names_and_keep_no_file_they_could_not_read(
    live: LiveFactory,
) -> None:
    server = live()
    put = server.client.put
    for name in ("会议纪要.md", "report (1).MD", "Résumé.md", "O'Brien.txt", "a+b.md"):
        stored = put(f"/v1/knowledge/uploads/{name}", content=f"# {name}\n\nkiwi\n".encode())
        assert stored.status_code == 200, (name, stored.text)  # had been a 422 with a regex
    wrong = error(put("/v1/knowledge/uploads/photo.jpeg", content=b"A=1"), 422)
    assert "'photo.jpeg' is not a plain file name of a type the knowledge base reads" in wrong
    assert "[mM][dD]" not in wrong  # the route's pattern, not said as a regular expression
    uploads = Path(str(documents(server.client)[0]["path"])).parent
    binary = put("/v1/knowledge/uploads/bin.txt", content=b"\x00\x01\x02" * 100)
    assert binary.status_code == 200 and binary.json()["failed"]
    assert not (uploads / "bin.txt").exists()  # it had stayed, listed nowhere
    good = b"# Keep\n\nThe spare key is under the plant pot.\n"
    assert put("/v1/knowledge/uploads/keep.md", content=good).status_code == 200
    assert put("/v1/knowledge/uploads/keep.md", content=b"\x00" * 300).json()["failed"]
    assert (uploads / "keep.md").read_bytes() == good  # the earlier upload is kept


def test_only_workspace_writers_change_the_shared_base(live: LiveFactory, workspace: Path) -> None:
    write_guide(workspace)
    users = [ServerUser(token=SecretStr("tok-intern"), user_id="ann", agent_id="intern")]
    server = live(token=SecretStr("tok-owner"), users=users)
    intern = httpx.Client(
        base_url=server.url, headers={"authorization": "Bearer tok-intern"}, timeout=20
    )
    owner = httpx.Client(
        base_url=server.url, headers={"authorization": "Bearer tok-owner"}, timeout=20
    )
    with intern, owner:
        refused = intern.post("/v1/knowledge/paths", json={"path": "docs"})
        assert "workspace_writers" in error(refused, 400)
        assert owner.post("/v1/knowledge/paths", json={"path": "docs"}).status_code == 200
        assert len(documents(intern)) == 1  # reading is for every caller
        assert server.client.get("/v1/knowledge").status_code == 401  # no token


def test_upload_names_are_checked_again_on_the_server() -> None:
    """The route's pattern is the first line; the name check behind it holds alone too."""
    import pytest

    from shiyi.config import load_settings
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.server.knowledge_routes import upload_path

    settings = load_settings()
    for name in ("../x.md", ".env", "a\\b.md", "tool.exe"):
        with pytest.raises(ShiyiError):
            upload_path(settings, name)
    assert upload_path(settings, "notes.md") == settings.knowledge_dir / "uploads" / "notes.md"
