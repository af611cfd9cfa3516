import asyncio
import os
import shutil
import signal
import socket
import sqlite3

import pytest

from tests.fakes.llm import FakeLlm
from tests.helpers import bothost_process, free_port, run_bothost


def doctor(home, config):
    return run_bothost("doctor", home=home, config=config, timeout=120)


def test_doctor_passes_on_a_healthy_setup(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        "mcp: {servers: {weather: {enabled: false}}}\n"
        f"platforms: {{web: {{port: {free_port()}}}}}\n"
    )
    result = doctor(home, config)
    assert result.returncode == 0, result.stdout
    assert "ok  database" in result.stdout and "offline agent" in result.stdout


def test_doctor_names_what_is_wrong_and_the_fix(home, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        "llm: {provider: anthropic}\n"
        "mcp: {servers: {weather: {enabled: false},"
        " broken: {command: /bin/false}, missing: {command: no-such-mcp-server}}}\n"
    )
    result = doctor(home, config)
    assert result.returncode == 1
    out = result.stdout
    assert "!!  llm: anthropic needs an API key" in out and "fix: set llm.api_key" in out
    assert "!!  mcp missing: command 'no-such-mcp-server' not found" in out
    assert out.count("mcp missing:") == 1  # reported once, and not started
    assert "!!  mcp broken:" in out and "bothost mcp logs broken" in out


QUIET = (
    "platforms: {web: {port: 0}, console: {enabled: false}}\n"
    "mcp: {servers: {weather: {enabled: false}}}\n"
)


def run_doctor(home, tmp_path, text, *options, base=QUIET):
    config = tmp_path / "d.yaml"
    config.write_text(base + text)
    return run_bothost("doctor", *options, home=home, config=config, timeout=120)


def line(out, check):
    return next((x for x in out.splitlines() if x[4:].startswith(check + ":")), "")


