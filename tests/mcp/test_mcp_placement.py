"""Where servers run when hosts share a store: singletons on the leader, their state carried."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from bothost.mcp_servers.kit import Server

from bothost.config import McpServerConfig
from bothost.crosshost import lease
from bothost.crosshost.leadership import LEADER_LOCK
from bothost.mcp import handover, stored
from bothost.mcp.manager import McpManager
from bothost.mcp.placement import is_singleton
from bothost.store import Store, core_migrations
from tests.conftest import both_backends
from tests.helpers import age_lease, until

ECHO = Path(__file__).parents[1] / "mcp_servers" / "echo_server.py"
COUNTER = Path(__file__).parents[1] / "integration" / "counter_server.py"


@pytest.mark.parametrize(
    "config, expected",
    [
        (McpServerConfig(command="bothost-mcp-gmail"), True),
        (McpServerConfig(command="/venv/bin/bothost-mcp-weather"), True),
        (McpServerConfig(command="python", args=["-m", "bothost.mcp_servers.ssh"]), True),
        (McpServerConfig(command="bothost-mcp-gcal", singleton=False), False),
        (McpServerConfig(command="npx", args=["-y", "some-server"]), False),
        (McpServerConfig(command="npx", args=["-y", "some-server"], singleton=True), True),
        (McpServerConfig(url="https://example.com/mcp"), False),
    ],
)
def test_bundled_watchers_and_marked_servers_run_on_the_leader_only(config, expected):
    assert is_singleton(config) is expected


def test_a_stored_server_keeps_its_singleton_mark():
    for mark in (True, False, None):
        row = stored.to_row("x", McpServerConfig(command="x", singleton=mark), "cli")
        assert stored.from_row(row).config.singleton is mark


def test_the_kit_keeps_state_where_the_host_says(monkeypatch, tmp_path, home):
    monkeypatch.setenv("BOTHOST_STATE_DIR", str(tmp_path / "carried"))
    assert Server("watcher").state_dir() == tmp_path / "carried"
    monkeypatch.setenv("WATCHER_STATE_DIR", str(tmp_path / "own"))  # the server's own wins
    assert Server("watcher").state_dir() == tmp_path / "own"


async def test_a_follower_keeps_singletons_on_standby_until_it_leads(home):
    store = Store(home / "bothost.db", core_migrations())
    leadership = SimpleNamespace(leading=False, shared=False, owner="me")
    servers = {
        "echo": McpServerConfig(command=sys.executable, args=[str(ECHO)]),
        "counter": McpServerConfig(
            command=sys.executable,
            args=[str(COUNTER)],
            singleton=True,
            env={"COUNTER_POLL_SECONDS": "3600"},
        ),
    }
    manager = McpManager(servers, store, home, leadership=leadership)
    states = lambda: {s.name: s.state for s in manager.status()}  # noqa: E731
    try:
        await manager.start()
        await until(lambda: states() == {"echo": "ready", "counter": "standby"}, 30)
        leadership.leading = True
        await manager.leadership_changed(True)
        await until(lambda: states() == {"echo": "ready", "counter": "ready"}, 30)
        leadership.leading = False
        await manager.leadership_changed(False)
        assert states() == {"echo": "ready", "counter": "standby"}
    finally:
        await manager.stop()
        store.close()


@both_backends
def test_state_is_saved_only_by_the_leader_and_restored_exactly(store_target, tmp_path):
    store = Store(store_target, core_migrations())
    source, target = tmp_path / "leader", tmp_path / "next"
    (source / "sub").mkdir(parents=True)
    (source / "position.json").write_text('{"n": 7}')
    (source / "sub" / "raw").write_bytes(b"\x00\xff")
    files = handover.read_dir(source)
    assert files is not None
    try:
        store.call(lambda db: lease.acquire(db, LEADER_LOCK, "a", 100.0, 60.0))
        assert not store.call(lambda db: handover.save(db, "w", files, "b", 101.0))
        assert store.call(lambda db: handover.load(db, "w")) is None
        assert store.call(lambda db: handover.save(db, "w", files, "a", 101.0))
        age_lease(store, LEADER_LOCK, 60)
        assert not store.call(lambda db: handover.save(db, "w", {}, "a", 161.0))  # expired
        target.mkdir()
        (target / "stale.json").write_text("old")
        handover.write_dir(target, store.call(lambda db: handover.load(db, "w")))
        assert (target / "position.json").read_text() == '{"n": 7}'
        assert (target / "sub" / "raw").read_bytes() == b"\x00\xff"
        assert not (target / "stale.json").exists()
    finally:
        store.close()
