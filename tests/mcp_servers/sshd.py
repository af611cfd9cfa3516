"""A real OpenSSH sshd on 127.0.0.1 for the ssh server's tests (`sshd` fixture).

One sshd per test session, in its own process group, configured from a temp directory:
a fresh host key, one authorized client key (for every user, through an absolute
AuthorizedKeysFile), password logins allowed, and internal-sftp. Its sessions get a PATH
that starts with a directory of fakes: `systemctl` and `journalctl` answer from files
in the temp directory, because containers have no running systemd to ask. When the tests
run as root, a test user with a known password (and no sudo rights) is created once,
idempotently. Teardown kills the whole group, per-connection children included.

Use it from a test module with `from sshd import sshd_fixture  # noqa: F401`; the
fixture's name is `sshd`.
"""

from __future__ import annotations

import fcntl
import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from peers import program

from tests.helpers import free_port

TEST_USER = "bothost-ssh-test"
TEST_PASSWORD = "tr0ub4dor&3-correct-horse"
START_SECONDS = 10.0

FAKE_SYSTEMCTL = r"""#!/bin/sh
# Fake systemctl for tests: units and failures come from files beside this script.
here=$(dirname "$0")
echo "systemctl $*" >> "$here/../systemctl.log"
case "$1" in
  list-units)
    case "$*" in
      *--failed*) cat "$here/../failed-units" 2>/dev/null ;;
      *) echo "cron.service loaded active running Regular background program processing daemon"
         echo "ssh.service loaded active running OpenBSD Secure Shell server"
         cat "$here/../failed-units" 2>/dev/null ;;
    esac ;;
  show)
    echo "Id=$2"; echo "Description=Test unit $2"; echo "LoadState=loaded"
    echo "ActiveState=active"; echo "SubState=running"; echo "MainPID=4242" ;;
  start|stop|restart|reload|enable|disable) exit 0 ;;
  *) echo "Unknown command verb $1." >&2; exit 1 ;;
esac
"""

FAKE_JOURNALCTL = r"""#!/bin/sh
echo "2026-12-02T10:00:00+0000 host unit[1]: started ($*)"
"""


@dataclass
class Sshd:
    """Where the test sshd listens and the files a client needs to log in."""

    host: str
    port: int
    user: str  # who runs the tests: the login the client key opens
    root: Path
    client_key: Path
    known_hosts: Path  # lists this sshd's host key
    host_key_line: str
    log: Path
    failed_units: Path  # one `unit load active sub description` line per failed unit
    password_user: str | None
    password: str | None

    def alias(self, **overrides) -> dict:
        """An alias entry (for the aliases file) that logs in as `user` with the client key."""
        entry = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "auth": "key",
            "key_file": str(self.client_key),
            "sudo": "nopasswd",
        }
        entry.update(overrides)
        return entry


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def _ensure_password_user() -> str | None:
    """Create the test user with TEST_PASSWORD once (root only); its name, else None."""
    if os.geteuid() != 0 or not shutil.which("useradd"):
        return None
    # pytest-xdist workers each start an sshd: one at a time edits /etc/passwd and shadow
    with open(Path(tempfile.gettempdir()) / "bothost-ssh-test-user.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        exists = subprocess.run(["id", TEST_USER], capture_output=True).returncode == 0
        if not exists:
            subprocess.run(["useradd", "-m", "-s", "/bin/sh", TEST_USER], check=True)
        subprocess.run(["chpasswd"], input=f"{TEST_USER}:{TEST_PASSWORD}\n", text=True, check=True)
    return TEST_USER


def _write_config(root: Path, port: int, fakes: Path) -> Path:
    config = root / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {root / 'host_key'}",
                f"PidFile {root / 'sshd.pid'}",
                f"AuthorizedKeysFile {root / 'authorized_keys'}",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin yes",
                "PasswordAuthentication yes",
                "KbdInteractiveAuthentication no",
                "Subsystem sftp internal-sftp",
                "LogLevel VERBOSE",
                f"SetEnv PATH={fakes}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "",
            ]
        )
    )
    return config


def _wait_ready(proc: subprocess.Popen, port: int, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                if sock.recv(64).startswith(b"SSH-2.0"):
                    return
        except OSError:
            time.sleep(0.05)  # polling a condition (the port), bounded by the deadline
    raise RuntimeError(
        f"sshd did not listen on {port} within {START_SECONDS} s:\n{log.read_text()}"
    )


def start(root: Path) -> tuple[Sshd, subprocess.Popen]:
    """Start an sshd configured under `root`; returns it and its process."""
    binary = program("sshd", "/usr/sbin/sshd")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    _keygen(root / "host_key")
    _keygen(root / "client_key")
    shutil.copy(root / "client_key.pub", root / "authorized_keys")
    fakes = root / "bin"
    fakes.mkdir()
    for name, text in (("systemctl", FAKE_SYSTEMCTL), ("journalctl", FAKE_JOURNALCTL)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    failed = root / "failed-units"
    failed.write_text("")
    port = free_port()
    config = _write_config(root, port, fakes)
    log = root / "sshd.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [binary, "-D", "-e", "-f", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_ready(proc, port, log)
    except BaseException:
        stop(proc)
        raise
    key_type, key_b64 = (root / "host_key.pub").read_text().split()[:2]
    line = f"[127.0.0.1]:{port} {key_type} {key_b64}"
    known = root / "known_hosts"
    known.write_text(line + "\n")
    user = _ensure_password_user()
    server = Sshd(
        host="127.0.0.1",
        port=port,
        user=getpass.getuser(),
        root=root,
        client_key=root / "client_key",
        known_hosts=known,
        host_key_line=line,
        log=log,
        failed_units=failed,
        password_user=user,
        password=TEST_PASSWORD if user else None,
    )
    return server, proc


def stop(proc: subprocess.Popen) -> None:
    """Kill sshd's process group (the listener and every session it forked)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


@pytest.fixture(scope="session", name="sshd")
def sshd_fixture(tmp_path_factory) -> Iterator[Sshd]:
    """A running OpenSSH sshd on 127.0.0.1 (skips, or fails in CI, without openssh-server)."""
    server, proc = start(tmp_path_factory.mktemp("sshd"))
    try:
        yield server
    finally:
        stop(proc)
