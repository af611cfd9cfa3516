"""The "Less like this" and "More like this" buttons: the narrowest triage rule that would
have changed a briefing item, proposed first and stored only on an admin's confirmation.

A proposal is made from the item's first event (the events of one item share source, type
and sender): its match is the most specific *stable* description of that event — for mail
the type and the sender's bare address, for a calendar change the type, organizer and
title, for an SSH alert the type, alias and check, for a weather alert the type, kind and
location, for anything else (webhooks) the source and the type — never an id or a time,
which no later event repeats. Its priority is one step down the ladder urgent → high →
normal → low → drop ("less" from low is drop: not even folded), or one step up. The step is
taken from what the rules decide for the event now, and the proposal is checked against
the rulebook with the new rule in its place (after the other stored rules): a config rule
or an older stored rule that decides first makes the proposal say so instead of offering a
rule that would change nothing.

The confirm button carries only :attr:`TriageProposal.key` (``less:low:42``): the match is
made again from the event when the admin confirms, so a button value stays short and cannot
smuggle in a rule of its own; the priority in the key is checked to be the one step.
"""

from __future__ import annotations

import json
import time
from datetime import datetime

from bothost.api import TriageApplied, TriageProposal
from bothost.config import TickConfig, TickRule
from bothost.events import ledger, triage_store
from bothost.events.defaults import CALENDAR, MAIL, NEW_CALENDAR
from bothost.events.queue import decode_payload
from bothost.events.schedule import Schedule
from bothost.events.triage import (
    PRIORITIES,
    QueuedEvent,
    Rulebook,
    bare_address,
    noun,
    one_line,
)
from bothost.events.triage_rules import describe
from bothost.store.conn import Conn

LESS, MORE = "less", "more"
DIRECTIONS = (LESS, MORE)
ORIGIN = "button"
NEW = "new"  # the proposed rule's place in the trial rulebook
VALUE_CHARS = 120  # a longer matched value is matched by its start: a rule stays readable
# the payload fields that say what an event of a bundled source is about, most stable first
NARROW: dict[str, tuple[str, ...]] = {
    MAIL: ("from",),
    CALENDAR[0]: ("organizer", "title"),
    CALENDAR[1]: ("organizer", "title"),
    NEW_CALENDAR: ("organizer", "title"),
    "event/ssh_alert": ("alias", "check"),
    "event/weather_alert": ("kind", "location"),
}
ADDRESSES = {"from", "organizer"}  # read as the bare address, as grouping reads them
WHAT = {
    MAIL: "mail",
    CALENDAR[0]: "calendar changes",
    CALENDAR[1]: "calendar cancellations",
    NEW_CALENDAR: "new calendar events",
    "event/ssh_alert": "ssh alerts",
    "event/weather_alert": "weather alerts",
}
PHRASES = {
    "from": "from {}",
    "organizer": "by {}",
    "title": "titled “{}”",
    "alias": "on {}",
    "check": "check {}",
    "kind": "{}",
    "location": "for {}",
}


def step(priority: str, direction: str) -> str | None:
    """One step down (``less``) or up (``more``) the ladder; None past either end."""
    at = PRIORITIES.index(priority) + (1 if direction == LESS else -1)
    return PRIORITIES[at] if 0 <= at < len(PRIORITIES) else None


def literal(text: str) -> str:
    """``text`` as a glob that matches only itself, or its start when it is long."""
    escaped = "".join(f"[{c}]" if c in "*?[" else c for c in text[:VALUE_CHARS])
    return escaped + ("*" if len(text) > VALUE_CHARS else "")


def narrowest(event: QueuedEvent) -> tuple[dict[str, str], str]:
    """The match of the narrowest stable rule for ``event``, and how to say it."""
    fields = []
    for name in NARROW.get(event.type, ()):
        value = event.payload.get(name)
        if isinstance(value, str) and value.strip():
            fields.append((name, (bare_address(value) or value) if name in ADDRESSES else value))
    if not fields:  # a webhook's, or a bundled event without its fields: source and type
        return (
            {"source": literal(event.source), "type": literal(event.type)},
            f"{event.source} {noun(event.type)} events",
        )
    match = {"type": literal(event.type)}
    match.update({f"payload.{name}": literal(value) for name, value in fields})
    words = [PHRASES[name].format(one_line(value, VALUE_CHARS)) for name, value in fields]
    what = WHAT.get(event.type, noun(event.type))
    return match, f"{what} {words[0]}" + "".join(f", {w}" for w in words[1:])


