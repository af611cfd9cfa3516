"""A fake Open-Meteo (geocoding, forecast, air-quality) on 127.0.0.1, in the real format.

One aiohttp app serves `/v1/search`, `/v1/forecast` and `/v1/air-quality` like the three
real hosts do, so a server pointed at it with `WEATHER_API_BASE` cannot tell the
difference: column arrays per variable, `*_units` blocks, local ISO times without seconds,
no `results` key when a name matches nothing, HTTP 400 `{"error": true, "reason": …}` for
an unknown variable or a latitude out of range. Tests shape the weather per place through
`Conditions` and can change it between polls; `fail_with` makes the next requests fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aiohttp import web

from tests.helpers import serve_app

KNOWN_CURRENT = {
    "temperature_2m",
    "relative_humidity_2m",
    "apparent_temperature",
    "is_day",
    "precipitation",
    "rain",
    "showers",
    "snowfall",
    "weather_code",
    "cloud_cover",
    "pressure_msl",
    "surface_pressure",
    "wind_speed_10m",
    "wind_direction_10m",
    "wind_gusts_10m",
}
KNOWN_HOURLY = {
    "temperature_2m",
    "precipitation_probability",
    "precipitation",
    "weather_code",
    "wind_speed_10m",
    "wind_gusts_10m",
    "relative_humidity_2m",
}
KNOWN_DAILY = {
    "weather_code",
    "temperature_2m_max",
    "temperature_2m_min",
    "precipitation_sum",
    "precipitation_probability_max",
    "wind_speed_10m_max",
    "wind_gusts_10m_max",
    "sunrise",
    "sunset",
}
KNOWN_AIR = {
    "european_aqi",
    "us_aqi",
    "pm2_5",
    "pm10",
    "ozone",
    "nitrogen_dioxide",
    "sulphur_dioxide",
    "carbon_monoxide",
    "dust",
    "uv_index",
}
AIR_UNITS = {"european_aqi": "EAQI", "us_aqi": "USAQI"}

ZURICH = {
    "id": 2657896,
    "name": "Zürich",
    "latitude": 47.36667,
    "longitude": 8.55,
    "elevation": 429.0,
    "feature_code": "PPLA",
    "country_code": "CH",
    "admin1_id": 2657895,
    "timezone": "Europe/Zurich",
    "population": 341730,
    "country_id": 2658434,
    "country": "Switzerland",
    "admin1": "Zurich",
}
BERN = {
    "id": 2661552,
    "name": "Bern",
    "latitude": 46.94809,
    "longitude": 7.44744,
    "elevation": 542.0,
    "feature_code": "PPLC",
    "country_code": "CH",
    "timezone": "Europe/Zurich",
    "population": 121631,
    "country": "Switzerland",
    "admin1": "Bern",
}
SPRINGFIELD_IL = {
    "id": 4250542,
    "name": "Springfield",
    "latitude": 39.80172,
    "longitude": -89.64371,
    "country_code": "US",
    "timezone": "America/Chicago",
    "country": "United States",
    "admin1": "Illinois",
    "admin2": "Sangamon",
}
SPRINGFIELD_MO = {
    "id": 4409896,
    "name": "Springfield",
    "latitude": 37.21533,
    "longitude": -93.29824,
    "country_code": "US",
    "timezone": "America/Chicago",
    "country": "United States",
    "admin1": "Missouri",
    "admin2": "Greene",
}


@dataclass
class Conditions:
    """The weather the fake reports for one place (metric); lists are per hour/day."""

    temperature: float = 12.0
    apparent_temperature: float = 10.5
    humidity: float = 71
    weather_code: int = 3
    wind_speed: float = 11.2
    wind_direction: float = 300
    wind_gusts: float = 24.5
    precipitation: float = 0.0
    hourly_precipitation_probability: list[float] = field(default_factory=lambda: [10.0])
    hourly_wind_gusts: list[float] = field(default_factory=lambda: [20.0])
    daily_max: list[float] = field(default_factory=lambda: [14.0, 13.5, 12.0])
    daily_min: list[float] = field(default_factory=lambda: [5.0, 4.0, 3.5])
    european_aqi: float = 32
    us_aqi: float = 41
    pm2_5: float = 8.4
    pm10: float = 14.1


class FakeOpenMeteo:
    """The fake service; `base` is what `WEATHER_API_BASE` should be set to."""

    def __init__(self) -> None:
        self.places: dict[str, list[dict[str, Any]]] = {
            "zurich": [ZURICH],
            "zürich": [ZURICH],
            "bern": [BERN],
            "springfield": [SPRINGFIELD_MO, SPRINGFIELD_IL],
        }
        self.weather: dict[tuple[float, float], Conditions] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.failures: list[tuple[int, Any]] = []
        self.now = datetime(2026, 12, 2, 12, 0)
        self.base = ""
        self._runner: web.AppRunner | None = None

    def conditions(self, lat: float, lon: float) -> Conditions:
        return self.weather.setdefault((round(lat, 2), round(lon, 2)), Conditions())

    def at(self, place: dict[str, Any]) -> Conditions:
        """The (mutable) conditions at a geocoding result such as ZURICH."""
        return self.conditions(place["latitude"], place["longitude"])

    def fail_with(self, status: int, body: Any = None, times: int = 1) -> None:
        """The next `times` requests answer `status` with `body` (JSON) instead."""
        self.failures.extend([(status, body)] * times)

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    async def start(self) -> FakeOpenMeteo:
        app = web.Application()
        app.router.add_get("/v1/search", self._search)
        app.router.add_get("/v1/forecast", self._forecast)
        app.router.add_get("/v1/air-quality", self._air)
        self._runner, self.base = await serve_app(app, access_log=None)
        return self

    async def stop(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    # endpoints ------------------------------------------------------------------------

    def _record(self, request: web.Request) -> web.Response | None:
        self.requests.append((request.path, dict(request.query)))
        if self.failures:
            status, body = self.failures.pop(0)
            if body is None:
                return web.Response(status=status, text="upstream trouble")
            return web.json_response(body, status=status)
        return None

    async def _search(self, request: web.Request) -> web.Response:
        if failed := self._record(request):
            return failed
        name = request.query.get("name", "").strip().casefold()
        if not name:
            return _bad("Parameter 'name' is required")
        count = int(request.query.get("count", "10"))
        results = self.places.get(name, [])[:count]
        body: dict[str, Any] = {"generationtime_ms": 0.41}
        if results:  # the real API leaves the key out when nothing matches
            body["results"] = results
        return web.json_response(body)

    def _location(self, request: web.Request) -> tuple[float, float] | web.Response:
        try:
            lat, lon = float(request.query["latitude"]), float(request.query["longitude"])
        except (KeyError, ValueError):
            return _bad(
                "Parameter 'latitude' and 'longitude' must have the same number of elements"
            )
        if not -90 <= lat <= 90:
            return _bad(f"Latitude must be in range of -90 to 90°. Given: {lat}.")
        if not -180 <= lon <= 180:
            return _bad(f"Longitude must be in range of -180 to 180°. Given: {lon}.")
        return lat, lon

    async def _forecast(self, request: web.Request) -> web.Response:
        if failed := self._record(request):
            return failed
        where = self._location(request)
        if isinstance(where, web.Response):
            return where
        q = request.query
        c = self.conditions(*where)
        fahrenheit = q.get("temperature_unit") == "fahrenheit"
        mph = q.get("wind_speed_unit") == "mph"
        temp = (lambda v: round(v * 9 / 5 + 32, 1)) if fahrenheit else (lambda v: v)
        wind = (lambda v: round(v / 1.609, 1)) if mph else (lambda v: v)
        t_unit, w_unit = ("°F" if fahrenheit else "°C"), ("mp/h" if mph else "km/h")
        p_unit = "inch" if q.get("precipitation_unit") == "inch" else "mm"
        body: dict[str, Any] = _header(where, "Europe/Zurich")
        for block, known in (
            ("current", KNOWN_CURRENT),
            ("hourly", KNOWN_HOURLY),
            ("daily", KNOWN_DAILY),
        ):
            names = [n for n in q.get(block, "").split(",") if n]
            for n in names:
                if n not in known:
                    return _bad(
                        f"Cannot initialize {'Forecast' if block != 'current' else ''}"
                        f"VariableWithValues from invalid String value {n} for key {block}"
                    )
        units = {
            "temperature_2m": t_unit,
            "apparent_temperature": t_unit,
            "wind_speed_10m": w_unit,
            "wind_gusts_10m": w_unit,
            "precipitation": p_unit,
            "relative_humidity_2m": "%",
            "precipitation_probability": "%",
            "weather_code": "wmo code",
            "cloud_cover": "%",
            "pressure_msl": "hPa",
            "wind_direction_10m": "°",
            "is_day": "",
            "temperature_2m_max": t_unit,
            "temperature_2m_min": t_unit,
            "precipitation_sum": p_unit,
            "precipitation_probability_max": "%",
            "wind_speed_10m_max": w_unit,
            "wind_gusts_10m_max": w_unit,
            "sunrise": "iso8601",
            "sunset": "iso8601",
        }
        if names := [n for n in q.get("current", "").split(",") if n]:
            values = {
                "temperature_2m": temp(c.temperature),
                "apparent_temperature": temp(c.apparent_temperature),
                "relative_humidity_2m": c.humidity,
                "weather_code": c.weather_code,
                "wind_speed_10m": wind(c.wind_speed),
                "wind_direction_10m": c.wind_direction,
                "wind_gusts_10m": wind(c.wind_gusts),
                "precipitation": c.precipitation,
                "is_day": 1,
                "cloud_cover": 100,
                "pressure_msl": 1012.3,
            }
            body["current_units"] = {"time": "iso8601", "interval": "seconds"} | {
                n: units.get(n, "") for n in names
            }
            body["current"] = {"time": _iso(self.now), "interval": 900} | {
                n: values.get(n, 0) for n in names
            }
        days = int(q.get("forecast_days", "7"))
        if names := [n for n in q.get("hourly", "").split(",") if n]:
            hours = int(q.get("forecast_hours", str(days * 24)))
            start = (
                self.now.replace(minute=0) if "forecast_hours" in q else self.now.replace(hour=0)
            )
            times = [start + timedelta(hours=i) for i in range(hours)]
            columns = {
                "precipitation_probability": _stretch(c.hourly_precipitation_probability, hours),
                "wind_gusts_10m": [wind(v) for v in _stretch(c.hourly_wind_gusts, hours)],
                "temperature_2m": [temp(c.temperature)] * hours,
                "wind_speed_10m": [wind(c.wind_speed)] * hours,
                "precipitation": [c.precipitation] * hours,
                "weather_code": [c.weather_code] * hours,
                "relative_humidity_2m": [c.humidity] * hours,
            }
            body["hourly_units"] = {"time": "iso8601"} | {n: units.get(n, "") for n in names}
            body["hourly"] = {"time": [_iso(t) for t in times]} | {n: columns[n] for n in names}
        if names := [n for n in q.get("daily", "").split(",") if n]:
            dates = [(self.now + timedelta(days=i)).date() for i in range(days)]
            columns = {
                "temperature_2m_max": [temp(v) for v in _stretch(c.daily_max, days)],
                "temperature_2m_min": [temp(v) for v in _stretch(c.daily_min, days)],
                "weather_code": [c.weather_code] * days,
                "precipitation_sum": [c.precipitation] * days,
                "precipitation_probability_max": [max(c.hourly_precipitation_probability)] * days,
                "wind_speed_10m_max": [wind(c.wind_speed)] * days,
                "wind_gusts_10m_max": [wind(max(c.hourly_wind_gusts))] * days,
                "sunrise": [f"{d.isoformat()}T07:51" for d in dates],
                "sunset": [f"{d.isoformat()}T16:33" for d in dates],
            }
            body["daily_units"] = {"time": "iso8601"} | {n: units.get(n, "") for n in names}
            body["daily"] = {"time": [d.isoformat() for d in dates]} | {
                n: columns[n] for n in names
            }
        return web.json_response(body)

    async def _air(self, request: web.Request) -> web.Response:
        if failed := self._record(request):
            return failed
        where = self._location(request)
        if isinstance(where, web.Response):
            return where
        names = [n for n in request.query.get("current", "").split(",") if n]
        for n in names:
            if n not in KNOWN_AIR:
                return _bad(
                    f"Cannot initialize AirQualityVariable from invalid String value {n}"
                    " for key current"
                )
        c = self.conditions(*where)
        values = {
            "european_aqi": c.european_aqi,
            "us_aqi": c.us_aqi,
            "pm2_5": c.pm2_5,
            "pm10": c.pm10,
            "ozone": 61.0,
            "nitrogen_dioxide": 17.3,
            "sulphur_dioxide": 1.2,
            "carbon_monoxide": 201.0,
        }
        body = _header(where, "Europe/Zurich")
        body["current_units"] = {"time": "iso8601", "interval": "seconds"} | {
            n: AIR_UNITS.get(n, "μg/m³") for n in names
        }
        body["current"] = {"time": _iso(self.now), "interval": 3600} | {
            n: values.get(n, 0.0) for n in names
        }
        return web.json_response(body)


def _header(where: tuple[float, float], timezone: str) -> dict[str, Any]:
    return {
        "latitude": round(where[0], 4),
        "longitude": round(where[1], 4),
        "generationtime_ms": 0.07,
        "utc_offset_seconds": 3600,
        "timezone": timezone,
        "timezone_abbreviation": "GMT+1",
        "elevation": 420.0,
    }


def _stretch(values: list[float], length: int) -> list[float]:
    """`values` padded with its last element (or cut) to `length`."""
    return (values + [values[-1]] * length)[:length]


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def _bad(reason: str) -> web.Response:
    return web.json_response({"error": True, "reason": reason}, status=400)
