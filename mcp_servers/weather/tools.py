"""The weather server's tools and watcher, declared on the kit.

`build_server()` wires one `OpenMeteo` client, one `WeatherService` and one `AlertWatcher`
into a kit `Server`; the decorated functions are thin: argument shapes and descriptions
here, behaviour in `service` and `alerts`. All tools only read: they send the location to
Open-Meteo (a fixed destination) and return public weather data.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from bothost.mcp_servers.kit import Server

from . import watchconfig
from .alerts import AlertWatcher
from .api import OpenMeteo
from .service import WeatherService

logger = logging.getLogger(__name__)

VERSION = "0.1.0"
POLL_ENV = "WEATHER_POLL_SECONDS"
DEFAULT_POLL_SECONDS = 600
INSTRUCTIONS = (
    "Weather, forecasts and air quality from Open-Meteo for any place. Every tool takes "
    "`location`: a place name (optionally qualified: 'Springfield, Illinois', 'Paris, FR') "
    "or 'lat,lon'. Use geocode when a name is ambiguous."
)
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


def build_server(api: OpenMeteo | None = None) -> Server:
    """The weather `Server`, talking to `api` (default: Open-Meteo or $WEATHER_API_BASE)."""
    api = api or OpenMeteo()
    weather = WeatherService(api)
    server = Server("weather", version=VERSION, instructions=INSTRUCTIONS)
    watch = _Watch(api, weather, server)

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
        return watch.status(location)

    server.on_shutdown(api.close)

    @server.watcher(interval_env=POLL_ENV, default_interval=DEFAULT_POLL_SECONDS)
    async def weather_alerts(server: Server) -> None:
        await watch.poll()

    return server


class _Watch:
    """The alert watcher, built lazily so a bad watch file only disables alerts."""

    def __init__(self, api: OpenMeteo, weather: WeatherService, server: Server) -> None:
        self.api, self.weather, self.server = api, weather, server
        self.error: str | None = None
        self.watcher: AlertWatcher | None = None
        try:
            self.config = watchconfig.load()
        except watchconfig.WatchConfigError as exc:
            logger.error("weather alerts disabled: %s", exc)
            self.config, self.error = watchconfig.WatchConfig(), str(exc)

    async def poll(self) -> None:
        if not self.config.places:
            return
        if self.watcher is None:
            self.watcher = AlertWatcher(
                self.api, self.weather.places, self.config, self.server.state_dir()
            )
        await self.watcher.poll(self.server.notify)

    def status(self, location: str | None) -> dict[str, Any]:
        config = self.config.describe()
        alerts = self.watcher.active_alerts() if self.watcher else []
        errors = dict(self.watcher.last_errors) if self.watcher else {}
        if location:
            key = " ".join(location.casefold().split())
            config["places"] = [p for p in config["places"] if p["location"].casefold() == key]
            if not config["places"]:
                config["note"] = f"{location!r} is not a watched place"
            alerts = [a for a in alerts if a["key"].startswith(f"{key}|")]
            errors = {k: v for k, v in errors.items() if k.casefold() == key}
        return {
            "server": f"weather {VERSION}",
            "api": {name: self.api.url(name) for name in ("search", "forecast", "air-quality")},
            "watch": config,
            "watch_config_error": self.error,
            "poll_seconds": self.server.watchers[0].interval() if self.server.watchers else None,
            "last_poll": self.watcher.last_poll if self.watcher else None,
            "active_alerts": alerts,
            "errors": errors,
        }
