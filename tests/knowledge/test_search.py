"""Retrieval on a small generated corpus with real embeddings: answers found through parent
and neighbour expansion and through the summary index; rewriting, HyDE and model summaries
with a scripted ``fast`` model; the offline fallback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from shiyi.app import open_knowledge
from shiyi.config import Settings, load_settings
from shiyi.errors import ModelError
from shiyi.index.embeddings import MiniLMEmbedder
from shiyi.knowledge import KnowledgeBase, Passage, SearchOptions, SearchResult
from shiyi.knowledge.rewrite import TOOL_NAME
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call, reply
from tests.knowledge.conftest import PROJECTS, Opener, add
from tests.support.fake_openai import FakeOpenAIServer, FakeReply, FakeToolCall


def search(kb: KnowledgeBase, query: str, **overrides: object) -> SearchResult:
    options = kb.options(**overrides)  # type: ignore[arg-type]
    return asyncio.run(kb.search(query, options))


def rank_of(passages: list[Passage], needle: str) -> int | None:
    return next((i for i, p in enumerate(passages, 1) if needle in p.text), None)


@pytest.fixture
def kb(open_kb: Opener, corpus: dict[str, Path]) -> KnowledgeBase:
    base = open_kb()
    add(base, corpus["vault"].parent)
    return base


def test_answer_in_the_next_chunk_comes_through_neighbour_expansion(kb: KnowledgeBase) -> None:
    query = "Vault signing keys rotation schedule"
    bare = search(kb, query, limit=1, expand=False, rewrite=False)
    widened = search(kb, query, limit=1, rewrite=False)
    assert "rotation schedule" in bare.passages[0].text
    assert "45 days" not in bare.passages[0].text  # the hit alone lacks the answer
    top = widened.passages[0]
    assert top.chunk_id == bare.passages[0].chunk_id
    assert top.expansion == "neighbours"  # the section is too long to return whole
    assert "45 days" in top.text
    assert len(top.chunk_ids) == 3
    assert top.heading_path == "Vault operations › Key management"


def test_a_short_section_is_returned_whole(kb: KnowledgeBase) -> None:
    top = search(kb, "how often are restores tested", limit=1, rewrite=False).passages[0]
    assert top.expansion == "section"
    assert "tested monthly" in top.text
    assert "kept for ninety days" in top.text  # the section's other chunk
    assert top.heading_path == "Vault operations › Backups"


def test_passages_do_not_repeat_chunks(kb: KnowledgeBase) -> None:
    passages = search(kb, "Vault cluster keys backups runbook", limit=6).passages
    shown = [cid for p in passages for cid in p.chunk_ids]
    assert len(shown) == len(set(shown))


def region_order(passages: list[Passage]) -> list[str]:
    regions = [region for _, region, _, _ in PROJECTS.values()]
    return [r for p in passages for r in regions if r in p.text]


def test_summary_routing_finds_a_chunk_that_never_names_the_subject(kb: KnowledgeBase) -> None:
    """Every project's Infrastructure chunk reads "It runs in the X region": only the
    document (its title, introduction and summary) says which project that is."""
    plain_right = 0
    for name, (_, region, _, _) in PROJECTS.items():
        query = f"Which region does Project {name} run in?"
        routed = search(kb, query, limit=3, rewrite=False)
        plain = search(kb, query, limit=3, rewrite=False, summaries=False)
        # The introduction ("Project X is ...") comes first, then the right region.
        assert routed.passages[0].doc_title == f"Project {name}"
        assert rank_of(routed.passages, region) == 2
        assert region_order(routed.passages)[0] == region
        hit = routed.passages[1]
        assert hit.paths["summary"] <= 2  # its section summary names the project
        assert "Project" not in hit.text and name not in hit.text
        plain_right += region_order(plain.passages)[:1] == [region]
    # Without the summary path the four look alike: the same region tops most questions.
    assert plain_right < len(PROJECTS)


def test_rewrites_are_searched_and_find_what_the_question_misses(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    rewrites = ["login authentication error fix", "AUTH-401 sign-in failure"]
    model = ScriptedModel([reply("", call(TOOL_NAME, queries=[*rewrites, rewrites[0]]))])
    kb = open_kb(model)
    add(kb, corpus["vault"].parent)
    model.add(reply("", call(TOOL_NAME, queries=rewrites)))
    result = search(kb, "怎么修那个登录的 bug", limit=3)
    assert result.queries == ["怎么修那个登录的 bug", *rewrites]
    request = model.requests[-1]
    assert request.tool_choice == TOOL_NAME
    assert "Write 3 different queries" in request.messages[0].content
    top = result.passages[0]
    assert "AUTH-401" in top.text
    assert top.paths.get("keyword~2") == 1  # the second rewrite's keyword path ranked it first
    assert "keyword~1" in result.paths


def test_rewrites_parsed_from_numbered_text_lines() -> None:
    from shiyi.knowledge.rewrite import clean_queries, parse_queries
    from shiyi.llm.types import Message

    text = "1. login error fix\n2) 用户认证错误排查\n- login error fix\n\n"
    queries = clean_queries(parse_queries(Message("assistant", text)), "the question", 3)
    assert queries == ["login error fix", "用户认证错误排查"]


def test_a_failing_fast_model_means_searching_with_the_question_alone(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    model = ScriptedModel()
    kb = open_kb(model)
    kb.settings.summarize_with_model = False
    add(kb, corpus["auth"])
    model.add(ModelError("rate limited", retryable=True), reply(""))
    first = search(kb, "AUTH-401")
    assert first.queries == ["AUTH-401"]
    second = search(kb, "AUTH-401")
    assert second.queries == ["AUTH-401"]  # an empty reply: no rewrites
    assert "AUTH-401" in first.passages[0].text


def test_hyde_searches_with_a_hypothetical_answer(open_kb: Opener, corpus: dict[str, Path]) -> None:
    hypothetical = (
        "After each rotation interval, the previous key stays valid for a grace period, "
        "for example a week, so that old tokens keep working."
    )
    model = ScriptedModel()
    kb = open_kb(model)
    kb.settings.summarize_with_model = False
    add(kb, corpus["vault"])
    model.add(reply(hypothetical))
    result = search(
        kb, "how long do old keys stay usable?", rewrite=False, hyde=True, expand=False, limit=3
    )
    assert result.hypothetical == hypothetical
    assert "hyde" in result.paths
    assert "Write a short passage" in model.requests[-1].messages[0].content
    # The hyde path ranked first the chunk nearest the hypothetical answer, which is not the
    # chunk nearest the question: it searched with the answer's vector.
    embed = kb.searcher.embedder
    assert embed is not None
    by_answer = kb.store.vector_search("chunk", embed.embed([hypothetical])[0], 1)[0].id
    by_question = kb.store.vector_search("chunk", embed.embed([result.queries[0]])[0], 1)[0].id
    hyde_first = next(p for p in result.passages if p.paths.get("hyde") == 1)
    assert hyde_first.chunk_id == by_answer != by_question


def summaries_by_model(request: ScriptedRequest) -> ScriptedReply:
    first_line = request.last.content.splitlines()[0]
    return ScriptedReply(text=f"Model summary of {first_line}.")


def test_summaries_by_the_fast_model(open_kb: Opener, corpus: dict[str, Path]) -> None:
    model = ScriptedModel([summaries_by_model], repeat_last=True)
    kb = open_kb(model)
    add(kb, corpus["vault"])
    (doc,) = kb.documents()
    summaries = kb.store.summaries(
        [f"{doc.id}.{doc.version}.d", f"{doc.id}.{doc.version}.m1", f"{doc.id}.{doc.version}.m2"]
    )
    texts = {s.section_id is None: s for s in summaries.values()}
    assert texts[True].text == "Vault operations: Model summary of Document: Vault operations."
    assert texts[True].method == "scripted"
    by_heading = {s.text.split(":")[0]: s for s in summaries.values() if s.section_id}
    key_section = by_heading["Vault operations › Key management"]
    assert key_section.method == "scripted"  # long: the model summarised it
    # A section shorter than a summary is its own summary: no model call for it.
    assert by_heading["Vault operations › Backups"].method == "extractive"
    assert doc.summary_method == "extractive+scripted"


def test_a_model_that_fails_mid_ingest_leaves_extractive_summaries(
    open_kb: Opener, corpus: dict[str, Path]
) -> None:
    model = ScriptedModel([ModelError("the endpoint refused", status=401)])
    kb = open_kb(model)
    report = add(kb, corpus["vault"])
    assert report.added and not report.failed
    (doc,) = kb.documents()
    assert doc.summary_method == "extractive"
    assert len(model.requests) == 1  # the first failure switched the rest to extractive


def test_offline_no_fast_model_means_extractive_summaries_and_no_rewriting(
    settings: Settings, corpus: dict[str, Path]
) -> None:
    assert settings.model_role("fast").provider == "local"
    kb = open_knowledge(settings)  # every part from the settings, as the CLI does
    assert kb.fast is None  # the tiny local model is not used for this
    try:
        add(kb, corpus["vault"].parent)
        assert {d.summary_method for d in kb.documents()} == {"extractive"}
        result = search(kb, "Which region does Project Heron run in?", limit=2)
        assert result.queries == ["Which region does Project Heron run in?"]
        assert rank_of(result.passages, "us-east-1") == 2
        summary = kb.store.summaries([f"{d.id}.{d.version}.d" for d in kb.documents()])
        heron = next(s for s in summary.values() if s.text.startswith("Project Heron"))
        assert "search platform" in heron.text  # the lead sentence, extracted
    finally:
        kb.close()


def test_keyword_only_when_there_is_no_embedder(open_kb: Opener, corpus: dict[str, Path]) -> None:
    kb = open_kb(embedded=False)
    add(kb, corpus["vault"].parent)
    result = search(kb, "Which region does Project Osprey run in?", limit=2)
    assert "vector" not in result.paths
    assert rank_of(result.passages, "ap-south-1") == 2
    assert "summary" in result.passages[1].paths


def test_scripted_fast_model_from_the_settings(tmp_path: Path, workspace: Path) -> None:
    script = tmp_path / "fast.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": TOOL_NAME, "arguments": {}}]}]))
    settings = load_settings(
        cwd=workspace,
        workspace=workspace,
        models={"fast": {"provider": "scripted", "model_path": str(script)}},
    )
    kb = open_knowledge(settings, embedder=None)
    try:
        assert isinstance(kb.fast, ScriptedModel)
    finally:
        kb.close()
    assert SearchOptions().rewrite  # rewriting is on by default when a model is there


def test_rewriting_over_http_with_an_openai_compatible_fast_model(
    settings: Settings,
    embedder: MiniLMEmbedder,
    corpus: dict[str, Path],
    fake_openai: FakeOpenAIServer,
) -> None:
    settings.models["fast"] = fake_openai.model_settings()
    kb = open_knowledge(settings, embedder=embedder)  # the fast model from the settings
    try:
        assert kb.fast is not None and kb.fast.model_name == "fake-model"
        add(kb, corpus["auth"])  # a short document: its summaries stay extractive, no call
        assert fake_openai.requests == []
        queries = {"queries": ["AUTH-401 sign-in failure"]}
        fake_openai.enqueue(FakeReply(tool_calls=[FakeToolCall(TOOL_NAME, queries)]))
        result = search(kb, "登录失败", limit=1)
    finally:
        kb.close()
    assert result.queries == ["登录失败", "AUTH-401 sign-in failure"]
    (sent,) = fake_openai.requests
    assert sent["tool_choice"] == {"type": "function", "function": {"name": TOOL_NAME}}
    assert "AUTH-401" in result.passages[0].text


def test_a_mistyped_question_finds_what_the_word_meant_finds(kb: KnowledgeBase) -> None:
    written = search(kb, "how often are restores tested", limit=3, rewrite=False)
    typed = search(kb, "how often are restroes tetsed", limit=3, rewrite=False)
    assert [p.chunk_id for p in typed.passages] == [p.chunk_id for p in written.passages]
    assert typed.read_as == {"restroes": "restores", "tetsed": "tested"}
    assert written.read_as == {}
    assert kb.store.read_slips("how often are restroes tetsed") == "how often are restores tested"


def fused(passage: Passage, *, but: str = "") -> float:
    """The passage's score as reciprocal-rank fusion of its paths at weight 1, ``but`` one."""
    return sum(1 / (60 + rank) for path, rank in passage.paths.items() if path != but)


