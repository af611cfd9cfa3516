"""Rules kept in the ``permission_rules`` table: added at run time, never written to YAML.

``bothost rules add`` and the dashboard add ordinary rules (``kind = 'rule'``), which are
checked before the config's ``permissions``, in ``position`` order: a new rule goes last
among them, or first when asked. Remembered answers (``kind = 'remembered'``) are kept apart:
they stand in for a person's answer, so they are consulted only where a call would be asked.
Rows are written from checked rules only, and checked again when read. People and channels
are stored platform-qualified (``slack:U0123``): see :mod:`bothost.rules.who`.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from bothost.config import PermissionRule
from bothost.rules.match import (
    REMEMBERED,
    STORED,
    Rule,
    RuleError,
    allows_before,
    config_rules,
    spec_data,
    spec_from_data,
)
from bothost.rules.origin import Origin, from_name, parse
from bothost.rules.who import legacy
from bothost.store.conn import Conn

logger = logging.getLogger(__name__)

TABLE = "permission_rules"
RULE, ANSWER = "rule", "remembered"  # the `kind` column


def from_row(row: dict[str, Any]) -> Rule | None:
    data = spec_data(
        PermissionRule(
            tool=row["tool"],
            args=json.loads(row["args"] or "{}"),
            exact=bool(row["exact"]),
            action=row["action"],
            note=row["note"] or "",
        )
    )
    if row["who"]:
        # ids of a row an older host wrote (before core:13, or since on a shared store) are
        # read as the migration read them there: never as another platform's
        who = json.loads(row["who"])
        data["who"] = legacy(who, row["action"]) if isinstance(who, dict) else who
    try:
        spec = spec_from_data(data)
    except RuleError as exc:  # only checked rules are written; a hand-edited row is skipped
        cautious = without_args(data)
        if cautious is None:
            logger.warning("permission rule #%s is skipped: %s", row["id"], exc)
            return None
        logger.warning(
            "permission rule #%s now covers every call of %s (%s): %s; remove it and add it"
            " again with a pattern that is accepted",
            row["id"],
            cautious.tool,
            cautious.action,
            exc,
        )
        spec = cautious
    origin = REMEMBERED if row["kind"] == ANSWER else STORED
    tool_origin = parse(row["tool_origin"])
    if tool_origin is None and origin == REMEMBERED:
        # an answer is always about one tool; one stored without its origin (by a host
        # older than core:11 sharing this store) is read as the migration reads old rows
        tool_origin = from_name(spec.tool)
    return Rule(
        spec,
        origin,
        id=row["id"],
        created_by=row["created_by"],
        created_at=row["created_at"],
        tool_origin=tool_origin,
    )


def without_args(data: dict[str, Any]) -> PermissionRule | None:
    """A ``deny`` or ``ask`` row no longer accepted for its argument patterns (an older host
    checked its ``re:`` with Python's engine; RE2 refuses lookaround) as the same rule over
    every call of its tool: skipping it would lift the refusal, while covering more only
    refuses or asks more. None for an ``allow`` (skipped: covering more would allow more)
    or a row still refused without its patterns."""
    if data.get("action") not in ("deny", "ask") or not data.get("args"):
        return None
    try:
        return spec_from_data({k: v for k, v in data.items() if k not in ("args", "exact")})
    except RuleError:
        return None


def load(db: Conn) -> tuple[list[Rule], list[Rule]]:
    """(the stored rules, the remembered answers), each in the order they are checked."""
    rules: list[Rule] = []
    answers: list[Rule] = []
    for row in db.query(f"SELECT * FROM {TABLE} ORDER BY position, id"):
        rule = from_row(row)
        if rule is not None:
            (answers if row["kind"] == ANSWER else rules).append(rule)
    return rules, answers


def add(
    db: Conn,
    spec: PermissionRule,
    created_by: str,
    *,
    kind: str = RULE,
    first: bool = False,
    tool_origin: Origin | None = None,
) -> int:
    """Store a checked rule; its id. ``tool_origin``: the one tool it is about (see
    :func:`bothost.rules.match.match_tool`), None for a rule that names tools by pattern."""
    data = spec_data(spec)
    who = data.get("who")
    # first: before every stored rule of its kind; else after them
    place = "MIN(position), 0) - 1" if first else "MAX(position), 0) + 1"
    row = db.execute(
        f"INSERT INTO {TABLE} (kind, position, tool, args, exact, who, action, note,"
        " created_by, created_at, tool_origin)"
        f" VALUES (?, (SELECT COALESCE({place} FROM {TABLE} WHERE kind = ?),"
        " ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        [
            kind,
            kind,
            spec.tool,
            json.dumps(spec.args, ensure_ascii=False),
            int(spec.exact),
            json.dumps(who, ensure_ascii=False) if who else None,
            spec.action,
            spec.note,
            created_by,
            time.time(),
            tool_origin.text() if tool_origin is not None else None,
        ],
    ).fetchone()
    return int(row[0])


MAX_ID = 2**63 - 1  # the largest row id; a larger number (a typo, a fuzzer) names no row


def remove(db: Conn, rule_id: int) -> bool:
    if not 0 < rule_id <= MAX_ID:
        return False
    return db.execute(f"DELETE FROM {TABLE} WHERE id = ?", [rule_id]).rowcount > 0


def allows_above(db: Conn, rule_id: int) -> list[Rule]:
    """For the stored ``deny`` rule ``rule_id`` (just added): the stored ``allow`` rules above
    it that may still decide some of its calls (:func:`~bothost.rules.match.allows_before`);
    [] for any other rule or no such row. ``rules add`` and the dashboard name each."""
    rules, _ = load(db)
    added = next((r for r in rules if r.id == rule_id), None)
    return allows_before(rules, added) if added is not None else []


def listing(db: Conn, permissions: list[PermissionRule]) -> tuple[list[Rule], list[Rule]]:
    """(every rule in the order checked: stored, then config; the remembered answers)."""
    rules, answers = load(db)
    return rules + config_rules(permissions), answers
