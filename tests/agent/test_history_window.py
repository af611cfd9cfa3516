"""A turn in a long conversation reads the rows added since the session's last turn, not the
whole window again (issue 19: every turn read every message after the newest summary, ~12 ms
at 1,000 messages), and sees exactly what a fresh read would."""

from __future__ import annotations

import time

from bothost.agent import history
from bothost.agent.history import Summary, Windows
from bothost.models import Address, IncomingMessage

SEEDED = 1000


def message(text: str) -> IncomingMessage:
    return IncomingMessage(address=Address("test", "long"), text=text, user="u1", is_admin=True)


def seed_rows(session_id: str, count: int) -> list[dict]:
    now = time.time()
    return [
        {
            "session_id": session_id,
            "turn_id": f"old{n // 2}",
            "role": "user" if n % 2 == 0 else "assistant",
            "content": f"message {n}",
            "data": None,
            "tokens": 4,
            "created_at": now,
        }
        for n in range(count)
    ]


def insert_all(db, rows: list[dict]) -> None:
    with db.transaction():
        for row in rows:
            db.insert("messages", row)


def counting_reads(monkeypatch) -> list[int]:
    """Rows each read of the messages table returned."""
    reads: list[int] = []
    real = history.load_since

    def load_since(db, session_id, after, limit):
        rows = real(db, session_id, after, limit)
        reads.append(len(rows))
        return rows

    monkeypatch.setattr(history, "load_since", load_since)
    return reads


async def test_a_turn_of_a_long_conversation_reads_a_bounded_number_of_rows(
    openai_host, fake_llm, monkeypatch
):
    fake_llm.script = [{"text": "first"}, {"text": "second"}, {"text": "third"}]
    await openai_host.handle_message(message("hello"))
    session_id = (await openai_host.store.run(_session_ids))[0]
    rows = seed_rows(session_id, SEEDED)
    await openai_host.store.run(lambda db: insert_all(db, rows))
    reads = counting_reads(monkeypatch)

    await openai_host.handle_message(message("after the seeded ones"))
    await openai_host.handle_message(message("and one more"))

    # the model saw the whole conversation each time (nothing is summarised at this size)...
    seen = [len(body["messages"]) for body in fake_llm.requests]
    assert seen == [2, 2 + 2 + SEEDED, 2 + 2 + SEEDED + 2]
    # ...but each turn read only the rows added since the one before: the seeded thousand
    # once, then the last turn its own message and the previous reply
    assert reads[-1] <= 2


def _session_ids(db) -> list[str]:
    return [r["id"] for r in db.query("SELECT id FROM sessions")]


async def test_the_kept_window_is_what_a_fresh_read_gives_after_summaries_and_other_writers(
    openai_host,
):
    store = openai_host.store
    await store.run(
        lambda db: db.execute(
            "INSERT INTO sessions (id, platform, channel, created_at, updated_at) VALUES ('s', 'test', 'c', 0, 0)"
        )
    )
    windows = Windows()

    async def kept():
        return await store.run(lambda db: windows.load(db, "s", 50))

    async def fresh():
        return await store.run(lambda db: history.load_window(db, "s", 50))

    def same(a, b):
        return (a[0], [(r.id, r.message) for r in a[1]]) == (
            b[0],
            [(r.id, r.message) for r in b[1]],
        )

    await store.run(lambda db: insert_all(db, seed_rows("s", 30)))
    assert same(await kept(), await fresh())
    # another host (or a CLI) appends: seen at the next read
    await store.run(lambda db: insert_all(db, seed_rows("s", 40)))
    assert same(await kept(), await fresh())
    assert len((await kept())[1]) == 50  # the newest 50, as the fresh read has them
    # a summary written elsewhere: the kept rows it covers go
    first_ids = [r.id for r in (await fresh())[1]]
    await history.add_summary(store, "s", Summary(first_ids[20], "so far", 3))
    assert same(await kept(), await fresh())
    await store.run(lambda db: insert_all(db, seed_rows("s", 3)))
    got = await kept()
    assert same(got, await fresh())
    assert got[0].covers_through == first_ids[20]
