import sqlite3
import threading

import pytest

from bothost.store import Migration, Store, StoreError, core_migrations


def test_migrations_from_blank_and_twice(tmp_path):
    path = tmp_path / "b.db"
    store = Store(path, core_migrations())
    tables = set(store.call(lambda db: db.table_names()))
    assert {
        "sessions",
        "messages",
        "tool_calls",
        "mcp_servers",
        "mcp_grants",
        "events",
        "ticks",
        "briefings",
        "deliveries",
        "approvals",
        "mutes",
        "locks",
    } <= tables
    store.close()
    store = Store(path, core_migrations())
    rows = store.call(lambda db: db.query("SELECT * FROM _migrations ORDER BY number"))
    assert [(r["component"], r["number"]) for r in rows] == [
        ("core", m.number) for m in core_migrations()
    ]
    assert store.call(lambda db: db.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
    store.close()


def test_plugin_migrations_apply_in_order_once(tmp_path):
    calls = []

    def first(db):
        calls.append(1)
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")

    def second(db):
        calls.append(2)
        db.execute("ALTER TABLE notes ADD COLUMN author TEXT")

    migrations = core_migrations() + [Migration("notes", 2, second), Migration("notes", 1, first)]
    Store(tmp_path / "n.db", migrations).close()
    Store(tmp_path / "n.db", migrations).close()
    assert calls == [1, 2]


def test_failed_migration_rolls_back(tmp_path):
    def bad(db):
        db.execute("CREATE TABLE half (id INTEGER)")
        raise RuntimeError("nope")

    try:
        Store(tmp_path / "f.db", core_migrations() + [Migration("x", 1, bad)])
    except Exception as exc:
        assert "nope" in str(exc)
    conn = sqlite3.connect(tmp_path / "f.db")
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half'").fetchone()[0] == 0


def test_one_writer_thread_and_shared_file(tmp_path):
    store = Store(tmp_path / "s.db", core_migrations())
    other = Store(tmp_path / "s.db", core_migrations())  # as a second process would
    seen = store.call(lambda db: threading.current_thread().name)
    assert seen == "bothost-store"
    store.call(lambda db: db.insert("locks", {"name": "n", "owner": "a", "expires_at": 1}))
    assert other.call(lambda db: db.value("SELECT COUNT(*) FROM locks")) == 1
    store.close()
    other.close()


async def test_async_run_does_not_block(tmp_path):
    store = Store(tmp_path / "a.db", core_migrations())
    assert await store.run(lambda db: db.execute("SELECT 41 + 1").fetchone()[0]) == 42
    store.close()


def test_open_records_the_core_schema_in_user_version(tmp_path):
    Store(tmp_path / "v.db", core_migrations()).close()
    conn = sqlite3.connect(tmp_path / "v.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == max(
        m.number for m in core_migrations()
    )
    conn.close()


def test_newer_plugin_schema_is_refused_and_an_unknown_component_is_not(tmp_path):
    def notes(db):
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY)")

    path = tmp_path / "p.db"
    Store(path, core_migrations() + [Migration("notes", 1, notes)]).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO _migrations VALUES ('gone', 9, 'uninstalled plugin', 0)")
    Store(path, core_migrations() + [Migration("notes", 1, notes)]).close()  # 'gone' is unused
    with conn:
        conn.execute("INSERT INTO _migrations VALUES ('notes', 2, 'from the future', 0)")
    conn.close()
    with pytest.raises(
        StoreError,
        match="newer version of the plugin that owns 'notes' "
        r"\(schema 2, this one knows 1\)",
    ):
        Store(path, core_migrations() + [Migration("notes", 1, notes)])
