"""Which places the weather watcher polls, and the thresholds that raise an alert.

Two sources. A file (`WEATHER_WATCH_FILE`, YAML or JSON)::

    lookahead_hours: 12          # how far ahead rain and wind are looked for
    thresholds:                  # defaults for every place (null or "off" disables one)
      rain_probability: 70       # %  (max hourly precipitation probability ahead)
      temperature_drop: 8        # °C (today's high minus tomorrow's high)
      wind_gusts: 60             # km/h (max hourly gust ahead)
      aqi: 80                    # European AQI (now)
    places:
      - Zurich
      - {location: "46.95,7.45", name: Bern office, wind_gusts: 50, aqi: off}

Or the environment: `WEATHER_WATCH="Zurich;Bern"` (semicolons, since "lat,lon" has a
comma) with `WEATHER_ALERT_RAIN_PROBABILITY`, `WEATHER_ALERT_TEMPERATURE_DROP`,
`WEATHER_ALERT_WIND_GUSTS`, `WEATHER_ALERT_AQI` and `WEATHER_LOOKAHEAD_HOURS`. The
environment's thresholds are the defaults a file can override; a place's own keys win.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

FILE_ENV = "WEATHER_WATCH_FILE"
PLACES_ENV = "WEATHER_WATCH"
LOOKAHEAD_ENV = "WEATHER_LOOKAHEAD_HOURS"
THRESHOLD_ENV_PREFIX = "WEATHER_ALERT_"
DEFAULT_LOOKAHEAD_HOURS = 12
MAX_LOOKAHEAD_HOURS = 48

KINDS = ("rain_probability", "temperature_drop", "wind_gusts", "aqi")
DEFAULT_THRESHOLDS: dict[str, float | None] = {
    "rain_probability": 70.0,
    "temperature_drop": 8.0,
    "wind_gusts": 60.0,
    "aqi": 80.0,
}
UNITS = {"rain_probability": "%", "temperature_drop": "°C", "wind_gusts": "km/h", "aqi": "EAQI"}
OFF_WORDS = {"off", "none", "no", "false", "disabled", ""}


class WatchConfigError(ValueError):
    """The watch file or variables are malformed; the message names where."""


@dataclass(frozen=True)
class WatchedPlace:
    location: str
    name: str | None
    thresholds: dict[str, float | None]

    @property
    def key(self) -> str:
        """Stable key for state: the location as configured, case-folded."""
        return " ".join(self.location.casefold().split())

    def active_kinds(self) -> list[str]:
        return [kind for kind in KINDS if self.thresholds.get(kind) is not None]


@dataclass(frozen=True)
class WatchConfig:
    places: list[WatchedPlace] = field(default_factory=list)
    lookahead_hours: int = DEFAULT_LOOKAHEAD_HOURS
    source: str = "none"

    def describe(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "lookahead_hours": self.lookahead_hours,
            "places": [
                {"location": p.location, "name": p.name, "thresholds": p.thresholds}
                for p in self.places
            ],
        }


def load(env: Mapping[str, str] | None = None) -> WatchConfig:
    """The watch configuration from `env` (default: the process environment)."""
    env = os.environ if env is None else env
    defaults = dict(DEFAULT_THRESHOLDS)
    for kind in KINDS:
        name = THRESHOLD_ENV_PREFIX + kind.upper()
        if name in env:
            defaults[kind] = _threshold(env[name], name)
    lookahead = _lookahead(env.get(LOOKAHEAD_ENV, DEFAULT_LOOKAHEAD_HOURS), LOOKAHEAD_ENV)
    if env.get(FILE_ENV):
        return _from_file(Path(env[FILE_ENV]).expanduser(), defaults, lookahead)
    names = [part.strip() for part in env.get(PLACES_ENV, "").split(";") if part.strip()]
    places = [WatchedPlace(location=n, name=None, thresholds=dict(defaults)) for n in names]
    return WatchConfig(places, lookahead, source=PLACES_ENV if places else "none")


def _from_file(path: Path, defaults: dict[str, float | None], lookahead: int) -> WatchConfig:
    import yaml  # only a watch file needs it; most starts have none (issue 19)

    try:
        text = path.read_text()
    except OSError as exc:
        raise WatchConfigError(f"{FILE_ENV}: cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        kind = "JSON" if path.suffix == ".json" else "YAML"
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise WatchConfigError(f"{path}: not valid {kind}: {first_line}") from None
    data = data or {}
    if not isinstance(data, dict):
        raise WatchConfigError(f"{path}: expected a mapping with a `places` list")
    _no_unknown(data, {"places", "thresholds", "lookahead_hours"}, str(path))
    thresholds = data.get("thresholds") or {}
    if not isinstance(thresholds, dict):
        raise WatchConfigError(f"{path}: thresholds: expected a mapping")
    _no_unknown(thresholds, set(KINDS), f"{path}: thresholds")
    defaults = defaults | {
        k: _threshold(v, f"{path}: thresholds.{k}") for k, v in thresholds.items()
    }
    if "lookahead_hours" in data:
        lookahead = _lookahead(data["lookahead_hours"], f"{path}: lookahead_hours")
    raw_places = data.get("places") or []
    if not isinstance(raw_places, list):
        raise WatchConfigError(f"{path}: places: expected a list")
    places = [_place(item, defaults, f"{path}: places[{i}]") for i, item in enumerate(raw_places)]
    return WatchConfig(places, lookahead, source=str(path))


def _place(item: Any, defaults: dict[str, float | None], where: str) -> WatchedPlace:
    if isinstance(item, str):
        return WatchedPlace(location=item, name=None, thresholds=dict(defaults))
    if not isinstance(item, dict) or not isinstance(item.get("location"), str):
        raise WatchConfigError(f"{where}: expected a place name or a mapping with `location`")
    _no_unknown(item, {"location", "name", *KINDS}, where)
    own = {k: _threshold(item[k], f"{where}.{k}") for k in KINDS if k in item}
    place = WatchedPlace(
        location=item["location"], name=item.get("name"), thresholds=dict(defaults)
    )
    return replace(place, thresholds=place.thresholds | own)


def _threshold(value: Any, where: str) -> float | None:
    if value is None or value is False or str(value).strip().lower() in OFF_WORDS:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise WatchConfigError(f"{where}: expected a number or off, got {value!r}") from None
    if number < 0:
        raise WatchConfigError(f"{where}: must not be negative, got {value!r}")
    return number


def _lookahead(value: Any, where: str) -> int:
    try:
        hours = int(value)
    except (TypeError, ValueError):
        raise WatchConfigError(f"{where}: expected whole hours, got {value!r}") from None
    if not 1 <= hours <= MAX_LOOKAHEAD_HOURS:
        raise WatchConfigError(f"{where}: must be 1..{MAX_LOOKAHEAD_HOURS}, got {hours}")
    return hours


def _no_unknown(data: dict[str, Any], known: set[str], where: str) -> None:
    for key in data:
        if key not in known:
            raise WatchConfigError(
                f"{where}: unknown key {key!r} (known: {', '.join(sorted(known))})"
            )
