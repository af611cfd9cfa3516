"""The dashboard's "Less like this" / "More like this": propose over HTTP (nothing stored),
apply (stored as the operator's, origin ``button``), and the next ``tick --dry-run`` uses it."""

from __future__ import annotations

import asyncio
import json
import sys
from asyncio.subprocess import PIPE

from bothost.events import triage_store
from tests.web.conftest import base_url

DEALS = {
    "id": "m1",
    "summary": "50% off everything this weekend",
    "from": "Deals Weekly <news@deals.example>",
    "labels": ["INBOX"],
}


async def dry_run_priorities(home, tmp_path) -> list[str]:
    """``bothost tick --dry-run --events`` run as a program, beside the running host."""
    events = tmp_path / "events.jsonl"
    line = {"source": "gmail", "type": "event/new_email", "payload": {**DEALS, "id": "m2"}}
    events.write_text(json.dumps(line) + "\n")
    config = home.parent / "test-config.yaml"  # the web host's (tests.helpers.make_host)
    args = ["--config", str(config), "tick", "--dry-run", "--events", str(events), "--json"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bothost", *args, stdout=PIPE, stderr=PIPE
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return [e["priority"] for e in json.loads(out)["events"]]


async def test_less_like_this_is_proposed_then_applied_and_changes_the_next_dry_run(
    web_host, client, home, tmp_path
):
    event_id = await web_host.ingest_event("gmail", "event/new_email", DEALS)
    url = base_url(web_host) + "/api/feedback"
    async with client.post(url, json={"action": "less", "event_ids": [event_id]}) as response:
        assert response.status == 200
        proposal = await response.json()
    assert proposal["text"] == "Less like this: mail from news@deals.example → low (was normal)."
    assert proposal["proposal"] == f"less:low:{event_id}"
    assert (proposal["priority"], proposal["was"]) == ("low", "normal")
    assert web_host.store.call(triage_store.load) == ([], [])
    assert await dry_run_priorities(home, tmp_path) == ["normal"]

    body = {"action": "apply", "proposal": proposal["proposal"]}
    async with client.post(url, json=body) as response:
        applied = await response.json()
    assert applied["ok"] and applied["text"].startswith(
        "Added triage rule #1: type=event/new_email"
    )
    async with client.post(url, json=body) as response:  # a double click adds nothing
        assert (await response.json())["rule_id"] == applied["rule_id"]
    [rule] = web_host.store.call(triage_store.load)[0]
    assert (rule.origin, rule.added_by) == ("button", "web:web")
    assert await dry_run_priorities(home, tmp_path) == ["low"]


async def test_more_like_this_says_why_when_no_rule_can_help_and_bad_input_is_refused(
    web_host, client
):
    storm = {"id": "w1", "kind": "wind_gusts", "location": "Zurich", "severity": "critical"}
    event_id = await web_host.ingest_event("weather", "event/weather_alert", storm)
    url = base_url(web_host) + "/api/feedback"
    async with client.post(url, json={"action": "more", "event_ids": [event_id]}) as response:
        found = await response.json()
    assert found["proposal"] == "" and "urgent already" in found["text"]
    for body in (
        {"action": "apply"},
        {"action": "apply", "proposal": ""},
        {"action": "apply", "proposal": "drop everything"},
        {"action": "apply", "proposal": "x" * 101},
        {"action": "less", "event_ids": []},
    ):
        async with client.post(url, json=body) as response:
            assert response.status == 400, body
            assert "error" in await response.json()
    async with client.post(url, json={"action": "apply", "proposal": "less:low:999"}) as response:
        gone = await response.json()
    assert not gone["ok"] and "gone" in gone["text"]
    assert web_host.store.call(triage_store.load) == ([], [])
