"""``Store.run(..., start_within=…)``: a caller on a request path waits a bounded time for its
job to start; a job still queued by then is withdrawn (it never runs) and the error names it,
while one that has started is always awaited to its end, so what the caller hears is what the
database holds."""

from __future__ import annotations

import threading

import pytest

from bothost.store import Migration, Store, StoreBusyError, core_migrations, sql
from tests.conftest import both_backends
from tests.helpers import serve_app

pytestmark = both_backends

NOTES = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"
BOUND = 0.2  # seconds a job may wait for the store thread in these tests
RELEASE_BOUND = 10.0  # seconds the blocking job waits at most, should the test fail early


@pytest.fixture
def store(store_target):
    s = Store(store_target, core_migrations() + [Migration("notes", 1, sql(NOTES))])
    yield s
    s.close()


def write(body: str):
    def job(db) -> int:
        return db.value("INSERT INTO notes (body) VALUES (?) RETURNING id", [body])

    return job


def count(db) -> int:
    return db.value("SELECT COUNT(*) FROM notes")


async def test_a_job_still_queued_at_its_bound_is_withdrawn_and_named(store):
    release = threading.Event()
    blocker = store.submit(lambda db: release.wait(RELEASE_BOUND))  # the thread is busy
    try:
        with pytest.raises(StoreBusyError) as caught:
            await store.run(write("late"), start_within=BOUND, what="recording the note")
    finally:
        release.set()
    assert str(caught.value) == (
        "recording the note: the store did not start it within 0.2 s (a job before it is"
        " still running); nothing was written"
    )
    assert blocker.result() is True
    assert await store.run(count) == 0  # withdrawn: it never ran, not even later
    assert await store.run(write("next"), start_within=BOUND) == 1


async def test_a_job_that_started_in_time_is_awaited_to_its_end(store):
    def slow(db) -> int:
        threading.Event().wait(BOUND * 2)  # runs past the caller's bound
        return write("slow")(db)

    assert await store.run(slow, start_within=BOUND, what="a slow write") == 1
    assert await store.run(count) == 1


async def test_a_request_whose_job_was_withdrawn_is_answered_503_naming_it(store):
    """The host's HTTP middleware: the sender learns to retry (nothing was written)."""
    from aiohttp import ClientSession, web

    from bothost.http.server import StoreFailures

    async def handler(request: web.Request) -> web.Response:
        await store.run(write("from a request"), start_within=BOUND, what="recording the note")
        return web.Response(text="written")

    app = web.Application(middlewares=[StoreFailures().middleware])
    app.router.add_post("/note", handler)
    runner, url = await serve_app(app)
    release = threading.Event()
    blocker = store.submit(lambda db: release.wait(RELEASE_BOUND))
    try:
        async with ClientSession() as client, client.post(f"{url}/note") as r:
            status, headers, body = r.status, r.headers, await r.json()
    finally:
        release.set()
        await runner.cleanup()
    blocker.result()
    assert status == 503 and headers["Retry-After"]
    assert body["error"].startswith("recording the note: the store did not start it within")
    assert body["error"].endswith("nothing was written; retry later")
    assert await store.run(count) == 0
