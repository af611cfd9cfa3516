"""The ssh server's paramiko layer against a real OpenSSH sshd, in-process (no MCP).

Host-key policy, the connection pool, command deadlines, edits and scp-style transfers:
the parts whose edge cases are easier to pin down here than through a tool call.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import threading
import time

import pytest
from bothost.mcp_servers.ssh import commands, edits, files, transfer
from bothost.mcp_servers.ssh.aliases import Alias, AliasStore
from bothost.mcp_servers.ssh.connections import ConnectionPool
from bothost.mcp_servers.ssh.errors import HostKeyError, SshError
from bothost.mcp_servers.ssh.passwords import LOGIN, PasswordCache
from bothost.mcp_servers.ssh.service import SshService
from peers import program
from sshd import sshd_fixture  # noqa: F401  (the `sshd` fixture)


def _alias(server, **overrides) -> Alias:
    return Alias(name="t", **{**server.alias(), **overrides})


@pytest.fixture
def pool(sshd):
    pool = ConnectionPool(sshd.known_hosts, connect_timeout=5)
    yield pool
    pool.close_all()


@pytest.fixture
def client(sshd, pool):
    return pool.client(_alias(sshd))


@pytest.fixture
def sftp(client):
    sftp = client.open_sftp()
    yield sftp
    sftp.close()


def test_unknown_host_key_is_refused_unless_accepted_then_recorded(sshd, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("# my hosts\n")
    with pytest.raises(HostKeyError, match="unknown host key .* SHA256:"):
        ConnectionPool(known).client(_alias(sshd))
    assert known.read_text() == "# my hosts\n"
    accepting = ConnectionPool(known)
    accepting.client(_alias(sshd, accept_new_host_key=True))
    accepting.close_all()
    assert known.read_text() == "# my hosts\n" + sshd.host_key_line + "\n"
    strict = ConnectionPool(known)  # the recorded key now counts as known
    strict.client(_alias(sshd))
    strict.close_all()


def test_changed_host_key_is_refused_even_when_accepting_new(sshd, tmp_path):
    other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd.port} {other}\n")
    with pytest.raises(HostKeyError, match="HOST KEY CHANGED"):
        ConnectionPool(known).client(_alias(sshd, accept_new_host_key=True))


def test_pool_reuses_a_connection_until_idle_ttl(sshd):
    pool = ConnectionPool(sshd.known_hosts, idle_ttl=60)
    alias = _alias(sshd)
    first = pool.client(alias)
    assert pool.client(alias) is first and pool.live(alias)
    pool.idle_ttl = 0  # everything is now idle too long
    assert not pool.live(alias)
    second = pool.client(alias)
    assert second is not first and first.get_transport() is None  # the old one was closed
    pool.close_all()


def test_refused_connection_and_bad_key_are_one_line_errors(sshd, tmp_path):
    closed = ConnectionPool(sshd.known_hosts, connect_timeout=2)
    with pytest.raises(
        SshError, match=f"cannot connect to {sshd.user}@127.0.0.1:1: Connection refused"
    ):
        closed.client(_alias(sshd, port=1))
    (tmp_path / "k").write_text("not a key")
    with pytest.raises(SshError, match="127.0.0.1"):
        closed.client(_alias(sshd, key_file=str(tmp_path / "k")))


def test_command_deadline_cap_and_exit_status(client):
    started = time.monotonic()
    slow = commands.run(client, "sleep 5", timeout=0.5)
    assert slow.timed_out and slow.exit_status is None and time.monotonic() - started < 5
    loud = commands.run(client, "head -c 300000 /dev/zero | tr '\\0' x; exit 4", 10, max_bytes=1000)
    assert loud.truncated and len(loud.stdout) == 1000 and loud.exit_status == 4


def _commands_of(user: str, line: str) -> list[int]:
    """Pids of `user`'s processes whose command line is exactly `line`."""
    found = subprocess.run(["pgrep", "-u", user, "-x", "-f", line], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def _until(condition, limit: float = 5.0) -> bool:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def user_client(sshd, pool):
    """A connection as the non-root test user: OpenSSH serves root's sessions without
    privilege separation, and refuses to signal them (see commands.stop_command)."""
    if sshd.password_user is None:
        pytest.skip("needs root to create the password test user")
    alias = _alias(sshd, user=sshd.password_user, auth="password", key_file=None)
    client = pool.client(alias, sshd.password)
    yield sshd.password_user, client
    left = [_commands_of(sshd.password_user, f"sleep {n}") for n in (4711, 4712, 4713)]
    for pid in sum(left, []):
        os.kill(pid, 9)  # what a failing test left behind


def test_a_command_cut_off_by_its_timeout_is_stopped_on_the_host(user_client):
    # Found from outside: `exec` of `sleep 4711` with timeout 1 returned timed_out, and the
    # sleep ran on for the hour: closing the channel does not end a command without a tty.
    user, client = user_client
    result = commands.run(client, "sleep 4711", timeout=1)
    assert result.timed_out and result.exit_status is None
    assert _until(lambda: not _commands_of(user, "sleep 4711")), "the command still runs"


def test_a_stopped_command_ends_at_once_and_on_the_host(user_client):
    # Ctrl-C in chat cancels the tool call: the worker thread must not read on to the
    # command's own deadline, and the command must end.
    user, client = user_client
    stop = threading.Event()
    results: list[commands.CommandResult] = []
    worker = threading.Thread(
        target=lambda: results.append(commands.run(client, "sleep 4712", 600, stop=stop))
    )
    worker.start()
    assert _until(lambda: bool(_commands_of(user, "sleep 4712")))
    stop.set()
    worker.join(5)
    assert not worker.is_alive() and results[0].exit_status is None
    assert _until(lambda: not _commands_of(user, "sleep 4712")), "the command still runs"


async def test_a_cancelled_exec_call_ends_its_command_on_the_host(
    sshd, pool, user_client, tmp_path
):
    # Before: cancelling SshService.execute left its worker reading for the whole timeout
    # (here 600 s) and the command running.
    user, _ = user_client
    aliases = AliasStore(tmp_path / "aliases.json")
    aliases.add(_alias(sshd, user=user, auth="password", key_file=None))
    passwords = PasswordCache(60)
    passwords.put(LOGIN, "t", sshd.password)
    service = SshService(aliases, pool, passwords, tmp_path)
    call = asyncio.create_task(service.execute("t", "sleep 4713", 600))
    assert await asyncio.to_thread(_until, lambda: bool(_commands_of(user, "sleep 4713")))
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.to_thread(_until, lambda: not _commands_of(user, "sleep 4713"))


def _children(pid: int) -> set[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return {int(child) for child in found.stdout.split()}


def test_a_connection_that_stops_answering_is_dropped_so_the_next_call_reconnects(
    sshd, pool, monkeypatch
):
    # Found from outside: a pooled connection whose peer stopped answering (a half-open
    # TCP connection: a laptop that slept, a NAT that forgot it) stayed in the pool, so
    # every later call waited for a session that never opened, each failing the same way,
    # until TCP itself gave up minutes later. Stopping the connection's sshd process is
    # that silence, here.
    monkeypatch.setattr(commands, "OPEN_TIMEOUT", 1.0)
    master = int((sshd.root / "sshd.pid").read_text())
    before = _children(master)
    alias = _alias(sshd)
    client = pool.client(alias)
    ours = _children(master) - before
    assert len(ours) == 1
    (silent,) = ours
    os.kill(silent, signal.SIGSTOP)
    try:
        with pytest.raises(SshError, match="refused a new session"):
            commands.run(client, "true", 5)
        assert not pool.live(alias)
        assert commands.run(pool.client(alias), "echo back", 5).stdout == "back\n"
    finally:
        os.kill(silent, signal.SIGKILL)


async def test_a_silent_connection_is_dropped_after_a_failed_sftp_call_too(sshd, tmp_path):
    # The same silence as above, met by a file tool (read_file, list_files, edit_file):
    # open_sftp gave up, and the dead connection stayed pooled for the next call.
    pool = ConnectionPool(sshd.known_hosts, connect_timeout=1)
    aliases = AliasStore(tmp_path / "aliases.json")
    aliases.add(_alias(sshd))
    service = SshService(aliases, pool, PasswordCache(60), tmp_path)
    master = int((sshd.root / "sshd.pid").read_text())
    before = _children(master)
    await service.connect("t")
    (silent,) = _children(master) - before
    os.kill(silent, signal.SIGSTOP)
    try:
        with pytest.raises(SshError, match="cannot start SFTP"):
            await service.with_sftp("t", None, lambda sftp: sftp.listdir("/"), timeout=5)
        assert not pool.live(aliases.get("t"))
        listed = await service.with_sftp("t", None, lambda sftp: sftp.listdir("/"), timeout=5)
        assert "tmp" in listed
    finally:
        os.kill(silent, signal.SIGKILL)
        pool.close_all()


def test_edit_refuses_missing_or_ambiguous_text_and_keeps_mode(sftp, tmp_path):
    path = tmp_path / "app.conf"
    path.write_text("port = 80\nhost = a\nhost = a\n")
    path.chmod(0o640)
    with pytest.raises(SshError, match="occurs 2 times"):
        edits.edit(sftp, str(path), "host = a", "host = b")
    with pytest.raises(SshError, match="not found"):
        edits.edit(sftp, str(path), "port = 8080", "port = 81")
    assert path.read_text() == "port = 80\nhost = a\nhost = a\n"
    done = edits.edit(sftp, str(path), "port = 80\n", "port = 8080\n")
    assert done["line"] == 1 and path.read_text().startswith("port = 8080\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.conf"]  # no temp file left


def test_replace_lines_inserts_deletes_and_checks_range(sftp, tmp_path):
    path = tmp_path / "list.txt"
    path.write_text("one\ntwo\nthree\n")
    edits.replace_lines(sftp, str(path), 2, 2, "TWO")
    assert path.read_text() == "one\nTWO\nthree\n"
    edits.replace_lines(sftp, str(path), 1, 0, "zero\n")
    assert path.read_text() == "zero\none\nTWO\nthree\n"
    edits.replace_lines(sftp, str(path), 2, 3, "")
    assert path.read_text() == "zero\nthree\n"
    with pytest.raises(SshError, match="outside"):
        edits.replace_lines(sftp, str(path), 5, 6, "x")


def test_read_by_range_and_refuse_binary(sftp, tmp_path):
    (tmp_path / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    got = files.read_text(sftp, str(tmp_path / "n.txt"), offset=3, limit=2)
    assert got["content"] == "line 3\nline 4\n" and got["more"] and got["total_lines"] == 10
    (tmp_path / "b.bin").write_bytes(b"\x7fELF\0\0\0")
    with pytest.raises(SshError, match="binary"):
        files.read_text(sftp, str(tmp_path / "b.bin"))
    with pytest.raises(SshError, match="no such file"):
        files.read_text(sftp, str(tmp_path / "missing"))


def test_grep_handles_colons_in_names(client, tmp_path):
    (tmp_path / "a:b.log").write_text("ok\nERROR: disk\n")
    found = files.grep(client, "error", str(tmp_path), ignore_case=True)
    assert found["matches"] == [
        {"path": str(tmp_path / "a:b.log"), "line": 2, "text": "ERROR: disk"}
    ]
    with pytest.raises(SshError, match="grep failed"):
        files.grep(client, "x", str(tmp_path / "nowhere"))


def test_transfers_follow_scp_destination_rules(sftp, tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("A")
    (src / "sub" / "b.txt").write_text("B")
    (src / "link").symlink_to("/etc")
    remote = tmp_path / "remote"
    remote.mkdir()
    with pytest.raises(SshError, match="recursive=true"):
        transfer.upload(sftp, str(src), str(remote))
    into = transfer.upload(sftp, str(src), str(remote), recursive=True)  # existing dir: inside
    assert into["destination"] == str(remote / "src") and into["files"] == 2
    assert into["skipped"] == [str(src / "link")]
    assert (remote / "src" / "sub" / "b.txt").read_text() == "B"
    renamed = transfer.upload(sftp, str(src / "a.txt"), str(remote / "renamed.txt"))
    assert renamed["destination"] == str(remote / "renamed.txt")
    with pytest.raises(SshError, match="does not exist"):
        transfer.upload(sftp, str(src / "a.txt"), str(remote / "nodir") + "/")
    local = tmp_path / "local"
    got = transfer.download(sftp, str(remote / "src"), str(local), recursive=True)  # new name
    assert got["destination"] == str(local) and (local / "sub" / "b.txt").read_text() == "B"


def test_agent_auth_uses_the_running_agent(sshd, tmp_path, monkeypatch):
    agent_bin = program("ssh-agent", "/usr/bin/ssh-agent")
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen([agent_bin, "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.02)  # polling for the socket, bounded
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(sshd.client_key)], env=env, check=True)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        pool = ConnectionPool(sshd.known_hosts)
        client = pool.client(_alias(sshd, auth="agent", key_file=None))
        assert commands.run(client, "echo agent", 5).stdout == "agent\n"
        pool.close_all()
        monkeypatch.delenv("SSH_AUTH_SOCK")
        with pytest.raises(SshError, match="authentication failed"):
            ConnectionPool(sshd.known_hosts).client(_alias(sshd, auth="agent", key_file=None))
    finally:
        agent.terminate()
        agent.wait(timeout=5)
