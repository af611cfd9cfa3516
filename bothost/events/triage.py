"""Offline triage: ``tick.rules`` and mutes give each event a priority, similar ones group.

Rules are tried in config order and the first whose every ``match`` key fits wins; keys are
``source``, ``type`` and ``payload.<field>`` (dots reach into nested objects), values are
fnmatch globs compared case-insensitively (mail addresses and host names are). An event no
rule matches is ``normal`` — unless its producer marked it ``severity: critical``, which
makes it ``urgent`` (a producer's own alarm should not wait for the user to write a rule).
A live mute is applied like a ``drop`` rule but counted, so the briefing can say what it
hid. Events of one priority, source, type and sender/host are one item: "3 new emails from
ana@corp.com".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from email.utils import parseaddr
from functools import lru_cache
from typing import Any

from bothost.config import TickRule
from bothost.config.schema import parse_duration
from bothost.events.defaults import DEFAULT_RULES
from bothost.models import BriefingItem
from bothost.rules.fields import MISSING, fits, lookup

PRIORITIES = ("urgent", "high", "normal", "low", "drop")
SHOWN = ("urgent", "high", "normal")  # priorities that get items; low is a counted line
MUTED = "muted"
CRITICAL = "critical"  # the payload severity that makes an event urgent when no rule matches
# payload fields that say who or what a group of events is about, and how to say it
GROUP_FIELDS = (
    ("from", "from"),
    ("sender", "from"),
    ("organizer", "from"),
    ("host", "on"),
    ("alias", "on"),
    ("calendar", "in"),
    ("location", "for"),
)
ADDRESS_FIELDS = {"from", "sender", "organizer"}
SUMMARY_FIELDS = ("summary", "subject", "title", "message", "text")
SUMMARY_CHARS = 300  # one readable line in a chat message
MUTED_GROUPS_SHOWN = 3


class MatchError(ValueError):
    """A rule or mute ``match`` key that can never match."""


@dataclass
class QueuedEvent:
    """An event as the tick reads it back from the ``events`` table."""

    id: int
    source: str
    type: str
    payload: dict[str, Any]
    received_at: float
    attempts: int = 0


@dataclass
class Mute:
    """A ``mutes`` row: globs on source and type plus ``payload.<field>`` globs."""

    id: int
    source: str | None
    type: str | None
    match: dict[str, str]
    until: float | None = None

    def applies(self, event: QueuedEvent) -> bool:
        match = dict(self.match)
        if self.source:
            match["source"] = self.source
        if self.type:
            match["type"] = self.type
        return bool(match) and matches(match, event.source, event.type, event.payload)


@dataclass
class Triage:
    """What a tick decided: a priority per event and the grouped items to show."""

    priorities: dict[int, str] = field(default_factory=dict)
    items: list[BriefingItem] = field(default_factory=list)
    muted_summary: str = ""
    note: str = ""  # a line for the briefing's footer (why the rules decided, not the model)
    low_summary: str = ""

    def ids(self, *priorities: str) -> list[int]:
        return [i for i, p in self.priorities.items() if p in priorities]


def check_match(match: Mapping[str, Any], where: str) -> None:
    """Refuse keys other than ``source``, ``type`` and ``payload.<field>``."""
    for key in match:
        if key not in ("source", "type") and not (key.startswith("payload.") and len(key) > 8):
            raise MatchError(
                f"{where}: unknown match key {key!r}; expected source, type or "
                f"payload.<field> (e.g. payload.{key})"
            )


def check_rule(rule: TickRule, where: str) -> None:
    """A rule's ``match``, ``unless`` and ``within`` can each match something."""
    check_match(rule.match, f"{where}.match")
    for i, unless in enumerate(rule.unless):
        check_match(unless, f"{where}.unless[{i}]")
    check_match(rule.within, f"{where}.within")
    for key, text in rule.within.items():
        try:
            window_seconds(text)
        except ValueError as exc:
            raise MatchError(f"{where}.within.{key}: expected {exc}, got {text!r}") from None


