"""The "Less like this" / "More like this": the narrowest rule that changes the item, checked
against the rulebook, stored once on confirmation with origin ``button``."""

from __future__ import annotations

import pytest

from bothost.config import TickRule
from bothost.events import feedback, triage_proposal, triage_rules, triage_store
from bothost.models import Event
from tests.conftest import both_backends
from tests.helpers import ingest_all

pytestmark = both_backends

DEALS = {
    "id": "m1",
    "summary": "50% off everything this weekend",
    "from": "Deals Weekly <news@deals.example>",
    "labels": ["INBOX"],
}
BOARD = {
    "id": "c1",
    "summary": "Board meeting moved",
    "organizer": "ben@corp.example",
    "title": "Board meeting",
    "start": "2030-01-01T09:00:00Z",
}
DISK = {"id": "s1", "alias": "db-1", "check": "disk", "state": "alert", "severity": "warning"}
GUSTS = {"id": "w1", "kind": "wind_gusts", "location": "Zurich", "severity": "info"}


async def one(queue, source, type_, payload) -> int:
    [event_id] = await ingest_all(queue, [Event(source, type_, payload)])
    return event_id


def propose(store, config, ids, direction):
    return store.call(lambda db: triage_proposal.propose(db, config, ids, direction))


def decided(store, config, source, type_, payload) -> str:
    data = {"source": source, "type": type_, "payload": payload}
    return store.call(lambda db: triage_rules.decide(db, config, data)).priority


@pytest.mark.parametrize(
    ("source", "type_", "payload", "match", "said"),
    [
        (
            "gmail",
            "event/new_email",
            DEALS,
            {"type": "event/new_email", "payload.from": "news@deals.example"},
            "mail from news@deals.example → low (was normal)",
        ),
        (
            "gcal",
            "event/calendar_event_changed",
            BOARD,
            {
                "type": "event/calendar_event_changed",
                "payload.organizer": "ben@corp.example",
                "payload.title": "Board meeting",
            },
            "calendar changes by ben@corp.example, titled “Board meeting” → low (was normal)",
        ),
        (
            "ssh",
            "event/ssh_alert",
            DISK,
            {"type": "event/ssh_alert", "payload.alias": "db-1", "payload.check": "disk"},
            "ssh alerts on db-1, check disk → normal (was high)",
        ),
        (
            "weather",
            "event/weather_alert",
            GUSTS,
            {
                "type": "event/weather_alert",
                "payload.kind": "wind_gusts",
                "payload.location": "Zurich",
            },
            "weather alerts wind_gusts, for Zurich → low (was normal)",
        ),
        (
            "backup",
            "webhook",
            {"id": "b1", "summary": "nightly backup ok"},
            {"source": "backup", "type": "webhook"},
            "backup webhook events → low (was normal)",
        ),
    ],
)
async def test_less_like_this_proposes_the_narrowest_rule_per_source(
    queue, store, config, source, type_, payload, match, said
):
    event_id = await one(queue, source, type_, payload)
    found = propose(store, config, [event_id], "less")
    assert found.text == f"Less like this: {said}."
    assert found.match == match and found.key == f"less:{found.priority}:{event_id}"
    assert decided(store, config, source, type_, payload) == found.was
    assert store.call(triage_store.load) == ([], [])  # proposing stores nothing

    applied = store.call(lambda db: triage_proposal.apply(db, config, found.key, "web:web"))
    assert applied.applied and applied.text.startswith(f"Added triage rule #{applied.rule_id}")
    assert decided(store, config, source, type_, payload) == found.priority
    [rule] = store.call(triage_store.load)[0]
    assert (rule.origin, rule.added_by, rule.rule.match) == ("button", "web:web", match)


async def test_a_glob_in_a_value_is_matched_literally_and_a_long_one_by_its_start(
    queue, store, config
):
    event_id = await one(queue, "hooks", "ci*[x]?", {"id": "h"})
    found = propose(store, config, [event_id], "more")
    assert found.match == {"source": "hooks", "type": "ci[*][[]x][?]"}
    assert found.priority == "high"
    title = "Weekly sync " + "x" * 200
    event_id = await one(
        queue, "gcal", "event/new_calendar_event", {"id": "n", "organizer": "a@b.c", "title": title}
    )
    found = propose(store, config, [event_id], "more")
    assert found.key, found.text
    assert found.match["payload.title"] == title[: triage_proposal.VALUE_CHARS] + "*"
    assert store.call(lambda db: triage_proposal.apply(db, config, found.key, "web:web")).applied


async def test_the_ladder_ends_and_less_from_low_is_drop(queue, store, config):
    assert triage_proposal.step("low", "less") == "drop"
    assert triage_proposal.step("urgent", "more") is None
    assert triage_proposal.step("drop", "less") is None
    storm = await one(queue, "weather", "event/weather_alert", {**GUSTS, "severity": "critical"})
    found = propose(store, config, [storm], "more")
    assert found.key == "" and found.text.endswith("is urgent already, the highest.")


async def test_a_rule_tried_first_is_named_instead_of_a_rule_that_changes_nothing(
    queue, store, config
):
    event_id = await one(queue, "gmail", "event/new_email", DEALS)
    older = TickRule({"payload.from": "*@deals.example"}, "high", note="deals matter")
    store.call(lambda db: triage_store.add(db, older, "cli", "cli:root"))
    found = propose(store, config, [event_id], "more")  # #1 decides before a new rule would
    assert found.key == "" and "#1 (payload.from=*@deals.example → high)" in found.text
    assert "`triage remove 1`" in found.text
    config.rules = [TickRule({"source": "gmail"}, "normal")]
    found = propose(store, config, [event_id], "less")
    assert found.key == "" and "tick.rules[0]" in found.text and "config file" in found.text


async def test_confirming_twice_stores_one_rule_and_a_stale_key_stores_none(queue, store, config):
    event_id = await one(queue, "gmail", "event/new_email", DEALS)
    found = propose(store, config, [event_id], "less")
    first = store.call(lambda db: triage_proposal.apply(db, config, found.key, "slack:UADMIN"))
    again = store.call(lambda db: triage_proposal.apply(db, config, found.key, "slack:UADMIN"))
    assert again.applied and again.rule_id == first.rule_id
    assert len(store.call(triage_store.load)[0]) == 1
    # shown when the rules said normal; they say low now, so "low" is no step from there
    stale = store.call(lambda db: triage_proposal.apply(db, config, f"more:high:{event_id}", "x"))
    assert not stale.applied and stale.text.startswith("Not applied:")
    with pytest.raises(ValueError, match="not a proposal"):
        store.call(lambda db: triage_proposal.apply(db, config, "less:low:x", "x"))
    for key in ("less:low:999", "less:low:" + "9" * 80):
        gone = store.call(lambda db, key=key: triage_proposal.apply(db, config, key, "x"))
        assert not gone.applied and "gone" in gone.text
    with pytest.raises(ValueError, match="not a proposal"):
        store.call(lambda db: triage_proposal.apply(db, config, "less:low:²", "x"))


async def test_a_muted_item_gets_no_rule(queue, store, config):
    event_id = await one(queue, "gmail", "event/new_email", DEALS)
    await feedback.mute(store, "gmail", None, {"payload.from": "*@deals.example"})
    found = propose(store, config, [event_id], "more")
    assert found.key == "" and "mute #1 hides these" in found.text
