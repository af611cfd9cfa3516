"""Triage rules as people see and change them: the one place the CLI, the chat tools and the
offline agent share.

:func:`listing` is every rule in the order the tick tries them (config ``tick.rules``, stored
rules, the shipped defaults, removed ones marked); :func:`rule_from_pairs` makes a checked
rule out of ``KEY=GLOB`` words, with errors as one line; :func:`decide` says which rule
decides an event and why, exactly as the next tick would (mutes first, then the rules, at
the tick's time zone). Storage is :mod:`bothost.events.triage_store`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bothost.config import Config, TickConfig, TickRule
from bothost.events import ledger, triage_store
from bothost.events.defaults import DEFAULT_RULES
from bothost.events.schedule import Schedule
from bothost.events.triage import CRITICAL, QueuedEvent, Rulebook
from bothost.events.triage_store import StoredRule, TriageRuleError
from bothost.store.conn import Conn

ORDER = "first match wins: config tick.rules, then stored rules, then the shipped defaults"
FALLBACK = "no rule matched: a producer's severity critical is urgent, anything else normal"


@dataclass
class Entry:
    """One rule of the listing: where it is from, what it matches, who added it."""

    ref: str  # tick.rules[0] | #7 | default:NAME
    origin: str  # config | cli | chat | button | default
    rule: TickRule
    added_by: str = ""
    added_at: float | None = None
    removed: bool = False  # a shipped default taken out (or all of them: tick.defaults false)
    why_off: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ref": self.ref,
            "origin": self.origin,
            "match": self.rule.match,
            "unless": self.rule.unless,
            "within": self.rule.within,
            "priority": self.rule.priority,
            "note": self.rule.note,
        }
        if self.ref.startswith("#"):
            data["id"] = int(self.ref[1:])
        if self.added_by or self.added_at:
            data["added_by"], data["added_at"] = self.added_by, self.added_at
        if self.origin == "default":
            data["removed"] = self.removed
            if self.why_off:
                data["why_off"] = self.why_off
        return data


def listing(db: Conn | None, config: TickConfig) -> list[Entry]:
    """Every rule in the order tried; a removed default where it would have been. ``db``
    None: a home with no store yet, where the config's rules and the defaults apply."""
    stored, removals = triage_store.load(db) if db is not None else ([], [])
    gone = {r.name: r for r in removals}
    entries = [Entry(f"tick.rules[{i}]", "config", r) for i, r in enumerate(config.rules)]
    entries += [stored_entry(r) for r in stored]
    for default in DEFAULT_RULES:
        ref = f"default:{default.name}"
        entry = Entry(ref, "default", default.rule)
        if ref in gone:
            entry.removed, entry.why_off = True, f"removed by {gone[ref].added_by}"
            entry.added_by, entry.added_at = gone[ref].added_by, gone[ref].added_at
        elif not config.defaults:
            entry.removed, entry.why_off = True, "tick.defaults is false"
        entries.append(entry)
    return entries


def stored_entry(rule: StoredRule) -> Entry:
    return Entry(rule.ref, rule.origin, rule.rule, rule.added_by, rule.added_at)


def describe(rule: TickRule) -> str:
    """``type=event/new_email payload.labels=IMPORTANT unless payload.labels=X → high``."""
    words = [f"{k}={v}" for k, v in rule.match.items()]
    for unless in rule.unless:
        words.append("unless " + " ".join(f"{k}={v}" for k, v in unless.items()))
    words += [f"within {k}={v}" for k, v in rule.within.items()]
    return f"{' '.join(words) or '(everything)'} → {rule.priority}"


def pairs(words: Iterable[str], what: str) -> dict[str, str]:
    """``KEY=GLOB`` words as a mapping; :class:`TriageRuleError` names a word without ``=``."""
    found: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key.strip():
            raise TriageRuleError(f"{what}: expected KEY=GLOB, got {word!r}")
        found[key.strip()] = value
    return found


