"""What the offline agent said never reaches a model as history: once a model is configured,
the turns the offline agent answered (the person's command and its reply, tool calls too)
are left out of the model's requests, and kept in the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bothost.host.reload import reload
from bothost.llm.offline import NO_MODEL
from bothost.models import Address, IncomingMessage
from bothost.store.migrations import migrate_17
from tests.fakes.llm import FakeLlm
from tests.helpers import make_host

WHERE = Address("web", "offline-then-model")


def said(request: dict) -> list[tuple[str, str]]:
    return [
        (m["role"], m.get("content") or "") for m in request["messages"] if m["role"] != "system"
    ]


@pytest.fixture
async def fake():
    fake = await FakeLlm().start()
    yield fake
    await fake.stop()


async def chat(host, text: str) -> str:
    message = IncomingMessage(address=WHERE, user="web:me", text=text, is_admin=True)
    return (await host.handle_message(message)).text


async def test_offline_turns_are_not_sent_once_a_model_is_configured(home, fake):
    host = make_host(home, {"tick": {"enabled": False}})
    host.config_file = str(home.parent / "test-config.yaml")  # make_host's file
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)
    try:
        assert await chat(host, "what is the weather?") == NO_MODEL
        assert "events" in await chat(host, 'call events_list {"status": "pending"}')
        edited = yaml.safe_load(Path(host.config_file).read_text())
        edited["llm"] = fake.openai_config()
        Path(host.config_file).write_text(yaml.safe_dump(edited))
        assert (await reload(host)).applied == ["llm"]
        fake.script = [{"text": "Hello, a model here."}, {"text": "Still here."}]
        assert await chat(host, "hello") == "Hello, a model here."
        assert await chat(host, "and now?") == "Still here."
        assert said(fake.requests[0]) == [("user", "hello")]
        assert said(fake.requests[1]) == [
            ("user", "hello"),
            ("assistant", "Hello, a model here."),
            ("user", "and now?"),
        ]
        kept = await host.store.run(
            lambda db: [r["content"] for r in db.query("SELECT content FROM messages")]
        )
        assert "what is the weather?" in kept and NO_MODEL in kept  # nothing was deleted
    finally:
        await host.stop()


async def test_offline_turns_stored_before_the_marker_are_marked(home):
    """core:17 marks the turns an older bothost's offline agent answered, by its replies'
    own words; a model's turn that quotes them is not one."""
    host = make_host(home, {})
    await host.start(serve_http=False, platforms=False, mcp=False, tick=False)

    def write(db) -> None:
        rows = [
            ("t1", "user", "hi"),
            ("t1", "assistant", NO_MODEL),
            ("t2", "user", "help"),
            ("t2", "assistant", "I am the offline agent: no language model is configured, …"),
            ("t3", "user", "why did you say 'No language model is configured'?"),
            ("t3", "assistant", "Because none was."),
        ]
        for turn, role, content in rows:
            db.execute(
                "INSERT INTO messages (session_id, turn_id, role, content, created_at)"
                " VALUES ('web:x', ?, ?, ?, 0)",
                [turn, role, content],
            )
        migrate_17(db)

    try:
        await host.store.run(write)
        rows = await host.store.run(
            lambda db: list(db.query("SELECT turn_id, data FROM messages ORDER BY id"))
        )
    finally:
        await host.stop()
    marked = {}
    for row in rows:
        flag = bool(row["data"] and json.loads(row["data"]).get("offline"))
        assert marked.setdefault(row["turn_id"], flag) == flag  # the whole turn, or none of it
    assert marked == {"t1": True, "t2": True, "t3": False}
