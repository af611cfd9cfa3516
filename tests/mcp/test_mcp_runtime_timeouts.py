"""Servers added at run time set `timeout` and `max_timeout` like config servers: stored
with the server (``mcp_servers``), checked the same way, and used by its calls."""

from __future__ import annotations

import sys

import pytest
import yaml
from click.testing import CliRunner
from mcp_helpers import PAGING_SERVER, SERVERS

from bothost.cli import cli
from bothost.config import McpServerConfig
from bothost.mcp import stored
from bothost.mcp.manager import McpManager, McpManagerError
from bothost.store import Store, core_migrations

LONG_SERVER = SERVERS / "long_call_server.py"


@pytest.fixture
def bothost(home, tmp_path):
    config = tmp_path / "bothost.yaml"
    config.write_text(yaml.safe_dump({"mcp": {"servers": {"weather": {"enabled": False}}}}))

    def run(*args: str, code: int = 0):
        result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
        assert result.exit_code == code, (result.output, result.exception)
        return result

    return run


def stored_config(home, name: str) -> McpServerConfig:
    store = Store(home / "bothost.db", core_migrations())
    try:
        return store.call(lambda db: stored.load(db)[name].config)
    finally:
        store.close()


def test_mcp_add_stores_timeout_and_max_timeout(bothost, home):
    server = ("--", sys.executable, str(PAGING_SERVER))
    bothost("mcp", "add", "slow", "--disabled", "--timeout", "2m", "--max-timeout", "1h", *server)
    config = stored_config(home, "slow")
    assert (config.timeout, config.max_timeout) == (120, 3600)
    bothost("mcp", "add", "plain", "--disabled", "--timeout", "45", *server)  # seconds, as before
    config = stored_config(home, "plain")
    assert (config.timeout, config.max_timeout) == (45, None)


def test_mcp_add_checks_them_like_config(bothost):
    server = ("--", sys.executable, str(PAGING_SERVER))
    below = bothost("mcp", "add", "x", "--timeout", "5m", "--max-timeout", "1m", *server, code=2)
    assert "max_timeout: expected at least the timeout (300 s), got 60 s" in below.output
    bad = bothost("mcp", "add", "x", "--max-timeout", "forever", *server, code=2)
    assert "a duration such as 30s, 15m or 24h" in bad.output


async def test_a_stored_max_timeout_bounds_a_call_that_reports_progress(home):
    store = Store(home / "bothost.db", core_migrations())
    manager = McpManager({}, store, home, retry=False)
    await manager.start()
    try:
        with pytest.raises(McpManagerError, match="at least the timeout"):
            await manager.add_server(
                "bad", McpServerConfig(command="x", timeout=10, max_timeout=5), origin="cli"
            )
        # progress every 0.05 s keeps a 1 s timeout going on a loaded machine too
        config = McpServerConfig(
            command=sys.executable, args=[str(LONG_SERVER)], timeout=1.0, max_timeout=2.0
        )
        await manager.add_server("loop", config, origin="register_mcp")
        await manager.runners["loop"].wait_settled(15)
        result = await manager.call_tool("loop", "ticking", {"count": 0, "interval": 0.05})
        assert result.is_error
        assert "max_timeout" in result.text and "2 s" in result.text, result.text
    finally:
        await manager.stop()
        store.close()
