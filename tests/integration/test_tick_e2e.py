"""End to end: an MCP server pushes ``event/*`` → the host queues it → a tick posts a briefing.

Also the LLM tick: the tick agent, against the fake LLM server, activates an MCP server,
calls one of its tools and reports through ``notify``; our code renders the briefing.
"""

import asyncio
import os
import sys
from pathlib import Path

from bothost.host.wiring import tick_once
from tests.fakes.llm import FakeLlm
from tests.helpers import make_host, run_bothost, until, write_config

ROOT = Path(__file__).resolve().parents[2]
ECHO = str(ROOT / "tests" / "mcp_servers" / "echo_server.py")
CAPS = str(ROOT / "tests" / "agent" / "caps_server.py")


async def test_server_push_is_queued_and_bothost_tick_posts_it(home, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    servers = {
        "echo": {
            "command": sys.executable,
            "args": [ECHO],
            "env": {"ECHO_WATCH": "1"},
            "env_passthrough": ["PYTHONPATH"],
        }
    }
    host = make_host(home, {"mcp": {"servers": servers}, "tick": {"deliver_to": ["console:"]}})
    await host.start(serve_http=False, tick=False)
    try:
        await until(
            lambda: host.store.call(lambda db: db.value("SELECT COUNT(*) FROM events")) > 0,
            timeout=15,
        )
    finally:
        await host.stop()
    import sqlite3

    db = sqlite3.connect(home / "bothost.db")
    row = db.execute("SELECT source, type, status FROM events").fetchone()
    assert row == ("echo", "event/echo_tick", "pending")
    config = write_config(tmp_path / "tick.yaml", {"tick": {"deliver_to": ["console:"]}})
    tick = await asyncio.to_thread(
        run_bothost, "tick", config=config, env={**os.environ, "BOTHOST_HOME": str(home)}
    )
    assert tick.returncode == 0, tick.stderr
    assert "Briefing" in tick.stdout and "1 event" in tick.stdout
    assert db.execute("SELECT status FROM events").fetchone() == ("done",)


async def test_llm_tick_activates_a_server_and_notifies(home, monkeypatch, capsys):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    fake = await FakeLlm().start()
    host = make_host(
        home,
        {
            "llm": fake.openai_config(),
            "mcp": {
                "servers": {
                    "caps": {
                        "command": sys.executable,
                        "args": [CAPS],
                        "env_passthrough": ["PYTHONPATH"],
                    }
                }
            },
            "tick": {"deliver_to": ["console:"]},
        },
    )
    await host.start(serve_http=False, tick=False)
    try:
        first = await host.ingest_event(
            "gmail",
            "event/new_email",
            {"id": "m1", "summary": "Budget review moved to 14:00", "from": "ana@corp.com"},
        )
        second = await host.ingest_event(
            "weather", "event/weather_alert", {"id": "w1", "summary": "Rain from 17:00"}
        )

        def notify(body):
            events = body["messages"][1]["content"]
            assert f'<event id="{first}"' in events and 'trust="untrusted"' in events
            return {
                "tool_calls": [
                    {
                        "name": "notify",
                        "arguments": {
                            "items": [
                                {
                                    "priority": "high",
                                    "summary": "Budget review moved to 14:00",
                                    "why": "it overlaps your 1:1",
                                    "event_ids": [first],
                                    "actions": ["ack"],
                                },
                                {
                                    "priority": "normal",
                                    "summary": "Rain from 17:00",
                                    "event_ids": [second],
                                },
                            ]
                        },
                    }
                ]
            }

        fake.script = [
            {"tool_calls": [{"name": "activate_tools", "arguments": {"groups": ["caps"]}}]},
            {"tool_calls": [{"name": "mcp__caps__echo", "arguments": {"text": "calendar?"}}]},
            notify,
        ]
        result = await tick_once(host, "manual")
    finally:
        await host.stop()
        await fake.stop()
    assert result.status == "ok" and len(result.briefings) == 1
    out = capsys.readouterr().out
    assert "HIGH" in out and "Budget review moved to 14:00" in out and "it overlaps your 1:1" in out
    assert "FYI" in out and "Rain from 17:00" in out
    names = [t["function"]["name"] for t in fake.requests[1]["tools"]]
    assert "mcp__caps__echo" in names and "notify" in names
    assert len(fake.requests) == 3  # the turn ended with the notify round
