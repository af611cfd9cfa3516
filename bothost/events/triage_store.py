"""Triage rules kept in the ``triage_rules`` table: taught at run time, never written to YAML.

``bothost triage add``, the chat tool ``add_triage_rule`` and (later) a briefing's buttons
add ordinary rules (``kind = 'rule'``), tried after the config's ``tick.rules`` and before
the shipped defaults, oldest first. A shipped default is taken out by a row of its own
(``kind = 'removed'``, ``removes = 'default:NAME'``) rather than by deleting anything, so
``triage restore`` brings it back and a fresh home needs no rows for the defaults to apply.
Each row says where it came from (``cli``, ``chat``, ``button``), who added it
(platform-qualified: ``slack:U0123``, ``cli:ana``) and when. The table is core's (core:14).
Rows are written from checked rules only, and checked again when read: a row that no longer
passes is skipped and logged.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bothost.config import TickConfig, TickRule
from bothost.events.defaults import named
from bothost.events.triage import PRIORITIES, MatchError, Rulebook, check_rule
from bothost.store.conn import Conn

logger = logging.getLogger(__name__)

TABLE = "triage_rules"
RULE, REMOVED = "rule", "removed"  # the `kind` column
ORIGINS = ("cli", "chat", "button")
MAX_ID = 2**63 - 1  # the largest row id; a larger number (a typo, a fuzzer) names no row


def version(db: Conn) -> int:
    """How many times this process changed the rules stored in ``db``'s store: the event
    queue reads them again at its next batch when this moved (bothost.events.urgency), and
    every few seconds for other processes' changes. Kept per store (``Conn.announce``), so
    a host in the same process as another never re-reads for the other's rules."""
    return db.announced(TABLE)


class TriageRuleError(ValueError):
    """A rule, or a reference to one, that cannot be stored or found; one line for people."""


@dataclass(frozen=True)
class StoredRule:
    """A ``kind = 'rule'`` row: the rule, and where it came from."""

    id: int
    rule: TickRule
    origin: str
    added_by: str
    added_at: float

    @property
    def ref(self) -> str:
        """How people name it: ``#7`` (``triage remove 7``)."""
        return f"#{self.id}"


@dataclass(frozen=True)
class Removal:
    """A shipped default taken out: ``name`` is ``default:NAME``."""

    id: int
    name: str
    origin: str
    added_by: str
    added_at: float


def check(rule: TickRule, where: str = "rule") -> None:
    """What a stored rule must be: a known priority, a ``match``, and the config's check."""
    if rule.priority not in PRIORITIES:
        raise TriageRuleError(
            f"{where}.priority: expected one of {', '.join(PRIORITIES)}, got {rule.priority!r}"
        )
    if not rule.match:
        raise TriageRuleError(f"{where}.match: a rule needs at least one KEY=GLOB")
    try:
        check_rule(rule, where)
    except MatchError as exc:
        raise TriageRuleError(str(exc)) from None


def add(db: Conn, rule: TickRule, origin: str, added_by: str, now: float | None = None) -> int:
    """Store a checked rule after every other stored one; its id."""
    check(rule)
    if origin not in ORIGINS:
        raise ValueError(f"origin must be one of {ORIGINS}, got {origin!r}")
    row = {
        "kind": RULE,
        "match": json.dumps(rule.match, ensure_ascii=False),
        "unless": json.dumps(rule.unless, ensure_ascii=False),
        "within": json.dumps(rule.within, ensure_ascii=False),
        "priority": rule.priority,
        "note": rule.note,
        "origin": origin,
        "added_by": added_by,
        "added_at": time.time() if now is None else now,
    }
    row_id = int(db.insert(TABLE, row, returning="id"))
    db.announce(TABLE)
    return row_id


