"""``bothost tick`` killed at each step of the delivery path, for each kind of target.

A real ``bothost tick`` subprocess is SIGKILLed by its own fault hook
(``BOTHOST_FAULT_KILL_AT``, see :mod:`bothost.events.faults`) at one named step; the lease
and the claims it held are then expired (as the clock would, ``tick.lease`` later) and a
second ``bothost tick`` runs. Every event must end ``done`` in one delivered briefing that
the target really shows — stdout for ``console:``, the web briefings store for ``web:``, a
receiver on 127.0.0.1 for ``webhook:``, the fake Slack Web API for ``slack:`` — and a second
copy may appear only where docs/events.md says it can: when the kill fell between the
target accepting the briefing and our recording that (step ``sent``).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bothost.events.faults import KILL_ENV, STEPS
from bothost.events.queue import EventQueue
from bothost.models import Event
from tests.helpers import bothost_process, ingest_all, make_host, serve_app, write_config
from tests.slack.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack

# not passed on to the ticks the test starts: the kill step is the test's to set, and a
# developer's own config file must not change the host under test
SCRUBBED = (KILL_ENV, "BOTHOST_CONFIG")

SECRET = "whsec_" + "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
CHANNEL = "C0BRIEFS"
TARGETS = {
    "console": "console:",
    "web": "web:briefings",
    "webhook": "webhook:ops",
    "slack": f"slack:{CHANNEL}",
}
RUN_TIMEOUT = 60.0  # seconds for one `bothost tick`; it takes about one on an idle machine
DUPLICATE_AT = {"sent"}  # docs/events.md: only between the target accepting and our record


class Receiver:
    """A webhook receiver on 127.0.0.1 that records every request it accepts."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (webhook-id, body)
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hook", self.hook)
        self.runner, base = await serve_app(app, access_log=None)
        self.url = f"{base}/hook"

    async def hook(self, request: web.Request) -> web.Response:
        self.requests.append((request.headers["webhook-id"], await request.json()))
        return web.json_response({"ok": True})

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


@pytest.fixture
async def peers():
    receiver, slack = Receiver(), FakeSlack()
    await receiver.start()
    await slack.start()
    yield receiver, slack
    await receiver.stop()
    await slack.stop()


def config_for(kind: str, receiver: Receiver, slack: FakeSlack) -> dict[str, Any]:
    return {
        "tick": {"deliver_to": [TARGETS[kind]]},
        "platforms": {
            "webhook": {"targets": {"ops": {"url": receiver.url, "secret": SECRET}}},
            "slack": {
                "enabled": kind == "slack",
                "mode": "socket",
                "bot_token": BOT_TOKEN,
                "app_token": APP_TOKEN,
                "api_url": slack.api_url,
            },
        },
    }


async def seed(home: Path, config: dict[str, Any], count: int) -> None:
    host = make_host(home, config)
    queue = EventQueue(host.store, host.config.tick)
    try:
        await ingest_all(
            queue,
            [
                Event(
                    "ssh",
                    f"event/alert_{n % 2}",
                    {"id": f"a{n}", "summary": f"alert {n}", "host": f"db-{n}"},
                )
                for n in range(count)
            ],
        )
    finally:
        await queue.close()
        host.store.close()


async def bothost_tick(home: Path, config_file: Path, kill_at: str | None) -> tuple[int, str, str]:
    kill = {KILL_ENV: kill_at} if kill_at else {}
    process = await bothost_process(home, config_file, "tick", without=SCRUBBED, **kill)
    try:
        out, err = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode in (0, -signal.SIGKILL), err.decode()
    return process.returncode, out.decode(), err.decode()


def expire_lease_and_claims(db: sqlite3.Connection) -> None:
    """What ``tick.lease`` seconds of waiting would do to a dead tick's rows."""
    with db:
        db.execute("UPDATE locks SET expires_at = 0")
        db.execute("UPDATE events SET claimed_until = 0 WHERE status = 'claimed'")


