"""Turning a `location` argument into coordinates: "lat,lon", or a place name to geocode.

A name may carry a qualifier after a comma ("Springfield, Illinois", "Paris, FR"): the
geocoder searches the name alone (Open-Meteo matches names, not addresses) and the
qualifier picks among the results by country, country code or region. Resolved names are
cached for the life of the process: places do not move, and the watchers resolve the same
few names on every poll.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from bothost.mcp_servers.kit import ToolError

from .api import OpenMeteo

COORDINATES = re.compile(r"^\s*(-?\d{1,3}(?:\.\d+)?)\s*[,;\s]\s*(-?\d{1,3}(?:\.\d+)?)\s*$")
# Enough candidates for a qualifier ("Springfield, Illinois") to find its match.
QUALIFIED_SEARCH_COUNT = 20
# Watched places plus whatever people ask about in a day; oldest names are forgotten first.
MAX_CACHED_PLACES = 512
# One part of a place's label: the longest real place names are under 100 characters; more
# is a broken geocoder answer, cut so that an error listing five of them stays readable.
LABEL_PART_CHARS = 100


@dataclass(frozen=True)
class Place:
    """A resolved location."""

    name: str
    latitude: float
    longitude: float
    country: str | None = None
    admin1: str | None = None
    timezone: str | None = None

    @property
    def label(self) -> str:
        """ "Zürich, Zurich, Switzerland" — name plus whatever distinguishes it."""
        return label(self.name, self.admin1, self.country)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None} | {"label": self.label}


def parse_coordinates(text: str) -> tuple[float, float] | None:
    """(lat, lon) for "47.37,8.54"; None when `text` is not a coordinate pair."""
    match = COORDINATES.match(text)
    if not match:
        return None
    lat, lon = float(match.group(1)), float(match.group(2))
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise ToolError(
            f"Coordinates out of range: {text!r} (latitude -90..90, longitude -180..180)"
        )
    return lat, lon


def place_from_result(result: dict[str, Any]) -> Place | None:
    """The `Place` a geocoder result names; None when it has no usable coordinates.

    The geocoder has been seen to answer without them (or with null ones): such a result
    names no point we could ask the forecast about, so callers skip it.
    """
    latitude = _coordinate(result.get("latitude"), 90)
    longitude = _coordinate(result.get("longitude"), 180)
    if latitude is None or longitude is None:
        return None
    return Place(
        name=result.get("name") or "?",
        latitude=latitude,
        longitude=longitude,
        country=result.get("country") or result.get("country_code"),
        admin1=result.get("admin1"),
        timezone=result.get("timezone"),
    )


def _coordinate(value: Any, limit: float) -> float | None:
    """`value` as a finite number within ±`limit`; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and -limit <= number <= limit else None


def _no_coordinates(name: str) -> ToolError:
    return ToolError(
        f"the geocoder's answer for {name!r} had no coordinates, so there is no point to "
        'look up. Try another spelling, or pass "lat,lon".'
    )


def label(name: Any, *extras: Any) -> str:
    """``name`` and each of ``extras`` that says more (not empty, not a repeat), joined with
    commas; each part as one line of text of at most :data:`LABEL_PART_CHARS` (the
    geocoder's values are not trusted to be short strings)."""
    parts = [_label_part(name) or "?"]
    for extra in extras:
        text = _label_part(extra)
        if text and text not in parts:
            parts.append(text)
    return ", ".join(parts)


def _label_part(value: Any) -> str:
    text = " ".join(str(value).split()) if value is not None else ""
    return text if len(text) <= LABEL_PART_CHARS else text[: LABEL_PART_CHARS - 1] + "…"


def _result_label(result: dict[str, Any]) -> str:
    """How a geocoder result is named in an error, coordinates or not: as the
    :class:`Place` it would make (see :func:`place_from_result`) is labelled."""
    country = result.get("country") or result.get("country_code")
    return label(result.get("name"), result.get("admin1"), country)


class PlaceResolver:
    """Resolves `location` strings through the geocoder, with a per-process cache."""

    def __init__(self, api: OpenMeteo) -> None:
        self.api = api
        self._cache: dict[str, Place] = {}

    async def resolve(self, location: str) -> Place:
        """The place `location` names; `ToolError` for an empty or unknown one."""
        text = (location or "").strip()
        if not text:
            raise ToolError('location is empty: give a place name or "lat,lon"')
        coordinates = parse_coordinates(text)
        if coordinates:
            return Place(
                name=f"{coordinates[0]:.4f},{coordinates[1]:.4f}",
                latitude=coordinates[0],
                longitude=coordinates[1],
            )
        key = text.casefold()
        if key not in self._cache:
            place = await self._geocode(text)
            if len(self._cache) >= MAX_CACHED_PLACES:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = place
        return self._cache[key]

    async def search(self, location: str, count: int) -> list[Place]:
        """Every match for a name (for the `geocode` tool), best first.

        Coordinates come back as they are: Open-Meteo has no reverse geocoding.
        """
        if parse_coordinates(location or ""):
            return [await self.resolve(location)]
        name, qualifier = _split_qualifier(location)
        results = await self.api.geocode(
            name, count=max(count, QUALIFIED_SEARCH_COUNT) if qualifier else count
        )
        matches = [r for r in results if _matches(r, qualifier)]
        places = [p for p in map(place_from_result, matches) if p is not None]
        if matches and not places:
            raise _no_coordinates(location)
        return places[:count]

    async def _geocode(self, text: str) -> Place:
        name, qualifier = _split_qualifier(text)
        count = QUALIFIED_SEARCH_COUNT if qualifier else 1
        results = await self.api.geocode(name, count=count)
        if not results:
            raise ToolError(
                f"Unknown place {text!r}: the geocoder found nothing by that "
                'name. Check the spelling, or pass "lat,lon".'
            )
        matched = False
        for result in results:
            if _matches(result, qualifier):
                matched = True
                if place := place_from_result(result):
                    return place
        if matched:
            raise _no_coordinates(text)
        found = "; ".join(_result_label(r) for r in results[:5])
        raise ToolError(f"No place {name!r} in {qualifier!r}. Found: {found}")


def _split_qualifier(text: str) -> tuple[str, str | None]:
    name, _, qualifier = text.partition(",")
    return name.strip(), (qualifier.strip() or None)


def _matches(result: dict[str, Any], qualifier: str | None) -> bool:
    if not qualifier:
        return True
    wanted = qualifier.casefold()
    values = [
        str(result.get(f) or "").casefold() for f in ("country_code", "country", "admin1", "admin2")
    ]
    if wanted in values:
        return True
    # A prefix ("Illin") is fine, but "CH" must not pick Chile or China over Switzerland.
    return len(wanted) >= 3 and any(v.startswith(wanted) for v in values[1:])
