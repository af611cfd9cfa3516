"""``/healthz`` reflects whether the store can write, on a real ``bothost run``.

A query on the host's own connection answers from its page cache even when the file on
disk is corrupt, so the health check reads the file through a fresh connection too; a
write that fails with a storage error marks the store failing until a write succeeds.
"""

from __future__ import annotations

import sqlite3

import aiohttp

from bothost.store.health import WriteHealth, storage_failure
from tests.faults.http_host import RunningHost


async def test_healthz_is_503_when_the_database_file_is_corrupt(home, tmp_path):
    host = RunningHost(home, tmp_path)
    await host.start()
    try:
        async with aiohttp.ClientSession() as session:
            status, _, report = await host.healthz(session)
            assert status == 200 and report["store"]["ok"] is True
            # move every page into the file (a page still in the WAL would be read from
            # there), then break the file's header as a bad disk or a stray write would
            checkpoint = sqlite3.connect(home / "bothost.db")
            checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            checkpoint.close()
            with open(home / "bothost.db", "r+b") as db:
                db.write(b"this is not SQLite" * 6)  # the 100-byte header
            status, headers, report = await host.healthz(session)
            assert status == 503 and int(headers["Retry-After"]) > 0
            assert report["ok"] is False and "not a database" in report["store"]["error"]
    finally:
        host.stop()


def sqlite_error(statement: str, db: str = ":memory:") -> sqlite3.Error:
    conn = sqlite3.connect(db)
    try:
        conn.execute(statement)
    except sqlite3.Error as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError(f"{statement} did not fail")


def test_storage_errors_are_told_from_bugs(tmp_path):
    not_a_db = tmp_path / "not.db"
    not_a_db.write_bytes(b"x" * 4096)
    assert storage_failure(sqlite_error("SELECT * FROM sqlite_master", str(not_a_db)))
    assert storage_failure(OSError(28, "No space left on device"))
    assert not storage_failure(sqlite_error("SELECT * FROM no_such_table"))  # a bug: 500
    assert not storage_failure(sqlite_error("SELEKT 1"))
    assert not storage_failure(ConnectionRefusedError(111, "refused"))  # not the disk's
    wrapped = RuntimeError("turn failed")
    wrapped.__cause__ = OSError(28, "No space left on device")
    assert storage_failure(wrapped)


def test_a_failed_write_marks_the_store_failing_until_a_write_succeeds(tmp_path):
    health = WriteHealth()
    health.observe(True, None)
    assert health.report()["ok"] is True
    health.observe(False, OSError(28, "No space left on device"))
    assert health.report()["ok"] is False
    health.observe(False, None)  # a read proves nothing
    health.observe(False, sqlite_error("SELECT * FROM no_such_table"))  # nor does a bug
    assert "No space left" in health.report()["error"]
    health.observe(True, None)
    assert health.report()["ok"] is True
