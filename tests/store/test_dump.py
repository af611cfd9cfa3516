"""``bothost db export`` / ``db import``: a SQLite home used for real moves to PostgreSQL whole,
and what import refuses."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import stat
import textwrap
import tracemalloc
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from bothost.plugins.web.signing import new_secret
from click.testing import CliRunner

from bothost.cli import cli
from bothost.host.wiring import tick_once
from bothost.mcp.oauth.tokens import save_record
from bothost.store import Migration, Store, core_migrations, dump, sql
from bothost.store.conn import quote
from bothost.store.dump import (
    SKIPPED_ROWS,
    DumpError,
    Imported,
    data_tables,
    read_dump,
    write_dump,
)
from tests.conftest import both_backends
from tests.fakes.llm import FakeLlm, openai_config
from tests.helpers import make_host, write_config
from tests.web.conftest import base_url, host_config, signed

TOKEN = "ya29.oauth-access-token-4711"  # must never be printed
NOTES_PLUGIN = textwrap.dedent('''
    """A plugin with a table of its own (its rows must move too)."""
    from bothost.hookspecs import hookimpl
    from bothost.store import sql


    @hookimpl
    def register_migrations(register):
        register("notes", 1, sql("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT,"
                                 " raw BLOB, at REAL)"), "notes")
''')


def invoke(config: Path, home: Path, *args: str) -> Any:
    result = CliRunner().invoke(
        cli, ["--home", str(home), "--config", str(config), *args], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output + result.stderr
    return result


def refused(config: Path, home: Path, *args: str) -> str:
    """The message of the DumpError a command ends with (main() prints it as one line)."""
    result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
    assert isinstance(result.exception, DumpError), result.output + result.stderr
    return str(result.exception)


def config_data(tmp_path: Path, secret: str, llm_url: str, url: str | None) -> dict[str, Any]:
    """The home's config (the notes plugin, webhooks, the fake model), on SQLite or ``url``."""
    data = host_config(
        tmp_path,
        secret,
        llm=openai_config(llm_url),
        tick={"deliver_to": ["web:briefings"]},
    )
    (tmp_path / "plugins" / "notes.py").write_text(NOTES_PLUGIN)
    return {**data, "store": {"url": url}} if url else data


def configure(tmp_path: Path, secret: str, llm_url: str, url: str | None) -> Path:
    data = config_data(tmp_path, secret, llm_url, url)
    return write_config(tmp_path / ("pg.yaml" if url else "sqlite.yaml"), data)


async def use(home: Path, config_data: dict[str, Any], fake: FakeLlm, secret: str) -> None:
    """A web chat with a tool call, two signed webhooks, a tick with a briefing, an OAuth
    token, a plugin's row — each through the code a running host uses."""
    host = make_host(home, config_data)
    await host.start(mcp=False, tick=False)
    try:
        url = base_url(host)
        async with aiohttp.ClientSession() as client:
            fake.script = [
                {"tool_calls": [{"name": "read_output", "arguments": {"ref": "missing"}}]},
                {"text": "nothing there"},
                {"text": "hello again"},
            ]
            for text in ("read it", "hi"):
                async with client.post(url + "/api/chat", json={"session": "u1", "text": text}):
                    pass
            ids = []
            for n in range(2):
                body, headers = signed(secret, {"type": "disk", "payload": {"summary": f"d{n}"}})
                async with client.post(
                    url + "/webhook/events/ops", data=body, headers=headers
                ) as r:
                    ids.append((await r.json())["event_id"])
        fake.script = [
            {
                "tool_calls": [
                    {
                        "name": "notify",
                        "arguments": {
                            "items": [{"priority": "high", "summary": "disks", "event_ids": ids}]
                        },
                    }
                ]
            },
            {"text": "done"},
        ]
        await tick_once(host, "test")
        record = {"tokens": {"access_token": TOKEN, "refresh_token": TOKEN + "-r"}}
        await host.store.run(lambda db: save_record(db, "remote", record))
        await host.store.run(
            lambda db: db.execute(
                "INSERT INTO notes (body, raw, at) VALUES (?, ?, ?)", ["n1", b"\x00\xff", 1.5]
            )
        )
    finally:
        await host.stop()


def tables(url: str | Path, migrations) -> dict[str, list[tuple]]:
    store = Store(url, migrations)
    try:
        return store.call(
            lambda db: {
                t: sorted(db.execute(f"SELECT * FROM {quote(t)}").fetchall(), key=repr)
                for t in data_tables(db)
            }
        )
    finally:
        store.close()


