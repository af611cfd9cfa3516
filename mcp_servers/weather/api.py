"""The Open-Meteo HTTP client: geocoding, forecast and air-quality endpoints.

Open-Meteo needs no key. Its three APIs live on three hosts; `WEATHER_API_BASE` replaces
all three with one base (`{base}/v1/search`, `{base}/v1/forecast`, `{base}/v1/air-quality`)
so tests and self-hosted instances need one setting. Every request has a deadline, and
every failure becomes `OpenMeteoError` with a sentence a person can act on: the API's own
`reason` for its HTTP 400s, the status for other errors, "unreachable" for network ones.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp

GEOCODING_BASE = "https://geocoding-api.open-meteo.com"
FORECAST_BASE = "https://api.open-meteo.com"
AIR_QUALITY_BASE = "https://air-quality-api.open-meteo.com"
BASE_ENV = "WEATHER_API_BASE"
# Open-Meteo usually answers in well under a second; beyond this the model should hear so.
REQUEST_TIMEOUT_SECONDS = 15.0
USER_AGENT = "bothost-mcp-weather/0.1 (+https://github.com/bothost)"


class OpenMeteoError(Exception):
    """A request to Open-Meteo failed; the message says why in plain words."""


class OpenMeteo:
    """Thin async client for the three Open-Meteo APIs (one shared aiohttp session)."""

    def __init__(self, base: str | None = None, timeout: float = REQUEST_TIMEOUT_SECONDS):
        base = (base if base is not None else os.environ.get(BASE_ENV, "")).rstrip("/")
        self.base = base or None
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def url(self, api: str) -> str:
        """Full URL of `search`, `forecast` or `air-quality`."""
        default = {
            "search": GEOCODING_BASE,
            "forecast": FORECAST_BASE,
            "air-quality": AIR_QUALITY_BASE,
        }[api]
        return f"{self.base or default}/v1/{api}"

    async def geocode(self, name: str, count: int = 10, language: str = "en") -> list[dict]:
        """Places matching `name`, best first; [] when nothing matches."""
        data = await self._get(
            "search", {"name": name, "count": count, "language": language, "format": "json"}
        )
        # The API leaves out `results` entirely when nothing matches.
        return list(data.get("results") or [])

    async def forecast(self, latitude: float, longitude: float, **params: Any) -> dict[str, Any]:
        """The forecast endpoint; `params` such as current=…, hourly=…, daily=…."""
        query = {"latitude": latitude, "longitude": longitude, "timezone": "auto", **params}
        return await self._get("forecast", query)

    async def air_quality(self, latitude: float, longitude: float, **params: Any) -> dict:
        query = {"latitude": latitude, "longitude": longitude, "timezone": "auto", **params}
        return await self._get("air-quality", query)

    async def _get(self, api: str, params: dict[str, Any]) -> dict[str, Any]:
        # aiohttp is imported at the first request, not at start-up: its import is ~0.25 s
        # of CPU, most of the server's start, and a server may answer no request (issue 19).
        import aiohttp

        query = {k: _query_value(v) for k, v in params.items() if v is not None}
        url = self.url(api)
        try:
            async with asyncio.timeout(self.timeout):
                async with self._client().get(url, params=query) as response:
                    body = await _json_or_none(response)
                    if response.status >= 400:
                        raise OpenMeteoError(_error_text(api, response.status, body))
        except TimeoutError:
            raise OpenMeteoError(
                f"Open-Meteo {api} did not answer within {self.timeout:.0f} s"
            ) from None
        except aiohttp.ClientError as exc:
            raise OpenMeteoError(f"Open-Meteo {api} is unreachable ({exc})") from None
        if not isinstance(body, dict):
            raise OpenMeteoError(f"Open-Meteo {api} sent an answer that is not JSON")
        return body

    def _client(self) -> aiohttp.ClientSession:
        import aiohttp  # lazily, as in _get

        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers={"User-Agent": USER_AGENT})
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def _query_value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


async def _json_or_none(response: aiohttp.ClientResponse) -> Any:
    try:
        return await response.json(content_type=None)
    except ValueError:
        return None


def _error_text(api: str, status: int, body: Any) -> str:
    if isinstance(body, dict) and body.get("reason"):
        return f"Open-Meteo {api} refused the request: {body['reason']}"
    return f"Open-Meteo {api} answered HTTP {status}"
