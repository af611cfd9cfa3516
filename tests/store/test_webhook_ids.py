"""The record of webhook ids (``webhook_ids``): on SQLite one B-tree keyed by the id alone
(core:9), so a claim writes one index entry, not a row and its key's index (issue 19); ids
recorded before the upgrade are kept on both backends."""

from __future__ import annotations

from bothost.store import Store, core_migrations
from tests.conftest import both_backends

pytestmark = both_backends


def test_ids_recorded_before_core_9_are_kept_and_sqlite_keys_them_alone(store_target):
    before = [m for m in core_migrations() if m.number != 9]
    old = Store(store_target, before)
    try:
        old.call(
            lambda db: db.execute(
                "INSERT INTO webhook_ids (id, received_at) VALUES (?, ?), (?, ?)",
                ["msg_a", 1.0, "msg_b", 2.0],
            )
        )
    finally:
        old.close()
    store = Store(store_target, core_migrations())
    try:
        assert "core:9" in store.applied
        rows = store.call(
            lambda db: db.execute("SELECT id, received_at FROM webhook_ids ORDER BY id").fetchall()
        )
        assert [tuple(r) for r in rows] == [("msg_a", 1.0), ("msg_b", 2.0)]
        claimed = store.call(
            lambda db: (
                db.execute(
                    "INSERT INTO webhook_ids (id, received_at) VALUES (?, ?)"
                    " ON CONFLICT (id) DO NOTHING",
                    ["msg_a", 3.0],
                ).rowcount
            )
        )
        assert claimed == 0  # still the key: a known id is not recorded twice
        if store.dialect == "sqlite":
            form = store.call(
                lambda db: db.value("SELECT sql FROM sqlite_master WHERE name = 'webhook_ids'")
            )
            assert "WITHOUT ROWID" in form.upper()
    finally:
        store.close()
