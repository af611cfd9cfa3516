"""Weather alerts: once per threshold crossing, persisted across restarts."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest
from bothost.mcp_servers.weather import watchconfig
from bothost.mcp_servers.weather.alerts import AlertWatcher
from bothost.mcp_servers.weather.api import OpenMeteo
from bothost.mcp_servers.weather.places import PlaceResolver

from tests.fakes.open_meteo import BERN, ZURICH


class Outbox:
    """Stands in for `Server.notify` with one listening client."""

    def __init__(self):
        self.sent = []

    async def __call__(self, method, params):
        self.sent.append((method, params))
        return 1  # how many clients got it

    def kinds(self):
        return [(p["location"], p["kind"]) for _, p in self.sent]


@pytest.fixture
async def api(open_meteo):
    client = OpenMeteo(open_meteo.base)
    yield client
    await client.close()


@pytest.fixture
def make_watcher(api, tmp_path):
    def make(env):
        config = watchconfig.load(env)
        return AlertWatcher(api, PlaceResolver(api), config, tmp_path / "state")

    (tmp_path / "state").mkdir()
    return make


ONLY_RAIN = {
    "WEATHER_WATCH": "Zurich",
    "WEATHER_ALERT_TEMPERATURE_DROP": "off",
    "WEATHER_ALERT_WIND_GUSTS": "off",
    "WEATHER_ALERT_AQI": "off",
}


async def test_rain_alert_once_per_crossing(make_watcher, open_meteo):
    outbox = Outbox()
    watcher = make_watcher(ONLY_RAIN | {"WEATHER_ALERT_RAIN_PROBABILITY": "70"})
    zurich = open_meteo.at(ZURICH)
    open_meteo.now = datetime(2026, 12, 2, 11, 0)  # in the place's time: today, whatever ours
    assert await watcher.poll(outbox) == []
    zurich.hourly_precipitation_probability = [10, 40, 75, 90, 30]
    (alert,) = await watcher.poll(outbox)
    assert alert["kind"] == "rain_probability" and alert["value"] == 90
    assert alert["summary"] == "Rain likely in Zürich, Zurich, Switzerland from 13:00 (90%)."
    assert alert["severity"] == "info" and alert["occurred_at"].endswith("Z")
    assert alert["id"].startswith("weather:zurich:rain_probability:")
    assert await watcher.poll(outbox) == []  # still raining: no repeat
    zurich.hourly_precipitation_probability = [65]  # below 70, but within the margin
    assert await watcher.poll(outbox) == []
    zurich.hourly_precipitation_probability = [80]
    assert await watcher.poll(outbox) == []  # never cleared, so not a new crossing
    zurich.hourly_precipitation_probability = [20]
    assert await watcher.poll(outbox) == []  # cleared
    zurich.hourly_precipitation_probability = [95]
    (second,) = await watcher.poll(outbox)
    assert second["id"] != alert["id"]
    assert [m for m, _ in outbox.sent] == ["event/weather_alert"] * 2
    query = dict(open_meteo.requests)["/v1/forecast"]
    assert query["forecast_hours"] == "12" and "air-quality" not in "".join(open_meteo.paths())


async def test_a_restart_does_not_announce_again(make_watcher, open_meteo, tmp_path):
    open_meteo.at(ZURICH).hourly_wind_gusts = [30, 95]
    env = {"WEATHER_WATCH": "Zurich", "WEATHER_ALERT_RAIN_PROBABILITY": "off"}
    first = Outbox()
    await make_watcher(env).poll(first)
    assert first.kinds() == [("Zurich", "wind_gusts")]
    assert first.sent[0][1]["severity"] == "critical"  # 95 km/h is a storm
    state = tmp_path / "state" / "alerts.json"
    assert oct(state.stat().st_mode & 0o777) == "0o600"
    assert json.loads(state.read_text())["alerts"]["zurich|wind_gusts"]["active"] is True
    again = Outbox()
    await make_watcher(env).poll(again)
    assert again.sent == []


async def test_temperature_drop_and_aqi(make_watcher, open_meteo):
    bern = open_meteo.at(BERN)
    bern.daily_max = [15.0, 5.5]
    bern.european_aqi = 85
    outbox = Outbox()
    env = {
        "WEATHER_WATCH": "Bern",
        "WEATHER_ALERT_TEMPERATURE_DROP": "8",
        "WEATHER_ALERT_AQI": "80",
    }
    await make_watcher(env).poll(outbox)
    alerts = {p["kind"]: p for _, p in outbox.sent}
    assert set(alerts) == {"temperature_drop", "aqi"}
    assert alerts["temperature_drop"]["value"] == 9.5
    assert "tomorrow's high 9.5 °C below today's" in alerts["temperature_drop"]["summary"]
    assert alerts["aqi"]["summary"].startswith(
        "Air quality very poor in Bern, Switzerland (European AQI 85"
    )
    assert alerts["aqi"]["unit"] == "EAQI" and alerts["aqi"]["threshold"] == 80


async def test_one_failing_place_does_not_stop_the_others(make_watcher, open_meteo):
    open_meteo.at(BERN).hourly_precipitation_probability = [99]
    outbox = Outbox()
    watcher = make_watcher(ONLY_RAIN | {"WEATHER_WATCH": "Atlantis;Bern"})
    await watcher.poll(outbox)
    assert outbox.kinds() == [("Bern", "rain_probability")]
    assert "Unknown place 'Atlantis'" in watcher.last_errors["Atlantis"]


async def test_alerts_pushed_through_the_sdk_client(mcp_stdio, weather_argv, open_meteo, home):
    open_meteo.at(ZURICH).hourly_precipitation_probability = [20, 85]
    env = ONLY_RAIN | {"WEATHER_API_BASE": open_meteo.base}
    async with mcp_stdio(weather_argv, env=env, events=["event/weather_alert"]) as (_, events):
        (alert,) = await events.wait_for("event/weather_alert")
    assert alert["kind"] == "rain_probability" and alert["place"].startswith("Zürich")
    state = home / "state" / "weather" / "alerts.json"
    assert json.loads(state.read_text())["alerts"]["zurich|rain_probability"]["active"]

    # Restarted with the same state: the first poll completes without a new alert.
    async with mcp_stdio(weather_argv, env=env, events=["event/weather_alert"]) as (client, events):
        async with asyncio.timeout(10):
            while True:
                status = json.loads((await client.call_tool("status", {})).content[0].text)
                if status["last_poll"]:
                    break
                await asyncio.sleep(0.05)
        assert events.of("event/weather_alert") == []
        assert [a["key"] for a in status["active_alerts"]] == ["zurich|rain_probability"]


async def test_an_alert_for_a_later_day_names_the_day(make_watcher, open_meteo):
    open_meteo.now = datetime(2026, 12, 2, 22, 0)  # a Wednesday, 22:00 at the place
    open_meteo.at(ZURICH).hourly_wind_gusts = [20, 20, 20, 70]
    outbox = Outbox()
    await make_watcher(
        {
            "WEATHER_WATCH": "Zurich",
            "WEATHER_ALERT_RAIN_PROBABILITY": "off",
            "WEATHER_ALERT_AQI": "off",
        }
    ).poll(outbox)
    (alert,) = [p for _, p in outbox.sent]
    assert (
        alert["summary"]
        == "Wind gusts up to 70 km/h in Zürich, Zurich, Switzerland from Thu 01:00."
    )
    assert alert["severity"] == "warning" and alert["at"] == "2026-12-03T01:00"
