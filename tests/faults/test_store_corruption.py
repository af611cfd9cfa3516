"""A damaged database file is refused before the host serves, and, met while serving, for good.

The damage is what a bad disk or a stray write leaves: garbage over b-tree pages in the
middle of a table with many rows, the file's header intact, so that only reading those
pages (or ``PRAGMA integrity_check``) shows it. Before this was caught, ``bothost run``
started on such a file, ``/healthz`` said 200 while every chat got 503 "database disk
image is malformed", webhooks were still accepted and ``events push`` wrote into it.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import aiohttp

from bothost.store.corruption import corruption
from bothost.store.health import WriteHealth
from tests.faults.http_host import RunningHost
from tests.helpers import run_bothost, write_config

MARK = "damage-here:"  # the content of the rows whose pages are damaged
GARBAGE = b"\xde\xad\xbe\xef"  # 0xde is no b-tree page type: reading the page fails
CHECKPOINT_SECONDS = 10.0  # a host's lease renewals may hold the WAL for a moment
RUN_SECONDS = 60.0  # `bothost run` refusing to start, on a loaded machine; serving never ends


def checkpoint(path: Path) -> None:
    """Move every page from the WAL into the file (a page left in the WAL is read from
    there, and damage to the file's copy would not show)."""
    conn = sqlite3.connect(path, timeout=CHECKPOINT_SECONDS)
    try:
        give_up = time.monotonic() + CHECKPOINT_SECONDS
        while conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] != 0:
            assert time.monotonic() < give_up, "the WAL could not be checkpointed"
    finally:
        conn.close()


def add_conversation(path: Path, session_id: str, before: int = 600, marked: int = 40) -> None:
    """Many messages, of which ``marked`` rows of ``session_id`` in the middle of the table."""

    def rows(session: str, n: int, content: str) -> list[tuple[str, str, float]]:
        return [(session, content + "x" * 400, time.time()) for _ in range(n)]

    conn = sqlite3.connect(path, timeout=CHECKPOINT_SECONDS)
    try:
        with conn:
            conn.execute(
                "INSERT INTO sessions (id, platform, channel, created_at, updated_at)"
                " VALUES ('filler', 'web', 'filler', 0, 0) ON CONFLICT (id) DO NOTHING"
            )
            for session, n, content in (
                ("filler", before, "earlier "),
                (session_id, marked, MARK),
                ("filler", before, "later "),
            ):
                conn.executemany(
                    "INSERT INTO messages (session_id, role, content, created_at)"
                    " VALUES (?, 'user', ?, ?)",
                    rows(session, n, content),
                )
    finally:
        conn.close()