def check_rules(rules: Iterable[TickRule]) -> None:
    for i, rule in enumerate(rules):
        check_rule(rule, f"tick.rules[{i}]")


@lru_cache(maxsize=64)
def window_seconds(text: str) -> float:
    return parse_duration(text)


def applies(
    rule: TickRule, source: str, type_: str, payload: Mapping[str, Any], now: datetime | None
) -> bool:
    """Whether ``rule`` decides this event: its match fits, no ``unless`` fits, and each
    ``within`` field is a time between ``now`` and ``now`` plus the window. Without a
    ``now`` (an event judged at ingest) a ``within`` rule does not apply."""
    if not matches(rule.match, source, type_, payload):
        return False
    if any(matches(u, source, type_, payload) for u in rule.unless if u):
        return False
    for key, text in rule.within.items():
        if now is None or now.tzinfo is None:
            return False
        moment = occurred(field_value(source, type_, payload, key), now.tzinfo)
        if moment is None:
            return False
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=now.tzinfo)
        if not 0 <= (moment - now).total_seconds() <= window_seconds(text):
            return False
    return True


def field_value(source: str, type_: str, payload: Mapping[str, Any], key: str) -> Any:
    """The value a rule's key names (``source``, ``type``, ``payload.a.b``), or None."""
    if key == "source":
        return source
    if key == "type":
        return type_
    if not key.startswith("payload."):
        return None
    value = lookup(payload, key.split(".")[1:])
    return None if value is MISSING else value


def matches(match: Mapping[str, str], source: str, type_: str, payload: Mapping[str, Any]) -> bool:
    """Whether every ``key: glob`` of ``match`` fits the event (globs fold case; see
    :mod:`bothost.rules.fields`, the matcher permission rules use too)."""
    for key, pattern in match.items():
        value = field_value(source, type_, payload, key)
        if value is None:
            return False
        if not fits(str(pattern), candidates(value), fold_case=True):
            return False
    return True


def candidates(value: Any) -> list[str]:
    """The texts a glob is tried on: the value, a mail header's bare address, list items."""
    if isinstance(value, list):
        return [json.dumps(value)] + [t for item in value for t in candidates(item)]
    if not isinstance(value, str):
        return [json.dumps(value)]
    address = bare_address(value)
    return [value, address] if address and address != value else [value]


# Texts up to this long have their parse kept: a header with a name and an address fits, and
# a long summary (a payload field may be 256 KiB) is never pinned in the cache.
ADDRESS_CACHED_CHARS = 320
ADDRESS_CACHE = 4096  # distinct senders, sources and types kept; a tick repeats a few of them


def bare_address(value: str) -> str:
    """The bare address of a mail header (``Ana <ana@corp.com>`` → ``ana@corp.com``), or ''.

    The rules try it on every event's matched fields and grouping on every sender: parsing
    was most of an offline tick's time (10,000 events, 20,000 parses of a few texts)."""
    if len(value) > ADDRESS_CACHED_CHARS:
        return parseaddr(value)[1]
    return _cached_address(value)


@lru_cache(maxsize=ADDRESS_CACHE)
def _cached_address(value: str) -> str:
    return parseaddr(value)[1]


def rule_priority(
    source: str, type_: str, payload: Mapping[str, Any], rules: Iterable[TickRule]
) -> str:
    """The priority of the first matching rule, else the default for unmatched events."""
    for rule in rules:
        if applies(rule, source, type_, payload, None):
            return rule.priority
    # a dict first, as every queued event's payload is: the Mapping ABC's own check cost
    # ~1 µs per event against ~0.4 µs with dict tried first (timeit, loaded machine)
    if isinstance(payload, (dict, Mapping)) and payload.get("severity") == CRITICAL:
        return "urgent"
    return "normal"


