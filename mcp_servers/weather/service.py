"""What the weather tools answer: Open-Meteo responses reshaped for a model to read.

Each method resolves the location, asks Open-Meteo for exactly the variables it reports,
and returns a flat dict with plain names (`temperature`, not `temperature_2m`), the units
the API reported, and a one-line `summary` a person can read. API failures become
`ToolError`s, so the model sees the reason as an error result.
"""

from __future__ import annotations

from typing import Any

from bothost.mcp_servers.kit import ToolError

from .api import OpenMeteo, OpenMeteoError
from .conditions import UNITS, compass, describe_code, european_aqi_level, fmt, us_aqi_level
from .places import Place, PlaceResolver

CURRENT_VARS = {
    "temperature_2m": "temperature",
    "apparent_temperature": "apparent_temperature",
    "relative_humidity_2m": "humidity",
    "precipitation": "precipitation",
    "weather_code": "weather_code",
    "cloud_cover": "cloud_cover",
    "pressure_msl": "pressure",
    "wind_speed_10m": "wind_speed",
    "wind_direction_10m": "wind_direction",
    "wind_gusts_10m": "wind_gusts",
    "is_day": "is_day",
}
DAILY_VARS = {
    "weather_code": "weather_code",
    "temperature_2m_max": "temperature_max",
    "temperature_2m_min": "temperature_min",
    "precipitation_sum": "precipitation_sum",
    "precipitation_probability_max": "precipitation_probability_max",
    "wind_speed_10m_max": "wind_speed_max",
    "wind_gusts_10m_max": "wind_gusts_max",
    "sunrise": "sunrise",
    "sunset": "sunset",
}
HOURLY_VARS = {
    "temperature_2m": "temperature",
    "precipitation_probability": "precipitation_probability",
    "precipitation": "precipitation",
    "weather_code": "weather_code",
    "wind_speed_10m": "wind_speed",
    "wind_gusts_10m": "wind_gusts",
}
AIR_VARS = {
    "european_aqi": "european_aqi",
    "us_aqi": "us_aqi",
    "pm2_5": "pm2_5",
    "pm10": "pm10",
    "ozone": "ozone",
    "nitrogen_dioxide": "nitrogen_dioxide",
    "sulphur_dioxide": "sulphur_dioxide",
    "carbon_monoxide": "carbon_monoxide",
}
MAX_FORECAST_DAYS = 16
MAX_FORECAST_HOURS = 168


