"""Resource subscriptions become events: config ``subscribe`` → ``resources/subscribe`` → an
update → ``event/resource_updated`` in the queue → a briefing; and ``log_level`` →
``logging/setLevel``; at 2026-07-28 ``subscriptions/listen`` and a per-request ``logLevel``. The server is tests/mcp/servers/watched_server.py (it records what it
was asked), and server-everything for a real third-party server.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from bothost.events.queue import MAX_PAYLOAD_BYTES
from bothost.events.triage import noun, plural
from bothost.host.wiring import tick_once
from bothost.mcp import subscriptions
from bothost.mcp.subscriptions import PAYLOAD_BYTES, payload
from tests.helpers import make_host, until
from tests.peers import server_everything

WATCHED = str(Path(__file__).with_name("servers") / "watched_server.py")
EVERYTHING_DOC = "demo://resource/static/document/architecture.md"
# the official SDK 2.x, whose changes reach a 2026-07-28 client on subscriptions/listen only
LISTENING = str(Path(__file__).with_name("servers") / "listening_server.py")


def watched(record: Path, **extra) -> dict:
    env = {k: extra.pop(k) for k in ("SUBSCRIBE", "LOGGING") if k in extra}
    return {
        "command": sys.executable,
        "args": [WATCHED],
        "env": {"RECORD": str(record), **env},
        **extra,
    }


def asked(record: Path, method: str) -> list[dict]:
    if not record.exists():
        return []
    lines = [line.split(" ", 1) for line in record.read_text().splitlines()]
    return [json.loads(params) for name, params in lines if name == method]


def subscribed(record: Path) -> list[str]:
    return [p["uri"] for p in asked(record, "resources/subscribe")]


def updates(host) -> list[tuple[str, dict]]:
    sql = "SELECT source, payload FROM events WHERE type = ? ORDER BY id"
    rows = host.store.call(lambda db: db.query(sql, [subscriptions.EVENT_TYPE]))
    return [(row["source"], json.loads(row["payload"])) for row in rows]


def ready(host, *names: str) -> bool:
    states = {s.name: s.state for s in host.mcp.status()}
    return all(states.get(name) == "ready" for name in names)


async def started(home: Path, servers: dict):
    host = make_host(home, {"mcp": {"servers": servers}, "tick": {"deliver_to": ["console:"]}})
    await host.start(serve_http=False, tick=False)
    return host


async def test_an_update_of_a_subscribed_resource_is_queued_and_briefed(home, tmp_path):
    record = tmp_path / "record"
    host = await started(home, {"w": watched(record, subscribe=["note://a"])})
    try:
        await until(lambda: subscribed(record) == ["note://a"], timeout=15)
        await host.mcp.call_tool("w", "change", {"uri": "note://a", "text": "Meeting at 3"})
        await until(lambda: updates(host), timeout=10)
        # an update of a resource not subscribed is no event
        await host.mcp.call_tool("w", "change", {"uri": "note://b", "text": "ignored"})
        await host.mcp.call_tool("w", "change", {"uri": "note://a", "text": "Meeting at 4"})
        await until(lambda: len(updates(host)) == 2, timeout=10)
        result = await tick_once(host, "manual")
        (source, first), (_, second) = updates(host)
    finally:
        await host.stop()
    assert source == "w"
    assert first == {
        "uri": "note://a",
        "title": "Note A",
        "summary": "Updated: Note A",
        "mimeType": "text/plain",
        "text": "Meeting at 3",
    }
    assert second["text"] == "Meeting at 4"
    (briefing,) = result.briefings
    assert "2 resources updated (w)" in briefing.text and "Updated: Note A" in briefing.text


def test_a_briefing_counts_updates_as_resources_updated():
    assert plural(noun(subscriptions.EVENT_TYPE), 2) == "resources updated"
    assert plural(noun("event/new_email"), 2) == "new emails"
    assert plural(noun("event/rss_feed"), 2) == "rss feeds"


async def test_a_glob_subscribes_what_it_matches_and_follows_list_changed(home, tmp_path):
    record = tmp_path / "record"
    host = await started(home, {"w": watched(record, subscribe=["note://*"])})
    try:
        await until(lambda: subscribed(record) == ["note://a", "note://b"], timeout=15)
        await host.mcp.call_tool("w", "add", {"uri": "note://c"})
        await until(lambda: "note://c" in subscribed(record), timeout=10)
        await host.mcp.call_tool("w", "change", {"uri": "note://c", "text": "C changed"})
        await until(lambda: updates(host), timeout=10)
        found = updates(host)
    finally:
        await host.stop()
    assert "img://pixel" not in subscribed(record)
    assert [p["summary"] for _, p in found] == ["Updated: c"]  # its name: it has no title


async def test_a_server_without_subscribe_gets_none_and_one_warning(home, tmp_path, caplog):
    record = tmp_path / "record"
    servers = {"w": watched(record, SUBSCRIBE="0", subscribe=["note://a"], log_level="error")}
    with caplog.at_level(logging.WARNING, logger="bothost.mcp"):
        host = await started(home, servers)
        try:
            await until(lambda: ready(host, "w"), timeout=15)
            await until(lambda: "subscribe is not used" in caplog.text, timeout=10)
            await host.mcp.call_tool("w", "change", {"uri": "note://a", "text": "x"})
            found = updates(host)
        finally:
            await host.stop()
    warned = [r.getMessage() for r in caplog.records if "subscribe is not used" in r.getMessage()]
    assert warned == [
        "MCP server w does not support resource subscriptions (its capabilities have no "
        "resources.subscribe); mcp.servers.w.subscribe is not used"
    ]
    assert subscribed(record) == [] and found == []
    # the level was asked for: the server declares logging
    assert asked(record, "logging/setLevel") == [{"level": "error"}]


async def test_log_level_is_sent_after_initialize_only_when_configured(home, tmp_path, caplog):
    record, plain = tmp_path / "record", tmp_path / "plain"
    servers = {
        "w": watched(record, log_level="warning"),
        "quiet": watched(plain),
        "mute": watched(tmp_path / "mute", LOGGING="0", log_level="debug"),
    }
    with caplog.at_level(logging.WARNING, logger="bothost.mcp"):
        host = await started(home, servers)
        try:
            await until(lambda: ready(host, "w", "quiet", "mute"), timeout=15)
        finally:
            await host.stop()
    assert asked(record, "logging/setLevel") == [{"level": "warning"}]
    assert asked(plain, "logging/setLevel") == []
    assert (
        "MCP server mute does not declare the logging capability; mcp.servers.mute.log_level "
        "is not used" in caplog.text
    )


async def test_subscriptions_are_made_again_after_a_restart(home, tmp_path):
    record = tmp_path / "record"
    host = await started(home, {"w": watched(record, subscribe=["note://a"])})
    try:
        await until(lambda: subscribed(record) == ["note://a"], timeout=15)
        await host.mcp.call_tool("w", "exit", {})
        await until(lambda: subscribed(record) == ["note://a", "note://a"], timeout=20)
        await until(lambda: ready(host, "w"), timeout=10)
        await host.mcp.call_tool("w", "change", {"uri": "note://a", "text": "after restart"})
        await until(lambda: updates(host), timeout=10)
        found = updates(host)
    finally:
        await host.stop()
    assert found[0][1]["text"] == "after restart"


async def test_at_2026_07_28_updates_and_list_changes_arrive_on_the_listen_stream(home):
    server = {"command": sys.executable, "args": [LISTENING], "subscribe": ["note://a"]}
    host = await started(home, {"l": server})
    try:
        await until(lambda: ready(host, "l"), timeout=15)
        session = host.mcp.runners["l"].session
        assert session.protocol_version == "2026-07-28"
        listening = session.listening
        await until(lambda: (listening.honored or {}).get("resourceSubscriptions"), timeout=10)
        await host.mcp.call_tool("l", "change", {"uri": "note://a", "text": "Meeting at 3"})
        await host.mcp.call_tool("l", "change", {"uri": "note://b", "text": "not asked for"})
        await until(lambda: updates(host), timeout=10)
        # a tool added at run time is seen: tools/list_changed came on the same stream
        await host.mcp.call_tool("l", "grow", {})
        await until(lambda: "grown" in {t["name"] for t in host.mcp.runners["l"].tools()})
        found = updates(host)
    finally:
        await host.stop()
    assert listening.honored == {
        "toolsListChanged": True,
        "resourcesListChanged": True,
        "resourceSubscriptions": ["note://a"],
    }
    assert found == [
        (
            "l",
            {
                "uri": "note://a",
                "title": "Note A",
                "summary": "Updated: Note A",
                "mimeType": "text/plain",
                "text": "Meeting at 3",
            },
        )
    ]


@pytest.mark.parametrize("level", ["info", None])
async def test_at_2026_07_28_log_level_rides_in_each_request(home, level):
    server = {"command": sys.executable, "args": [LISTENING], "log_level": level}
    host = await started(home, {"l": server})
    try:
        await until(lambda: ready(host, "l"), timeout=15)
        assert host.mcp.runners["l"].session.protocol_version == "2026-07-28"
        assert (await host.mcp.call_tool("l", "chatter", {})).text == "said"
        # a barrier: what the server sent before its answer to this is read
        await host.mcp.runners["l"].session.ping()
        written = (home / "logs" / "mcp" / "l.log").read_text()
    finally:
        await host.stop()
    # without a level the server must send none at this revision (there is no setLevel)
    # (the SDK's stderr quotes the source line too: only notifications/message count here)
    assert ("[message] info line from the server" in written) == (level == "info")
    assert "[message] debug line from the server" not in written


def test_a_payload_keeps_text_within_the_cap_and_notes_binary_parts():
    assert PAYLOAD_BYTES < MAX_PAYLOAD_BYTES  # what the queue would refuse whole
    text = '"é\\' * 200_000  # escapes and multi-byte characters: JSON larger than the text
    found = payload(
        "file:///big",
        "",
        {
            "contents": [
                {"uri": "file:///big", "mimeType": "text/plain", "text": text},
                {"uri": "file:///big.png", "mimeType": "image/png", "blob": "iVBORw0K" * 4},
            ]
        },
    )
    size = len(json.dumps(found, ensure_ascii=False).encode())
    assert PAYLOAD_BYTES - 100 < size <= PAYLOAD_BYTES
    assert found["text"] == text[: len(found["text"])]
    assert found["cut"] == len(text) - len(found["text"]) > 0
    assert found["summary"] == "Updated: file:///big"
    assert found["binary"] == [{"uri": "file:///big.png", "mimeType": "image/png", "bytes": 24}]


@pytest.mark.timeout(120)
async def test_server_everything_updates_reach_a_briefing(home):
    command = server_everything()
    servers = {"everything": {"command": command[0], "subscribe": [EVERYTHING_DOC]}}
    host = await started(home, servers)
    try:
        await until(lambda: ready(host, "everything"), timeout=60)
        await until(lambda: host.mcp.runners["everything"].subscriptions.subscribed, timeout=15)
        # the server sends its simulated updates once this tool is called, then every 5 s
        called = await host.mcp.call_tool("everything", "toggle-subscriber-updates", {})
        assert not called.is_error, called.text
        await until(lambda: updates(host), timeout=30)
        result = await tick_once(host, "manual")
        source, found = updates(host)[0]
    finally:
        await host.stop()
    assert source == "everything" and found["uri"] == EVERYTHING_DOC
    assert found["summary"] == "Updated: architecture.md" and found["text"].strip()
    assert "Updated: architecture.md" in result.briefings[0].text
