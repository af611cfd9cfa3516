"""``bothost events push`` when the event is not queued: it says which of the reasons
kept it out, in words a person can act on, and a store that fails is tried again for a
bounded time and then named, with a non-zero exit and nothing written."""

from __future__ import annotations

import asyncio
import sqlite3

import yaml
from click.testing import CliRunner

from bothost.cli import cli
from bothost.events.queue import MAX_PAYLOAD_BYTES
from tests.helpers import bothost_process

DROPPER = """
from bothost.hookspecs import hookimpl

@hookimpl
def event_received(event):
    return event.source != "noisy"
"""


def run(home, *args, code=0):
    result = CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == code, result.output + result.stderr
    return result


def rows(home) -> list[tuple]:
    with sqlite3.connect(home / "bothost.db") as conn:
        found = conn.execute("SELECT id, source, type FROM events ORDER BY id").fetchall()
    conn.close()
    return found


def test_a_duplicate_names_the_event_it_repeats_and_the_window(home):
    run(home, "events", "push", "gmail", "event/new_email", '{"id": "1"}')
    dup = run(home, "events", "push", "gmail", "event/new_email", '{"id": "1"}')
    assert dup.stdout == ""
    assert "duplicate of event 1" in dup.stderr
    assert "tick.dedupe_window" in dup.stderr and "24h" in dup.stderr
    assert "another" in dup.stderr and '"id"' in dup.stderr  # what to do to queue it anyway


def test_a_plugin_drop_names_the_plugin(home, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "dropper.py").write_text(DROPPER)
    (home / "bothost.yaml").write_text(yaml.safe_dump({"plugins": {"dirs": [str(plugins)]}}))
    result = run(home, "events", "push", "noisy", "event/x", '{"id": "1"}')
    assert "dropped by plugin" in result.stderr and "dropper" in result.stderr
    assert "event_received" in result.stderr
    assert rows(home) == []


def test_an_oversized_payload_says_its_size_and_the_limit_and_fails(home):
    big = '{"body": "' + "x" * MAX_PAYLOAD_BYTES + '"}'
    result = run(home, "events", "push", "gmail", "event/new_email", big, code=1)
    assert "too large" in result.stderr
    assert (
        str(MAX_PAYLOAD_BYTES) in result.stderr
        and f"{MAX_PAYLOAD_BYTES + 11} bytes" in result.stderr
    )
    assert rows(home) == []


# -- a store that cannot write ---------------------------------------------------------------

REFUSE = (
    "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.source = 'disk'"
    " BEGIN SELECT RAISE(ROLLBACK, 'disk I/O error'); END"
)


def failing_store(home) -> None:
    run(home, "events", "list")  # creates and migrates the database
    with sqlite3.connect(home / "bothost.db") as conn:
        conn.execute(REFUSE)
    conn.close()


async def test_a_store_that_fails_for_a_moment_is_tried_again_and_the_event_queued(home, tmp_path):
    failing_store(home)
    config = tmp_path / "empty.yaml"
    config.write_text("{}\n")
    proc = await bothost_process(
        home, config, "events", "push", "disk", "event/full", '{"id": "1"}'
    )
    assert proc.stderr is not None and proc.stdout is not None
    async with asyncio.timeout(30):
        while b"trying again" not in (line := await proc.stderr.readline()):
            assert line, "the push ended without trying again"
    with sqlite3.connect(home / "bothost.db") as conn:
        conn.execute("DROP TRIGGER refuse")  # space returns
    conn.close()
    async with asyncio.timeout(30):
        out, _ = await proc.communicate()
    assert proc.returncode == 0
    assert out.decode().strip() == "Queued event 1."
    assert rows(home) == [(1, "disk", "event/full")]


async def test_a_store_that_keeps_failing_is_named_with_a_non_zero_exit_and_nothing_written(
    home, tmp_path
):
    failing_store(home)
    config = tmp_path / "empty.yaml"
    config.write_text("{}\n")
    args = ("events", "push", "--wait", "1", "disk", "event/full", '{"id": "1"}')
    proc = await bothost_process(home, config, *args)
    async with asyncio.timeout(30):
        out, err = await proc.communicate()
    assert proc.returncode == 1
    assert out == b""
    last = err.decode().strip().splitlines()[-1]
    assert last.startswith("bothost: ") and "disk I/O error" in last
    assert "not queued" in last and "nothing of it was written" in last
    assert rows(home) == []


async def test_a_failing_store_is_one_line_per_try_and_its_traceback_only_with_v(home, tmp_path):
    # each try that the store refused printed the queue's traceback before the command's
    # clear last line; a person sees the retries' one-line warnings and the last line, and
    # the traceback (a detail of the database failing, not a bug) only with -v
    failing_store(home)
    config = tmp_path / "empty.yaml"
    config.write_text("{}\n")
    # --wait covers the command's open too: 5 s leaves the write retries on a busy machine
    args = ("events", "push", "--wait", "5", "disk", "event/full", '{"id": "1"}')
    for verbose in ((), ("-v",)):
        proc = await bothost_process(home, config, *verbose, *args)
        async with asyncio.timeout(30):
            _, err = await proc.communicate()
        assert proc.returncode == 1
        text = err.decode()
        lines = text.strip().splitlines()
        assert lines[-1].startswith("bothost: ") and "not queued" in lines[-1]
        if verbose:
            assert "Traceback" in text and "disk I/O error" in text
            continue
        assert "Traceback" not in text, text
        tries = lines[:-1]
        assert tries and all("trying again" in line for line in tries), text
    assert rows(home) == []


async def test_a_database_locked_at_open_is_opened_again_within_wait(home, tmp_path):
    # Found from outside: with another process holding the write lock, `events push --wait
    # 30` gave up after the open's own busy timeout (10 s) with 'locked by another process
    # for too long', though --wait says the push keeps trying for that long.
    run(home, "events", "list")  # creates and migrates the database
    config = tmp_path / "empty.yaml"
    config.write_text("{}\n")
    holder = sqlite3.connect(home / "bothost.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        proc = await bothost_process(
            home, config, "events", "push", "--wait", "600", "disk", "event/full", '{"id": "1"}'
        )
        assert proc.stderr is not None
        async with asyncio.timeout(60):  # the open's busy timeout, then its line
            while b"trying again" not in (line := await proc.stderr.readline()):
                assert line, "the push ended without trying again"
        assert b"locked by another process" in line
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    async with asyncio.timeout(60):
        out, _ = await proc.communicate()
    assert proc.returncode == 0
    assert out.decode().strip() == "Queued event 1."
    assert rows(home) == [(1, "disk", "event/full")]


def test_a_held_source_is_named_in_one_line_and_fails(home):
    (home / "bothost.yaml").write_text(yaml.safe_dump({"tick": {"max_pending_per_source": 1}}))
    run(home, "events", "push", "flood", "event/n", '{"id": "1"}')
    held = run(home, "events", "push", "flood", "event/n", '{"id": "2"}', code=1)
    lines = held.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "'flood'" in lines[0] and "tick.max_pending_per_source" in lines[0]
    assert [source for _, source, _ in rows(home)] == ["flood"]
