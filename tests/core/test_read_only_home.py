"""Commands that only read work on a home they cannot write (a backup, a read-only mount).

`events list`, `rules list`, `mcp list`, `usage`, `briefings` and `plugins` refused such a
home ("not writable"): opening the store made the home's directories, migrated and checked
the database writable. They now open the database read-only (SQLite ``mode=ro``, or
``immutable=1`` on a read-only mount where no -shm file can be made); a write command
still fails with one line. The home is made read-only by a read-only bind mount in a mount
namespace of the command's own (root ignores a directory's mode).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.helpers import run_bothost

# mounts HOME onto itself read-only in the command's own mount namespace, then runs it
READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"'
READS = [
    ("events", "list"),
    ("rules", "list"),
    ("mcp", "list"),
    ("usage",),
    ("briefings",),
    ("plugins",),
]


def can_mount_read_only(tmp_path) -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", READ_ONLY, str(tmp_path), "true"], capture_output=True
    )
    return probe.returncode == 0


@pytest.fixture
def read_only_home(tmp_path, home):
    if not can_mount_read_only(tmp_path):
        pytest.skip("needs root with unshare and mount to make a read-only bind mount")
    config = tmp_path / "c.yaml"
    config.write_text("mcp: {servers: {weather: {enabled: false}}}\n")
    queued = run_bothost("events", "push", "gmail", "event/new_email", '{"id": "7"}', home=home)
    assert queued.returncode == 0, queued.stderr
    return home, config, ("unshare", "-m", "sh", "-c", READ_ONLY, str(home))


@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_a_command_that_only_reads_reads_a_read_only_home(read_only_home, command):
    home, config, prefix = read_only_home
    result = run_bothost(*command, home=home, config=config, prefix=prefix)
    assert result.returncode == 0, result.stderr
    assert "not writable" not in result.stderr, result.stderr
    if command == ("events", "list"):
        assert "gmail/event/new_email" in result.stdout, result.stdout


def test_a_write_command_fails_with_one_line(read_only_home):
    home, config, prefix = read_only_home
    args = ("events", "push", "gmail", "event/new_email", '{"id": "8"}')
    result = run_bothost(*args, home=home, config=config, prefix=prefix)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not writable" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
