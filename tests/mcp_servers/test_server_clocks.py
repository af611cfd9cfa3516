"""The bundled servers date, key and measure by their injected clock, not the wall's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from bothost.mcp_servers.ssh import watch
from bothost.mcp_servers.weather import watchconfig
from bothost.mcp_servers.weather.alerts import AlertWatcher
from bothost.mcp_servers.weather.api import OpenMeteo
from bothost.mcp_servers.weather.places import PlaceResolver

from bothost import platform
from mcp_servers.gmail.watcher import RESYNC_OVERLAP_SECONDS, MailWatcher
from mcp_servers.google import errors
from mcp_servers.google.errors import GoogleError
from mcp_servers.google.state import StateFile
from tests.fakes.open_meteo import ZURICH

THEN = datetime(2031, 3, 9, 23, 30, tzinfo=UTC)  # no wall clock reads this
STAMP = "2031-03-09T23:30:00Z"


async def heard(method: str, params: dict[str, Any]) -> int:
    return 1  # one client got it


class Mailbox:
    """Stands in for GoogleClient: a mailbox whose history id has gone stale."""

    def __init__(self) -> None:
        self.stale = False
        self.queries: list[str] = []

    async def call(self, build: Any) -> Any:
        mailbox = self

        class Request:
            def __init__(self, answer: Any) -> None:
                self.answer = answer

        class Users:
            def getProfile(self, userId: str) -> Request:  # noqa: N802  (Google's name)
                return Request({"historyId": "500"})

            def history(self) -> Users:
                return self

            def messages(self) -> Users:
                return self

            def list(self, **query: Any) -> Request:
                if "startHistoryId" in query:
                    if mailbox.stale:
                        raise GoogleError("Google API error 404: history too old", status=404)
                    return Request({"historyId": "501"})
                mailbox.queries.append(query["q"])
                return Request({})

        class Api:
            def users(self) -> Users:
                return Users()

        return build(Api()).answer


async def test_gmail_dates_its_last_look_and_resyncs_from_the_watchers_clock(tmp_path):
    mailbox, state = Mailbox(), StateFile(tmp_path / "gmail.json")
    watcher = MailWatcher(mailbox, state, clock=lambda: THEN)  # type: ignore[arg-type]
    await watcher.poll(heard)  # seeds
    assert state.load()["checked_at"] == int(THEN.timestamp())
    saved = state.load()
    del saved["checked_at"]  # a state file from before the last look was recorded
    state.save(saved)
    mailbox.stale = True
    await watcher.poll(heard)
    assert mailbox.queries == [f"after:{int(THEN.timestamp()) - RESYNC_OVERLAP_SECONDS}"]


async def test_the_ssh_monitor_dates_a_change_by_its_clock(tmp_path, unreachable_ssh):
    svc = unreachable_ssh
    (event,) = await watch.poll(svc, heard, clock=lambda: THEN)
    assert event["occurred_at"] == STAMP
    assert watch.MonitorState(tmp_path / watch.STATE_FILE).checked_at == STAMP


@pytest.fixture
async def api(open_meteo):
    client = OpenMeteo(open_meteo.base)
    yield client
    await client.close()


async def test_weather_alerts_are_dated_and_cleared_by_the_watchers_clock(
    api, open_meteo, tmp_path
):
    clock = [THEN]
    config = watchconfig.load(
        {
            "WEATHER_WATCH": "Zurich",
            "WEATHER_ALERT_RAIN_PROBABILITY": "70",
            "WEATHER_ALERT_TEMPERATURE_DROP": "off",
            "WEATHER_ALERT_WIND_GUSTS": "off",
            "WEATHER_ALERT_AQI": "off",
        }
    )
    watcher = AlertWatcher(api, PlaceResolver(api), config, tmp_path, clock=lambda: clock[0])
    open_meteo.at(ZURICH).hourly_precipitation_probability = [90]
    (alert,) = await watcher.poll(heard)
    assert alert["occurred_at"] == STAMP and STAMP in alert["id"]
    assert watcher.last_poll == STAMP
    clock[0] += timedelta(hours=1)
    open_meteo.at(ZURICH).hourly_precipitation_probability = [10]
    assert await watcher.poll(heard) == []
    (entry,) = watcher.state.values()
    assert entry["since"] == STAMP and entry["cleared_at"] == "2031-03-10T00:30:00Z"


@pytest.mark.parametrize("read", [errors.retry_after_seconds, platform.retry_after_seconds])
def test_a_retry_after_date_is_counted_from_the_given_now(read):
    asked = "Mon, 10 Mar 2031 00:00:30 GMT"
    assert read(asked, now=THEN.timestamp()) == 30 * 60 + 30
    assert read(asked, now=THEN.timestamp() + 3600) == 0.0  # already past
