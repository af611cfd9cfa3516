"""The weather server through the official SDK client, against a fake Open-Meteo."""

from __future__ import annotations

import pytest

from tests.fakes.open_meteo import BERN, SPRINGFIELD_IL, SPRINGFIELD_MO, ZURICH

CAPS = "bothost/capabilities"


@pytest.fixture
def weather(mcp_stdio, weather_argv, open_meteo):
    def start(**env):
        return mcp_stdio(weather_argv, env={"WEATHER_API_BASE": open_meteo.base, **env})

    return start


async def test_lists_the_five_tools_each_taking_location(weather):
    async with weather() as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"geocode", "current", "forecast", "air_quality", "status"}
    for tool in tools.values():
        assert "location" in tool.input_schema["properties"]
        assert set(tool.meta[CAPS]) >= {"private", "untrusted", "egress", "destructive"}
        assert tool.annotations.read_only_hint is True
    assert tools["current"].input_schema["required"] == ["location"]
    assert "required" not in tools["status"].input_schema
    aq = tools["air_quality"].output_schema["properties"]
    assert aq["european_aqi"]["type"] == ["number", "null"] and "summary" in aq


async def test_current_by_name(weather, open_meteo):
    open_meteo.at(ZURICH).temperature = 3.5
    async with weather() as (client, _):
        result = await client.call_tool("current", {"location": "Zurich"})
    assert not result.is_error
    data = result.structured_content
    assert data["temperature"] == 3.5 and data["conditions"] == "overcast"
    assert data["location"]["label"] == "Zürich, Zurich, Switzerland"
    assert data["wind_from"] == "WNW" and data["unit_labels"]["temperature"] == "°C"
    assert data["summary"].startswith("Zürich, Zurich, Switzerland: 3.5 °C")
    forecast_query = dict(open_meteo.requests)["/v1/forecast"]
    assert forecast_query["latitude"] == "47.36667" and forecast_query["timezone"] == "auto"


async def test_current_by_coordinates_in_imperial_units(weather, open_meteo):
    open_meteo.conditions(46.95, 7.45).temperature = 10.0
    async with weather() as (client, _):
        result = await client.call_tool("current", {"location": "46.95, 7.45", "units": "imperial"})
    data = result.structured_content
    assert data["temperature"] == 50.0 and data["unit_labels"]["temperature"] == "°F"
    assert "/v1/search" not in open_meteo.paths()  # coordinates need no geocoding


async def test_forecast_daily_and_hourly(weather, open_meteo):
    open_meteo.at(BERN).daily_max = [9.0, 4.0, 2.0]
    open_meteo.at(BERN).hourly_precipitation_probability = [0, 20, 85]
    async with weather() as (client, _):
        result = await client.call_tool(
            "forecast", {"location": "Bern", "days": 3, "hourly": True, "hours": 6}
        )
    data = result.structured_content
    assert [d["temperature_max"] for d in data["daily"]] == [9.0, 4.0, 2.0]
    assert data["daily"][0]["date"] == "2026-12-02" and data["daily"][0]["sunrise"]
    assert len(data["hourly"]) == 6
    assert [h["precipitation_probability"] for h in data["hourly"][:4]] == [0, 20, 85, 85]
    assert data["hourly"][0]["time"] == "2026-12-02T12:00"
    assert "2026-12-03: overcast, 4 °C to 4 °C, precipitation 0 mm (85% chance)" in data["summary"]


async def test_air_quality_is_structured_with_numbers(weather, open_meteo):
    open_meteo.at(ZURICH).european_aqi = 67
    async with weather() as (client, _):
        result = await client.call_tool("air_quality", {"location": "Zürich"})
    data = result.structured_content
    assert data["european_aqi"] == 67 and data["european_aqi_level"] == "poor"
    assert data["us_aqi"] == 41 and data["us_aqi_level"] == "good"
    for field in ("pm2_5", "pm10", "ozone", "nitrogen_dioxide", "sulphur_dioxide"):
        assert isinstance(data[field], int | float)
    assert "European AQI 67 (poor)" in data["summary"]
    assert dict(open_meteo.requests)["/v1/air-quality"]["current"].startswith("european_aqi,")