@pytest.fixture
def secret() -> str:
    return new_secret()


def use_with_fake_model(home, tmp_path, secret) -> str:
    """Use ``home`` for real (:func:`use`) with a fake model; the model's (stopped) URL."""

    async def run() -> str:
        fake = await FakeLlm().start()
        try:
            await use(home, config_data(tmp_path, secret, fake.openai_url, None), fake, secret)
            return fake.openai_url
        finally:
            await fake.stop()

    return asyncio.run(run())


@pytest.fixture
def used_home(home, tmp_path, secret):
    """A SQLite home after real use; (home, its config, the fake LLM's url)."""
    llm_url = use_with_fake_model(home, tmp_path, secret)
    config = configure(tmp_path, secret, llm_url, None)
    invoke(config, home, "mcp", "add", "notes-srv", "--disabled", "--", "notes-server", "--x")
    invoke(config, home, "rules", "add", "wipe_disk", "deny", "--note", "never")
    return home, config, llm_url


def test_a_used_sqlite_home_moves_to_postgresql_whole(used_home, tmp_path, secret, postgres_url):
    home, sqlite_config, llm_url = used_home
    dump = tmp_path / "dump.jsonl"
    exported = invoke(sqlite_config, home, "db", "export", str(dump), "--json")
    assert stat.S_IMODE(dump.stat().st_mode) == 0o600
    assert TOKEN not in exported.output + exported.stderr
    counts = json.loads(exported.stdout)["tables"]
    for table in ("sessions", "messages", "tool_calls", "events", "webhook_ids", "briefings",
                  "deliveries", "mcp_servers", "permission_rules", "llm_usage", "mcp_oauth",
                  "notes"):  # fmt: skip
        assert counts[table] > 0, table
    pg_config = configure(tmp_path, secret, llm_url, postgres_url)
    imported = invoke(pg_config, home, "db", "import", str(dump), "--json")
    assert json.loads(imported.stdout)["tables"] == counts
    assert json.loads(imported.stdout)["nul_replaced"] == 0
    assert TOKEN not in imported.output + imported.stderr

    # every row of every table, compared value by value (bytes and floats included)
    migrations = migrations_of(pg_config, home)
    before, after = tables(home / "bothost.db", migrations), tables(postgres_url, migrations)
    before.update({t: [] for t in SKIPPED_ROWS})
    after.update({t: [] for t in SKIPPED_ROWS})
    assert after == before

    # what the CLI (and /api, through the same functions) shows is the same on both
    for command in (["events", "list"], ["briefings"], ["mcp", "list"], ["rules", "list"],
                    ["usage"]):  # fmt: skip
        shown = [
            json.loads(invoke(config, home, *command, "--json").stdout)
            for config in (sqlite_config, pg_config)
        ]
        for answer in shown:
            if isinstance(answer, dict):
                answer.pop("since", None)  # usage's window starts at "now"
        assert shown[0] == shown[1], command

    # identity counters continue past the imported ids
    pushed = invoke(pg_config, home, "events", "push", "ops", "x", "{}").stdout
    assert pushed.strip() == f"Queued event {max(row[0] for row in before['events']) + 1}."

    # a second import into the now used database is refused, and changes nothing
    again = refused(pg_config, home, "db", "import", str(dump))
    assert again.startswith("this database is not empty (briefings, deliveries, events, ")
    assert after == tables(postgres_url, migrations) | {"events": after["events"]}


def test_a_home_with_nul_in_its_text_moves_to_postgresql_as_a_host_there_stores_it(
    used_home, tmp_path, secret, postgres_url
):
    home, sqlite_config, llm_url = used_home
    # a host on SQLite keeps a NUL as it arrived: in a chat message, in a tool's result
    with contextlib.closing(sqlite3.connect(home / "bothost.db")) as db, db:
        changed = db.execute(
            "UPDATE messages SET content = content || char(0) WHERE role = 'user'"
        ).rowcount
        changed += db.execute(
            "UPDATE tool_calls SET result = char(0) || 'out' || char(0) || coalesce(result, '')"
        ).rowcount
    assert changed >= 3
    dump = tmp_path / "dump.jsonl"
    invoke(sqlite_config, home, "db", "export", str(dump))
    pg_config = configure(tmp_path, secret, llm_url, postgres_url)
    imported = invoke(pg_config, home, "db", "import", str(dump))
    assert imported.stdout.splitlines()[1:] == [
        f"{changed} text values held NUL, stored with U+FFFD as a PostgreSQL host stores them"
    ]

    # every value arrives, each NUL as U+FFFD and nothing else changed
    migrations = migrations_of(pg_config, home)
    before, after = tables(home / "bothost.db", migrations), tables(postgres_url, migrations)
    stored = {
        t: sorted((tuple(stand_in(v) for v in row) for row in rows), key=repr)
        for t, rows in before.items()
    }
    stored.update({t: [] for t in SKIPPED_ROWS})
    after.update({t: [] for t in SKIPPED_ROWS})
    assert after == stored
    for table in ("messages", "tool_calls"):
        assert holds(before[table], "\x00") and holds(after[table], "\ufffd"), table
        assert not holds(after[table], "\x00"), table