class WeatherService:
    """The tools' logic over one `OpenMeteo` client and one place cache."""

    def __init__(self, api: OpenMeteo) -> None:
        self.api = api
        self.places = PlaceResolver(api)

    async def geocode(self, location: str, count: int) -> dict[str, Any]:
        if not 1 <= count <= 100:
            raise ToolError("count must be between 1 and 100")
        places = await _call(self.places.search(location, count))
        if not places:
            raise ToolError(f"Unknown place {location!r}: the geocoder found nothing by that name.")
        lines = [f"{p.label} ({p.latitude:.4f},{p.longitude:.4f})" for p in places]
        return {"results": [p.as_dict() for p in places], "summary": "; ".join(lines)}

    async def current(self, location: str, units: str) -> dict[str, Any]:
        place = await _call(self.places.resolve(location))
        data = await _call(
            self.api.forecast(
                place.latitude, place.longitude, current=list(CURRENT_VARS), **UNITS[units]
            )
        )
        now = data.get("current") or {}
        labels = data.get("current_units") or {}
        out: dict[str, Any] = {
            "location": place.as_dict(),
            "time": now.get("time"),
            "timezone": data.get("timezone"),
            "units": units,
        }
        out |= {ours: now.get(theirs) for theirs, ours in CURRENT_VARS.items()}
        out["is_day"] = bool(out["is_day"]) if out["is_day"] is not None else None
        out["conditions"] = describe_code(out["weather_code"])
        out["wind_from"] = compass(out["wind_direction"])
        out["unit_labels"] = _labels(labels, CURRENT_VARS)
        t, w, p = (
            out["unit_labels"].get(k, "") for k in ("temperature", "wind_speed", "precipitation")
        )
        out["summary"] = (
            f"{place.label}: {fmt(out['temperature'], t)} (feels like "
            f"{fmt(out['apparent_temperature'], t)}), {out['conditions']}, wind "
            f"{fmt(out['wind_speed'], w, 0)} {out['wind_from'] or ''} gusting "
            f"{fmt(out['wind_gusts'], w, 0)}, humidity {fmt(out['humidity'], '%', 0)}, "
            f"precipitation {fmt(out['precipitation'], p)}"
            f" (at {out['time']} local time)"
        )
        return out

    async def forecast(
        self, location: str, days: int, hourly: bool, hours: int, units: str
    ) -> dict[str, Any]:
        if not 1 <= days <= MAX_FORECAST_DAYS:
            raise ToolError(f"days must be between 1 and {MAX_FORECAST_DAYS}")
        if hourly and not 1 <= hours <= MAX_FORECAST_HOURS:
            raise ToolError(f"hours must be between 1 and {MAX_FORECAST_HOURS}")
        place = await _call(self.places.resolve(location))
        params: dict[str, Any] = {"daily": list(DAILY_VARS), "forecast_days": days, **UNITS[units]}
        if hourly:
            params |= {"hourly": list(HOURLY_VARS), "forecast_hours": hours}
        data = await _call(self.api.forecast(place.latitude, place.longitude, **params))
        daily = _rows(data.get("daily") or {}, DAILY_VARS, "date")
        for row in daily:
            row["conditions"] = describe_code(row.get("weather_code"))
        labels = _labels(data.get("daily_units") or {}, DAILY_VARS)
        out: dict[str, Any] = {
            "location": place.as_dict(),
            "timezone": data.get("timezone"),
            "units": units,
            "unit_labels": labels,
            "daily": daily,
        }
        if hourly:
            out["hourly"] = _rows(data.get("hourly") or {}, HOURLY_VARS, "time")
            for row in out["hourly"]:
                row["conditions"] = describe_code(row.get("weather_code"))
            out["hourly_unit_labels"] = _labels(data.get("hourly_units") or {}, HOURLY_VARS)
        out["summary"] = _forecast_summary(place, daily, labels)
        return out

    async def air_quality(self, location: str) -> dict[str, Any]:
        place = await _call(self.places.resolve(location))
        data = await _call(
            self.api.air_quality(place.latitude, place.longitude, current=list(AIR_VARS))
        )
        now = data.get("current") or {}
        out: dict[str, Any] = {
            "location": place.as_dict(),
            "time": now.get("time"),
            "timezone": data.get("timezone"),
        }
        out |= {ours: now.get(theirs) for theirs, ours in AIR_VARS.items()}
        out["european_aqi_level"] = european_aqi_level(out["european_aqi"])
        out["us_aqi_level"] = us_aqi_level(out["us_aqi"])
        out["unit_labels"] = _labels(data.get("current_units") or {}, AIR_VARS)
        pm = out["unit_labels"].get("pm2_5", "μg/m³")
        out["summary"] = (
            f"{place.label}: European AQI {fmt(out['european_aqi'], '', 0)} "
            f"({out['european_aqi_level'] or 'n/a'}), US AQI {fmt(out['us_aqi'], '', 0)} "
            f"({out['us_aqi_level'] or 'n/a'}); PM2.5 {fmt(out['pm2_5'], pm)}, "
            f"PM10 {fmt(out['pm10'], pm)}, ozone {fmt(out['ozone'], pm)}, "
            f"NO2 {fmt(out['nitrogen_dioxide'], pm)} (at {out['time']} local time)"
        )
        return out


async def _call(awaitable: Any) -> Any:
    """Await an API call, turning `OpenMeteoError` into the model-facing `ToolError`."""
    try:
        return await awaitable
    except OpenMeteoError as exc:
        raise ToolError(str(exc)) from None


def _rows(block: dict[str, list[Any]], names: dict[str, str], key: str) -> list[dict[str, Any]]:
    """Open-Meteo's column arrays as a list of row dicts."""
    times = block.get("time") or []
    rows = []
    for index, time in enumerate(times):
        row: dict[str, Any] = {key: time}
        for theirs, ours in names.items():
            column = block.get(theirs)
            row[ours] = column[index] if isinstance(column, list) and index < len(column) else None
        rows.append(row)
    return rows


def _labels(units: dict[str, str], names: dict[str, str]) -> dict[str, str]:
    return {ours: units[theirs] for theirs, ours in names.items() if theirs in units}


def _forecast_summary(place: Place, daily: list[dict[str, Any]], labels: dict[str, str]) -> str:
    t = labels.get("temperature_max", "")
    p = labels.get("precipitation_sum", "")
    lines = [f"{place.label}:"]
    for day in daily:
        lines.append(
            f"{day['date']}: {day['conditions']}, {fmt(day['temperature_min'], t)} to "
            f"{fmt(day['temperature_max'], t)}, precipitation {fmt(day['precipitation_sum'], p)}"
            f" ({fmt(day['precipitation_probability_max'], '%', 0)} chance)"
        )
    return "\n".join(lines)