def test_an_english_only_embedder_does_not_vote_on_a_question_in_another_language(
    kb: KnowledgeBase,
) -> None:
    asked = search(kb, "Kapan kunci Vault harus diganti?", limit=3, rewrite=False, expand=False)
    assert asked.passages and any("vector" in p.paths for p in asked.passages)
    for passage in asked.passages:  # found by the vector path, counted without it
        assert passage.score == pytest.approx(fused(passage, but="vector"))
    english = search(kb, "When are the vault signing keys rotated?", limit=1, rewrite=False)
    (top,) = english.passages
    assert "vector" in top.paths and top.score == pytest.approx(fused(top))


def test_a_sections_title_finds_its_passage(open_kb: Opener, tmp_path: Path) -> None:
    """A word only a heading holds ("## Zanzibar") had ranked another section first."""
    guide = tmp_path / "guide.md"
    sections = {
        "Zanzibar": "The ferry leaves at nine from the old harbour.",
        "Quillwort": "A small aquatic plant found in cold lakes.",
        "Brakeman": "The person who works the brakes on a goods train.",
        "Porcupine": "A rodent with sharp quills for defence.",
    }
    guide.write_text(
        "# Field guide\n\n" + "".join(f"## {t}\n\n{body}\n\n" for t, body in sections.items())
    )
    kb = open_kb()
    add(kb, guide)
    for title, body in sections.items():
        found = search(kb, title, limit=1, expand=False, rewrite=False).passages
        assert found[0].text == body, title
