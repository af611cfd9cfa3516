"""The tick agent's prompt has a total budget: many long events are cut harder, or split
into batches, and every event still reaches the model with its subject."""

from __future__ import annotations

import re
from datetime import UTC

from bothost.events import llm_triage
from bothost.events.llm_triage import PROMPT_CHARS, LlmTriage, render_events
from bothost.events.triage import QueuedEvent


def event(n: int, body: str, **payload: object) -> QueuedEvent:
    fields = {"subject": f"subject-{n:03d}", "from": f"s{n}@corp.example", "body": body}
    return QueuedEvent(n, "gmail", "event/new_email", {**fields, **payload}, 1_800_000_000.0)


class Agent:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def __call__(self, system_prompt: str, user_content: str):
        self.calls.append(user_content)
        ids = [int(i) for i in re.findall(r'<event id="(\d+)"', user_content)]
        return [{"priority": "high", "summary": f"batch of {len(ids)}", "event_ids": ids}]


async def test_two_hundred_long_events_stay_within_the_budget_and_all_reach_the_model():
    body = "<b>quarterly numbers</b> " * 400  # ~10,000 characters, more once escaped
    events = [event(n, body) for n in range(1, 201)]
    agent = Agent()
    items, priorities = await LlmTriage(agent, prompt="triage")(events, UTC)
    assert agent.calls, "the model was asked"
    assert all(len(text) <= PROMPT_CHARS for text in agent.calls)
    seen = [int(i) for text in agent.calls for i in re.findall(r'<event id="(\d+)"', text)]
    assert sorted(seen) == list(range(1, 201))  # each event once, none dropped
    joined = "\n".join(agent.calls)
    for n in range(1, 201):  # the long body is cut, not the subject after it
        assert f"subject-{n:03d}" in joined and f"s{n}@corp.example" in joined
    assert joined.count('trust="untrusted"') == 200
    for text in agent.calls:  # the payloads stay inside their elements, still escaped
        assert text.count("<event ") == text.count("</event>")
        assert "<b>" not in text
    assert set(priorities.values()) == {"high"} and len(priorities) == 200
    assert sum(int(i.summary.split()[-1]) for i in items) == 200


def test_a_few_events_keep_their_payloads_up_to_the_per_event_limit():
    body = "x" * (llm_triage.PAYLOAD_CHARS - 200)
    text = render_events([event(n, body) for n in range(1, 4)], UTC)
    assert text.count(body) == 3


def test_a_payload_of_many_fields_is_cut_whole_with_a_note():
    many = {f"k{i:04d}": i for i in range(3000)}
    text = render_events([event(1, "short", **many)], UTC)
    assert len(text) <= PROMPT_CHARS and "chars cut]" in text
    assert text.count("<event ") == 1 and text.endswith("</event>")