def seen_on_target(
    kind: str,
    briefing_id: int,
    text: str,
    stdout: str,
    db: sqlite3.Connection,
    receiver: Receiver,
    slack: FakeSlack,
) -> int:
    """How many copies of the briefing the target shows."""
    if kind == "console":
        return stdout.count(text)
    if kind == "web":
        rows = db.execute("SELECT briefing_id, text FROM web_briefings").fetchall()
        assert all(row == (briefing_id, text) for row in rows), rows
        return len(rows)
    if kind == "webhook":
        assert all(
            body["id"] == briefing_id and msg_id == f"brf_{briefing_id}"
            for msg_id, body in receiver.requests
        ), receiver.requests
        return len(receiver.requests)
    posts = slack.messages.get(CHANNEL, [])
    title = text.splitlines()[0]
    assert all(title in json.dumps(post["blocks"], ensure_ascii=False) for post in posts), posts
    return len(posts)


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("kind", list(TARGETS))
async def test_a_tick_killed_at_any_step_loses_no_event(home, tmp_path, peers, kind, step):
    receiver, slack = peers
    config = config_for(kind, receiver, slack)
    config_file = write_config(tmp_path / "bothost.yaml", config)
    await seed(home, config, count=6)

    code, first_out, _ = await bothost_tick(home, config_file, kill_at=step)
    assert code == -signal.SIGKILL, f"the tick never reached step {step!r}"
    db = sqlite3.connect(home / "bothost.db")
    try:
        expire_lease_and_claims(db)
        code, second_out, err = await bothost_tick(home, config_file, kill_at=None)
        assert code == 0 and "Traceback" not in err and "Unclosed" not in err, err

        events = db.execute("SELECT status, briefing_id FROM events").fetchall()
        assert len(events) == 6
        assert {status for status, _ in events} == {"done"}, events
        briefings = db.execute("SELECT id, status, text FROM briefings").fetchall()
        assert len(briefings) == 1, "a second, different briefing for the same events"
        briefing_id, status, text = briefings[0]
        assert status == "delivered" and {b for _, b in events} == {briefing_id}
        deliveries = db.execute("SELECT target, status FROM deliveries").fetchall()
        assert deliveries == [(TARGETS[kind], "delivered")]
        ticks = db.execute("SELECT status, briefings FROM ticks ORDER BY id").fetchall()
        # the dead tick is abandoned (never left "running"), counting what it recorded
        assert ticks[-1][0] == "ok" and {status for status, _ in ticks[:-1]} <= {"abandoned", "ok"}
        assert sum(count for status, count in ticks if status == "abandoned") == (
            1 if step in STEPS[STEPS.index("recorded") :] and step != "ended" else 0
        ), ticks
        copies = seen_on_target(
            kind, briefing_id, text, first_out + second_out, db, receiver, slack
        )
    finally:
        db.close()
    assert copies == (2 if step in DUPLICATE_AT else 1)


async def test_a_tick_killed_during_its_model_call_loses_no_event_and_its_row_says_so(
    home, tmp_path
):
    """The kill falls while the tick agent's model is thinking (the fake never answers):
    nothing was recorded yet, so the next tick briefs every event once, and the ``ticks``
    table shows the dead tick as abandoned, not running, beside the one that delivered."""
    from tests.fakes.llm import FakeLlm
    from tests.helpers import until

    fake = await FakeLlm([{"hang": True}, {"text": "prose, not a notify call"}]).start()
    config = {
        "llm": {
            "provider": "openai",
            "model": "fake-model",
            "base_url": fake.openai_url,
            "api_key": "test-key",
        },
        "tick": {"deliver_to": ["console:"]},
    }
    config_file = write_config(tmp_path / "bothost.yaml", config)
    await seed(home, config, count=6)
    process = await bothost_process(home, config_file, "tick", without=SCRUBBED)
    try:
        await until(lambda: len(fake.requests) == 1, timeout=RUN_TIMEOUT)
    finally:
        process.kill()
        await process.communicate()
    db = sqlite3.connect(home / "bothost.db")
    try:
        assert db.execute("SELECT count(*) FROM briefings").fetchone()[0] == 0
        expire_lease_and_claims(db)
        code, out, err = await bothost_tick(home, config_file, kill_at=None)
        await fake.stop()
        assert code == 0 and "Traceback" not in err, err
        events = db.execute("SELECT status, briefing_id FROM events").fetchall()
        briefings = db.execute("SELECT id, status, text FROM briefings").fetchall()
        ticks = db.execute("SELECT status, briefings FROM ticks ORDER BY id").fetchall()
    finally:
        db.close()
    assert len(briefings) == 1 and briefings[0][1] == "delivered"
    assert events == [("done", briefings[0][0])] * 6
    assert out.count(briefings[0][2]) == 1
    assert ticks == [("abandoned", 0), ("ok", 1)], ticks
