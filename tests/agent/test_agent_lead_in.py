"""The live agent makes each request a run; the user's short answer to the question the
assistant ended the last run with is stored with that question in its vector, as an
imported chat's reply is (:mod:`shiyi.memory.intake.event_vectors`).  Driven through the
agent with the scripted model and the real MiniLM embedder."""

from __future__ import annotations

from pathlib import Path

from shiyi.app import App
from shiyi.config import load_settings
from shiyi.llm.scripted import ScriptedModel, reply
from tests.conftest import collect
from tests.support.vectors import led_vector, own_vector, stored_as

ASKED = "How old is she turning, and what does she like to eat?"
ANSWERED = "83. loves grilled fish"


async def test_the_users_short_answer_is_stored_with_the_question_it_answers(
    tmp_path: Path,
) -> None:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    model = ScriptedModel([reply(ASKED), reply("Grilled fish it is, then.")])
    with App.open(settings, model=model, start_worker=False) as app:
        memory = app.memory
        assert memory is not None
        agent = app.agent()
        await collect(agent.send("Help me plan a birthday lunch for my grandmother"))
        await collect(agent.send(ANSWERED))
        assert memory.worker.drain(timeout=120)
        stored = memory.store.recent_events(10)
        question = next(e for e in stored if e.content == ASKED)
        answer = next(e for e in stored if e.content == ANSWERED)
        assert answer.run_id != question.run_id  # two requests, two runs
        assert stored_as(memory, answer, led_vector(memory, question, answer))
        assert not stored_as(memory, answer, own_vector(memory, answer))