def first_event(db: Conn, event_ids: list[int]) -> QueuedEvent | None:
    row = db.execute(
        "SELECT id, source, type, payload, received_at FROM events"
        f" WHERE id IN ({db.ids}) ORDER BY id LIMIT 1",
        (json.dumps(sorted(set(event_ids))),),
    ).fetchone()
    return QueuedEvent(row[0], row[1], row[2], decode_payload(row[3]), row[4]) if row else None


def propose(
    db: Conn, config: TickConfig, event_ids: list[int], direction: str, now: float | None = None
) -> TriageProposal:
    """The rule "Less/More like this" offers for the item of ``event_ids``; a proposal
    without a ``key`` says why there is none."""
    return plan(db, config, event_ids, direction, now)[0]


def plan(
    db: Conn, config: TickConfig, event_ids: list[int], direction: str, now: float | None
) -> tuple[TriageProposal, TickRule | None]:
    """The proposal and the rule it would store (None when there is none to store)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be less or more, got {direction!r}")
    label = "Less like this" if direction == LESS else "More like this"
    event = first_event(db, event_ids)
    if event is None:
        return TriageProposal(direction, f"{label}: the item's events are gone."), None
    moment = time.time() if now is None else now
    for mute in ledger.load_mutes(db, moment):
        if mute.applies(event):
            text = f"{label}: mute #{mute.id} hides these; a rule would not show them."
            return TriageProposal(direction, text), None
    match, what = narrowest(event)
    stored, removals = triage_store.load(db)
    at = datetime.fromtimestamp(moment, Schedule(config).tz)
    book = triage_store.build(config, stored, removals)
    was, _ = book.decide(event.source, event.type, event.payload, at)
    target = step(was, direction)
    if target is None:
        end = "lowest" if direction == LESS else "highest"
        text = f"{label}: {what} is {was} already, the {end}."
        return TriageProposal(direction, text, was=was), None
    rule = TickRule(match=match, priority=target, note=f"{label}: {what}")
    # the rulebook as it would be with the rule stored: after every other stored rule
    trial = Rulebook.build(
        config.rules,
        [(r.ref, r.rule) for r in stored] + [(NEW, rule)],
        defaults=config.defaults,
        removed=[r.name for r in removals],
    )
    got, ref = trial.decide(event.source, event.type, event.payload, at)
    if got != target:
        return TriageProposal(direction, blocked(label, what, was, ref, book), was=was), None
    proposal = TriageProposal(
        direction,
        f"{label}: {what} → {target} (was {was}).",
        key=f"{direction}:{target}:{event.id}",
        match=match,
        priority=target,
        was=was,
    )
    return proposal, rule


def blocked(label: str, what: str, was: str, ref: str, book: Rulebook) -> str:
    """Why no stored rule can change it: a rule tried before any new one decides."""
    rule = next((r for origin, r in book.rules if origin == ref), None)
    said = f" ({describe(rule)})" if rule is not None else ""
    if ref.startswith("tick.rules"):
        fix = "change it in the config file"
    else:
        fix = f"`triage remove {ref.lstrip('#')}` takes it out, or change it"
    return f"{label}: {what} stays {was}: {ref}{said} decides it before a new rule would; {fix}."


def apply(
    db: Conn, config: TickConfig, key: str, by: str, now: float | None = None
) -> TriageApplied:
    """Store the rule the proposal ``key`` names, made again from its event (origin
    ``button``, ``added_by`` ``by``); the same rule twice is stored once."""
    direction, _, rest = key.partition(":")
    priority, _, number = rest.partition(":")
    digits = number.isascii() and number.isdigit()
    if direction not in DIRECTIONS or priority not in PRIORITIES or not digits:
        raise ValueError(f"not a proposal: {key[:80]!r}")
    if int(number) > triage_store.MAX_ID:  # names no event, and no database takes it
        return TriageApplied(False, "Not applied: the item's events are gone.")
    event = first_event(db, [int(number)])
    if event is not None:  # a second click, or Slack's retry of the first
        match = narrowest(event)[0]
        for stored in triage_store.load(db)[0]:
            if stored.rule.match == match and stored.rule.priority == priority:
                return TriageApplied(True, f"Triage rule {stored.ref} says so already.", stored.id)
    found, rule = plan(db, config, [int(number)], direction, now)
    if rule is None or found.key != key:  # gone, or the rules changed since it was shown
        return TriageApplied(False, f"Not applied: {found.text}")
    rule_id = triage_store.add(db, rule, ORIGIN, by)
    return TriageApplied(
        True,
        f"Added triage rule #{rule_id}: {describe(rule)}. It applies from the next tick;"
        f" `bothost triage remove {rule_id}` takes it back.",
        rule_id,
    )