def stand_in(value: Any) -> Any:
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def holds(rows: list[tuple], char: str) -> bool:
    return any(isinstance(v, str) and char in v for row in rows for v in row)


def migrations_of(config: Path, home: Path) -> list:
    from bothost.cli.runtime import Runtime
    from bothost.hooks.startup import build_migrations

    runtime = Runtime()
    runtime.configure({"config_file": str(config), "home": str(home)})
    return build_migrations(runtime.pm)


NOTES = Migration("notes", 1, sql("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"))


def dump_of(path: Path, migrations: list, tmp_path: Path, rows: str = "") -> Path:
    """A dump of the SQLite file ``path`` after ``rows`` (SQL run on it first)."""
    store = Store(path, migrations)
    try:
        if rows:
            store.call(lambda db: db.script(rows))
        out = tmp_path / f"{path.stem}.jsonl"
        write_dump(store, str(out))
    finally:
        store.close()
    return out


def import_into(target: Path | str, migrations: list, dump: Path) -> str | Imported:
    """What importing ``dump`` says: what it copied, or the refusal's message."""
    store = Store(target, migrations)
    try:
        return read_dump(store, str(dump))
    except DumpError as exc:
        return str(exc)
    finally:
        store.close()


def test_a_dump_of_another_schema_is_refused_naming_what_differs(tmp_path):
    with_notes = dump_of(tmp_path / "a.db", [*core_migrations(), NOTES], tmp_path)
    said = import_into(tmp_path / "b.db", core_migrations(), with_notes)
    assert said == (
        "the dump's schema differs: the dump has notes:1, which this database lacks (install or"
        " upgrade bothost or the plugin that owns it, then import again); nothing imported"
    )
    plain = dump_of(tmp_path / "c.db", core_migrations(), tmp_path)
    said = import_into(tmp_path / "d.db", [*core_migrations(), NOTES], plain)
    assert said.startswith("the dump's schema differs: this database has notes:1, which the dump")
    assert "bothost db migrate" in said


def test_a_damaged_dump_or_a_used_file_is_refused(tmp_path):
    dump = dump_of(tmp_path / "a.db", core_migrations(), tmp_path, "INSERT INTO mutes"
                   " (source, created_at) VALUES ('gmail', 1.0)")  # fmt: skip
    lines = dump.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]))
    assert import_into(tmp_path / "b.db", core_migrations(), cut).startswith(
        f"the dump ends at line {len(lines) - 1} without its end line"
    )
    assert import_into(tmp_path / "b.db", core_migrations(), dump) == Imported(
        {t: int(t == "mutes") for t in counted(lines)}
    )
    store = Store(tmp_path / "c.db", core_migrations())
    try:
        with pytest.raises(DumpError, match="exists; remove it or name a new file"):
            write_dump(store, str(dump))
    finally:
        store.close()


def counted(lines: list[str]) -> list[str]:
    return [json.loads(line)["table"] for line in lines if line.startswith('{"table"')]


