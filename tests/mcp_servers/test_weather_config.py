"""The weather watch configuration: environment, YAML/JSON file, errors."""

from __future__ import annotations

import json

import pytest
from bothost.mcp_servers.weather.watchconfig import DEFAULT_THRESHOLDS, WatchConfigError, load


def test_environment_places_and_thresholds():
    config = load(
        {
            "WEATHER_WATCH": "Zurich; 47.37,8.54 ;",
            "WEATHER_ALERT_WIND_GUSTS": "50",
            "WEATHER_ALERT_AQI": "off",
            "WEATHER_LOOKAHEAD_HOURS": "6",
        }
    )
    assert [p.location for p in config.places] == ["Zurich", "47.37,8.54"]
    assert config.places[0].thresholds == DEFAULT_THRESHOLDS | {"wind_gusts": 50.0, "aqi": None}
    assert config.places[0].active_kinds() == ["rain_probability", "temperature_drop", "wind_gusts"]
    assert config.lookahead_hours == 6


def test_nothing_configured_watches_nothing():
    assert load({}).places == []


def test_yaml_file_overrides_environment_defaults(tmp_path):
    path = tmp_path / "watch.yaml"
    path.write_text(
        "lookahead_hours: 24\n"
        "thresholds: {rain_probability: 50}\n"
        "places:\n"
        "  - Zurich\n"
        "  - {location: '46.95,7.45', name: Bern office, wind_gusts: 40, aqi: null}\n"
    )
    config = load(
        {
            "WEATHER_WATCH_FILE": str(path),
            "WEATHER_ALERT_TEMPERATURE_DROP": "5",
            "WEATHER_WATCH": "ignored",
        }
    )
    zurich, bern = config.places
    assert (
        zurich.thresholds["rain_probability"] == 50 and zurich.thresholds["temperature_drop"] == 5
    )
    assert bern.name == "Bern office" and bern.thresholds["wind_gusts"] == 40
    assert bern.thresholds["aqi"] is None and config.lookahead_hours == 24


def test_json_file(tmp_path):
    path = tmp_path / "watch.json"
    path.write_text(json.dumps({"places": [{"location": "Bern", "aqi": 60}]}))
    (bern,) = load({"WEATHER_WATCH_FILE": str(path)}).places
    assert bern.thresholds["aqi"] == 60


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("places: [{location: Bern, rain: 50}]", "places[0]: unknown key 'rain'"),
        ("places: Bern", "places: expected a list"),
        ("thresholds: {wind_gusts: strong}", "thresholds.wind_gusts: expected a number or off"),
        ("lookahead_hours: 100", "lookahead_hours: must be 1..48"),
        ("places: [{name: nowhere}]", "expected a place name or a mapping with `location`"),
        ("places: [Bern", "not valid YAML"),
    ],
)
def test_file_errors_name_the_key(tmp_path, text, message):
    path = tmp_path / "watch.yaml"
    path.write_text(text)
    with pytest.raises(WatchConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load({"WEATHER_WATCH_FILE": str(path)})


def test_missing_file_and_bad_env():
    with pytest.raises(WatchConfigError, match="cannot read"):
        load({"WEATHER_WATCH_FILE": "/nonexistent/watch.yaml"})
    with pytest.raises(WatchConfigError, match="WEATHER_ALERT_AQI: must not be negative"):
        load({"WEATHER_WATCH": "Bern", "WEATHER_ALERT_AQI": "-1"})
