"""Hand-written exports in ChatGPT's and Claude's published shapes, small but realistic.

ChatGPT: a list of conversations, each a ``mapping`` tree of nodes ``{id, message, parent,
children}``, with ``current_node`` the leaf the user last saw; messages have ``author.role``,
``content.content_type`` and ``parts``, ``create_time`` epoch floats, ``recipient``.
Claude: a list of conversations with ``uuid``, ``name``, ``created_at`` and ``chat_messages``
(``sender`` human/assistant, ``text`` and ``content`` blocks, ISO ``created_at``).
"""

from __future__ import annotations

from typing import Any

# 2024-03-09 21:40:00 UTC and the next morning: the chat spans two calendar days.
T0 = 1710020400.25
NEXT_DAY = T0 + 11 * 3600

GREYHOUND = "I adopted a retired greyhound called Biscuit last weekend"
BEACH = "Here is a photo of her at Brighton beach"
CAT = "I adopted a cat called Pixel"  # the edited-away branch: never imported
OLD_REPLY = "Congratulations! Greyhounds are calm dogs."  # regenerated: not on the path


def _node(
    node_id: str,
    parent: str | None,
    children: list[str],
    role: str | None = None,
    parts: list[Any] | None = None,
    *,
    ts: float | None = None,
    content_type: str = "text",
    recipient: str = "all",
    hidden: bool = False,
    text: str | None = None,
) -> dict[str, Any]:
    message = None
    if role is not None:
        content: dict[str, Any] = {"content_type": content_type}
        if parts is not None:
            content["parts"] = parts
        if text is not None:
            content["text"] = text
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": ts,
            "update_time": None,
            "content": content,
            "status": "finished_successfully",
            "end_turn": True if role == "assistant" else None,
            "weight": 1.0,
            "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {},
            "recipient": recipient,
            "channel": None,
        }
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def chatgpt_export() -> list[dict[str, Any]]:
    image = {
        "content_type": "image_asset_pointer",
        "asset_pointer": "file-service://file-AbC123",
        "size_bytes": 183012,
        "width": 1024,
        "height": 768,
    }
    nodes = [
        _node("root", None, ["sys"]),
        _node("sys", "root", ["ctx"], "system", [""], hidden=True),
        _node(
            "ctx",
            "sys",
            ["u-cat", "u1"],
            "user",
            content_type="user_editable_context",
            text="The user lives in Sussex.",
            hidden=True,
        ),
        _node("u-cat", "ctx", ["a-cat"], "user", [CAT], ts=T0 - 60),
        _node("a-cat", "u-cat", [], "assistant", ["Cats are great."], ts=T0 - 50),
        _node("u1", "ctx", ["a1-old", "a1"], "user", [GREYHOUND], ts=T0),
        _node("a1-old", "u1", [], "assistant", [OLD_REPLY], ts=T0 + 8.5),
        _node("a1", "u1", ["u2"], "assistant", ["Congratulations on Biscuit!"], ts=T0 + 20.75),
        _node(
            "u2",
            "a1",
            ["a2-code"],
            "user",
            [image, BEACH],
            ts=NEXT_DAY,
            content_type="multimodal_text",
        ),
        _node(
            "a2-code",
            "u2",
            ["tool"],
            "assistant",
            ts=NEXT_DAY + 3,
            content_type="code",
            recipient="python",
            text="print('photo')",
        ),
        _node(
            "tool",
            "a2-code",
            ["a2"],
            "tool",
            ts=NEXT_DAY + 4,
            content_type="execution_output",
            text="photo",
        ),
        _node("a2", "tool", [], "assistant", ["What a lovely photo of Biscuit."], ts=NEXT_DAY + 9),
    ]
    first = {
        "title": "New dog",
        "create_time": T0 - 120,
        "update_time": NEXT_DAY + 9,
        "mapping": {node["id"]: node for node in nodes},
        "moderation_results": [],
        "current_node": "a2",
        "plugin_ids": None,
        "conversation_id": "67ed1f3a-0000-8000-a1b2-c3d4e5f60718",
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": "67ed1f3a-0000-8000-a1b2-c3d4e5f60718",
    }
    # An older export's chat: no conversation_id, a first message without a time.
    old_nodes = [
        _node("r", None, ["q"]),
        _node("q", "r", ["a"], "user", ["Which tent should I pack for Snowdonia?"]),
        _node("a", "q", [], "assistant", ["A four-season tent."], ts=1680000100.0),
    ]
    second = {
        "title": "Camping",
        "create_time": 1680000000.0,
        "update_time": 1680000100.0,
        "mapping": {node["id"]: node for node in old_nodes},
        "current_node": "a",
        "id": "old-conversation-1",
    }
    return [first, second]


def claude_export() -> list[dict[str, Any]]:
    account = {"uuid": "acc-1"}
    chat = {
        "uuid": "5b1f0c9e-1111-4e2a-9d1c-0a1b2c3d4e5f",
        "name": "Sourdough starter",
        "created_at": "2024-06-02T08:15:00.000000Z",
        "updated_at": "2024-06-02T08:20:05.120000Z",
        "account": account,
        "chat_messages": [
            {
                "uuid": "m1",
                "text": "My sourdough starter named Clint smells like acetone",
                "content": [
                    {
                        "start_timestamp": "2024-06-02T08:15:00.000000Z",
                        "stop_timestamp": "2024-06-02T08:15:00.000000Z",
                        "type": "text",
                        "text": "My sourdough starter named Clint smells like acetone",
                        "citations": [],
                    }
                ],
                "sender": "human",
                "created_at": "2024-06-02T08:15:00.000000Z",
                "updated_at": "2024-06-02T08:15:00.000000Z",
                "attachments": [
                    {
                        "file_name": "feeding-log.txt",
                        "file_size": 120,
                        "file_type": "txt",
                        "extracted_content": "day 1: 50 g flour",
                    }
                ],
                "files": [],
            },
            {
                "uuid": "m2",
                "text": "",
                "content": [
                    {"type": "thinking", "thinking": "The user means hooch."},
                    {"type": "tool_use", "name": "web_search", "input": {"query": "acetone"}},
                    {"type": "tool_result", "name": "web_search", "content": []},
                    {"type": "text", "text": "Acetone smell means Clint is hungry: feed him."},
                ],
                "sender": "assistant",
                "created_at": "2024-06-02T08:15:31.500000Z",
                "updated_at": "2024-06-02T08:15:31.500000Z",
                "attachments": [],
                "files": [],
            },
        ],
    }
    older = {
        "uuid": "c2",
        "name": "",
        "created_at": "2023-11-20T19:00:00+00:00",
        "updated_at": "2023-11-20T19:01:00+00:00",
        "account": account,
        "chat_messages": [
            {
                "uuid": "o1",
                "text": "Remind me: the bike lock code is 4417",
                "sender": "human",
                "created_at": "2023-11-20T19:00:00+00:00",
            },
            {
                "uuid": "o2",
                "text": "Noted: 4417.",
                "sender": "assistant",
                "created_at": "2023-11-20T19:00:09+00:00",
            },
        ],
    }
    return [chat, older]
