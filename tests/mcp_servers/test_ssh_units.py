"""The ssh server without a live host: aliases file, passwords, monitor, parsers, sudo."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime

import pytest
from bothost.mcp_servers.ssh import commands, monitor, system, watch
from bothost.mcp_servers.ssh.aliases import Alias, AliasStore, Monitors
from bothost.mcp_servers.ssh.commands import CommandResult
from bothost.mcp_servers.ssh.connections import ConnectionPool
from bothost.mcp_servers.ssh.errors import SshError
from bothost.mcp_servers.ssh.passwords import LOGIN, SUDO, PasswordCache
from bothost.mcp_servers.ssh.service import SshService

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def test_alias_file_is_private_atomic_and_round_trips(tmp_path):
    store = AliasStore(tmp_path / "state" / "aliases.json")
    store.add(
        Alias(name="db-1", host="db1.example", user="ops", monitors=Monitors(disk_percent=90))
    )
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert [p.name for p in store.path.parent.iterdir()] == ["aliases.json"]  # no temp left
    loaded = store.get("db-1")
    assert loaded.host == "db1.example" and loaded.monitors.disk_percent == 90
    with pytest.raises(SshError, match="replace=true"):
        store.add(Alias(name="db-1", host="other", user="ops"))
    store.add(Alias(name="db-1", host="other", user="ops"), replace=True)
    assert store.get("db-1").host == "other"
    store.remove("db-1")
    with pytest.raises(SshError, match="unknown alias 'db-1'"):
        store.get("db-1")


def test_alias_file_refuses_secrets_and_bad_fields(tmp_path):
    path = tmp_path / "aliases.json"
    path.write_text(json.dumps({"aliases": {"x": {"host": "h", "user": "u", "password": "pw"}}}))
    with pytest.raises(SshError, match="secrets are not stored"):
        AliasStore(path).load()
    with pytest.raises(SshError, match="port must be 1-65535"):
        Alias(name="x", host="h", user="u", port=0).validate()
    with pytest.raises(SshError, match="name must be"):
        Alias(name="no spaces", host="h", user="u").validate()
    with pytest.raises(SshError, match="host must be"):
        Alias(name="x", host="-oProxyCommand=evil", user="u").validate()


def test_password_cache_expires_and_never_shows_values():
    now = [0.0]
    cache = PasswordCache(ttl=60, clock=lambda: now[0])
    cache.put(SUDO, "db-1", "hunter2")
    cache.put(LOGIN, "db-1", "s3cret")
    assert cache.get(SUDO, "db-1") == "hunter2"
    assert "hunter2" not in repr(cache)
    now[0] = 61
    assert cache.get(SUDO, "db-1") is None
    cache.put(LOGIN, "db-1", "again")
    cache.forget_alias("db-1")
    assert cache.get(LOGIN, "db-1") is None


def test_sudo_command_and_its_failures_are_recognised():
    assert commands.sudo_command("id -u", "nopasswd") == "sudo -n -- sh -c 'id -u'"
    assert commands.sudo_command("ls", "prompt", "www-data") == (
        "sudo -k -S -p '' -u www-data -- sh -c 'exec </dev/null; ls'"
    )
    with pytest.raises(SshError, match="sudo is disabled"):
        commands.sudo_command("ls", "none")
    need = CommandResult(1, "", "sudo: a password is required\n")
    assert "NOPASSWD" in commands.sudo_failure(need, "nopasswd", "db-1")
    missing = CommandResult(127, "", "bash: line 1: sudo: command not found\n")
    assert commands.sudo_failure(missing, "nopasswd", "db-1") == (
        "sudo is not installed (or not runnable) on db-1"
    )
    wrong = CommandResult(1, "", "Sorry, try again.\nsudo: 1 incorrect password attempt\n")
    assert "rejected the password" in commands.sudo_failure(wrong, "prompt", "db-1")
    # The command's own failure is not sudo's.
    assert (
        commands.sudo_failure(CommandResult(1, "", "grep: x: No such file\n"), "nopasswd", "a")
        is None
    )


def test_df_units_and_sysinfo_parse():
    df = (
        "Filesystem 1024-blocks Used Available Capacity Mounted on\n"
        "/dev/vda1 1000 950 50 95% /\n/dev/vdb 200 20 180 10% /srv/my data\n"
    )
    rows = system.parse_df(df)
    assert rows[0]["use_percent"] == 95 and rows[1]["mount"] == "/srv/my data"
    units = system.parse_units(
        "● nginx.service loaded failed failed A high performance web server\n"
    )
    assert units == [{"unit": "nginx.service", "load": "loaded", "active": "failed",
                      "sub": "failed", "description": "A high performance web server"}]  # fmt: skip
    assert system.parse_units("@@unavailable\n") is None
    info = system.parse_sysinfo(
        '@@uname\nLinux web-1 6.1.0 x86_64\n@@os\nPRETTY_NAME="Debian 12"\n@@uptime\n100.5 3\n'
        "@@load\n0.1 0.2 0.3 1/2 3\n@@cpus\n4\n@@mem\nMemTotal: 100 kB\nMemAvailable: 40 kB\n"
        f"@@df\n{df}@@failed\n@@unavailable\n"
    )
    assert info["hostname"] == "web-1" and info["os"] == "Debian 12" and info["cpus"] == 4
    assert info["load"] == [0.1, 0.2, 0.3] and info["memory_kib"] == {"total": 100, "available": 40}
    assert len(info["disks"]) == 2 and info["failed_units"] is None


def test_systemd_command_validates_units():
    assert (
        system.systemd_command("restart", "nginx.service", 10)
        == "systemctl restart -- nginx.service"
    )
    with pytest.raises(SshError, match="valid unit"):
        system.systemd_command("stop", "x; rm -rf /", 10)
    with pytest.raises(SshError, match="needs a valid unit"):
        system.systemd_command("status", None, 10)


def _disk(alias, percent):
    rows = [{"path": "/", "mount": "/", "use_percent": percent, "available_kib": 1}]
    return monitor.disk_conditions(alias, rows)


def test_monitor_alerts_once_per_change_and_ids_advance(tmp_path):
    alias = Alias(name="db-1", host="h", user="u", monitors=Monitors(disk_percent=90))
    state = monitor.MonitorState(tmp_path / "monitor.json")
    assert state.transitions(_disk(alias, 50), NOW) == []  # first look, fine: silent
    (alert,) = state.transitions(_disk(alias, 96), NOW)
    assert alert["id"] == "ssh:db-1/disk:/#2" and alert["severity"] == "critical"
    assert alert["state"] == "alert" and alert["occurred_at"] == "2026-12-02T10:00:00Z"
    assert state.transitions(_disk(alias, 97), NOW) == []  # still full: no repeat
    state.save(NOW)
    again = monitor.MonitorState(tmp_path / "monitor.json")
    assert again.transitions(_disk(alias, 97), NOW) == []  # a restart remembers
    (resolved,) = again.transitions(_disk(alias, 40), NOW)
    assert resolved["state"] == "resolved" and resolved["severity"] == "info"


def test_monitor_resends_the_same_id_when_state_was_not_saved(tmp_path):
    alias = Alias(name="db-1", host="h", user="u", monitors=Monitors(disk_percent=90))
    first = monitor.MonitorState(tmp_path / "monitor.json").transitions(_disk(alias, 99), NOW)
    # Crash before save: the next process sends the same transition with the same id.
    second = monitor.MonitorState(tmp_path / "monitor.json").transitions(_disk(alias, 99), NOW)
    assert first[0]["id"] == second[0]["id"]


def test_failed_units_resolve_and_unmonitored_conditions_are_dropped(tmp_path):
    alias = Alias(name="web", host="h", user="u", monitors=Monitors(failed_units=True))
    state = monitor.MonitorState(tmp_path / "m.json")
    failed = [{"unit": "nginx.service", "active": "failed", "sub": "failed", "description": ""}]
    (alert,) = state.transitions(monitor.unit_conditions(alias, failed, []), NOW)
    assert alert["summary"] == "web: systemd unit nginx.service failed"
    known = state.keys("web/unit:")
    (fixed,) = state.transitions(monitor.unit_conditions(alias, [], known), NOW)
    assert fixed["state"] == "resolved"
    state.forget_except([Alias(name="web", host="h", user="u")])
    assert state.conditions == {}


async def test_sudo_none_is_refused_before_connecting(tmp_path):
    store = AliasStore(tmp_path / "aliases.json")
    store.add(Alias(name="locked", host="127.0.0.1", port=1, user="u", sudo="none"))
    svc = SshService(store, ConnectionPool(tmp_path / "known_hosts"), PasswordCache(), tmp_path)
    with pytest.raises(SshError, match="sudo is disabled for alias 'locked'"):
        await svc.execute("locked", "id", 5, sudo=True)


async def test_monitor_keeps_a_change_until_a_client_heard_it(tmp_path, unreachable_ssh):
    svc = unreachable_ssh
    heard: list[dict] = []

    async def nobody(method, params):
        return 0

    async def one_client(method, params):
        heard.append(params)
        return 1

    assert await watch.poll(svc, nobody) == []
    assert not (tmp_path / watch.STATE_FILE).exists()
    (event,) = await watch.poll(svc, one_client)
    assert event["id"] == "ssh:gone/reachable#1" and heard == [event]
    assert await watch.poll(svc, one_client) == []  # saved: not again
