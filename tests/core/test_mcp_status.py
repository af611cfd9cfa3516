"""Only the running host writes the MCP status other processes read (``bothost mcp list``).

A one-shot CLI command that starts MCP servers of its own (``chat``, ``mcp call``) used to
overwrite ``state/mcp-status.json`` and, on exit, leave it saying ``stopped`` while the host's
servers were still ready.
"""

from __future__ import annotations

import asyncio
import json
import signal

import aiohttp

from tests.helpers import bothost_process, free_port, run_bothost, until

HEALTH_WAIT = 60.0  # the weather server starts as a child of the host


def bothost(home, config, *args):
    return run_bothost(*args, home=home, config=config, timeout=120)


async def test_cli_commands_leave_the_running_hosts_status_alone(tmp_path, home):
    port = free_port()
    config = tmp_path / "c.yaml"
    config.write_text(
        f"platforms: {{web: {{port: {port}}}, console: {{enabled: false}}}}\n"
        "mcp: {servers: {weather: {env: {WEATHER_API_BASE: "
        f"'http://127.0.0.1:{free_port()}'}}}}}}}}\n"
    )
    log = (tmp_path / "run.log").open("wb")
    host = await bothost_process(home, config, "run", stdout=log, stderr=log)
    try:
        seen: dict = {}

        async def weather_ready() -> bool:
            try:
                async with (
                    aiohttp.ClientSession() as client,
                    client.get(f"http://127.0.0.1:{port}/healthz") as response,
                ):
                    seen.update(await response.json())
            except aiohttp.ClientError:
                return False
            return seen.get("mcp", {}).get("weather", {}).get("state") == "ready"

        async with asyncio.timeout(HEALTH_WAIT):
            while not await weather_ready():
                assert host.returncode is None, (tmp_path / "run.log").read_text()
                await asyncio.sleep(0.2)
        status_file = home / "state" / "mcp-status.json"
        await until(lambda: status_file.exists(), HEALTH_WAIT)
        before = status_file.read_text()

        chat = await asyncio.to_thread(bothost, home, config, "chat", "-m", "tools")
        assert chat.returncode == 0, chat.stderr
        listed = await asyncio.to_thread(bothost, home, config, "mcp", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        weather = next(s for s in json.loads(listed.stdout) if s["name"] == "weather")
        assert weather["state"] == "ready", weather
        assert json.loads(status_file.read_text())["pid"] == json.loads(before)["pid"] == host.pid
    finally:
        if host.returncode is None:
            host.send_signal(signal.SIGTERM)
        await asyncio.wait_for(host.wait(), 30)
        log.close()