def damage(path: Path) -> list[int]:
    """Write garbage over every page of ``path`` holding a :data:`MARK` row; their numbers."""
    checkpoint(path)
    data = path.read_bytes()
    size = int.from_bytes(data[16:18], "big")
    pages = [
        n for n in range(len(data) // size) if MARK.encode() in data[n * size : (n + 1) * size]
    ]
    assert pages and 0 not in pages, pages  # the header's page stays intact
    assert len(data) // size > 10 * len(pages)  # pages in the middle of many
    with path.open("r+b") as f:
        for n in pages:
            f.seek(n * size)
            f.write(GARBAGE * (size // len(GARBAGE)))
    return pages


def integrity(path: Path) -> list[str]:
    """What ``PRAGMA integrity_check`` says (damage it cannot read past raises instead)."""
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    finally:
        conn.close()


def damaged_home(home: Path) -> Path:
    """A home whose database is damaged in the middle of ``messages``, header intact."""
    migrate = run_bothost("db", "migrate", home=home)
    assert migrate.returncode == 0, migrate.stderr
    path = home / "bothost.db"
    add_conversation(path, "filler")
    damage(path)
    assert "malformed" in " ".join(integrity(path))
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    return path


def assert_refused(result, path: Path) -> str:
    """One line naming the file and the way out; exit 1, as for any store that cannot open."""
    err = result.stderr.strip()
    assert result.returncode == 1, (result.returncode, result.stderr, result.stdout)
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith("bothost: ") and str(path) in err, err
    assert "corrupt" in err and "bothost doctor" in err and "db import" in err, err
    return err


def test_run_refuses_a_file_damaged_in_the_middle(home, tmp_path):
    path = damaged_home(home)
    config = write_config(tmp_path / "run.yaml", {})
    result = run_bothost("run", home=home, config=config, timeout=RUN_SECONDS)
    assert_refused(result, path)


def test_events_push_refuses_a_damaged_file_and_writes_nothing(home):
    path = damaged_home(home)
    before = path.read_bytes()
    result = run_bothost("events", "push", "ci", "build", '{"ok": true}', home=home)
    assert_refused(result, path)
    assert path.read_bytes() == before


async def test_damage_met_while_serving_makes_the_store_unhealthy_for_good(home, tmp_path):
    host = RunningHost(home, tmp_path)
    await host.start()
    try:
        async with aiohttp.ClientSession() as session:
            status, _, body = await host.post(session, "/api/chat", {"session": "s1", "text": "hi"})
            assert status == 200, body
            path = home / "bothost.db"
            conn = sqlite3.connect(path)
            (session_id,) = conn.execute("SELECT id FROM sessions WHERE channel = 's1'").fetchone()
            conn.close()
            add_conversation(path, session_id)
            damage(path)
            status, _, report = await host.healthz(session)
            assert status == 200, report  # nothing has read the damaged pages yet

            # the conversation's history is on the damaged pages: the first corruption error
            status, _, body = await host.post(session, "/api/chat", {"session": "s1", "text": "hi"})
            assert status == 503, body
            for _ in range(2):  # the health probe's own write does not clear it
                status, headers, report = await host.healthz(session)
                assert status == 503 and int(headers["Retry-After"]) > 0, report
                store = report["store"]
                assert store["ok"] is False and store["corrupt"] is True, store
                assert store["file"] == "…/bothost.db", store  # named, its folder hidden
                assert "bothost doctor" in store["fix"], store
            status, headers, body = await host.webhook(session, {"summary": "after"})
            assert status == 503 and int(headers["Retry-After"]) > 0, body
            assert "corrupt" in body["error"], body
    finally:
        host.stop()
    latched = [line for line in host.stderr().splitlines() if "every statement is refused" in line]
    assert len(latched) == 1 and "bothost.db: is corrupt" in latched[0], host.stderr()
    assert "bothost doctor" in latched[0]
    stored = sqlite3.connect(home / "bothost.db")
    try:
        assert stored.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    finally:
        stored.close()


def sqlite_error(statement: str, db: str) -> sqlite3.Error:
    conn = sqlite3.connect(db)
    try:
        conn.execute(statement)
    except sqlite3.Error as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError(f"{statement} did not fail")


def test_corruption_is_told_from_other_store_failures(tmp_path):
    not_a_db = tmp_path / "not.db"
    not_a_db.write_bytes(b"x" * 4096)
    assert corruption(sqlite_error("SELECT * FROM sqlite_master", str(not_a_db)))
    wrapped = RuntimeError("turn failed")
    wrapped.__cause__ = sqlite_error("SELECT * FROM sqlite_master", str(not_a_db))
    assert corruption(wrapped)
    assert not corruption(OSError(28, "No space left on device"))
    assert not corruption(sqlite_error("SELECT * FROM no_such_table", ":memory:"))


def test_a_corruption_error_latches_past_later_successful_writes(tmp_path):
    not_a_db = tmp_path / "not.db"
    not_a_db.write_bytes(b"x" * 4096)
    health = WriteHealth("/srv/bothost.db")
    health.observe(False, sqlite_error("SELECT * FROM sqlite_master", str(not_a_db)))
    health.observe(True, None)  # a write elsewhere in the file succeeding proves nothing
    report = health.report()
    assert report["ok"] is False and report["corrupt"] is True
    assert report["file"] == "/srv/bothost.db" and "not a database" in report["error"]