def test_doctor_reports_an_llm_nobody_answers(home, tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    text = f"llm: {{provider: openai, base_url: '{url}', model: m, api_key: k}}\n"
    result = run_doctor(home, tmp_path, text)
    assert result.returncode == 1, result.stdout + result.stderr
    assert line(result.stdout, "llm").startswith("!!  llm:")
    assert url in line(result.stdout, "llm")
    offline = run_doctor(home, tmp_path, text, "--offline")
    assert offline.returncode == 0, offline.stdout + offline.stderr
    assert "not contacted" in line(offline.stdout, "llm")


async def test_doctor_asks_the_llm_for_one_token(home, tmp_path):
    llm = await FakeLlm(api_key="k").start()
    try:
        text = f"llm: {{provider: openai, base_url: '{llm.openai_url}', model: m, api_key: k}}\n"
        result = await asyncio.to_thread(run_doctor, home, tmp_path, text)
    finally:
        await llm.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    assert line(result.stdout, "llm").startswith("ok  llm: openai m answers")
    assert llm.requests and llm.requests[0]["max_tokens"] == 1


def test_doctor_checks_each_deliver_to_target(home, tmp_path):
    result = run_doctor(
        home,
        tmp_path,
        "tick: {deliver_to: ['console:', 'web:briefings', 'slack:C1', 'webhook:ops']}\n",
        base=QUIET.replace(
            "{web: {port: 0},",
            "{web: {port: 0}, webhook: {targets: {ops: {url: 'https://o.example'}}},",
        ),
    )
    assert result.returncode == 1
    out = result.stdout
    assert line(out, "deliver_to console:").startswith("ok ")
    assert line(out, "deliver_to web:briefings").startswith("ok ")
    assert "platforms.slack is not enabled" in line(out, "deliver_to slack:C1")
    assert line(out, "deliver_to webhook:ops").startswith("ok ")
    # one platforms.webhook.targets does not name is refused as the config loads
    missing = run_doctor(home, tmp_path, "tick: {deliver_to: ['webhook:pager']}\n")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert "no webhook target 'pager' in platforms.webhook.targets" in missing.stderr


def corrupt_middle_page(path):
    with path.open("r+b") as f:
        size = f.seek(0, 2)
        f.seek(size // 2 // 4096 * 4096)
        f.write(b"\xff" * 4096)


def test_doctor_runs_quick_check_on_the_database(home, tmp_path):
    from tests.core.test_cli_errors import make_db

    corrupt_middle_page(make_db(home))
    result = run_doctor(home, tmp_path, "")
    assert result.returncode == 1
    assert line(result.stdout, "database").startswith("!!  database:"), result.stdout
    assert "backup" in result.stdout


def test_doctor_refuses_a_database_from_a_newer_bothost(home, tmp_path):
    from tests.core.test_cli_errors import CORE_SCHEMA, make_db

    path = make_db(home)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    result = run_doctor(home, tmp_path, "")
    assert result.returncode == 1
    assert f"created by a newer bothost (schema 99, this one knows {CORE_SCHEMA})" in line(
        result.stdout, "database"
    )


def test_doctor_on_an_unreachable_postgresql_says_what_to_check_not_to_move_a_file(home, tmp_path):
    # Found from outside: a wrong password in store.url got "restore bothost.db from a
    # backup, or move it away", advice for SQLite that a PostgreSQL user cannot follow.
    url = f"postgresql://bothost:wrong@127.0.0.1:{free_port()}/bothost"
    result = run_doctor(home, tmp_path, f"store: {{url: '{url}'}}\n")
    assert result.returncode == 1
    found = line(result.stdout, "database")
    assert "cannot connect" in found and "wrong" not in result.stdout, result.stdout
    fix = result.stdout.split(found, 1)[1].splitlines()[1]
    assert "bothost.db" not in fix and "store.url" in fix, fix


def test_doctor_checks_a_postgresql_store_before_the_first_run(tmp_path):
    # Found from outside: a new host set up for a shared database (BOTHOST_CONFIG naming
    # store.url, no home yet) got "ok" on every line and exit 0 from a server that was not
    # there; only the first `bothost run` said so.
    url = f"postgresql://bothost:wrong@127.0.0.1:{free_port()}/bothost"
    result = run_doctor(tmp_path / "new-home", tmp_path, f"store: {{url: '{url}'}}\n")
    assert result.returncode == 1, result.stdout
    found = line(result.stdout, "database")
    assert found.startswith("!!  database:") and "cannot connect" in found, result.stdout
    assert "wrong" not in result.stdout and not (tmp_path / "new-home").exists()


def test_doctor_finds_a_postgresql_store_reachable_before_the_first_run(tmp_path, postgres_url):
    result = run_doctor(tmp_path / "new-home", tmp_path, f"store: {{url: '{postgres_url}'}}\n")
    assert "reachable; `bothost run` migrates it" in line(result.stdout, "database")
    assert not (tmp_path / "new-home").exists()  # a check, not a first run


def test_doctor_reports_a_web_port_in_use(home, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        # one platforms mapping: a key written twice is a config error
        result = run_doctor(home, tmp_path, QUIET.replace("port: 0", f"port: {port}"), base="")
    assert result.returncode == 1
    assert line(result.stdout, "web port").startswith("!!  web port:"), result.stdout


async def doctor_beside_a_running_host(home, doctor_home, tmp_path):
    """Doctor's result for ``doctor_home``, checking the web port a ``bothost run`` of
    ``home`` is serving."""
    text = QUIET.replace("port: 0", f"port: {free_port()}")
    config = tmp_path / "run.yaml"
    config.write_text(text)
    host = await bothost_process(home, config, "run", stdout=asyncio.subprocess.DEVNULL)
    try:
        async with asyncio.timeout(60):
            while b"bothost is running" not in await host.stderr.readline():
                assert not host.stderr.at_eof()
        return await asyncio.to_thread(run_doctor, doctor_home, tmp_path, text, base="")
    finally:
        host.send_signal(signal.SIGTERM)
        await asyncio.wait_for(host.wait(), 30)


async def test_doctor_accepts_the_port_of_the_running_host(home, tmp_path):
    result = await doctor_beside_a_running_host(home, home, tmp_path)
    assert "a running bothost" in line(result.stdout, "web port"), result.stdout
    assert result.returncode == 0, result.stdout


async def test_doctor_refuses_the_port_of_another_homes_host(home, tmp_path):
    # found from outside: with `bothost run` serving one home, `bothost doctor` for another
    # home on the same port said "ok  web port: … in use by a running bothost host", and
    # `bothost run` for that home then failed with "Address already in use"
    other = tmp_path / "other-home"
    other.mkdir(mode=0o700)
    result = await doctor_beside_a_running_host(home, other, tmp_path)
    found = line(result.stdout, "web port")
    assert found.startswith("!!  web port:") and "another bothost host" in found, result.stdout
    assert result.returncode == 1, result.stdout


def test_doctor_reports_a_home_it_cannot_write(tmp_path):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root (and setpriv) to hand the directory to another user")
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chown(home, 65534, 65534)
    config = tmp_path / "d.yaml"
    config.write_text(QUIET)
    result = run_bothost(
        "doctor",
        "--offline",
        home=home,
        config=config,
        timeout=120,
        prefix=("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"),
    )
    assert result.returncode == 1, result.stderr
    assert "not writable" in line(result.stdout, "home"), result.stdout


def test_doctor_creates_no_home_and_says_how_one_is_made(tmp_path):
    # found last session: `bothost --home /nonexistent/x doctor` created the directory (and
    # its database): a check must not change what it checks
    home = tmp_path / "nonexistent" / "x"
    result = run_doctor(home, tmp_path, "", "--offline")
    assert not (tmp_path / "nonexistent").exists(), result.stdout
    home_line = line(result.stdout, "home")
    assert f"no home at {home} yet" in home_line and "bothost run" in home_line, result.stdout
    assert result.returncode == 0, result.stdout  # nothing is wrong: it is a first run
    assert "database: none yet" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "command",
    [("events", "list"), ("briefings",), ("usage",), ("rules", "list"), ("mcp", "list")],
    ids=" ".join,
)
def test_a_command_that_only_reads_creates_no_home(tmp_path, command):
    # found with doctor's: each of these created the home and an empty database to show
    # that nothing was in it
    home = tmp_path / "nonexistent" / "x"
    result = run_bothost(*command, home=home, timeout=120)
    assert not (tmp_path / "nonexistent").exists(), result.stderr
    assert result.returncode == 1, result.stderr
    assert f"bothost: home error: no home at {home} yet" in result.stderr
    assert "`bothost run`" in result.stderr


def test_plugins_lists_the_configured_servers_without_creating_a_home(tmp_path):
    home = tmp_path / "nonexistent" / "x"
    result = run_bothost("plugins", home=home, timeout=120)
    assert not (tmp_path / "nonexistent").exists(), result.stderr
    assert result.returncode == 0 and "mcp:weather" in result.stdout, result


def test_doctor_names_old_allow_rows_that_allow_nothing_now(home, tmp_path):
    from bothost.config import PermissionRule
    from bothost.rules import store as rule_store
    from bothost.rules.origin import UNKNOWN, Origin
    from bothost.store import Store, core_migrations

    store = Store(home / "bothost.db", core_migrations())
    for tool, origin in [("mcp__s__a_b", Origin(UNKNOWN)), ("mcp__s__*", None)]:
        spec = PermissionRule(tool=tool, action="allow")
        store.call(lambda db, s=spec, o=origin: rule_store.add(db, s, "old", tool_origin=o))
    store.close()
    result = run_doctor(home, tmp_path, "")
    found = line(result.stdout, "permission rules")
    assert found.startswith("ok  permission rules: 1 stored allow rule"), result.stdout
    assert "(#1)" in found and "bothost rules remove ID" in found


def test_doctor_names_an_ask_a_later_deny_beats(home, tmp_path):
    # since d5a89ba a deny that matches a call beats an ask above it: an ask written to ask
    # about calls a deny below refuses never asks about them
    from bothost.config import PermissionRule
    from bothost.rules import store as rule_store
    from bothost.store import Store, core_migrations

    store = Store(home / "bothost.db", core_migrations())
    for tool, action in [("mcp__ssh__exec", "ask"), ("mcp__gmail__send", "ask")]:
        spec = PermissionRule(tool=tool, action=action)
        store.call(lambda db, s=spec: rule_store.add(db, s, "cli:root"))
    store.close()
    text = (
        "permissions:\n"
        "  - {tool: 'mcp__*__exec', action: deny}\n"
        "  - {tool: mcp__gmail__send, action: deny, args: {to: 're:.*@evil[.]example'}}\n"
        "  - {tool: mcp__gcal__*, action: deny}\n"
    )
    result = run_doctor(home, tmp_path, text)
    found = [x for x in result.stdout.splitlines() if "never asks" in x]
    assert found == [
        "ok  permission rules: rule #1 (ask mcp__ssh__exec) never asks about the calls"
        " rule permissions[0] (deny mcp__*__exec) matches too: the deny below it decides"
        " them (bothost rules list)",
        "ok  permission rules: rule #2 (ask mcp__gmail__send) never asks about the calls"
        " rule permissions[1] (deny mcp__gmail__send, with arguments) matches too: the deny"
        " below it decides them (bothost rules list)",
    ], result.stdout
    assert result.returncode == 0, result.stdout


def test_doctor_names_a_config_file_others_can_read_that_holds_a_secret(home, tmp_path):
    # Found from outside: `--config /srv/bothost.yaml` (0644) with a literal api_key passed
    # doctor; the home's own file is guarded by the home's 0700, a file elsewhere is not.
    config = tmp_path / "c.yaml"
    config.write_text(
        "llm: {provider: openai, model: m, api_key: sk-plain-0123456789abcdef}\n"
        "mcp: {servers: {weather: {enabled: false}}}\n"
        f"platforms: {{web: {{port: {free_port()}}}}}\n"
    )
    config.chmod(0o644)
    out = run_bothost("doctor", "--offline", home=home, config=config, timeout=120).stdout
    assert f"!!  config: {config} holds a secret in plain text and other users can read it" in out
    assert f"chmod 600 {config}" in out and "sk-plain" not in out
    config.chmod(0o600)
    result = run_bothost("doctor", "--offline", home=home, config=config, timeout=120)
    assert "plain text" not in result.stdout
    assert result.returncode == 0, result.stdout


def test_doctor_says_which_migrations_it_applied_on_an_upgraded_home(home, tmp_path):
    # Found from outside: after installing a newer wheel, `bothost doctor` (the first
    # command run to check the upgrade) migrated the database and said only 'schema 12
    # (ours)': nothing told that a migration, never undone, had just been applied.
    from bothost.events import events_migrations
    from bothost.store import Store, core_migrations

    Store(home / "bothost.db", [m for m in core_migrations() if m.number <= 9]).close()
    config = tmp_path / "c.yaml"
    config.write_text("mcp: {servers: {weather: {enabled: false}}}\n")
    first = run_bothost("doctor", "--offline", home=home, config=config, timeout=120).stdout
    later = ", ".join(f"core:{m.number}" for m in core_migrations() if m.number > 9)
    events = ", ".join(f"events:{m.number}" for m in events_migrations())
    assert f"quick_check ok; migrated now: {later}, {events}" in first, first
    again = run_bothost("doctor", "--offline", home=home, config=config, timeout=120).stdout
    assert "migrated now" not in again and "quick_check ok" in again


def test_doctor_names_a_rule_that_matches_no_tool_with_the_nearest_name(home, tmp_path):
    # since 62ef529 server a__b's tools are mcp__a_b-63e5c1__…: a deny written for the old
    # name refuses nothing; a rule for a server that did not start is not judged
    import sys
    from pathlib import Path

    shifting = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "shifting_server.py"
    command = f"{{command: '{sys.executable}', args: ['{shifting}', one, wipe]}}"
    text = (
        f"mcp: {{servers: {{weather: {{enabled: false}}, a__b: {command}}}}}\n"
        "permissions:\n"
        "  - {tool: mcp__a__b__wipe, action: deny}\n"
        "  - {tool: 'mcp__a_b-63e5c1__*', action: ask}\n"
        "  - {tool: mcp__weather__forecast, action: deny}\n"
    )
    result = run_doctor(home, tmp_path, text, "--offline", base=QUIET.split("mcp:")[0])
    assert result.returncode == 0, result.stdout
    assert "ok  mcp a__b: ready" in result.stdout
    found = [x for x in result.stdout.splitlines() if "matches no tool" in x]
    assert found == [
        "ok  permission rules: rule permissions[0] (deny mcp__a__b__wipe) matches no tool"
        " known now (nearest: mcp__a_b-63e5c1__wipe): correct its tool or remove it"
    ], result.stdout
