"""``mcp list`` says what ``mcp disable`` / ``mcp enable`` asked at once (issue 39).

Found from outside: ``mcp disable time`` then ``mcp list`` said ``ready`` for 2-4 s, the
running host's published state until its next look at the table. The host here is a
manager publishing its status in this process, as ``bothost run``'s does; started for one
server, it does not look at the table again by itself, so what it published stays.
"""

from __future__ import annotations

import asyncio
import json
import sys

import yaml
from click.testing import CliRunner
from mcp_helpers import PAGING_SERVER

from bothost.cli import cli
from bothost.config import McpServerConfig
from bothost.mcp.commands import live_status
from bothost.mcp.manager import McpManager
from bothost.store import Store, core_migrations

WAIT = 30.0


async def test_list_shows_a_disabled_server_stopping_and_an_enabled_one_starting(home, tmp_path):
    config = tmp_path / "bothost.yaml"
    config.write_text(yaml.safe_dump({"mcp": {"servers": {"weather": {"enabled": False}}}}))
    store = Store(home / "bothost.db", core_migrations())
    host = McpManager({}, store, home, publish_status=True, retry=False)
    paging = McpServerConfig(command=sys.executable, args=[str(PAGING_SERVER)])

    def bothost(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
        assert result.exit_code == 0, result.output
        return result.output

    def listed() -> dict:
        [row] = [s for s in json.loads(bothost("mcp", "list", "--json")) if s["name"] == "p"]
        return row

    try:
        await host.add_server("p", paging)
        await host.start(only={"p"}, wait=WAIT)
        assert live_status(home)["p"]["state"] == "ready"
        await asyncio.to_thread(bothost, "mcp", "disable", "p")
        assert live_status(home)["p"]["state"] == "ready"  # the host has not looked yet
        row = await asyncio.to_thread(listed)
        assert (row["state"], row["note"]) == (
            "disabled",
            "stopping: the running host stops it within seconds",
        )
        text = await asyncio.to_thread(bothost, "mcp", "list")
        assert "stopping: the running host stops it within seconds" in text

        await host.reload()  # the host looks: it stops the server and says so
        assert live_status(home)["p"]["state"] == "disabled"
        await asyncio.to_thread(bothost, "mcp", "enable", "p")
        row = await asyncio.to_thread(listed)
        assert (row["state"], row["note"]) == (
            "starting",
            "the running host starts it within seconds",
        )
    finally:
        await host.stop()
        store.close()
