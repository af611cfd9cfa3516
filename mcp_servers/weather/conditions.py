"""Words for numbers: WMO weather codes, air-quality bands, wind directions, units.

Open-Meteo reports the sky as a WMO 4677 code and air quality as index values; a model
(and a person reading a briefing) needs the words. Bands follow the European Environment
Agency's European AQI and the US EPA's AQI.
"""

from __future__ import annotations

WMO_CODES: dict[int, str] = {
    0: "clear sky",
    1: "mainly clear",
    2: "partly cloudy",
    3: "overcast",
    45: "fog",
    48: "depositing rime fog",
    51: "light drizzle",
    53: "moderate drizzle",
    55: "dense drizzle",
    56: "light freezing drizzle",
    57: "dense freezing drizzle",
    61: "slight rain",
    63: "moderate rain",
    65: "heavy rain",
    66: "light freezing rain",
    67: "heavy freezing rain",
    71: "slight snow fall",
    73: "moderate snow fall",
    75: "heavy snow fall",
    77: "snow grains",
    80: "slight rain showers",
    81: "moderate rain showers",
    82: "violent rain showers",
    85: "slight snow showers",
    86: "heavy snow showers",
    95: "thunderstorm",
    96: "thunderstorm with slight hail",
    97: "thunderstorm with heavy hail",
    99: "thunderstorm with heavy hail",
}

# (upper bound inclusive, label) — European AQI bands of the EEA.
EUROPEAN_AQI_BANDS = [
    (20, "good"),
    (40, "fair"),
    (60, "moderate"),
    (80, "poor"),
    (100, "very poor"),
]
EUROPEAN_AQI_TOP = "extremely poor"
US_AQI_BANDS = [
    (50, "good"),
    (100, "moderate"),
    (150, "unhealthy for sensitive groups"),
    (200, "unhealthy"),
    (300, "very unhealthy"),
]
US_AQI_TOP = "hazardous"

COMPASS = [
    "N",
    "NNE",
    "NE",
    "ENE",
    "E",
    "ESE",
    "SE",
    "SSE",
    "S",
    "SSW",
    "SW",
    "WSW",
    "W",
    "WNW",
    "NW",
    "NNW",
]

UNITS = {
    "metric": {"temperature_unit": "celsius", "wind_speed_unit": "kmh", "precipitation_unit": "mm"},
    "imperial": {
        "temperature_unit": "fahrenheit",
        "wind_speed_unit": "mph",
        "precipitation_unit": "inch",
    },
}


def describe_code(code: int | float | None) -> str:
    if code is None:
        return "unknown"
    return WMO_CODES.get(int(code), f"weather code {int(code)}")


def _band(value: float | None, bands: list[tuple[int, str]], top: str) -> str | None:
    if value is None:
        return None
    for bound, label in bands:
        if value <= bound:
            return label
    return top


def european_aqi_level(value: float | None) -> str | None:
    return _band(value, EUROPEAN_AQI_BANDS, EUROPEAN_AQI_TOP)


def us_aqi_level(value: float | None) -> str | None:
    return _band(value, US_AQI_BANDS, US_AQI_TOP)


def compass(degrees: float | None) -> str | None:
    if degrees is None:
        return None
    return COMPASS[round(degrees / 22.5) % 16]


def fmt(value: float | None, unit: str = "", digits: int = 1) -> str:
    """ "3.2 °C"; "n/a" for a missing value."""
    if value is None:
        return "n/a"
    number = f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:.0f}"
    return f"{number}{' ' if unit and unit != '%' else ''}{unit}"