@dataclass(frozen=True)
class Rulebook:
    """Every triage rule in the order they are tried, each with where it came from: config
    ``tick.rules``, then rules stored in the database, then the shipped defaults (less the
    ones removed), then the fallback (a producer's ``critical`` is urgent, else normal)."""

    rules: tuple[tuple[str, TickRule], ...] = ()

    @classmethod
    def build(
        cls,
        config: Iterable[TickRule] = (),
        stored: Iterable[tuple[str, TickRule]] = (),
        *,
        defaults: bool = True,
        removed: Iterable[str] = (),
    ) -> Rulebook:
        gone = set(removed)
        shipped = [
            (f"default:{d.name}", d.rule)
            for d in DEFAULT_RULES
            if defaults and f"default:{d.name}" not in gone
        ]
        ours = [(f"tick.rules[{i}]", rule) for i, rule in enumerate(config)]
        return cls(tuple(ours + list(stored) + shipped))

    def decide(
        self, source: str, type_: str, payload: Mapping[str, Any], now: datetime | None = None
    ) -> tuple[str, str]:
        """The priority of the first rule that applies, and that rule's origin."""
        for origin, rule in self.rules:
            if applies(rule, source, type_, payload, now):
                return rule.priority, origin
        return rule_priority(source, type_, payload, ()), "fallback"


def classify(
    events: Iterable[QueuedEvent],
    rules: Rulebook,
    mutes: list[Mute],
    now: datetime | None = None,
) -> dict[int, str]:
    """A priority (or ``muted``) for each event id."""
    result = {}
    for event in events:
        if any(m.applies(event) for m in mutes):
            result[event.id] = MUTED
        else:
            result[event.id] = rules.decide(event.source, event.type, event.payload, now)[0]
    return result


def noun(type_: str) -> str:
    """``event/new_email`` → ``new email``."""
    return type_.rsplit("/", 1)[-1].replace("_", " ").replace("-", " ").strip() or "event"