def rule_from_pairs(
    match: Iterable[str],
    priority: str,
    note: str = "",
    unless: Iterable[str] = (),
    within: Iterable[str] = (),
) -> TickRule:
    """A checked rule from the command line's words (each ``--unless`` is one mapping)."""
    rule = TickRule(
        match=pairs(match, "--match"),
        priority=priority.strip().lower(),
        unless=[pairs([u], "--unless") for u in unless],
        within=pairs(within, "--within"),
        note=note.strip(),
    )
    triage_store.check(rule, "rule")
    return rule


def rule_from_data(
    match: Mapping[str, Any],
    priority: str,
    note: str = "",
    unless: Any = None,
    within: Mapping[str, Any] | None = None,
) -> TickRule:
    """A checked rule from a tool call's arguments (a model may send one ``unless`` mapping
    or a list of them)."""
    unless_list = [unless] if isinstance(unless, Mapping) else list(unless or [])
    rule = TickRule(
        match={str(k): str(v) for k, v in dict(match or {}).items()},
        priority=str(priority).strip().lower(),
        unless=[{str(k): str(v) for k, v in dict(u).items()} for u in unless_list],
        within={str(k): str(v) for k, v in dict(within or {}).items()},
        note=str(note or "").strip(),
    )
    triage_store.check(rule, "rule")
    return rule


@dataclass
class Decision:
    """What ``triage test`` says: the priority, the deciding rule's ref and the reason."""

    priority: str
    ref: str
    why: str
    rule: TickRule | None = None
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        return f"{self.priority} — {self.ref} ({self.why})"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"priority": self.priority, "rule": self.ref, "why": self.why}
        if self.rule is not None:
            data["match"] = self.rule.match
        return data


def event_from(data: Any) -> QueuedEvent:
    """The ``{"source", "type", "payload"}`` object ``triage test`` takes, as an event."""
    if not isinstance(data, Mapping):
        raise TriageRuleError('expected an object {"source", "type", "payload"}')
    source, type_, payload = data.get("source"), data.get("type"), data.get("payload", {})
    if not isinstance(source, str) or not source:
        raise TriageRuleError('"source": expected the producer\'s name, e.g. "gmail"')
    if not isinstance(type_, str) or not type_:
        raise TriageRuleError('"type": expected the event type, e.g. "event/new_email"')
    if not isinstance(payload, dict):
        raise TriageRuleError('"payload": expected an object')
    return QueuedEvent(0, source, type_, payload, time.time())


def decide(db: Conn | None, config: TickConfig, data: Any, now: float | None = None) -> Decision:
    """Which rule decides the event ``data`` at ``now``, as the next tick would decide it
    (``db`` None: a home with no store yet)."""
    event = event_from(data)
    moment = time.time() if now is None else now
    for mute in ledger.load_mutes(db, moment) if db is not None else []:
        if mute.applies(event):
            return Decision("muted", f"mute #{mute.id}", "a live mute hides it")
    book = (
        triage_store.rulebook(db, config) if db is not None else triage_store.build(config, [], [])
    )
    return decision(book, event, datetime.fromtimestamp(moment, Schedule(config).tz))


def decision(book: Rulebook, event: QueuedEvent, now: datetime) -> Decision:
    priority, ref = book.decide(event.source, event.type, event.payload, now)
    rule = next((r for origin, r in book.rules if origin == ref), None)
    if rule is None:
        critical = event.payload.get("severity") == CRITICAL
        why = "the producer says critical" if critical else "no rule matched"
        return Decision(priority, "fallback", why)
    return Decision(priority, ref, rule.note or describe(rule), rule)


def who_can(config: Config) -> str:
    """The line a person who may not change triage rules reads: who can."""
    named = []
    for platform, section in config.platforms.items():
        for admin in getattr(section, "admins", None) or []:
            admin = str(admin)
            named.append(admin if ":" in admin else f"{platform}:{admin}")
    people = f" ({', '.join(named)})" if named else ""
    return (
        f"Only an admin can change triage rules{people}: someone at the host's terminal or "
        "local web chat, or a platform's admin. Ask one of them, or run `bothost triage add` "
        "where the host runs."
    )
