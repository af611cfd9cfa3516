"""Roots per server: configured directories answered on ``roots/list``; none by default."""

from __future__ import annotations

import json
import sys

import pytest
from mcp_helpers import PAGING_SERVER

from bothost.config import ConfigError, McpServerConfig
from bothost.host.config_load import load
from bothost.mcp.manager import McpManager, McpManagerError
from bothost.store import Store, core_migrations

WAIT = 15.0


@pytest.fixture
async def manager_of(home):
    store = Store(home / "bothost.db", core_migrations())
    managers: list[McpManager] = []

    async def make(**servers: McpServerConfig) -> McpManager:
        manager = McpManager(servers, store, home, publish_status=False, retry=False)
        managers.append(manager)
        await manager.start(wait=WAIT)
        return manager

    yield make
    for manager in managers:
        await manager.stop()
    store.close()


def paging(roots: list[str] | None = None) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[str(PAGING_SERVER)], roots=roots or [])


async def asked_roots(manager: McpManager, server: str) -> list[dict]:
    result = await manager.call_tool(server, "ask_roots")
    assert not result.is_error, result.text
    return json.loads(result.text)["result"]["roots"]


async def test_each_server_is_told_its_own_roots(manager_of, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "code").mkdir()
    manager = await manager_of(
        files=paging([str(tmp_path / "share dir"), "~/code"]), plain=paging()
    )
    assert await asked_roots(manager, "files") == [
        {"uri": (tmp_path / "share dir").as_uri(), "name": "share dir"},
        {"uri": (tmp_path / "code").as_uri(), "name": "code"},
    ]
    assert await asked_roots(manager, "plain") == []  # the default stays: no roots


@pytest.mark.parametrize(
    "roots, expected",
    [
        ("[relative/dir]", "an absolute path (or one starting with ~), got 'relative/dir'"),
        ("['']", "an absolute path"),
        ("notalist", "a list"),
    ],
)
def test_roots_must_be_absolute_paths(home, tmp_path, roots, expected):
    path = tmp_path / "c.yaml"
    path.write_text(f"mcp: {{servers: {{files: {{command: x, roots: {roots}}}}}}}\n")
    with pytest.raises(ConfigError) as err:
        load(path, home)
    assert "mcp.servers.files.roots" in str(err.value) and expected in str(err.value)


async def test_a_server_added_at_run_time_is_told_its_roots(manager_of, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    manager = await manager_of()
    await manager.add_server("files", paging([str(tmp_path / "docs"), "~/code"]))
    await manager.settle({"files"}, grace=WAIT)
    expected = [
        {"uri": (tmp_path / "docs").as_uri(), "name": "docs"},
        {"uri": (tmp_path / "code").as_uri(), "name": "code"},
    ]
    assert await asked_roots(manager, "files") == expected
    # kept in the table: another process (a restarted host) tells the server the same
    again = await manager_of()
    await again.settle({"files"}, grace=WAIT)
    assert await asked_roots(again, "files") == expected


@pytest.mark.parametrize("root", ["relative/dir", "", "  "])
async def test_a_run_time_root_is_checked_like_a_configured_one(manager_of, root):
    manager = await manager_of()
    with pytest.raises(McpManagerError) as err:
        await manager.add_server("files", paging([root]))
    assert "files: roots[0]: expected an absolute path" in str(err.value)
    assert "files" not in manager.runners
