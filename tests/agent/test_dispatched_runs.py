"""A guided small model's runs with the steps the agent takes itself (shiyi.agent.dispatch)
and the plain answer layout (shiyi.context.plain), on the scripted model."""

from __future__ import annotations

from shiyi.llm.scripted import reply
from shiyi.tools.builtins import list_dir, read_file
from tests.conftest import AgentFactory, collect


async def test_a_named_file_is_read_by_the_agent_and_answered_from_plain_data(
    make_agent: AgentFactory,
) -> None:
    workspace = make_agent.settings.workspace
    (workspace / "recipe.md").write_text("Flour, sugar, two eggs.\n")
    agent, model = make_agent(
        [reply("Flour, sugar and two eggs.")], tools=[read_file, list_dir], force_first_call=True
    )
    events = await collect(agent.send("Could you open recipe.md and tell me what I need?"))
    [call] = [e for e in events if e.type == "tool_call"]
    assert (call.name, call.args) == ("read_file", {"path": "recipe.md"})  # type: ignore[union-attr]
    assert events[-1].status == "completed"  # type: ignore[union-attr]
    [answering] = model.requests  # the model was asked once: for the words
    assert (answering.tool_choice, answering.tools) == ("none", ())
    assert [m.role for m in answering.messages] == ["user"]  # no tool turn, no notes
    assert answering.messages[0].content == (
        "recipe.md:\nFlour, sugar, two eggs.\n\nCould you open recipe.md and tell me what I need?"
    )
    roles = [m.role for m in agent.history()]
    assert roles == ["user", "assistant", "tool", "assistant"]  # logged as a normal run


async def test_a_plain_calculation_is_answered_exactly_without_the_model(
    make_agent: AgentFactory,
) -> None:
    agent, model = make_agent([], tools=[read_file], force_first_call=True)
    events = await collect(agent.send("How much is 12 x 4?"))
    text = "".join(e.text for e in events if e.type == "text_delta")  # type: ignore[union-attr]
    assert text == "12 × 4 = 48."
    assert events[-1].status == "completed"  # type: ignore[union-attr]
    assert model.requests == []


async def test_a_calculation_inside_a_question_reaches_the_model_as_a_fact(
    make_agent: AgentFactory,
) -> None:
    agent, model = make_agent(
        [reply("42, and it is even.")], tools=[read_file], force_first_call=True
    )
    await collect(agent.send("What is 7 times 6, and is it even?"))
    [answering] = model.requests
    assert answering.messages[-1].content == "7 * 6 = 42\n\nWhat is 7 times 6, and is it even?"


async def test_a_model_that_is_not_guided_gets_no_dispatch(make_agent: AgentFactory) -> None:
    (make_agent.settings.workspace / "recipe.md").write_text("Flour.\n")
    agent, model = make_agent([reply("It is 48.")], tools=[read_file])
    events = await collect(agent.send("How much is 12 x 4? Also open recipe.md"))
    assert not [e for e in events if e.type == "tool_call"]
    assert len(model.requests) == 1 and model.requests[0].tools  # the full layout, tools
    assert "<context>" in model.requests[0].messages[-1].content
