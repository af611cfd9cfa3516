"""The weather server's tools, declared on the kit.

`register(server, weather, watch_status)` declares each tool with `@server.tool`; the functions
are thin: argument shapes and descriptions here, behaviour in `service` (and, for `status`,
the alert watcher's state). All tools only read: they send the location to Open-Meteo (a
fixed destination) and return public weather data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from bothost.mcp_servers.kit import Server

from .service import WeatherService

READ_ONLY = {"readOnlyHint": True, "openWorldHint": True}
# The location leaves to Open-Meteo only (fixed destination); replies are public data.
LOOKUP = {"private": False, "untrusted": True, "egress": "fixed", "destructive": False}
LOCAL = {"private": False, "untrusted": False, "egress": "none", "destructive": False}

Units = Literal["metric", "imperial"]

PLACE_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "label": {"type": "string"},
        "latitude": {"type": "number"},
        "longitude": {"type": "number"},
        "country": {"type": "string"},
        "admin1": {"type": "string"},
        "timezone": {"type": "string"},
    },
    "required": ["name", "latitude", "longitude", "label"],
}
NUMBER = {"type": ["number", "null"]}
AIR_QUALITY_SCHEMA = {
    "type": "object",
    "properties": {
        "location": PLACE_SCHEMA,
        "time": {"type": ["string", "null"]},
        "european_aqi": NUMBER,
        "european_aqi_level": {"type": ["string", "null"]},
        "us_aqi": NUMBER,
        "us_aqi_level": {"type": ["string", "null"]},
        "pm2_5": NUMBER,
        "pm10": NUMBER,
        "ozone": NUMBER,
        "nitrogen_dioxide": NUMBER,
        "sulphur_dioxide": NUMBER,
        "carbon_monoxide": NUMBER,
        "unit_labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "summary": {"type": "string"},
    },
    "required": ["location", "european_aqi", "us_aqi", "pm2_5", "pm10", "summary"],
}
CURRENT_SCHEMA = {
    "type": "object",
    "properties": {
        "location": PLACE_SCHEMA,
        "time": {"type": ["string", "null"]},
        "units": {"enum": ["metric", "imperial"]},
        "temperature": NUMBER,
        "apparent_temperature": NUMBER,
        "humidity": NUMBER,
        "precipitation": NUMBER,
        "weather_code": NUMBER,
        "conditions": {"type": "string"},
        "cloud_cover": NUMBER,
        "pressure": NUMBER,
        "wind_speed": NUMBER,
        "wind_direction": NUMBER,
        "wind_from": {"type": ["string", "null"]},
        "wind_gusts": NUMBER,
        "is_day": {"type": ["boolean", "null"]},
        "unit_labels": {"type": "object"},
        "summary": {"type": "string"},
    },
    "required": ["location", "temperature", "conditions", "summary"],
}
FORECAST_SCHEMA = {
    "type": "object",
    "properties": {
        "location": PLACE_SCHEMA,
        "units": {"enum": ["metric", "imperial"]},
        "daily": {"type": "array", "items": {"type": "object"}},
        "hourly": {"type": "array", "items": {"type": "object"}},
        "unit_labels": {"type": "object"},
        "summary": {"type": "string"},
    },
    "required": ["location", "daily", "summary"],
}
GEOCODE_SCHEMA = {
    "type": "object",
    "properties": {
        "results": {"type": "array", "items": PLACE_SCHEMA},
        "summary": {"type": "string"},
    },
    "required": ["results", "summary"],
}


def register(
    server: Server, weather: WeatherService, watch_status: Callable[[str | None], dict[str, Any]]
) -> None:
    """Declare the weather tools on `server`: lookups go through `weather`; the `status`
    tool answers with `watch_status(location)`, the alert watcher's state."""

    @server.tool(annotations=READ_ONLY, capabilities=LOOKUP, output_schema=GEOCODE_SCHEMA)
    async def geocode(location: str, count: int = 5) -> dict:
        """Find places by name, with coordinates, region, country and time zone.

        Args:
            location: A place name, optionally qualified ("Springfield, Illinois").
            count: How many matches to return (1-100).
        """
        return await weather.geocode(location, count)

    @server.tool(annotations=READ_ONLY, capabilities=LOOKUP, output_schema=CURRENT_SCHEMA)
    async def current(location: str, units: Units = "metric") -> dict:
        """Current weather at a place: temperature, feels-like, sky, wind, humidity, rain.

        Args:
            location: A place name or "lat,lon".
            units: metric (°C, km/h, mm) or imperial (°F, mph, inch).
        """
        return await weather.current(location, units)

    @server.tool(annotations=READ_ONLY, capabilities=LOOKUP, output_schema=FORECAST_SCHEMA)
    async def forecast(
        location: str, days: int = 3, hourly: bool = False, hours: int = 24, units: Units = "metric"
    ) -> dict:
        """Daily forecast (highs, lows, rain, wind, sunrise) and optionally hour by hour.

        Args:
            location: A place name or "lat,lon".
            days: Days of daily forecast, starting today (1-16).
            hourly: Also return hourly rows, starting at the current hour.
            hours: How many hourly rows (1-168) when hourly is true.
            units: metric (°C, km/h, mm) or imperial (°F, mph, inch).
        """
        return await weather.forecast(location, days, hourly, hours, units)

    @server.tool(annotations=READ_ONLY, capabilities=LOOKUP, output_schema=AIR_QUALITY_SCHEMA)
    async def air_quality(location: str) -> dict:
        """Air quality now: European and US AQI with their bands, PM2.5, PM10, O3, NO2, SO2, CO.

        Args:
            location: A place name or "lat,lon".
        """
        return await weather.air_quality(location)

    @server.tool(annotations={"readOnlyHint": True, "openWorldHint": False}, capabilities=LOCAL)
    async def status(location: str | None = None) -> dict:
        """The server's state: API endpoints, watched places, thresholds and active alerts.

        Args:
            location: Only this watched place (as configured); all places when omitted.
        """
        return watch_status(location)
