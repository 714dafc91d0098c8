"""The memory page in a real headless Chromium (Debian's, through Python playwright) against
a real server: real Kuzu + SQLite store and the real local embedder.

Screenshots land in ``tests/artifacts/web/`` (git-ignored) for a look at the page.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from shiyi.config import load_settings
from shiyi.interfaces.server import AgentService
from shiyi.llm.scripted import ScriptedModel
from shiyi.memory.models import EntityRecord, RelationRecord
from shiyi.memory.service import Memory
from tests.interfaces.server.conftest import LiveFactory, free_port, running
from tests.interfaces.web.conftest import add_turns, observe

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip(
        "Debian's chromium is not installed (apt-get install -y chromium; .ci/run does it)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)
Browser, Page, expect = sync_api.Browser, sync_api.Page, sync_api.expect
# Waits, not timings: a shared, busy machine may take a while to embed and answer.
expect.set_options(timeout=30_000)

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARGS += ["--disable-component-update"]
DAY = 86400.0


@dataclass
class Site:
    url: str
    memory: Memory
    service: AgentService
    api: httpx.Client


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One server for the module, with the default (local) embedder, in a tmp data dir."""
    root = tmp_path_factory.mktemp("web")
    with pytest.MonkeyPatch.context() as env:
        for name in ("SHIYI_CONFIG", "SHIYI_PRESET", "DEEPSEEK_API_KEY", "OPENAI_API_KEY"):
            env.delenv(name, raising=False)
        env.setenv("SHIYI_HOME", str(root / "home"))
        env.setenv("XDG_CONFIG_HOME", str(root / "xdg"))
        (root / "ws").mkdir()
        settings = load_settings(cwd=root / "ws", workspace=root / "ws")
        port = free_port()
        server = settings.server.model_copy(update={"port": port})
        service = AgentService(
            settings.model_copy(update={"server": server}), model=ScriptedModel()
        )
        assert service.memory is not None and service.memory.embedder is not None
        with running(service, port) as url, httpx.Client(base_url=url, timeout=30) as api:
            yield Site(url, service.memory, service, api)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    # the page's Content-Security-Policy must not block anything the page itself does
    opened.on(
        "console",
        lambda message: (
            errors.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    yield opened
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def open_page(page: Page, site: Site) -> None:
    page.goto(site.url + "/")
    try:
        expect(page.locator("#stat-total")).not_to_have_text("–")
    except AssertionError as exc:
        raise AssertionError(
            f"{exc}\npage error box: {page.locator('#error').inner_text()}"
        ) from None


def card(page: Page, fact_id: str) -> object:
    return page.locator(f'article[data-id="{fact_id}"]')


def wait_for_jobs(memory: Memory) -> None:
    """Until the running worker has embedded what was queued (draining from this thread as
    well would race it for the graph's write lock)."""
    deadline = time.monotonic() + 120
    while memory.jobs.pending_count():
        assert time.monotonic() < deadline, "the memory worker did not finish its jobs"
        memory.worker.wake()
        time.sleep(0.05)


def seed_variety(memory: Memory) -> dict[str, str]:
    """One memory of each family, in Chinese and English, then embed them all."""
    facts = {
        "stack": memory.remember(
            "用户偏好使用 TypeScript + React 技术栈", kind="preference", about=["tech_stack"]
        ),
        "trip": memory.remember(
            "Visited the Kyoto office in March; met the search team", kind="episodic"
        ),
        "deploy": memory.remember(
            "Deploys go out with `make release` after CI is green", kind="procedural"
        ),
        "standup": memory.remember(
            "每天 9:30 站会 (standups at 9:30)", kind="convention", scope="workspace"
        ),
    }
    wait_for_jobs(memory)
    return {name: fact.id for name, fact in facts.items()}


def test_search_finds_a_seeded_memory_and_cards_look_right(page: Page, site: Site) -> None:
    ids = seed_variety(site.memory)
    open_page(page, site)
    for fact_id in ids.values():
        expect(card(page, fact_id)).to_be_visible()
    shot(page, "overview-1280")
    page.get_by_label("Search 搜索").fill("TypeScript React tech stack")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("closest first, for")
    first = page.locator("#results article").first
    expect(first).to_have_attribute("data-id", ids["stack"])
    expect(first).to_have_class("card semantic")
    expect(first.locator(".badge").first).to_have_text("preference")
    expect(first).to_contain_text("Confidence 100%")
    expect(first).to_contain_text("Agent: shiyi")
    expect(first.get_by_role("button", name="Tag tech_stack: open entity")).to_be_visible()
    expect(card(page, ids["standup"])).to_have_class("card shared")
    clamp = first.locator(".body").evaluate("e => getComputedStyle(e).webkitLineClamp")
    assert clamp == "2"
    page.get_by_role("tab", name="Procedural 程序").click()
    expect(page.locator("#results article")).to_have_count(1)
    expect(card(page, ids["deploy"])).to_have_class("card procedural")


def test_a_search_says_how_it_read_a_typing_slip(page: Page, site: Site) -> None:
    fact = site.memory.remember("The quarterly retrospective is held in the greenhouse room")
    wait_for_jobs(site.memory)
    open_page(page, site)
    page.get_by_label("Search 搜索").fill("where is the retrospective, the grenhouse?")
    page.keyboard.press("Enter")
    expect(card(page, fact.id)).to_be_visible()
    expect(page.locator("#status")).to_contain_text("(searched “grenhouse” as “greenhouse”)")
    page.get_by_label("Search 搜索").fill("where is the greenhouse?")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("closest first, for “where is the greenhouse?”")
    expect(page.locator("#status")).not_to_contain_text("searched")


def test_edit_persists(page: Page, site: Site) -> None:
    fact = site.memory.remember("The VPN config lives in ops/vpn.conf", kind="convention")
    open_page(page, site)
    edit = card(page, fact.id).get_by_role("button", name="Edit")
    edit.click()
    dialog = page.get_by_role("dialog", name="Edit memory 编辑记忆")
    expect(dialog).to_be_visible()
    expect(page.locator("#edit-value")).to_be_focused()
    page.locator("#edit-value").fill("discarded")
    page.keyboard.press("Escape")  # closes without saving, focus back on the button
    expect(dialog).to_be_hidden()
    expect(edit).to_be_focused()
    assert site.memory.store.get_facts([fact.id])[0].value == fact.value
    page.keyboard.press("Enter")  # the focused Edit button opens the dialog again
    expect(dialog).to_be_visible()
    page.locator("#edit-value").fill("The VPN config lives in ops/vpn2.conf 新配置")
    page.locator("#edit-confidence").fill("80")
    page.locator("#edit-value").press("Enter")
    expect(dialog).to_be_hidden()
    expect(card(page, fact.id)).to_contain_text("ops/vpn2.conf 新配置")
    expect(card(page, fact.id)).to_contain_text("Confidence 80%")
    page.reload()
    page.get_by_label("Search 搜索").fill("vpn2.conf")
    page.keyboard.press("Enter")
    expect(card(page, fact.id)).to_contain_text("ops/vpn2.conf 新配置")
    body = site.api.get(f"/v1/memory/{fact.id}").json()
    assert body["value"] == "The VPN config lives in ops/vpn2.conf 新配置"
    assert body["confidence"] == 0.8


def test_remember_says_what_it_replaced_and_what_it_confirmed(page: Page, site: Site) -> None:
    open_page(page, site)
    form = page.get_by_role("form", name="Remember something")
    text = form.get_by_label("Remember 记住")
    text.fill("My go-to terminal font is Iosevka")
    text.press("Enter")
    status = page.locator("#status")
    expect(status).to_have_text(
        "Remembered: go to terminal font: My go-to terminal font is Iosevka."
    )
    expect(text).to_have_value("")
    expect(text).to_be_focused()  # ready for the next one
    text.fill("My go-to terminal font is JetBrains Mono")  # no slot typed: the wording names it
    form.get_by_role("button", name="Remember").click()
    expect(status).to_contain_text("It replaces “My go-to terminal font is Iosevka”")
    facts = site.api.get("/v1/memory/history", params={"key": "go to terminal font"}).json()
    assert [(f["value"], f["status"]) for f in facts["facts"]] == [
        ("My go-to terminal font is Iosevka", "superseded"),
        ("My go-to terminal font is JetBrains Mono", "active"),
    ]
    current = facts["facts"][1]["id"]
    expect(card(page, current)).to_be_visible()
    text.fill("My go-to terminal font is JetBrains Mono")
    text.press("Enter")
    expect(status).to_have_text(
        "Already remembered: go to terminal font: My go-to terminal font is JetBrains Mono "
        "(confirmed; no copy made)."
    )
    form.get_by_label("As").select_option("convention")
    form.get_by_label("Slot (optional)").fill("release day")
    text.fill("Releases go out on Tuesdays")
    text.press("Enter")
    expect(status).to_have_text("Remembered: release day: Releases go out on Tuesdays.")
    shot(page, "remember")


def test_delete_removes(page: Page, site: Site) -> None:
    fact = site.memory.remember("The staging password rotates every Friday")
    open_page(page, site)
    card(page, fact.id).get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("dialog", name="Delete memory? 删除记忆？")
    expect(confirm).to_contain_text("rotates every Friday")
    expect(page.locator("#confirm-ok")).to_be_focused()
    page.keyboard.press("Enter")
    expect(confirm).to_be_hidden()
    expect(card(page, fact.id)).to_have_count(0)
    # The server cannot rewrite the graph file it serves from: the page says so and how.
    expect(page.locator("#status")).to_contain_text("Deleted; ")
    expect(page.locator("#status")).to_contain_text("shiyi memory compact")
    assert site.api.get(f"/v1/memory/{fact.id}").status_code == 404
    page.reload()
    page.get_by_label("Search 搜索").fill("staging password Friday")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("closest first, for")
    expect(card(page, fact.id)).to_have_count(0)


def test_cleanup_of_expired_memories(page: Page, site: Site) -> None:
    moods = [
        observe(site.memory, f"Feels {word} today", kind="mood") for word in ("tired", "happy")
    ]
    site.memory.store.expire_facts(time.time() + 1.5 * DAY)
    open_page(page, site)
    expect(page.locator("#stat-expired")).to_have_text("2")
    page.get_by_role("button", name="Expired").click()
    dialog = page.get_by_role("dialog", name="Clean up 2 expired memories?")
    expect(dialog).to_contain_text("Feels tired today")
    expect(dialog).to_contain_text("Feels happy today")
    shot(page, "cleanup-dialog")
    dialog.get_by_role("button", name="Delete 2").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#stat-expired")).to_have_text("0")
    assert site.api.get("/v1/memory/expired").json() == {"facts": []}
    assert site.memory.store.get_facts([m.id for m in moods]) == []


def test_conflict_is_resolved(page: Page, site: Site) -> None:
    berlin = observe(site.memory, "Berlin", key="lives in", confidence=0.9)
    munich = observe(site.memory, "Munich", key="lives in", confidence=0.6)
    assert munich.conflicts_with == berlin.id
    open_page(page, site)
    expect(page.locator("#stat-conflicts")).to_have_text("1")
    page.get_by_role("button", name="Conflicts").click()
    dialog = page.get_by_role("dialog", name="Conflicts 冲突记忆")
    group = dialog.get_by_role("group", name="Conflict about lives in")
    expect(group).to_contain_text("lives in: Berlin")
    expect(group).to_contain_text("lives in: Munich")
    shot(page, "conflict-dialog")
    group.get_by_role("button", name="Keep the new version: lives in: Munich").click()
    expect(dialog).to_contain_text("No open conflicts")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator("#stat-conflicts")).to_have_text("0")
    new, old = site.memory.store.get_facts([munich.id, berlin.id])
    assert (new.status, old.status) == ("active", "superseded") and old.valid_to is not None
    expect(card(page, munich.id)).to_be_visible()
    expect(card(page, berlin.id)).to_have_count(0)  # superseded: not a current memory


def test_entity_view_shows_neighbours(page: Page, site: Site) -> None:
    fact = site.memory.remember("Alice leads the graph migration", about=["Alice"])
    site.memory.store.upsert_entities([EntityRecord("acme", "org", "Acme")])
    site.memory.store.add_relations(
        [RelationRecord("alice", "acme", "works_at"), RelationRecord("acme", "alice", "employs")]
    )
    open_page(page, site)
    card(page, fact.id).get_by_role("button", name="Tag alice: open entity").click()
    dialog = page.get_by_role("dialog", name="Entity: Alice")
    expect(dialog).to_contain_text("Alice leads the graph migration")
    neighbour = dialog.get_by_role("button", name="works_at → acme")
    expect(neighbour).to_be_visible()
    expect(dialog.get_by_role("button", name="acme → employs")).to_be_visible()
    shot(page, "entity-dialog")
    neighbour.click()
    expect(page.get_by_role("dialog", name="Entity: Acme")).to_be_visible()
    page.keyboard.press("Escape")
    expect(card(page, fact.id).get_by_role("button", name="Tag alice: open entity")).to_be_focused()


def test_session_timeline_links_memories_to_turns(page: Page, site: Site) -> None:
    session = site.service.log.create_session(title="Moving house 搬家")
    turns = add_turns(
        site.memory,
        session,
        [("user", "I moved to Hamburg last week"), ("assistant", "Noted, Hamburg it is.")],
    )
    fact = observe(
        site.memory,
        "Hamburg",
        key="home city",
        anchor=turns[0].anchor.key(),
        source_events=[turns[0].id],
    )
    open_page(page, site)
    page.get_by_role("tab", name="Sessions 会话").click()
    page.get_by_label("Session 会话").select_option(session)
    derived = page.locator(f'li[data-fact="{fact.id}"]')
    link = derived.get_by_role("link", name=f"from turn {turns[0].anchor.key()}")
    expect(link).to_be_visible()
    expect(page.locator(".turn")).to_have_count(2)
    link.click()
    expect(page.locator(f"#turn-{turns[0].id}")).to_be_focused()
    expect(page.locator(f"#turn-{turns[0].id}")).to_contain_text("I moved to Hamburg")
    shot(page, "timeline")


def test_small_screen_tabs_and_knowledge(page: Page, site: Site) -> None:
    page.set_viewport_size({"width": 375, "height": 800})
    open_page(page, site)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the page scrolls sideways at 375px ({width}px wide)"
    shot(page, "overview-375")
    page.get_by_role("tab", name="All 全部").focus()
    page.keyboard.press("ArrowRight")
    semantic = page.get_by_role("tab", name="Semantic 语义")
    expect(semantic).to_be_focused()
    expect(semantic).to_have_attribute("aria-selected", "true")
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    expect(page.get_by_role("tab", name="Knowledge 知识库")).to_have_attribute(
        "aria-selected", "true"
    )
    expect(page.locator("#knowledge")).not_to_contain_text("issue 8")
    expect(page.locator("#kb-q")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the Knowledge tab scrolls sideways at 375px ({width}px wide)"
    expect(page.locator("#results")).to_be_hidden()


def test_the_page_asks_for_the_token(browser: Browser, live: LiveFactory) -> None:
    server = live(host="0.0.0.0", token=SecretStr("s3cret"))
    assert server.service.memory is not None
    server.service.memory.remember("Only for token holders")
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(server.url + "/")
        dialog = page.get_by_role("dialog", name="Access token")
        expect(dialog).to_be_visible()
        page.get_by_role("textbox", name="Token").fill("s3cret")
        page.keyboard.press("Enter")
        expect(page.locator("#results")).to_contain_text("Only for token holders")
        assert page.evaluate("sessionStorage.getItem('shiyi.token')") == "s3cret"
    finally:
        context.close()
