"""The official Python SDK 1.x client drives every bundled server and logs no warning.

SDK 1.x validates every notification against the types it knows and logs a long warning
for any other, such as ``event/*`` (issue 15). The bundled servers send ``event/*`` only to
clients that declared ``bothost/events``, which this client does not. Each server is set
up so that its watcher has an event to push at its first look (a rain alert, a missing
Google token's ``event/auth_required``, an unreachable ssh host), and the client stays
connected until the server has logged that no client wanted it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from asyncio.subprocess import PIPE

from bothost.mcp_servers.ssh.aliases import Alias, AliasStore, Monitors

from tests.fakes.open_meteo import ZURICH
from tests.peers import mcp_sdk1_python

CLIENT = __file__.replace("test_sdk1_client.py", "sdk1_client.py")
UNWANTED = "no client could receive event/"  # the kit's line when nobody asked for an event
BOUND = 90  # four servers at once on a loaded machine; each has its own 30 s inside


def spec(name, home, tmp_path, tool, **env):
    environ = {"BOTHOST_HOME": str(home), "PYTHONUNBUFFERED": "1", **env}
    return {
        "name": name,
        "argv": [sys.executable, "-m", f"bothost.mcp_servers.{name}"],
        "env": environ,
        "stderr": str(tmp_path / f"{name}.stderr"),
        "tool": tool,
        "wait_for": UNWANTED,
    }


async def test_sdk1_client_drives_every_bundled_server_without_warnings(
    open_meteo, fake, home, tmp_path
):
    python = mcp_sdk1_python()
    open_meteo.at(ZURICH).hourly_precipitation_probability = [20, 85]
    aliases = AliasStore(tmp_path / "aliases.json")
    aliases.add(
        Alias(name="gone", host="127.0.0.1", port=1, user="u", monitors=Monitors(unreachable=True))
    )
    specs = [
        spec(
            "weather",
            home,
            tmp_path,
            "status",
            WEATHER_API_BASE=open_meteo.base,
            WEATHER_WATCH="Zurich",
            WEATHER_ALERT_TEMPERATURE_DROP="off",
            WEATHER_ALERT_WIND_GUSTS="off",
            WEATHER_ALERT_AQI="off",
        ),
        # no token file: the watcher's first look pushes event/auth_required
        spec("gmail", home, tmp_path, "list_labels", GOOGLE_API_ENDPOINT=fake.url),
        spec("gcal", home, tmp_path, "list_calendars", GOOGLE_API_ENDPOINT=fake.url),
        spec(
            "ssh",
            home,
            tmp_path,
            "list_aliases",
            SSH_MCP_ALIASES=str(tmp_path / "aliases.json"),
            SSH_MCP_KNOWN_HOSTS=str(tmp_path / "known_hosts"),
            SSH_MCP_CONNECT_TIMEOUT="2",
        ),
    ]
    # the fakes answer from this event loop: the client runs beside it, not blocking it
    client = await asyncio.create_subprocess_exec(
        str(python), CLIENT, stdin=PIPE, stdout=PIPE, stderr=PIPE
    )
    try:
        async with asyncio.timeout(BOUND):
            out, err = await client.communicate(json.dumps(specs).encode())
    finally:
        if client.returncode is None:
            client.kill()
            await client.wait()
    logs = {s["name"]: (tmp_path / f"{s['name']}.stderr").read_text() for s in specs}
    assert client.returncode == 0, err.decode() + "\n".join(logs.values())
    assert err.decode() == ""  # the SDK logs nothing: no validation warning, no error
    results = {r["name"]: r for r in map(json.loads, out.decode().splitlines())}
    assert sorted(results) == ["gcal", "gmail", "ssh", "weather"]
    assert not results["weather"]["is_error"] and not results["ssh"]["is_error"]
    assert "forecast" in results["weather"]["tools"] and "exec" in results["ssh"]["tools"]
    assert "search" in results["gmail"]["tools"] and "list_events" in results["gcal"]["tools"]
    for name, log in logs.items():
        assert UNWANTED in log, name  # each server did have an event to push
