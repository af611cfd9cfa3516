"""A server that fails to start is named for what it did, whichever way it failed (issue 34).

Found from outside under load: 7 of 8 starts of a server that exits at once read "server stdin
closed: Connection lost" instead of its exit status and stderr line; a hanging ``tools/list``
read ``starting: None`` after 60 s; ``mcp list --check`` exited 0 with failed servers; and
``mcp call --timeout 20`` waited out the 30 s initialize timeout. The servers are
``tests/mcp/servers/stalling_server.py``, run for real.
"""

from __future__ import annotations

import sys

import pytest
import yaml
from click.testing import CliRunner
from mcp_helpers import SERVERS

from bothost.cli import cli
from bothost.config import McpServerConfig
from bothost.mcp.manager import McpManager
from bothost.store import Store, core_migrations

STALLING_SERVER = SERVERS / "stalling_server.py"
EXITED = "server exited with code 3: fatal: the licence server said no"
WAIT = 15.0  # start() waits this long for the server to be ready or failed


def stalling(stall: str, **extra) -> dict:
    return {
        "command": sys.executable,
        "args": [str(STALLING_SERVER)],
        "env": {"STALL": stall},
        **extra,
    }


@pytest.fixture
def bothost(home, tmp_path):
    """Run `bothost --home H --config C ARGS…` with `servers` as mcp.servers; (status, output)."""

    def run(servers: dict, *args: str) -> tuple[int, str]:
        config = tmp_path / "bothost.yaml"
        servers = {"weather": {"enabled": False}, **servers}
        config.write_text(yaml.safe_dump({"mcp": {"servers": servers}}))
        result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
        assert not isinstance(result.exception, AssertionError), result.exception
        return result.exit_code, result.output

    return run


async def test_a_server_whose_pipes_close_before_its_exit_is_seen_is_named_by_its_exit(home):
    # the host's write after initialize meets a closed stdin before the exit can be seen
    store = Store(home / "bothost.db", core_migrations())
    config = McpServerConfig(**stalling("exit"))
    manager = McpManager({"dying": config}, store, home, publish_status=False, retry=False)
    try:
        await manager.start(wait=WAIT)
        [status] = manager.status()
        assert (status.state, status.error) == ("failed", EXITED)
    finally:
        await manager.stop()
        store.close()


async def test_every_start_of_a_server_that_exits_at_once_names_its_exit(home):
    # the finding as seen: 8 starts in a row, each in whatever order the machine sees them
    script = "import sys; sys.stderr.write('fatal: no key\\n'); sys.exit(3)"
    store = Store(home / "bothost.db", core_migrations())
    config = McpServerConfig(command=sys.executable, args=["-c", script])
    errors = []
    try:
        for _ in range(8):
            manager = McpManager({"quick": config}, store, home, publish_status=False, retry=False)
            await manager.start(wait=WAIT)
            errors += [s.error for s in manager.status()]
            await manager.stop()
    finally:
        store.close()
    assert errors == ["server exited with code 3: fatal: no key"] * 8


def test_list_check_exits_1_when_a_server_failed(bothost):
    status, output = bothost({"dying": stalling("exit")}, "mcp", "list", "--check")
    assert status == 1, output
    assert EXITED in output


def test_list_check_exits_0_when_every_enabled_server_is_ready(bothost):
    status, output = bothost({"fine": stalling("")}, "mcp", "list", "--check")
    assert status == 0, output
    assert "ready" in output


def test_a_hanging_tools_list_is_named_not_left_starting(bothost):
    # its server's timeout (1 s) bounds the listing at start as it bounds every listing
    servers = {"stuck": stalling("hang-tools/list", timeout="1s")}
    status, output = bothost(servers, "mcp", "tools", "stuck")
    assert status == 1, output
    assert "stuck: failed: tools/list did not answer within 1 s" in output, output
    assert "None" not in output


@pytest.mark.parametrize("stall", ["initialize", "tools/list"])
def test_call_timeout_bounds_the_start_too(bothost, stall):
    status, output = bothost(
        {"stuck": stalling(f"hang-{stall}")}, "mcp", "call", "stuck", "noop", "--timeout", "2"
    )
    assert status == 1, output
    assert f"{stall} did not answer within 2 s" in output, output


def test_call_timeout_leaves_a_quick_start_its_call(bothost):
    status, output = bothost(
        {"fine": stalling("")}, "mcp", "call", "fine", "noop", "--timeout", "20"
    )
    assert (status, output) == (0, "done\n")
