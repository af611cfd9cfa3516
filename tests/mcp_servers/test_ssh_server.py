"""The ssh MCP server end to end: the official SDK client over stdio, a real OpenSSH sshd.

Each test starts `python -m bothost.mcp_servers.ssh` with its own aliases file and a copy
of the sshd's known_hosts, and talks to it only through MCP: tool calls, elicitation for
passwords, and `event/ssh_alert` notifications from the monitor.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time

import pytest
from mcp import types
from sshd import sshd_fixture  # noqa: F401  (the `sshd` fixture)

ARGV = [sys.executable, "-m", "bothost.mcp_servers.ssh"]
CAPS = "bothost/capabilities"
EVENT = "event/ssh_alert"
WAIT = 10.0
TOOLS = {
    "list_aliases",
    "add_alias",
    "remove_alias",
    "read_file",
    "list_files",
    "grep_files",
    "edit_file",
    "replace_lines",
    "exec",
    "upload",
    "download",
    "sysinfo",
    "systemd",
}


@pytest.fixture
def ssh_env(sshd, tmp_path):
    """Environment for the server, plus a writer of its aliases file."""
    known = tmp_path / "known_hosts"
    shutil.copy(sshd.known_hosts, known)
    aliases = tmp_path / "aliases.json"
    env = {
        "SSH_MCP_ALIASES": str(aliases),
        "SSH_MCP_KNOWN_HOSTS": str(known),
        "SSH_MCP_CONNECT_TIMEOUT": "5",
    }

    def write(**entries: dict) -> None:
        aliases.write_text(json.dumps({"version": 1, "aliases": entries}))

    return env, write


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def text(result) -> str:
    return result.content[0].text


async def test_lists_every_tool_with_capabilities(mcp_stdio, ssh_env):
    env, _ = ssh_env
    async with mcp_stdio(ARGV, env=env) as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    assert tools["read_file"].meta[CAPS] == {
        "private": True,
        "untrusted": True,
        "egress": "none",
        "destructive": False,
    }
    for name in ("exec", "edit_file", "upload", "replace_lines", "remove_alias"):
        assert tools[name].meta[CAPS]["destructive"] is True, name
    assert tools["upload"].meta[CAPS]["egress"] == "chosen"
    assert tools["exec"].meta[CAPS]["private"] and tools["exec"].meta[CAPS]["untrusted"]
    assert "password" not in tools["add_alias"].input_schema["properties"]
    assert tools["exec"].output_schema["required"][0] == "exit_status"


async def test_every_tool_on_a_real_host(mcp_stdio, ssh_env, sshd, tmp_path):
    env, _ = ssh_env
    work = tmp_path / "remote"
    work.mkdir()
    conf = work / "app.conf"
    conf.write_text("port = 80\nmode = dev\nmode = dev\n")
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with mcp_stdio(ARGV, env=env) as (client, _):
        call = client.call_tool
        added = data(await call("add_alias", {**sshd.alias(), "name": "box", "description": "t"}))
        assert added["added"]["host"] == "127.0.0.1"
        assert [a["name"] for a in data(await call("list_aliases", {}))["aliases"]] == ["box"]

        assert (
            text(await call("read_file", {"alias": "box", "path": str(conf)})) == conf.read_text()
        )
        numbered = text(
            await call(
                "read_file",
                {"alias": "box", "path": str(conf), "offset": 2, "limit": 1, "line_numbers": True},
            )
        )
        assert numbered.startswith("2\tmode = dev\n[lines 2-2 of 3;")
        (tmp_path / "empty.txt").touch()
        empty = text(await call("read_file", {"alias": "box", "path": str(tmp_path / "empty.txt")}))
        assert empty == f"[{tmp_path / 'empty.txt'} is empty]"
        listing = data(await call("list_files", {"alias": "box", "path": str(work)}))
        assert [e["path"] for e in listing["entries"]] == [str(conf)]
        grep = text(
            await call("grep_files", {"alias": "box", "pattern": "port", "path": str(work)})
        )
        assert grep == f"{conf}:1: port = 80"

        ambiguous = await call(
            "edit_file",
            {
                "alias": "box",
                "path": str(conf),
                "old_text": "mode = dev",
                "new_text": "mode = prod",
            },
        )
        assert ambiguous.is_error and "occurs 2 times" in text(ambiguous)
        edited = data(
            await call(
                "edit_file",
                {
                    "alias": "box",
                    "path": str(conf),
                    "old_text": "port = 80",
                    "new_text": "port = 8080",
                },
            )
        )
        assert edited["line"] == 1
        data(
            await call(
                "replace_lines",
                {
                    "alias": "box",
                    "path": str(conf),
                    "start": 2,
                    "end": 3,
                    "new_text": "mode = prod\n",
                },
            )
        )
        assert conf.read_text() == "port = 8080\nmode = prod\n"

        ran = data(
            await call(
                "exec", {"alias": "box", "command": "pwd; echo oops >&2; exit 3", "cwd": str(work)}
            )
        )
        assert (
            ran["exit_status"] == 3 and ran["stdout"] == f"{work}\n" and ran["stderr"] == "oops\n"
        )
        as_root = await call("exec", {"alias": "box", "command": "id -u", "sudo": True})
        if shutil.which("sudo") and os.geteuid() == 0:
            assert data(as_root)["stdout"] == "0\n"
        else:  # no sudo here, or no NOPASSWD rule for a non-root tester: a clear error
            assert as_root.is_error and "sudo" in text(as_root)

        local = tmp_path / "local.txt"
        local.write_text("from here")
        up = data(
            await call(
                "upload", {"alias": "box", "local_path": str(local), "remote_path": str(work)}
            )
        )
        assert up["destination"] == str(work / "local.txt") and (work / "local.txt").exists()
        data(
            await call(
                "upload",
                {"alias": "box", "content": "hello\n", "remote_path": str(work / "new.txt")},
            )
        )
        assert (work / "new.txt").read_text() == "hello\n"
        down = data(
            await call(
                "download",
                {
                    "alias": "box",
                    "remote_path": str(work),
                    "local_path": str(tmp_path / "copy"),
                    "recursive": True,
                },
                progress_callback=on_progress,
            )
        )
        assert down["files"] == 3 and (tmp_path / "copy" / "new.txt").read_text() == "hello\n"
        assert progress and progress[0][0] == 1 and progress[0][2].startswith("1 files, ")

        info = data(await call("sysinfo", {"alias": "box"}))
        assert info["kernel"] and info["disks"] and info["failed_units"] == []
        status = data(
            await call("systemd", {"alias": "box", "action": "status", "unit": "ssh.service"})
        )
        assert status["status"]["ActiveState"] == "active"
        units = data(await call("systemd", {"alias": "box", "action": "list"}))
        assert "cron.service" in [u["unit"] for u in units["units"]]
        restarted = data(
            await call("systemd", {"alias": "box", "action": "restart", "unit": "cron.service"})
        )
        assert restarted["ok"]
        assert "systemctl restart -- cron.service" in (sshd.root / "systemctl.log").read_text()
        logs = data(
            await call("systemd", {"alias": "box", "action": "logs", "unit": "cron.service"})
        )
        assert "-u cron.service" in logs["output"]

        assert "removed alias 'box'" in text(await call("remove_alias", {"name": "box"}))
        gone = await call("read_file", {"alias": "box", "path": str(conf)})
        assert gone.is_error and "unknown alias 'box'" in text(gone)


async def test_unknown_host_key_is_refused_until_accepted(mcp_stdio, ssh_env, sshd, tmp_path):
    env, write = ssh_env
    known = tmp_path / "known_hosts"
    known.write_text("")
    write(box=sshd.alias())
    async with mcp_stdio(ARGV, env=env) as (client, _):
        refused = await client.call_tool("exec", {"alias": "box", "command": "true"})
        assert refused.is_error and "unknown host key" in text(refused)
        assert known.read_text() == ""
        await client.call_tool(
            "add_alias",
            {**sshd.alias(), "name": "box", "replace": True, "accept_new_host_key": True},
        )
        ran = data(await client.call_tool("exec", {"alias": "box", "command": "echo in"}))
        assert ran["stdout"] == "in\n"
    assert known.read_text() == sshd.host_key_line + "\n"


def _needs_password_user(server) -> None:
    if server.password_user is None:
        pytest.skip("creating the password test user needs root")


async def test_password_is_elicited_once_and_never_kept(
    mcp_stdio,
    ssh_env,
    sshd,
    tmp_path,
    stderr_log,
):
    _needs_password_user(sshd)
    env, write = ssh_env
    write(pw=sshd.alias(user=sshd.password_user, auth="password", key_file=None))
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        assert params.requested_schema["required"] == ["password"]
        return types.ElicitResult(action="accept", content={"password": sshd.password})

    async with mcp_stdio(ARGV, env=env, elicitation_callback=on_elicit) as (client, _):
        first = data(await client.call_tool("exec", {"alias": "pw", "command": "id -un"}))
        second = data(await client.call_tool("exec", {"alias": "pw", "command": "echo again"}))
        aliases = text(await client.call_tool("list_aliases", {}))
    assert first["stdout"] == f"{sshd.password_user}\n" and second["stdout"] == "again\n"
    assert len(asked) == 1 and sshd.password_user in asked[0]
    for place in (aliases, (tmp_path / "aliases.json").read_text(), stderr_log.read_text()):
        assert sshd.password not in place


async def test_declined_or_wrong_password_is_an_error(mcp_stdio, ssh_env, sshd):
    _needs_password_user(sshd)
    env, write = ssh_env
    write(pw=sshd.alias(user=sshd.password_user, auth="password", key_file=None))
    answers = iter(
        [
            types.ElicitResult(action="decline"),
            types.ElicitResult(action="accept", content={"password": "wrong"}),
        ]
    )

    async def on_elicit(context, params):
        return next(answers)

    async with mcp_stdio(ARGV, env=env, elicitation_callback=on_elicit) as (client, _):
        declined = await client.call_tool("exec", {"alias": "pw", "command": "true"})
        assert declined.is_error and "no password was given" in text(declined)
        wrong = await client.call_tool("exec", {"alias": "pw", "command": "true"})
        assert wrong.is_error and "authentication failed" in text(wrong)


async def test_sudo_nopasswd_fails_fast_with_a_clear_error(mcp_stdio, ssh_env, sshd):
    _needs_password_user(sshd)
    env, write = ssh_env
    write(pw=sshd.alias(user=sshd.password_user, auth="password", key_file=None, sudo="nopasswd"))

    async def on_elicit(context, params):
        return types.ElicitResult(action="accept", content={"password": sshd.password})

    async with mcp_stdio(ARGV, env=env, elicitation_callback=on_elicit) as (client, _):
        data(await client.call_tool("exec", {"alias": "pw", "command": "true"}))  # connected
        started = time.monotonic()
        result = await client.call_tool("exec", {"alias": "pw", "command": "id", "sudo": True})
        elapsed = time.monotonic() - started
    assert result.is_error and elapsed < 5
    message = text(result)
    # Without sudo on the host it is "not installed"; with it, the NOPASSWD explanation.
    assert "sudo is not installed" in message or "NOPASSWD" in message


async def test_sudo_prompt_asks_for_the_password(mcp_stdio, ssh_env, sshd):
    if not shutil.which("sudo"):
        pytest.skip("sudo is not installed on the test host")
    _needs_password_user(sshd)
    sudoers = "/etc/sudoers.d/bothost-ssh-test"
    with open(sudoers, "w") as rule:
        rule.write(f"{sshd.password_user} ALL=(ALL) ALL\n")
    env, write = ssh_env
    write(pw=sshd.alias(user=sshd.password_user, auth="password", key_file=None, sudo="prompt"))
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"password": sshd.password})

    try:
        async with mcp_stdio(ARGV, env=env, elicitation_callback=on_elicit) as (client, _):
            ran = data(
                await client.call_tool("exec", {"alias": "pw", "command": "id -u", "sudo": True})
            )
            again = data(
                await client.call_tool("exec", {"alias": "pw", "command": "id -u", "sudo": True})
            )
    finally:
        os.remove(sudoers)
    assert ran["stdout"] == "0\n" and again["stdout"] == "0\n"
    assert len(asked) == 2  # login once, sudo once (then remembered)
    assert sshd.password not in ran["stdout"] + ran["stderr"]


async def _wait_runs(state_file, at_least: int) -> None:
    """Wait (bounded) until the monitor has saved at least `at_least` rounds."""
    async with asyncio.timeout(WAIT):
        while True:
            if (
                state_file.exists()
                and json.loads(state_file.read_text()).get("runs", 0) >= at_least
            ):
                return
            await asyncio.sleep(0.05)


async def test_monitor_alerts_once_and_not_again_after_restart(
    mcp_stdio,
    ssh_env,
    sshd,
    home,
):
    env, write = ssh_env
    write(box=sshd.alias(monitors={"disk_percent": 0, "disk_paths": ["/"]}))
    env = {**env, "SSH_MONITOR_SECONDS": "0.1"}
    state = home / "state" / "ssh" / "monitor.json"
    async with mcp_stdio(ARGV, env=env, events=[EVENT]) as (_, events):
        (alert,) = await events.wait_for(EVENT)
        await _wait_runs(state, 3)
        assert len(events.of(EVENT)) == 1
    assert alert["id"] == "ssh:box/disk:/#1" and alert["state"] == "alert"
    assert alert["alias"] == "box" and alert["check"] == "disk" and alert["threshold"] == 0
    assert alert["summary"].startswith("box: disk / (/) at ")
    assert {"id", "summary", "severity", "occurred_at"} <= set(alert)
    runs = json.loads(state.read_text())["runs"]
    async with mcp_stdio(ARGV, env=env, events=[EVENT]) as (_, events):
        await _wait_runs(state, runs + 3)
        assert events.of(EVENT) == []


async def test_monitor_reports_failed_units_and_unreachable_hosts(
    mcp_stdio,
    ssh_env,
    sshd,
):
    env, write = ssh_env
    write(
        box=sshd.alias(monitors={"failed_units": True}),
        gone=sshd.alias(port=1, monitors={"unreachable": True}),
    )
    sshd.failed_units.write_text("nginx.service loaded failed failed A web server\n")
    try:
        async with mcp_stdio(ARGV, env={**env, "SSH_MONITOR_SECONDS": "0.1"}, events=[EVENT]) as (
            _,
            events,
        ):
            alerts = await events.wait_for(EVENT, count=2)
    finally:
        sshd.failed_units.write_text("")
    by_check = {a["check"]: a for a in alerts}
    assert by_check["unit"]["summary"] == "box: systemd unit nginx.service failed"
    assert by_check["reachable"]["severity"] == "critical"
    assert f"gone: {sshd.user}@127.0.0.1:1 unreachable" in by_check["reachable"]["summary"]
