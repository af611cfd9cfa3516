"""The weather `Server`: its tools (declared in `tools`) and the alert watcher.

`build_server()` wires one `OpenMeteo` client, one `WeatherService` and one `AlertWatcher`
into a kit `Server`. The watcher is built on its first poll, from the watch file and
environment (`watchconfig`), so a bad watch file disables alerts, never the tools.
"""

from __future__ import annotations

import logging
from typing import Any

from bothost.mcp_servers.kit import Server

from . import tools, watchconfig
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


def build_server(api: OpenMeteo | None = None) -> Server:
    """The weather `Server`, talking to `api` (default: Open-Meteo or $WEATHER_API_BASE)."""
    api = api or OpenMeteo()
    weather = WeatherService(api)
    server = Server("weather", version=VERSION, instructions=INSTRUCTIONS)
    watch = _Watch(api, weather, server)
    tools.register(server, weather, watch.status)
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
