"""What the memory page says must be true (issue 30 item 7), in a real headless Chromium
against a real server: ages at fixed clocks, superseded versions marked in the entity view and
the session timeline (current versions first), source counts from the source turns, an edit
dialog that shows and saves what the card shows, and run archives grouped apart."""

from __future__ import annotations

import time
from dataclasses import replace

from shiyi.memory.service import Memory
from tests.interfaces.web import test_page as shared
from tests.interfaces.web.conftest import add_turns, observe
from tests.interfaces.web.test_page import DAY, Page, Site, card, expect, open_page, shot

# The page module's fixtures: Chromium, a page, and a server with the local embedder.
browser, page, site = shared.browser, shared.page, shared.site

NOW = 1_750_000_000.0  # a fixed clock: the ages below do not depend on when the test runs
MINUTE, HOUR = 60.0, 3600.0
AGES = [
    (0, "just now"),
    (59, "just now"),
    (60, "1 min ago"),
    (3 * MINUTE, "3 min ago"),
    (59 * MINUTE + 59, "59 min ago"),
    (HOUR, "1 h ago"),
    (5 * HOUR + 30 * MINUTE, "5 h ago"),
    (DAY - 1, "23 h ago"),
    (DAY, "1 d ago"),
    (29 * DAY, "29 d ago"),
    (40 * DAY, "1 mo ago"),
    (200 * DAY, "6 mo ago"),
    (365 * DAY, "1 y ago"),
    (800 * DAY, "2 y ago"),
    (-30, "just now"),  # a clock a little ahead
    (-3 * HOUR, "in 3 h"),
    (-40 * DAY, "in 1 mo"),
]


def test_ages_at_a_fixed_clock(page: Page, site: Site) -> None:
    open_page(page, site)
    shown = page.evaluate(
        """async ([now, offsets]) => {
          const { age } = await import("/ui/ui.js");
          return [...offsets.map((d) => age(now - d, now)), age(null, now), age(undefined, now)];
        }""",
        [NOW, [offset for offset, _ in AGES]],
    )
    assert shown == [text for _, text in AGES] + ["–", "–"]


def test_cards_show_ages_in_the_right_unit(page: Page, site: Site) -> None:
    """Through the cards, with the real clock: units wide enough that a slow run stays in."""
    now = time.time()
    old = site.memory.remember("Paid the Q1 invoice", kind="episodic")
    recent = site.memory.remember("Opened the Q2 budget", kind="episodic")
    site.memory.store.upsert_facts(
        [replace(old, created_at=now - 40 * DAY), replace(recent, created_at=now - 3.2 * HOUR)]
    )
    open_page(page, site)
    expect(card(page, old.id).locator("time")).to_have_text("1 mo ago")
    expect(card(page, recent.id).locator("time")).to_have_text("3 h ago")


def versions_of_home(memory: Memory) -> tuple[str, str, str]:
    """Berlin, superseded by Paris (both said by the user, explicitly), and a doubtful
    Munich that contradicts Paris: (berlin, paris, munich) ids."""
    # Written straight to the store: a vector write checkpoints Kuzu at its commit, which
    # waits a bounded time for readers; let the worker finish what the last page queued
    # (waited for, not drained from here: a second drainer races the worker for the graph's
    # write lock, and a job that loses it waits to be retried, so drain() answered False).
    shared.wait_for_jobs(memory)
    berlin = memory.remember("Berlin", key="lives in", about=["Carla"])
    paris = memory.remember("Paris", key="lives in", about=["Carla"])
    munich = observe(memory, "Munich", key="lives in", confidence=0.6, about=["carla"])
    old, new = memory.store.get_facts([berlin.id, paris.id])
    assert (old.status, new.status) == ("superseded", "active"), "fixture: Paris replaces Berlin"
    assert munich.status == "pending" and munich.conflicts_with == paris.id
    return berlin.id, paris.id, munich.id


def test_entity_view_marks_superseded_versions(page: Page, site: Site) -> None:
    page.goto("about:blank")  # the last test's page stops asking the server
    berlin, paris, munich = versions_of_home(site.memory)
    open_page(page, site)
    card(page, paris).get_by_role("button", name="Tag carla: open entity").click()
    dialog = page.get_by_role("dialog", name="Entity: Carla")
    facts = dialog.locator(".entity-facts li")
    expect(facts).to_have_count(3)
    # Current versions first: the active one, the doubtful one, then the past one.
    assert facts.evaluate_all("items => items.map((li) => li.dataset.fact)") == [
        paris,
        munich,
        berlin,
    ]
    expect(dialog).to_contain_text("Memories (2 current, 1 superseded)")
    past = dialog.locator(f'li[data-fact="{berlin}"]')
    expect(past.locator(".badge.status")).to_have_text("superseded")
    expect(past).to_contain_text("replaced by “lives in: Paris”")
    expect(past).to_contain_text("ended ")
    struck = past.locator(".fact-text").evaluate("e => getComputedStyle(e).textDecorationLine")
    assert struck == "line-through"
    expect(dialog.locator(f'li[data-fact="{munich}"] .badge.status')).to_have_text("conflict")
    expect(dialog.locator(f'li[data-fact="{paris}"] .badge.status')).to_have_count(0)
    shot(page, "entity-versions")