def test_what_postgresql_cannot_hold_is_named_and_nothing_is_imported(tmp_path, postgres_cluster):
    # SQLite keeps text in an INTEGER column, a NULL text key, and two keys that differ only
    # by a NUL and U+FFFD (one key once the NUL is stored as U+FFFD)
    cases = {
        "UPDATE events SET attempts = 'x" + TOKEN + "' WHERE id = 2": (
            "table events, row 2 (line {line} of the dump), column attempts: text where a whole"
            " number belongs (the column is bigint)"
        ),
        "INSERT INTO sessions (id, platform, created_at, updated_at) VALUES (NULL, 'web', 1, 1)": (
            "table sessions, row 1 (line {line} of the dump): the database refused it (null value"
            ' in column "id" of relation "sessions" violates not-null constraint)'
        ),
        "INSERT INTO sessions (id, platform, created_at, updated_at) VALUES"
        " ('a' || char(0), 'web', 1, 1), ('a' || char(65533), 'web', 1, 1)": (
            "table sessions, row 2 (line {line} of the dump): the database refused it (duplicate"
            ' key value violates unique constraint "sessions_pkey")'
        ),
    }
    events = (
        "INSERT INTO events (source, type, payload, received_at, dedupe_key) VALUES"
        " ('ops', 'x', '{}', 1.0, 'k1'), ('ops', 'x', '{}', 2.0, 'k2');"
    )
    for n, (change, expected) in enumerate(cases.items()):
        dump = dump_of(tmp_path / f"s{n}.db", core_migrations(), tmp_path, events + change)
        lines = dump.read_text().splitlines()
        table = expected.split(",")[0].removeprefix("table ")
        start = next(i for i, text in enumerate(lines) if text.startswith(f'{{"table": "{table}"'))
        row = int(expected.split("row ")[1].split(" ")[0])
        url = postgres_cluster.database()
        said = import_into(url, core_migrations(), dump)
        assert said == expected.format(line=start + 1 + row) + "; " + (
            "fix that row in the source and export again; nothing imported"
            if "column" in expected.split(":")[0]
            else "nothing imported"
        )
        assert TOKEN not in said
        assert tables(url, core_migrations()) == tables(tmp_path / "empty.db", core_migrations())

    # a NUL inside text is not among them: it is stored as U+FFFD, as a PostgreSQL host does
    nul = "UPDATE events SET payload = 'a' || char(0) || 'b' || char(0) WHERE id = 1"
    dump = dump_of(tmp_path / "nul.db", core_migrations(), tmp_path, events + nul)
    url = postgres_cluster.database()
    said = import_into(url, core_migrations(), dump)
    assert isinstance(said, Imported), said
    assert (said.tables["events"], said.nul_replaced) == (2, 1)
    payloads = [row[3] for row in tables(url, core_migrations())["events"]]
    assert sorted(payloads) == ["a\ufffdb\ufffd", "{}"]


def test_a_postgresql_database_exports_and_imports_into_sqlite(tmp_path, postgres_url):
    migrations = [*core_migrations(), NOTES_BYTES]
    store = Store(postgres_url, migrations)
    try:
        store.call(
            lambda db: db.executemany(
                "INSERT INTO notes (body, raw, at) VALUES (?, ?, ?)",
                [("é ✓", b"\x00\xff", 0.1 + 0.2), (None, None, None)],
            )
        )
        store.call(lambda db: db.insert("mutes", {"source": "gmail", "created_at": 2.5}))
        dump = tmp_path / "pg.jsonl"
        write_dump(store, str(dump))
    finally:
        store.close()
    assert import_into(tmp_path / "copy.db", migrations, dump).tables["notes"] == 2
    assert tables(tmp_path / "copy.db", migrations) == tables(postgres_url, migrations)


NOTES_BYTES = Migration(
    "notes", 1, sql("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, raw BLOB, at REAL)")
)


@both_backends
def test_export_holds_a_page_of_rows_at_a_time_not_a_table(store_target, tmp_path, monkeypatch):
    """A table forty pages long: the export's memory peak stays far below the table's size,
    and the dump imports whole."""
    monkeypatch.setattr(dump, "PAGE", 50)
    rows, body = 2000, "x" * 4096  # 8 MB of text
    migrations = [*core_migrations(), NOTES]
    store = Store(store_target, migrations)
    out = tmp_path / "big.jsonl"
    try:
        store.call(
            lambda db: db.executemany(
                "INSERT INTO notes (id, body) VALUES (?, ?)",
                [(n, f"{n:05}{body}") for n in range(1, rows + 1)],
            )
        )
        tracemalloc.start()
        try:
            write_dump(store, str(out))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        store.close()
    table_bytes = rows * len(body)
    assert peak < table_bytes / 8, f"{peak} of {table_bytes} bytes held at once"
    assert import_into(tmp_path / "copy.db", migrations, out).tables["notes"] == rows
    copied = tables(tmp_path / "copy.db", migrations)["notes"]
    assert sorted(r[0] for r in copied) == list(range(1, rows + 1))
    assert copied == tables(store_target, migrations)["notes"]
