"""Watching hosts: disk use, failed systemd units, reachability; one alert per change.

Each check yields *conditions*, one per thing watched (`db-1/disk:/`, `db-1/unit:nginx
.service`, `db-1/reachable`), each either alerting or fine. The state file remembers the
last verdict of every condition, so an event is pushed only when a verdict changes: a
disk that stays full alerts once, not every poll, and again only after it was fine in
between. A condition first seen fine is recorded silently; first seen alerting, it
alerts. When a host cannot be reached, its other conditions keep their last verdict
(unknown is not fine). Every transition has a numbered id (`…#3`) that only advances once
the state is saved, so a crash between pushing and saving re-sends the same id, which the
host's queue deduplicates: at least once, never a different duplicate.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .aliases import Alias, write_private_json

logger = logging.getLogger(__name__)

EVENT = "event/ssh_alert"
CRITICAL_DISK_PERCENT = 95  # past this a full disk is hours away, not days


@dataclass
class Condition:
    """One watched thing's verdict in this poll."""

    key: str
    alias: str
    check: str  # "disk" | "unit" | "reachable"
    subject: str
    alerting: bool
    summary: str
    severity: str = "warning"
    details: dict[str, Any] = field(default_factory=dict)


def disk_conditions(alias: Alias, rows: Iterable[dict]) -> list[Condition]:
    """Conditions for `df` rows (each with `path`) against the alias's threshold."""
    threshold = alias.monitors.disk_percent
    out = []
    for row in rows:
        used = row["use_percent"]
        alerting = threshold is not None and used >= threshold
        what = f"{alias.name}: disk {row['path']} ({row['mount']}) at {used}%"
        out.append(
            Condition(
                key=f"{alias.name}/disk:{row['path']}",
                alias=alias.name,
                check="disk",
                subject=row["path"],
                alerting=alerting,
                summary=f"{what}, threshold {threshold}%"
                if alerting
                else f"{what}, back under {threshold}%",
                severity="critical" if used >= CRITICAL_DISK_PERCENT else "warning",
                details={
                    "use_percent": used,
                    "threshold": threshold,
                    "mount": row["mount"],
                    "available_kib": row["available_kib"],
                },
            )
        )
    return out


def unit_conditions(alias: Alias, failed: list[dict], known: Iterable[str]) -> list[Condition]:
    """Failed units alert; units that alerted before and are no longer failed are fine."""
    names = {u["unit"] for u in failed}
    out = [
        Condition(
            key=f"{alias.name}/unit:{u['unit']}",
            alias=alias.name,
            check="unit",
            subject=u["unit"],
            alerting=True,
            summary=f"{alias.name}: systemd unit {u['unit']} failed",
            details={"active": u["active"], "sub": u["sub"], "description": u["description"]},
        )
        for u in failed
    ]
    prefix = f"{alias.name}/unit:"
    for key in known:
        unit = key.removeprefix(prefix)
        if key.startswith(prefix) and unit not in names:
            out.append(
                Condition(
                    key,
                    alias.name,
                    "unit",
                    unit,
                    False,
                    f"{alias.name}: systemd unit {unit} no longer failed",
                    "info",
                )
            )
    return out


def reachable_condition(alias: Alias, error: str | None) -> Condition:
    return Condition(
        key=f"{alias.name}/reachable",
        alias=alias.name,
        check="reachable",
        subject=alias.host,
        alerting=error is not None,
        summary=f"{alias.name}: {alias.target} unreachable: {error}"
        if error
        else f"{alias.name}: {alias.target} reachable again",
        severity="critical",
        details={"error": error} if error else {},
    )


class MonitorState:
    """Last verdict per condition key, persisted as JSON (0600) in the state directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conditions: dict[str, dict[str, Any]] = {}
        self.runs = 0
        self.checked_at: str | None = None
        if path.exists():
            try:
                data = json.loads(path.read_text())
                self.conditions = data.get("conditions", {})
                self.runs = int(data.get("runs", 0))
                self.checked_at = data.get("checked_at")
            except (OSError, ValueError):
                logger.warning("monitor state %s unreadable; starting afresh", path)

    def keys(self, prefix: str) -> list[str]:
        return [k for k, v in self.conditions.items() if k.startswith(prefix) and v["alerting"]]

    def transitions(self, conditions: Iterable[Condition], now: datetime) -> list[dict[str, Any]]:
        """Apply this poll's verdicts; the event payloads for those that changed."""
        events = []
        stamp = now.astimezone(UTC).isoformat().replace("+00:00", "Z")
        for cond in conditions:
            before = self.conditions.get(cond.key)
            if before is not None and before["alerting"] == cond.alerting:
                continue
            count = (before or {}).get("transitions", 0)
            self.conditions[cond.key] = {
                "alerting": cond.alerting,
                "since": stamp,
                "transitions": count + 1,
            }
            if before is None and not cond.alerting:
                continue  # first look, and fine: nothing happened
            events.append(
                {
                    "id": f"ssh:{cond.key}#{count + 1}",
                    "summary": cond.summary,
                    "severity": cond.severity if cond.alerting else "info",
                    "occurred_at": stamp,
                    "alias": cond.alias,
                    "check": cond.check,
                    "subject": cond.subject,
                    "state": "alert" if cond.alerting else "resolved",
                    **cond.details,
                }
            )
        return events

    def forget_except(self, aliases: Iterable[Alias]) -> None:
        """Drop conditions of aliases (or checks) no longer monitored."""
        wanted = {}
        for alias in aliases:
            m = alias.monitors
            wanted[alias.name] = {
                "disk": m.disk_percent is not None,
                "unit": m.failed_units,
                "reachable": m.unreachable,
            }
        for key in list(self.conditions):
            name, _, check = key.partition("/")
            kind = check.split(":", 1)[0]
            if not wanted.get(name, {}).get(kind, False):
                del self.conditions[key]

    def save(self, now: datetime) -> None:
        self.runs += 1
        self.checked_at = now.astimezone(UTC).isoformat().replace("+00:00", "Z")
        write_private_json(
            self.path,
            {"conditions": self.conditions, "runs": self.runs, "checked_at": self.checked_at},
        )
