"""A tick agent whose model fails (an HTTP error, no answer in time, an answer that is not a
``notify`` call) falls back to the rules as a spent budget does: the rules' priorities, a
footer that says why, and every event in the briefing. A host with the fake OpenAI server."""

from __future__ import annotations

import pytest

from tests.helpers import make_host

FOOTER = "Sorted by tick.rules, not the model: "


def server_error(body):
    return {"status": 500, "retry_after": 0.01, "message": "upstream exploded"}


def unusable_items(body):
    # well-formed for notify's schema, but about events the model was never shown
    items = [{"priority": "urgent", "summary": "Made up", "event_ids": [999]}]
    return {"tool_calls": [{"name": "notify", "arguments": {"items": items}}]}


CASES = {
    # the SDK retries a 5xx: every attempt fails
    "http-500": ([server_error] * 8, {}, "upstream exploded"),
    "no-answer": ([{"hang": True}], {"agent": {"turn_timeout": "1s"}}, "1 s"),
    "prose-not-notify": ([{"text": "Looks like rain, all fine."}], {}, "without calling notify"),
    "unusable-items": ([unusable_items], {}, "none of the items"),
}


@pytest.mark.parametrize("case", CASES)
async def test_a_failing_tick_model_falls_back_to_the_rules(home, fake_llm, case):
    script, extra, reason = CASES[case]
    fake_llm.script = list(script)
    host = make_host(
        home,
        {
            "llm": fake_llm.openai_config("fake-model"),
            "tick": {
                "deliver_to": ["console:"],
                "rules": [{"match": {"payload.summary": "Hail*"}, "priority": "high"}],
            },
            **extra,
        },
    )
    await host.start(serve_http=False, mcp=False, tick=False)
    try:
        await host.ingest_event("weather", "event/weather_alert", {"id": "1", "summary": "Rain"})
        await host.ingest_event("weather", "event/weather_alert", {"id": "2", "summary": "Hail"})
        result = await host.tick_now("manual")
        assert fake_llm.requests, "the model was asked"
        (briefing,) = result.briefings
        lines = briefing.text.splitlines()
        # the rules' triage, not "2 low events": a rule's high, the default normal for alerts
        assert lines[1] == "HIGH" and lines[2].startswith("• Hail")
        assert lines[3] == "FYI" and lines[4].startswith("• Rain")
        assert not any(line.startswith("Low:") for line in lines)
        assert lines[-1] == briefing.footer and briefing.footer.startswith(FOOTER)
        assert reason in briefing.footer
        statuses = host.store.call(
            lambda db: db.execute("SELECT status, briefing_id FROM events").fetchall()
        )
        assert len(statuses) == 2 and all(s == "done" and b for s, b in statuses)
    finally:
        await host.stop()
