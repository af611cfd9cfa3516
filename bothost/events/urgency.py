"""Which queued events tick early: the tick's own rulebook, asked one question per event.

An event is urgent at ingest when the rulebook the tick uses (``tick.rules``, the rules
stored in the database, the shipped defaults, then a producer's ``critical``; see
:func:`bothost.events.triage_store.rulebook`) gives it ``urgent`` without a ``now``: a rule
with a ``within`` window never applies here, as nothing at ingest says what time "soon" is
measured from. The queue pokes the ticker for it, so a rule taught in chat ("mail from
*@boss.example is urgent") wakes the tick as ``severity: critical`` does.

The rulebook is read on the store thread before a batch is written: at once after a rule
was added or removed in this process through the queue's own store
(:func:`bothost.events.triage_store.version`; another host's store in the same process
does not count), else at most every :data:`REFRESH` seconds (a rule ``bothost triage add``
stored from another process). Asking it stays cheap at tens of thousands of events a
second: the rules that can apply to a source and type are kept per pair, and a
non-critical event is tried against that pair's urgent rules only (the earlier ones just
when an urgent one applies, as one of them would decide first).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bothost.config import TickConfig, TickRule
from bothost.events import triage_store
from bothost.events.triage import CRITICAL, bare_address, matches
from bothost.logs.rate import RateLimitedLog
from bothost.store.conn import Conn

logger = logging.getLogger(__name__)

REFRESH = 5.0  # seconds a rule stored by another process may wait to make events urgent
PAIRS = 4096  # (source, type) pairs whose rules are kept; a flood of new types clears them
WILDCARDS = frozenset("*?[")  # what makes an fnmatch glob more than a text
EVENT_KEYS = ("source", "type")  # the keys known per pair, before any payload is looked at


@dataclass(frozen=True, slots=True)
class _Rule:
    """A rule of one (source, type): its payload keys, its ``unless``, whether urgent."""

    match: Mapping[str, str]
    unless: tuple[Mapping[str, str], ...]
    urgent: bool
    # the payload's top-level fields the match reads: an event without one of them is
    # turned away by a dict look-up, before the matcher's ~1 µs (most events, most rules)
    needs: tuple[str, ...]
    # (field, text) of top-level fields matched against a glob without wildcards (such as
    # ``payload.severity: critical``): a text value that is not it, nor its bare address,
    # is turned away by a comparison (an alert flood's every event, for the severity rule)
    literals: tuple[tuple[str, str], ...]

    def applies(self, source: str, type_: str, payload: dict[str, Any]) -> bool:
        for name in self.needs:
            if name not in payload:
                return False
        for name, text in self.literals:
            value = payload[name]
            if type(value) is str and value.lower() != text and bare_address(value).lower() != text:
                return False
        if not matches(self.match, source, type_, payload):
            return False
        return not any(matches(u, source, type_, payload) for u in self.unless)


@dataclass(frozen=True, slots=True)
class _Plan:
    """The rules that can apply to one (source, type), in order, and where the urgent are."""

    rules: tuple[_Rule, ...]
    urgent_at: tuple[int, ...]


class Urgency:
    """The question "does this event tick early?" over the tick's rulebook, kept fresh."""

    def __init__(self, config: TickConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.clock = clock
        self.book = triage_store.build(config, [], [])  # until the store is first read
        self._plans: dict[tuple[str, str], _Plan] = {}
        self._due = float("-inf")  # when the stored rules are read again
        self._version = -1  # triage_store.version(db) when they were read
        self._failures = RateLimitedLog(logger)

    def refresh(self, db: Conn) -> None:
        """Read the rulebook again if a rule changed here or :data:`REFRESH` passed (store
        thread); a store that cannot be read keeps the rules it had."""
        version = triage_store.version(db)
        if version == self._version and self.clock() < self._due:
            return
        self._version, self._due = version, self.clock() + REFRESH
        try:
            book = triage_store.rulebook(db, self.config)
        except Exception as exc:  # boundary: the events are written whatever the rules do
            self._failures.warning("read", "triage rules not read for urgent events: %s", exc)
            return
        if book != self.book:
            self.book, self._plans = book, {}  # one swap each: the loop reads them unlocked

    def urgent(self, source: str, type_: str, payload: Any) -> bool:
        """Whether the rulebook makes this event ``urgent`` now (without a ``now``)."""
        if type(payload) is not dict:  # not a queued event's payload: ask the book itself
            return self.book.decide(source, type_, payload)[0] == "urgent"
        plans = self._plans
        plan = plans.get((source, type_))
        if plan is None:
            plan = self._plan(plans, source, type_)
        rules = plan.rules
        if payload.get("severity") == CRITICAL:  # the fallback's: the first rule decides
            for rule in rules:
                if rule.applies(source, type_, payload):
                    return rule.urgent
            return True
        for at in plan.urgent_at:  # else only an urgent rule can make it urgent
            if rules[at].applies(source, type_, payload):
                return not any(rule.applies(source, type_, payload) for rule in rules[:at])
        return False

    def _plan(self, plans: dict[tuple[str, str], _Plan], source: str, type_: str) -> _Plan:
        rules = tuple(
            _compiled(rule) for _, rule in self.book.rules if _could_apply(rule, source, type_)
        )
        plan = _Plan(rules, tuple(i for i, rule in enumerate(rules) if rule.urgent))
        if len(plans) >= PAIRS:
            plans.clear()
        plans[source, type_] = plan
        return plan


def _could_apply(rule: TickRule, source: str, type_: str) -> bool:
    """Whether ``rule`` may apply at ingest to an event of ``source`` and ``type_``."""
    if rule.within:  # needs a now, which ingest has not
        return False
    known = {key: glob for key, glob in rule.match.items() if key in EVENT_KEYS}
    return matches(known, source, type_, {})


def _compiled(rule: TickRule) -> _Rule:
    payload_keys = {key: glob for key, glob in rule.match.items() if key not in EVENT_KEYS}
    # a key other than source, type and payload.FIELD… never matches (check_rule refuses it)
    needs = tuple(key.split(".")[1] for key in payload_keys if key.startswith("payload."))
    literals = tuple(
        (key.removeprefix("payload."), glob.lower())
        for key, glob in payload_keys.items()
        if key.count(".") == 1 and not WILDCARDS.intersection(glob)
    )
    unless = tuple(u for u in rule.unless if u)
    return _Rule(payload_keys, unless, rule.priority == "urgent", needs, literals)
