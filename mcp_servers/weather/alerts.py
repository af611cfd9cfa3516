"""Weather alerts: one `event/weather_alert` per threshold crossing, remembered on disk.

Each poll measures, per watched place, the rain probability and wind gusts ahead (max over
the look-ahead window), the fall from today's high to tomorrow's, and the European AQI
now. A measure that reaches its threshold while not already alerting raises one alert and
marks the (place, measure) pair active in `alerts.json` in the server's state dir, once a
client got the alert (the kit's `Outbox` rule: with nobody listening, the next poll finds
the crossing again); it stays quiet on later polls and across restarts until the measure
falls below the threshold by a margin (hysteresis, so a value hovering at the line does not
alert every poll). The next crossing is a new alert with a new id.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from bothost.mcp_servers.kit import Notify, Outbox

from .api import OpenMeteo, OpenMeteoError
from .conditions import european_aqi_level, fmt
from .places import Place, PlaceResolver
from .watchconfig import UNITS, WatchConfig, WatchedPlace

logger = logging.getLogger(__name__)

EVENT_TYPE = "event/weather_alert"
STATE_FILE = "alerts.json"
# How far below its threshold a measure must fall before the next crossing counts.
CLEAR_MARGIN = {"rain_probability": 10.0, "temperature_drop": 2.0, "wind_gusts": 10.0, "aqi": 10.0}
# At or above these the alert is critical rather than a warning (Beaufort 10; EEA top band).
CRITICAL_AT = {"wind_gusts": 89.0, "aqi": 100.0}
# Rain and cooler days are news, not dangers.
SEVERITY = {
    "rain_probability": "info",
    "temperature_drop": "info",
    "wind_gusts": "warning",
    "aqi": "warning",
}


@dataclass
class Measure:
    """One measured value for a place, and when (local time) it happens."""

    value: float | None
    at: str | None = None
    # The place's own date now (Open-Meteo's hourly rows start at the current local hour),
    # so "17:00" means today there, whatever the server's time zone.
    today: str | None = None


class Crossing(NamedTuple):
    """A measure that reached its threshold: the alert, and the state it leaves once sent."""

    key: str
    entry: dict[str, Any]
    alert: dict[str, Any]


class AlertWatcher:
    """Polls the watched places and pushes alerts through `notify(method, params)`."""

    def __init__(
        self,
        api: OpenMeteo,
        places: PlaceResolver,
        config: WatchConfig,
        state_dir: Path,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.api = api
        self.clock = clock  # dates alerts, clearings and polls (a place's day is its own)
        self.places = places
        self.config = config
        self.state_path = state_dir / STATE_FILE
        self.state: dict[str, dict[str, Any]] = self._load()
        self.last_poll: str | None = None
        self.last_errors: dict[str, str] = {}

    async def poll(self, notify: Notify) -> list[dict[str, Any]]:
        """Look at every place once; returns the alerts sent."""
        outbox = Outbox(notify)
        sent: list[dict[str, Any]] = []
        for watched in self.config.places:
            try:
                measures, place = await self._measure(watched)
            except OpenMeteoError as exc:
                logger.warning("weather watch %s: %s", watched.location, exc)
                self.last_errors[watched.location] = str(exc)
                continue
            except Exception as exc:  # boundary: one bad place must not stop the others
                logger.exception("weather watch %s failed", watched.location)
                self.last_errors[watched.location] = f"{type(exc).__name__}: {exc}"
                continue
            self.last_errors.pop(watched.location, None)
            for kind, measure in measures.items():
                crossing = self._crossing(watched, place, kind, measure)
                if crossing and await outbox.send(EVENT_TYPE, crossing.alert):
                    self.state[crossing.key] = crossing.entry
                    sent.append(crossing.alert)
                    self._save()  # right after sending: a restart must not announce it again
        self.last_poll = self._now()
        self._save()
        return sent

    def active_alerts(self) -> list[dict[str, Any]]:
        return [{"key": k, **v} for k, v in sorted(self.state.items()) if v.get("active")]

    async def _measure(self, watched: WatchedPlace) -> tuple[dict[str, Measure], Place]:
        place = await self.places.resolve(watched.location)
        kinds = watched.active_kinds()
        measures: dict[str, Measure] = {}
        if {"rain_probability", "wind_gusts", "temperature_drop"} & set(kinds):
            data = await self.api.forecast(
                place.latitude,
                place.longitude,
                hourly=["precipitation_probability", "wind_gusts_10m"],
                daily=["temperature_2m_max"],
                forecast_days=2,
                forecast_hours=self.config.lookahead_hours,
                wind_speed_unit="kmh",
                temperature_unit="celsius",
            )
            hourly = data.get("hourly") or {}
            threshold = watched.thresholds
            if "rain_probability" in kinds:
                measures["rain_probability"] = _peak(
                    hourly, "precipitation_probability", threshold["rain_probability"]
                )
            if "wind_gusts" in kinds:
                measures["wind_gusts"] = _peak(hourly, "wind_gusts_10m", threshold["wind_gusts"])
            if "temperature_drop" in kinds:
                measures["temperature_drop"] = _drop(data.get("daily") or {})
        if "aqi" in kinds:
            air = await self.api.air_quality(
                place.latitude, place.longitude, current=["european_aqi"]
            )
            now = air.get("current") or {}
            measures["aqi"] = Measure(_number(now.get("european_aqi")), now.get("time"))
        return measures, place

    def _crossing(
        self, watched: WatchedPlace, place: Place, kind: str, measure: Measure
    ) -> Crossing | None:
        """A new crossing (state untouched until it is sent), or None; clears an old one."""
        threshold = watched.thresholds[kind]
        assert threshold is not None
        key = f"{watched.key}|{kind}"
        entry = self.state.get(key, {})
        if measure.value is None:
            return None
        if entry.get("active"):
            if measure.value < threshold - CLEAR_MARGIN[kind]:
                self.state[key] = entry | {"active": False, "cleared_at": self._now()}
            return None
        if measure.value < threshold:
            return None
        occurred = self._now()
        # The count keeps two crossings within one second apart; the time keeps ids unique
        # even if the state file is lost.
        count = int(entry.get("crossings", 0)) + 1
        alert_id = f"weather:{watched.key}:{kind}:{occurred}:{count}"
        record = {
            "active": True,
            "since": occurred,
            "id": alert_id,
            "crossings": count,
            "value": measure.value,
            "threshold": threshold,
        }
        name = watched.name or place.label
        severity = SEVERITY[kind]
        if kind in CRITICAL_AT and measure.value >= CRITICAL_AT[kind]:
            severity = "critical"
        alert = {
            "id": alert_id,
            "summary": _summary(kind, name, measure, threshold),
            "severity": severity,
            "occurred_at": occurred,
            "kind": kind,
            "location": watched.location,
            "place": name,
            "latitude": place.latitude,
            "longitude": place.longitude,
            "value": measure.value,
            "threshold": threshold,
            "unit": UNITS[kind],
            "at": measure.at,
        }
        return Crossing(key, record, alert)

    def _now(self) -> str:
        return self.clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.state_path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("ignoring unreadable %s: %s", self.state_path, exc)
            return {}
        return data.get("alerts", {}) if isinstance(data, dict) else {}

    def _save(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump({"alerts": self.state, "last_poll": self.last_poll}, handle, indent=1)
        os.replace(tmp, self.state_path)


def _peak(hourly: dict[str, list[Any]], column: str, threshold: float | None) -> Measure:
    """The highest value ahead, at the first hour that reaches the threshold (or the peak)."""
    rows = zip(hourly.get(column) or [], hourly.get("time") or [], strict=False)
    values = [(n, t) for n, t in ((_number(v), t) for v, t in rows) if n is not None]
    if not values:
        return Measure(None)
    peak = max(v for v, _ in values)
    first = next((t for v, t in values if threshold is not None and v >= threshold), None)
    times = hourly.get("time") or []
    today = str(times[0])[:10] if times else None
    return Measure(peak, first or next(t for v, t in values if v == peak), today)


def _drop(daily: dict[str, list[Any]]) -> Measure:
    highs = [_number(v) for v in daily.get("temperature_2m_max") or []]
    times = daily.get("time") or []
    if len(highs) < 2 or highs[0] is None or highs[1] is None:
        return Measure(None)
    return Measure(round(highs[0] - highs[1], 1), times[1] if len(times) > 1 else None)


def _summary(kind: str, name: str, measure: Measure, threshold: float) -> str:
    when = _clock(measure.at, measure.today)
    value = measure.value
    if kind == "rain_probability":
        return f"Rain likely in {name} from {when} ({fmt(value, '%', 0)})."
    if kind == "wind_gusts":
        return f"Wind gusts up to {fmt(value, 'km/h', 0)} in {name} from {when}."
    if kind == "temperature_drop":
        return f"Temperature drop in {name}: tomorrow's high {fmt(value, '°C')} below today's."
    return (
        f"Air quality {european_aqi_level(value)} in {name} "
        f"(European AQI {fmt(value, '', 0)}, alert at {fmt(threshold, '', 0)})."
    )


def _clock(local_time: str | None, today: str | None) -> str:
    """ "17:00" from Open-Meteo's local "2026-12-02T17:00"; "Thu 17:00" if not `today` (the
    place's date; when unknown the day is named: the server's own date may not be the
    place's)."""
    if not local_time or "T" not in local_time:
        return local_time or "now"
    day, clock = local_time.split("T", 1)
    if day == today:
        return clock
    try:
        return f"{datetime.fromisoformat(day).strftime('%a')} {clock}"
    except ValueError:
        return clock


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