def remove(db: Conn, ref: str, origin: str, added_by: str) -> str:
    """Remove the stored rule ``ref`` (``7``, ``#7``) or take out the default
    ``default:NAME``; what was done, as a line. :class:`TriageRuleError` when ``ref``
    names nothing removable."""
    if ref.startswith("default:"):
        default = named(ref)
        if default is None:
            raise TriageRuleError(f"no shipped default {ref!r} (bothost triage list)")
        name = f"default:{default.name}"
        with db.transaction() as conn:
            if conn.value(f"SELECT 1 FROM {TABLE} WHERE removes = ?", [name]):
                return f"{name} was already removed."
            conn.insert(
                TABLE,
                {
                    "kind": REMOVED,
                    "removes": name,
                    "origin": origin,
                    "added_by": added_by,
                    "added_at": time.time(),
                },
            )
        db.announce(TABLE)
        return f"Removed {name}; `triage restore {name}` brings it back."
    number = rule_id(ref)
    gone = (
        0 < number <= MAX_ID
        and db.execute(f"DELETE FROM {TABLE} WHERE id = ? AND kind = ?", [number, RULE]).rowcount
    )
    if not gone:
        raise TriageRuleError(f"no stored triage rule #{number} (bothost triage list)")
    db.announce(TABLE)
    return f"Removed triage rule #{number}."


def restore(db: Conn, ref: str) -> str:
    """Put a removed shipped default back; what was done, as a line."""
    default = named(ref) if ref.startswith("default:") else None
    if default is None:
        raise TriageRuleError(
            f"expected a shipped default such as default:gmail-promotions, got {ref!r}"
        )
    name = f"default:{default.name}"
    if not db.execute(f"DELETE FROM {TABLE} WHERE removes = ?", [name]).rowcount:
        return f"{name} was not removed."
    db.announce(TABLE)
    return f"Restored {name}."


def rule_id(ref: str) -> int:
    try:
        return int(ref.strip().removeprefix("#"))
    except ValueError:
        raise TriageRuleError(
            f"expected a stored rule's id such as 7, or default:NAME, got {ref!r}"
        ) from None


def load(db: Conn) -> tuple[list[StoredRule], list[Removal]]:
    """(the stored rules in the order they are tried, the shipped defaults taken out): one
    query, cheap enough for every tick."""
    rules: list[StoredRule] = []
    removals: list[Removal] = []
    for row in db.query(f"SELECT * FROM {TABLE} ORDER BY id"):
        if row["kind"] == REMOVED:
            removals.append(
                Removal(row["id"], row["removes"], row["origin"], row["added_by"], row["added_at"])
            )
            continue
        rule = from_row(row)
        if rule is not None:
            rules.append(rule)
    return rules, removals


def from_row(row: dict[str, Any]) -> StoredRule | None:
    try:
        unless = json.loads(row["unless"])
        if not isinstance(unless, list):
            raise TypeError("unless: expected a list of objects")
        rule = TickRule(
            match=texts(json.loads(row["match"])),
            priority=row["priority"],
            unless=[texts(u) for u in unless],
            within=texts(json.loads(row["within"])),
            note=row["note"] or "",
        )
        check(rule, f"triage rule #{row['id']}")
    except (ValueError, TypeError) as exc:  # a hand-edited row
        logger.warning("triage rule #%s is skipped: %s", row["id"], exc)
        return None
    return StoredRule(row["id"], rule, row["origin"], row["added_by"], row["added_at"])


def texts(value: Any) -> Any:
    """A JSON object of text values, as a rule's mappings are; TypeError for anything else."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise TypeError(f"expected an object of texts, got {json.dumps(value)[:80]}")
    return value


def build(config: TickConfig, rules: Iterable[StoredRule], removals: Iterable[Removal]) -> Rulebook:
    return Rulebook.build(
        config.rules,
        [(r.ref, r.rule) for r in rules],
        defaults=config.defaults,
        removed=[r.name for r in removals],
    )


def rulebook(db: Conn, config: TickConfig) -> Rulebook:
    """Every rule a tick tries now: ``tick.rules``, the stored ones, the defaults left."""
    return build(config, *load(db))
