"""The Google servers date what they send and ask for by their injected clock, not the wall's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mcp_servers.gcal import tools
from mcp_servers.google.errors import AuthRequiredError
from mcp_servers.google.watch import AuthGuard
from mcp_servers.kit import Server

THEN = datetime(2031, 3, 9, 23, 30, tzinfo=UTC)  # no wall clock reads this


async def test_an_auth_problem_is_dated_and_reminded_of_by_the_guards_clock():
    clock, sent = [THEN], []

    async def notify(method: str, payload: dict[str, Any]) -> int:
        sent.append(payload)
        return 1

    async def revoked() -> None:
        raise AuthRequiredError("gcal", "The token was revoked")

    guard = AuthGuard("gcal", clock=lambda: clock[0])
    await guard.run(revoked, notify)
    clock[0] += timedelta(minutes=20)  # the same day on the guard's clock: said once
    await guard.run(revoked, notify)
    assert [p["occurred_at"] for p in sent] == ["2031-03-09T23:30:00Z"]
    clock[0] += timedelta(minutes=20)  # the next day: reminded, with another id
    await guard.run(revoked, notify)
    assert [p["occurred_at"] for p in sent][1:] == ["2031-03-10T00:10:00Z"]
    assert sent[0]["id"] != sent[1]["id"]


class Recorder:
    """Stands in for GoogleClient: records the query events().list was given."""

    def __init__(self) -> None:
        self.queries: list[dict[str, Any]] = []

    async def call(self, build: Any) -> dict[str, Any]:
        recorder = self

        class Events:
            def list(self, **query: Any) -> dict[str, Any]:
                recorder.queries.append(query)
                return {"items": []}

        class Api:
            def events(self) -> Events:
                return Events()

        return build(Api())


async def test_list_events_starts_at_the_servers_clock_when_no_time_min_is_given():
    server, client = Server("gcal"), Recorder()
    tools.register(server, client, clock=lambda: THEN)  # type: ignore[arg-type]
    result = await server.tools["list_events"].call({}, None)
    assert result["isError"] is False, result
    assert client.queries[0]["timeMin"] == THEN.isoformat()