def test_session_timeline_marks_superseded_versions(page: Page, site: Site) -> None:
    session = site.service.log.create_session(title="Where Dana lives")
    start = time.time() - 600
    turns = add_turns(
        site.memory,
        session,
        [
            ("user", "Dana lives in Berlin"),
            ("assistant", "Berlin, noted."),
            ("user", "Dana moved to Munich"),
        ],
        start=start,
    )
    berlin = observe(
        site.memory,
        "Berlin",
        key="dana lives in",
        anchor=turns[0].anchor.key(),
        source_events=[turns[0].id],
        now=turns[0].ts,
    )
    munich = observe(
        site.memory,
        "Munich",
        key="dana lives in",
        anchor=turns[2].anchor.key(),
        source_events=[turns[2].id],
        now=turns[2].ts,
    )
    stored = site.memory.store.get_facts([berlin.id])[0]
    assert munich.id != berlin.id and stored.status == "superseded", "fixture: Munich replaces"
    open_page(page, site)
    page.get_by_role("tab", name="Sessions 会话").click()
    page.get_by_label("Session 会话").select_option(session)
    derived = page.locator(".derived li")
    expect(derived).to_have_count(2)
    assert derived.evaluate_all("items => items.map((li) => li.dataset.fact)") == [
        munich.id,
        berlin.id,
    ]
    expect(page.locator("#timeline")).to_contain_text(
        "Memories derived from this session (1 current, 1 superseded)"
    )
    past = page.locator(f'.derived li[data-fact="{berlin.id}"]')
    expect(past.locator(".badge.status")).to_have_text("superseded")
    expect(past).to_contain_text("replaced by “dana lives in: Munich”")
    expect(past.get_by_role("link", name=f"from turn {turns[0].anchor.key()}")).to_be_visible()
    expect(page.locator("#timeline")).not_to_contain_text("null")  # no group: nothing shown
    opacity = past.locator(".fact-text").evaluate("e => getComputedStyle(e).opacity")
    assert float(opacity) < 1
    shot(page, "timeline-versions")


def test_cards_count_source_turns_and_sessions(page: Page, site: Site) -> None:
    first = site.service.log.create_session(title="Standup 1")
    second = site.service.log.create_session(title="Standup 2")
    a = add_turns(site.memory, first, [("user", "Erin owns the billing service"), ("user", "ok")])
    b = add_turns(site.memory, second, [("user", "Erin still owns billing")])
    learned = observe(
        site.memory,
        "Erin owns the billing service",
        key="billing owner",
        source_events=[a[0].id, a[1].id, b[0].id],
    )
    told = site.memory.remember("The billing repo is acme/billing")
    open_page(page, site)
    expect(card(page, learned.id).locator(".caption")).to_contain_text("From 3 turns in 2 sessions")
    expect(card(page, learned.id)).not_to_contain_text("conversations")
    expect(card(page, told.id).locator(".caption")).to_contain_text("Saved on request")


def test_edit_shows_and_saves_what_the_card_shows(page: Page, site: Site) -> None:
    fact = site.memory.remember("Oslo", key="lives in", kind="semantic")
    open_page(page, site)
    body = card(page, fact.id).locator(".body")
    expect(body).to_have_text("lives in: Oslo")
    card(page, fact.id).get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name="Edit memory 编辑记忆")
    expect(dialog.get_by_label("Key")).to_have_value("lives in")
    expect(dialog.get_by_label("Value")).to_have_value("Oslo")
    # Typed the way the card shows it: the key is not stored twice.
    dialog.get_by_label("Value").fill("lives in: Paris")
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(body).to_have_text("lives in: Paris")
    stored = site.memory.store.get_facts([fact.id])[0]
    assert (stored.key, stored.value) == ("lives in", "Paris")
    # The key is editable too: the card shows the new one.
    card(page, fact.id).get_by_role("button", name="Edit").click()
    dialog.get_by_label("Key").fill("works in")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()
    expect(body).to_have_text("works in: Paris")
    stored = site.memory.store.get_facts([fact.id])[0]
    assert (stored.key, stored.value) == ("works in", "Paris")


def test_run_archives_are_grouped_and_still_found(page: Page, site: Site) -> None:
    session = site.service.log.create_session(title="Runs")
    archives = []
    for n, topic in enumerate(("rotate the TLS certificates", "prune docker images", "tag v2")):
        turns = add_turns(site.memory, session, [("user", topic), ("assistant", f"done {n}")])
        report = site.memory.lifecycle.archive(turns[0].run_id, topic, "completed")
        archives += report.created
    assert len(archives) == 3
    fact = site.memory.remember("Certificates live in vault/tls")
    shared.wait_for_jobs(site.memory)
    open_page(page, site)
    group = page.locator("#results .runs details")
    expect(group.locator("summary")).to_have_text("Past runs (3)")
    expect(group).not_to_have_attribute("open", "")
    expect(card(page, fact.id)).to_be_visible()
    for archive in archives:
        expect(card(page, archive)).to_be_hidden()  # collapsed, not gone
    expect(page.locator("#status")).to_contain_text("and 3 past runs")
    shot(page, "runs-collapsed")
    group.locator("summary").click()
    for archive in archives:
        expect(card(page, archive)).to_be_visible()
    # A search finds an archive and shows it, in the group opened.
    page.get_by_label("Search 搜索").fill("rotate the TLS certificates")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("closest first, for")
    expect(card(page, archives[0])).to_be_visible()
    expect(page.locator("#results .runs details")).to_have_attribute("open", "")
    # The session's timeline keeps them apart and collapsed too.
    page.get_by_role("tab", name="Sessions 会话").click()
    page.get_by_label("Session 会话").select_option(session)
    expect(page.locator("#timeline")).to_contain_text("Memories derived from this session (0)")
    runs = page.locator("#timeline details.runs")
    expect(runs.locator("summary")).to_have_text("Past runs (3)")
    expect(runs.locator(f'li[data-fact="{archives[0]}"]')).to_be_hidden()
    runs.locator("summary").click()
    expect(runs.locator(f'li[data-fact="{archives[0]}"]')).to_contain_text("rotate the TLS")
