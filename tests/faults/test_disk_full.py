"""A full disk under a real ``bothost run``: 503 with Retry-After, never 500, nothing lost.

The home (database, WAL, logs) is a small tmpfs, so this needs root to mount it; it is
skipped otherwise (CI runs as root). The disk is filled while the host runs, signed webhooks
arrive, and then space is freed: while full, every answer is 2xx or 503 with
``Retry-After`` and ``/healthz`` says 503; afterwards the refused webhooks go through when
retried (as senders do), ``/healthz`` is 200 again, and every webhook that was answered 2xx
is in the database.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess

import aiohttp
import pytest

from tests.faults.http_host import RunningHost

TMPFS_SIZE = "6m"  # the database, its WAL and the logs fit; a filler takes the rest
PAYLOAD = "x" * 4000  # a few pages per event, so the WAL's spare room is used up quickly
SENDS = 200

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "home"
    mount.mkdir(mode=0o700)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(mount)],
        check=True,
    )
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(folder) -> None:
    """Write a filler file until the file system refuses even one byte."""
    with open(folder / "filler", "wb", buffering=0) as filler:
        for chunk in (64 * 1024, 4096, 1):
            while True:
                try:
                    filler.write(b"\0" * chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break


def stored_keys(db) -> set[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {row[0] for row in conn.execute("SELECT dedupe_key FROM events")}
    finally:
        conn.close()


async def test_a_full_disk_answers_503_with_retry_after_and_loses_nothing(small_disk, tmp_path):
    host = RunningHost(small_disk, tmp_path)
    await host.start()
    answered_2xx: set[str] = set()
    try:
        async with aiohttp.ClientSession() as session:
            status, _, _ = await host.webhook(session, {"summary": "before"}, msg_id="msg_before")
            assert status == 200
            answered_2xx.add("msg_before")

            fill(small_disk)
            refused = []
            for i in range(SENDS):
                msg_id = f"msg_full_{i}"
                status, headers, body = await host.webhook(
                    session, {"summary": f"event {i}", "detail": PAYLOAD}, msg_id=msg_id
                )
                assert status in (200, 503), (status, body)
                if status == 200:
                    answered_2xx.add(msg_id)
                else:
                    assert int(headers["Retry-After"]) > 0 and "error" in body
                    refused.append(msg_id)
            assert refused, "a full disk refused nothing"
            for path, data in (
                ("/api/chat", {"session": "full", "text": "help"}),
                ("/webhook/message", {"text": "help", "user": "u"}),
            ):
                status, headers, body = await host.post(session, path, data)
                assert status in (200, 503), (path, status, body)
                assert status == 200 or int(headers["Retry-After"]) > 0
            status, headers, report = await host.healthz(session)
            assert status == 503 and int(headers["Retry-After"]) > 0
            assert report["store"]["ok"] is False

            (small_disk / "filler").unlink()
            for msg_id in refused:  # the senders retry with the same id
                index = int(msg_id.rsplit("_", 1)[1])
                status, _, body = await host.webhook(
                    session, {"summary": f"event {index}", "detail": PAYLOAD}, msg_id=msg_id
                )
                assert status == 200, body
                answered_2xx.add(msg_id)
            status, _, report = await host.healthz(session)
            assert status == 200 and report["store"]["ok"] is True
    finally:
        host.stop()
    assert answered_2xx <= stored_keys(small_disk / "bothost.db")
    refusals = [line for line in host.stderr().splitlines() if "the store cannot write" in line]
    assert 1 <= len(refusals) <= 3  # the first, then a count per interval: not one per request


def test_commands_on_a_full_disk_say_so_and_doctor_does_not_advise_starting_afresh(
    small_disk, tmp_path
):
    # found from outside: with the home's disk full, every command said "database error:
    # disk I/O error" and doctor said the home was writable and the fix for the database
    # was to "restore bothost.db from a backup, or move it away to start afresh"
    from tests.helpers import run_bothost

    home = small_disk / "h"
    assert run_bothost("events", "push", "ops", "t", '{"summary": "x"}', home=home).returncode == 0
    fill(small_disk)
    listed = run_bothost("events", "list", home=home)
    assert listed.returncode == 1
    assert "disk is full" in listed.stderr and "I/O" not in listed.stderr
    checked = run_bothost("doctor", home=home)
    assert checked.returncode == 1
    home_line = next(line for line in checked.stdout.splitlines() if " home: " in line)
    assert home_line.startswith("!!") and "disk full" in home_line
    assert "start afresh" not in checked.stdout and "free some space" in checked.stdout
    (small_disk / "filler").unlink()
    assert run_bothost("events", "list", home=home).returncode == 0  # nothing was lost