def plural(word: str, count: int) -> str:
    """``new email`` → ``new emails``; a noun before a participle takes the plural instead
    (``resource updated`` → ``resources updated``, ``file changed`` → ``files changed``)."""
    if count == 1:
        return word
    head, _, last = word.rpartition(" ")
    if head and last.endswith("ed") and not last.endswith("eed") and len(last) > 3:
        return f"{plural(head, count)} {last}"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def one_line(text: Any, limit: int = SUMMARY_CHARS) -> str:
    """Untrusted text as one short line: whitespace collapsed, control characters gone."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def event_summary(event: QueuedEvent) -> str:
    for key in SUMMARY_FIELDS:
        value = event.payload.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value)
    return f"{noun(event.type)} from {event.source}"


def event_time(event: QueuedEvent, tz: tzinfo) -> str:
    """``HH:MM`` of ``payload.occurred_at``, or of ``received_at`` when that is unusable."""
    moment = occurred(event.payload.get("occurred_at"), tz)
    moment = moment or datetime.fromtimestamp(event.received_at, tz)
    return moment.strftime("%H:%M")


def occurred(when: Any, tz: tzinfo) -> datetime | None:
    # a producer's time is untrusted: NaN, 1e308 or year 1 in another zone would raise, and
    # an exception here would fail every tick, holding back every other event with it
    try:
        if isinstance(when, int | float) and not isinstance(when, bool):
            return datetime.fromtimestamp(when, tz)
        if isinstance(when, str):
            parsed = datetime.fromisoformat(when)
            return parsed.astimezone(tz) if parsed.tzinfo else parsed
    except (ValueError, OverflowError, OSError):
        pass
    return None


def who(event: QueuedEvent) -> tuple[str, str] | None:
    """What a group is about and its preposition: ``("from", "ana@corp.com")``."""
    for key, preposition in GROUP_FIELDS:
        value = event.payload.get(key)
        if isinstance(value, str) and value.strip():
            if key in ADDRESS_FIELDS:  # "Ana <ana@corp.com>" groups and reads as the address
                value = bare_address(value) or value
            return preposition, one_line(value.lower() if "@" in value else value, 80)
    return None


def label(event: QueuedEvent) -> str:
    """``ssh alert`` for source ssh / type event/ssh_alert; ``gmail new email`` otherwise."""
    kind = noun(event.type)
    return kind if event.source.lower() in kind.lower() else f"{event.source} {kind}"


def item_for(
    priority: str, group: list[QueuedEvent], tz: tzinfo, resolved: QueuedEvent | None = None
) -> BriefingItem:
    first, newest = group[0], max(group, key=lambda e: (e.received_at, e.id))
    actions = ["ack", "snooze"] if priority == "urgent" else []
    ids = [e.id for e in group] + ([resolved.id] if resolved else [])
    if len(group) == 1:
        url = first.payload.get("url") if isinstance(first.payload.get("url"), str) else None
        cleared = f" — resolved {event_time(resolved, tz)}" if resolved else ""
        return BriefingItem(
            priority=priority,
            summary=f"{event_summary(first)}{cleared} ({label(first)}, {event_time(first, tz)})",
            event_ids=ids,
            actions=([] if resolved else actions) + (["open"] if url else []),
            source=first.source,
            url=url,
        )
    about = who(first)
    kind = plural(noun(first.type), len(group))
    summary = (
        f"{len(group)} {kind} {about[0]} {about[1]}"
        if about
        else (f"{len(group)} {kind} ({first.source})")
    )
    return BriefingItem(
        priority=priority,
        summary=summary,
        why=f"latest: {event_summary(newest)}",
        event_ids=ids,
        actions=actions,
        source=first.source,
    )


def moment_of(event: QueuedEvent) -> float:
    """When it happened, as a timestamp: ``occurred_at`` if usable, else ``received_at``."""
    when = occurred(event.payload.get("occurred_at"), UTC)
    try:
        return when.timestamp() if when and when.tzinfo else event.received_at
    except (OverflowError, OSError, ValueError):
        return event.received_at


def resolutions(events: Iterable[QueuedEvent]) -> dict[int, QueuedEvent]:
    """Alert id → the later event of the same check that says it resolved.

    A monitor's alert and its all-clear in one briefing are one story, told as one item
    ("db-1 disk at 97% — resolved 06:40"), not an alarm and a footnote."""
    open_alerts: dict[tuple[str, ...], QueuedEvent] = {}
    pairs: dict[int, QueuedEvent] = {}
    for event in sorted(events, key=lambda e: e.id):
        state = event.payload.get("state")
        key = (event.source, event.type) + tuple(
            str(event.payload.get(k)) for k in ("alias", "check", "subject")
        )
        if state == "alert":
            open_alerts[key] = event
        elif state == "resolved" and key in open_alerts:
            pairs[open_alerts.pop(key).id] = event
    return pairs


def group(
    events: Iterable[QueuedEvent],
    priorities: Mapping[int, str],
    tz: tzinfo,
    pairs: Mapping[int, QueuedEvent] | None = None,
) -> list[BriefingItem]:
    """Items for the shown priorities, one per (priority, source, type, sender) group, an
    alert with its resolution alone; by priority, then in the order they happened."""
    pairs = pairs or {}
    paired = {e.id for e in pairs.values()}
    groups: dict[tuple[Any, ...], list[QueuedEvent]] = {}
    for event in sorted(events, key=lambda e: e.id):
        priority = priorities.get(event.id)
        if priority in SHOWN and event.id not in paired:
            key: tuple[Any, ...] = (priority, event.source, event.type, who(event))
            if event.id in pairs:
                key = (priority, "resolved", event.id)
            groups.setdefault(key, []).append(event)
    made = [
        (item_for(key[0], members, tz, pairs.get(members[0].id)), members)
        for key, members in groups.items()
    ]
    made.sort(key=lambda im: (SHOWN.index(im[0].priority), min(map(moment_of, im[1]))))
    return [item for item, _ in made]


def muted_summary(events: Iterable[QueuedEvent], priorities: Mapping[int, str]) -> str:
    """``4 new emails (gmail)`` for the muted events; the largest groups first."""
    counts: dict[tuple[str, str], int] = {}
    for event in events:
        if priorities.get(event.id) == MUTED:
            key = (event.source, event.type)
            counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    parts = [f"{n} {plural(noun(t), n)} ({s})" for (s, t), n in ranked[:MUTED_GROUPS_SHOWN]]
    if len(ranked) > MUTED_GROUPS_SHOWN:
        parts.append(f"{sum(n for _, n in ranked[MUTED_GROUPS_SHOWN:])} more")
    return ", ".join(parts)


# Gmail's own categories name a folded mail better than "new email" does: (one, several)
FOLD_WORDS = {
    "CATEGORY_PROMOTIONS": ("promotion", "promotions"),
    "CATEGORY_SOCIAL": ("social", "social"),
    "CATEGORY_FORUMS": ("forum post", "forum posts"),
    "CATEGORY_UPDATES": ("update", "updates"),
}
LOW_PARTS_SHOWN = 5


def fold_word(event: QueuedEvent, count: int) -> str:
    labels = event.payload.get("labels")
    if isinstance(labels, list):
        for label_name, (one, several) in FOLD_WORDS.items():
            if label_name in labels:
                return one if count == 1 else several
    if event.payload.get("state") == "resolved":
        return "resolved"
    return plural(noun(event.type), count)


def low_summary(events: Iterable[QueuedEvent], priorities: Mapping[int, str]) -> str:
    """``3 promotions, 2 social (gmail); 1 resolved (ssh)``: the low events folded per
    source into one line, the largest kinds first."""
    kinds: dict[str, dict[str, list[QueuedEvent]]] = {}
    for event in events:
        if priorities.get(event.id) == "low":
            word = fold_word(event, 1)
            kinds.setdefault(event.source, {}).setdefault(word, []).append(event)
    ranked = sorted(kinds.items(), key=lambda kv: -sum(len(v) for v in kv[1].values()))
    lines = []
    for source, words in ranked[:LOW_PARTS_SHOWN]:
        parts = sorted(words.values(), key=lambda v: -len(v))
        text = ", ".join(f"{len(v)} {fold_word(v[0], len(v))}" for v in parts)
        lines.append(f"{text} ({source})" if len(ranked) > 1 else text)
    rest = sum(len(v) for _, words in ranked[LOW_PARTS_SHOWN:] for v in words.values())
    return "; ".join(lines + ([f"{rest} more"] if rest else []))


def triage_offline(
    events: list[QueuedEvent],
    rules: Rulebook,
    mutes: list[Mute],
    tz: tzinfo,
    now: float | None = None,
) -> Triage:
    """Rules, mutes and grouping: the whole offline triage of one tick."""
    moment = datetime.fromtimestamp(now, tz) if now is not None else datetime.now(tz)
    priorities = classify(events, rules, mutes, moment)
    pairs = pair_resolutions(events, priorities)
    return Triage(
        priorities,
        group(events, priorities, tz, pairs),
        muted_summary(events, priorities),
        low_summary=low_summary(events, priorities),
    )


def pair_resolutions(
    events: list[QueuedEvent], priorities: dict[int, str]
) -> dict[int, QueuedEvent]:
    """The alert/resolution pairs among shown alerts; each resolution takes its alert's
    priority so the two leave the queue together."""
    pairs = {
        alert: cleared
        for alert, cleared in resolutions(events).items()
        if priorities.get(alert) in SHOWN and priorities.get(cleared.id) != MUTED
    }
    for alert, cleared in pairs.items():
        priorities[cleared.id] = priorities[alert]
    return pairs
