"""A ``check`` job runs an agent turn as its owner and posts only what the turn notifies.

The model is the fake OpenAI server; the host is real, its scheduler started by
``host.start``; the target is ``console:`` (the host's standard output).
"""

from __future__ import annotations

import time

from bothost.schedules import add_job, get_job
from tests.fakes.llm import FakeLlm
from tests.helpers import make_host, until

ANA = "console:ana"


async def test_a_check_posts_only_when_its_turn_notifies(home, capsys):
    fake = await FakeLlm().start()
    fake.script = [
        {"text": "db-1 is at 40%: nothing to tell."},  # the first check: no notify
        {"tool_calls": [{"name": "notify", "arguments": {"text": "db-2's disk is at 95%"}}]},
    ]
    host = make_host(home, {"llm": fake.openai_config(), "tick": {"enabled": False}})
    await host.start(serve_http=False, mcp=False, platforms=False)
    try:
        soon = time.time() + 1

        def add(text):
            return host.store.call(
                lambda db: add_job(db, ANA, "console:", "check", text, at=soon, tz="UTC")
            )

        quiet, loud = add("is db-1's disk over 90%?"), add("is db-2's disk over 90%?")

        def status(job_id):
            return host.store.call(lambda db: get_job(db, job_id)).status

        await until(lambda: status(quiet.id) == status(loud.id) == "done", timeout=30)
        used = host.store.call(
            lambda db: db.query("SELECT kind, user_key FROM llm_usage ORDER BY id")
        )
    finally:
        await host.stop()
        await fake.stop()
    out = capsys.readouterr().out
    assert "db-2's disk is at 95%" in out
    assert "db-1" not in out  # the turn that did not notify posted nothing
    assert len(fake.requests) == 2  # the notify round was the last of its turn
    first = fake.requests[0]
    assert "is db-1's disk over 90%?" in first["messages"][-1]["content"]
    assert "notify" in [t["function"]["name"] for t in first["tools"]]
    assert used == [{"kind": "turn", "user_key": ANA}] * 2  # the owner's turns, counted
