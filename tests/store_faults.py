"""Making the store fail the way a full disk does, on either backend."""

from __future__ import annotations


def refuse_disk_events(db) -> None:
    """Every insert of an event from source ``disk`` fails as a full disk does."""
    if db.dialect == "sqlite":
        db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.source = 'disk'"
            " BEGIN SELECT RAISE(ROLLBACK, 'disk I/O error'); END"
        )
        return
    db.execute(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " IF NEW.source = 'disk' THEN RAISE EXCEPTION 'no space left' USING ERRCODE = 'disk_full';"
        " END IF; RETURN NEW; END $$"
    )
    db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse()"
    )


def disk_numbers(host) -> list[int]:
    """The ``n`` of every stored event from source ``disk``, in order."""
    return host.store.call(
        lambda db: [
            int(r[0])
            for r in db.execute(
                "SELECT json_extract(payload, '$.n') FROM events WHERE source = 'disk' ORDER BY 1"
            ).fetchall()
        ]
    )