async def test_geocode_and_qualified_names(weather):
    async with weather() as (client, _):
        both = await client.call_tool("geocode", {"location": "Springfield"})
        illinois = await client.call_tool("current", {"location": "Springfield, Illinois"})
        nowhere = await client.call_tool("current", {"location": "Springfield, Texas"})
        point = await client.call_tool("geocode", {"location": "46.95,7.45"})
    assert [r["admin1"] for r in both.structured_content["results"]] == ["Missouri", "Illinois"]
    assert illinois.structured_content["location"]["admin1"] == "Illinois"
    assert nowhere.is_error and "Found: Springfield, Missouri" in nowhere.content[0].text
    assert point.structured_content["results"][0]["latitude"] == 46.95


async def test_unknown_place_is_a_clear_error(weather):
    async with weather() as (client, _):
        result = await client.call_tool("forecast", {"location": "Atlantis"})
    assert result.is_error
    assert result.content[0].text.startswith("Unknown place 'Atlantis'")


async def test_api_errors_are_error_results(weather, open_meteo):
    reason = "Cannot initialize WeatherVariable from invalid String value x for key current"
    async with weather() as (client, _):
        open_meteo.fail_with(400, {"error": True, "reason": reason})
        refused = await client.call_tool("current", {"location": "47.4,8.5"})
        open_meteo.fail_with(503)
        down = await client.call_tool("air_quality", {"location": "47.4,8.5"})
        far = await client.call_tool("current", {"location": "95,8"})
        again = await client.call_tool("current", {"location": "47.4,8.5"})
    assert refused.is_error and reason in refused.content[0].text
    assert down.is_error and "HTTP 503" in down.content[0].text
    assert far.is_error and "out of range" in far.content[0].text
    assert not again.is_error


async def test_status_reports_endpoints_and_watch(weather, open_meteo):
    async with weather(WEATHER_WATCH="Bern; 47.37,8.54", WEATHER_ALERT_AQI="off") as (client, _):
        result = await client.call_tool("status", {})
        only = await client.call_tool("status", {"location": "bern"})
    import json

    data = json.loads(result.content[0].text)
    assert data["api"]["forecast"] == f"{open_meteo.base}/v1/forecast"
    assert [p["location"] for p in data["watch"]["places"]] == ["Bern", "47.37,8.54"]
    assert data["watch"]["places"][0]["thresholds"]["aqi"] is None
    assert [p["location"] for p in json.loads(only.content[0].text)["watch"]["places"]] == ["Bern"]


async def test_a_geocoder_result_without_coordinates_is_a_clear_error(weather, open_meteo):
    broken = {"id": 1, "name": "Nowhere", "country_code": "XX", "country": "Nowhere"}
    open_meteo.places["nowhere"] = [broken]
    open_meteo.places["nulltown"] = [broken | {"latitude": None, "longitude": 8.5}]
    open_meteo.places["texttown"] = [broken | {"latitude": "north", "longitude": 8.5}]
    # The first Springfield has no usable coordinates: the qualifier's next match is used.
    open_meteo.places["springfield"] = [
        {k: v for k, v in SPRINGFIELD_MO.items() if k != "longitude"},
        SPRINGFIELD_IL,
    ]
    async with weather() as (client, _):
        missing = await client.call_tool("current", {"location": "Nowhere"})
        null = await client.call_tool("forecast", {"location": "Nulltown"})
        text = await client.call_tool("geocode", {"location": "Texttown"})
        skipped = await client.call_tool("current", {"location": "Springfield, US"})
        listed = await client.call_tool("geocode", {"location": "Springfield"})
    for result, name in ((missing, "Nowhere"), (null, "Nulltown"), (text, "Texttown")):
        assert result.is_error, result
        assert "unexpected" not in result.content[0].text.lower()
        assert f"the geocoder's answer for {name!r} had no coordinates" in result.content[0].text
    assert not skipped.is_error
    assert skipped.structured_content["location"]["admin1"] == "Illinois"
    assert [r["admin1"] for r in listed.structured_content["results"]] == ["Illinois"]
