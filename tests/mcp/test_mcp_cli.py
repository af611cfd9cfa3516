"""``bothost mcp …`` end to end through click, against the raw test server."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
import yaml
from click.testing import CliRunner
from mcp_helpers import PAGING_SERVER

from bothost.cli import cli


@pytest.fixture
def bothost(home, tmp_path):
    """Run `bothost --home H --config C ARGS…`; config has the test server as `paging`."""
    config = tmp_path / "bothost.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "mcp": {
                    "servers": {
                        "paging": {"command": sys.executable, "args": [str(PAGING_SERVER)]},
                        "weather": {"enabled": False},
                    }
                }
            }
        )
    )

    def run(*args: str, code: int = 0):
        result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
        assert result.exit_code == code, (result.output, result.exception)
        return result

    return run


def test_call_prints_the_result_and_records_pushed_events(bothost):
    assert bothost("mcp", "call", "paging", "echo", '{"text": "hi there"}').output == "hi there\n"
    bothost("mcp", "call", "paging", "push", '{"count": 2, "type": "event/new_email"}')
    events = json.loads(bothost("events", "list", "--json").output)
    assert sorted((e["source"], e["type"], e["payload"]["id"]) for e in events) == [
        ("paging", "event/new_email", "e0"),
        ("paging", "event/new_email", "e1"),
    ]


def test_call_records_the_rest_of_a_backlog_beside_an_event_it_cannot_store(bothost):
    """An event no store can encode is refused alone, as in the host: it does not keep the
    events that arrived with it out."""
    pushed = '{"count": 3, "unstorable": [1], "type": "event/new_email"}'
    assert bothost("mcp", "call", "paging", "push", pushed).output == "pushed\n"
    events = json.loads(bothost("events", "list", "--json").output)
    assert sorted(e["payload"]["id"] for e in events) == ["e0", "e2"]


def test_call_failure_exits_non_zero(bothost):
    assert "unknown tool nope" in bothost("mcp", "call", "paging", "nope", code=1).output
    assert "not JSON" in bothost("mcp", "call", "paging", "echo", "{oops", code=2).output
    assert "no MCP server named" in bothost("mcp", "call", "ghost", "echo", code=1).output


def test_call_json_includes_structured_content(bothost):
    out = json.loads(bothost("mcp", "call", "paging", "structured", "--json").output)
    assert out["structured"] == {"temperature": 21.5, "unit": "C"} and not out["is_error"]


def test_tools_lists_names_and_raw_definitions(bothost):
    assert "paging/echo" in bothost("mcp", "tools", "paging").output
    raw = json.loads(bothost("mcp", "tools", "paging", "--json").output)
    assert raw["paging"][0]["annotations"] == {"readOnlyHint": True}


def test_add_enable_disable_remove_and_list(bothost):
    bothost("mcp", "add", "extra", "--", sys.executable, str(PAGING_SERVER), "--flag")
    bothost(
        "mcp",
        "add",
        "remote",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization=Bearer ${env:TOKEN}",
    )
    listing = {s["name"]: s for s in json.loads(bothost("mcp", "list", "--json").output)}
    assert listing["extra"]["origin"] == "db" and listing["extra"]["target"].endswith("--flag")
    assert listing["remote"]["transport"] == "http"
    assert listing["paging"]["origin"] == "config"
    assert listing["weather"]["state"] == "disabled"

    bothost("mcp", "disable", "extra")
    assert "MCP server extra is disabled" in bothost("mcp", "call", "extra", "echo", code=2).output
    bothost("mcp", "enable", "extra")
    assert bothost("mcp", "call", "extra", "echo", '{"text": "x"}').output == "x\n"
    bothost("mcp", "remove", "extra")
    assert "extra" not in bothost("mcp", "list").output
    assert "defined in the config file" in bothost("mcp", "remove", "paging", code=2).output
    assert (
        "KEY=VALUE"
        in bothost("mcp", "add", "bad", "--url", "http://x", "--header", "nokv", code=2).output
    )


def test_adding_a_stored_name_again_says_it_replaced_the_server(bothost):
    # found from outside: `mcp add remote --url …` over a stored `remote` that had a header
    # printed "added remote", and the header, env and roots were gone without a word
    first = bothost("mcp", "add", "remote", "--url", "http://127.0.0.1:9/mcp", "--header", "A=b")
    assert first.output.startswith("added remote (http:")
    again = bothost("mcp", "add", "remote", "--url", "http://127.0.0.1:9/other")
    assert again.output.startswith("replaced remote (http: http://127.0.0.1:9/other)")
    assert "headers" in again.output  # what the earlier entry had that this one does not


def test_logs_reads_only_server_logs_whatever_the_name(bothost, home):
    # found from outside: `mcp logs ../../x` printed <home>/x.log, and any NAME.log the
    # user could reach (`../../../../var/log/dpkg`), as a server's log
    (home / "logs" / "mcp").mkdir(parents=True, exist_ok=True)
    (home / "x.log").write_text("not a server log\n")
    for name in ("../../x", "", "a/b"):
        out = bothost("mcp", "logs", name, code=1).output
        assert "not a server log" not in out
        assert "no MCP server named" in out


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--url", "ftp://x/mcp"], "url: expected an http:// or https:// URL"),
        (["--url", "http://[::1/mcp"], "url: not a URL"),
        (["--url", "https://h/mcp", "--header", "X-A=a\r\nX-B: b"], "headers.X-A"),
    ],
)
def test_add_refuses_a_url_or_header_no_request_could_carry(bothost, args, expected):
    # found from outside: each was "added", then failed at every start
    assert expected in bothost("mcp", "add", "r", *args, code=2).output
    assert " r " not in bothost("mcp", "list").output


ODD_DESCRIPTIONS = """
import json, sys
tools = [{"name": "num", "description": 5, "inputSchema": {"type": "object"}},
         {"name": "obj", "description": {"a": 1}, "inputSchema": {"type": "object"}},
         {"name": "fine", "description": "Fine.", "inputSchema": {"type": "object"}}]
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "odd", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": tools}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no"}}))
        sys.stdout.flush()
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}))
    sys.stdout.flush()
"""


def test_tools_lists_a_server_whose_descriptions_are_not_strings(bothost, tmp_path):
    # found from outside with a hostile server: `mcp tools` ended in "unexpected
    # AttributeError: 'int' object has no attribute 'strip'" (the agent took it fine)
    server = tmp_path / "odd_server.py"
    server.write_text(ODD_DESCRIPTIONS)
    bothost("mcp", "add", "odd", "--", sys.executable, str(server))
    lines = bothost("mcp", "tools", "odd").output.splitlines()
    assert [line.split()[0] for line in lines] == ["odd/num", "odd/obj", "odd/fine"]
    assert lines[2].endswith("Fine.") and lines[0].strip() == "odd/num"


def test_config_server_shadows_a_stored_one_and_the_listing_says_so(bothost, home, tmp_path):
    # a row stored before the config file named a server `paging` (mcp add refuses that name
    # while the config has it)
    bare = tmp_path / "bare.yaml"
    bare.write_text("mcp: {servers: {weather: {enabled: false}}}\n")
    added = CliRunner().invoke(
        cli,
        ["--home", str(home), "--config", str(bare), "mcp", "add", "paging", "--url", "http://127.0.0.1:9/mcp"],
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    lines = [line for line in bothost("mcp", "list").output.splitlines() if "shadowed" in line]
    assert lines and lines[0].startswith("paging")


@pytest.mark.parametrize("name", ["weather", "paging"], ids=["bundled", "config"])
def test_add_refuses_a_name_the_config_has_as_import_skips_it(bothost, name):
    # found from outside: `mcp add weather -- …` stored a row the bundled weather server hid
    # at once (state `shadowed`), while `mcp import` skipped the same name; both leave it now
    result = bothost("mcp", "add", name, "--", "echo", "hi", code=2)
    assert f"a server named {name!r} exists (the config file)" in result.output
    assert "another name" in result.output
    assert "shadowed" not in bothost("mcp", "list").output


def test_logs_show_the_server_story(bothost):
    bothost("mcp", "call", "paging", "flood_stderr", '{"lines": 2}')
    out = bothost("mcp", "logs", "paging", "-n", "20").output
    assert "[stderr] stderr line 1" in out and "initialized paging-server" in out
    assert "no log" in bothost("mcp", "logs", "ghost", code=1).output


def test_tools_lines_up_descriptions_across_servers_and_long_names(home, tmp_path):
    paging = {"command": sys.executable, "args": [str(PAGING_SERVER)]}
    long_name = "paging-named-longer-than-a-column"  # 33 > 28
    config = tmp_path / "bothost.yaml"
    servers = {"p": paging, long_name: paging, "weather": {"enabled": False}}
    config.write_text(yaml.safe_dump({"mcp": {"servers": servers}}))
    argv = ["--home", str(home), "--config", str(config), "mcp", "tools"]
    listed = CliRunner().invoke(cli, argv)
    raw = json.loads(CliRunner().invoke(cli, [*argv, "--json"]).output)
    assert listed.exit_code == 0, listed.output
    columns = set()
    for line in listed.output.splitlines():
        server, rest = line.split("/", 1)
        tool = next(t for t in raw[server] if rest.startswith(t["name"] + " "))
        description = tool["description"].strip().splitlines()[0][:90]
        assert line.endswith(description) and line[: -len(description)].endswith("  ")
        columns.add(len(line) - len(description))
    assert len(listed.output.splitlines()) == 2 * len(raw["p"]) and len(columns) == 1


def test_mcp_add_takes_roots_checked_like_config(bothost, home, tmp_path):
    docs = tmp_path / "docs"
    bothost(
        "mcp",
        "add",
        "files",
        "--root",
        str(docs),
        "--root",
        "~/code",
        "--disabled",
        "--",
        sys.executable,
        str(PAGING_SERVER),
    )
    from bothost.mcp import stored
    from bothost.store import Store, core_migrations

    store = Store(home / "bothost.db", core_migrations())
    try:
        assert store.call(lambda db: stored.load(db)["files"].config.roots) == [str(docs), "~/code"]
    finally:
        store.close()
    refused = bothost("mcp", "add", "bad", "--root", "rel/dir", "--", "x", code=2).output
    assert (
        "bad: roots[0]: expected an absolute path (or one starting with ~), got 'rel/dir'"
        in refused
    )


def test_config_is_no_server_name_since_it_is_the_admin_tools_group(bothost, home, tmp_path):
    # a server called config would be listed nowhere and its tools unreachable: the admin
    # group of the same name wins in activate_tools
    result = bothost("mcp", "add", "config", "--", sys.executable, "-c", "pass", code=2)
    assert "'config' is reserved" in result.output
    config = tmp_path / "reserved.yaml"
    config.write_text(yaml.safe_dump({"mcp": {"servers": {"config": {"command": "true"}}}}))
    result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), "mcp", "list"])
    assert type(result.exception).__name__ == "ConfigError"  # the entry point exits 2 on it
    assert "mcp.servers.config: 'config' is reserved" in str(result.exception)


@pytest.mark.parametrize("value", ["${env:TOKEN", "${envTOKEN}", "${env:}", "${env:A B}"])
@pytest.mark.parametrize("option", ["--header", "--env"])
def test_add_refuses_a_malformed_env_reference_as_config_does(bothost, value, option):
    """Taken literally, `Bearer ${env:TOKEN` would be sent to the server as the credential."""
    out = bothost(
        "mcp",
        "add",
        "remote",
        "--url",
        "http://127.0.0.1:9/mcp",
        option,
        f"X=Bearer {value}",
        code=2,
    ).output
    assert (
        "expected ${env:NAME}" in out and ("headers.X" if option == "--header" else "env.X") in out
    )
    assert "remote" not in bothost("mcp", "list").output


def test_a_stored_malformed_reference_is_refused_when_the_server_starts(tmp_path):
    """A row written before the check (or by hand) is not sent as literal text either."""
    from bothost.config import McpServerConfig
    from bothost.mcp.environment import UnsetVariableError, server_env, server_headers

    config = McpServerConfig(url="http://x", headers={"A": "Bearer ${env:T"}, env={"B": "${envT}"})
    with pytest.raises(UnsetVariableError, match=r"headers\.A: expected \$\{env:NAME\}"):
        server_headers(config, {"T": "secret"})
    with pytest.raises(UnsetVariableError, match=r"env\.B: expected \$\{env:NAME\}"):
        server_env(config, tmp_path, {"T": "secret"})


def test_call_with_a_store_that_cannot_take_the_pushed_events_says_so_and_fails(bothost, home):
    """The call's result is printed (the tool ran), but events the server pushed meanwhile
    that the store kept refusing are named, with the store's error, and the exit is 1: the
    server moved on, so they are gone, and a script must not read success."""
    import sqlite3

    from bothost.store import StoreError

    bothost("events", "list")  # creates the database
    with sqlite3.connect(home / "bothost.db") as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.source = 'paging'"
            " BEGIN SELECT RAISE(ROLLBACK, 'disk I/O error'); END"
        )
    conn.close()
    pushed = '{"count": 2, "type": "event/new_email"}'
    result = bothost("mcp", "call", "paging", "push", pushed, code=1)
    assert result.stdout.strip()  # the tool's result
    assert isinstance(result.exception, StoreError)  # main() prints it as one line, exit 1
    said = str(result.exception)
    assert "2 events paging pushed not stored" in said and "disk I/O error" in said


def test_the_refusal_shows_the_reference_not_the_rest_of_the_value(bothost):
    """The value may hold a pasted credential beside the broken reference; the error goes to
    terminals, logs and `mcp list`, so it quotes the reference alone."""
    value = "X=Bearer sk-live-0123456789 ${env:TOKEN"
    out = bothost("mcp", "add", "r", "--url", "http://127.0.0.1:9/mcp", "--header", value, code=2)
    assert "${env:TOKEN" in out.output and "sk-live-0123456789" not in out.output


async def elicit_at_a_terminal(home, tmp_path):
    """`mcp call paging elicit` started on a terminal (the prompt is offered to one only):
    the process and the terminal's controlling side."""
    import os
    import pty

    from tests.helpers import bothost_process

    config = tmp_path / "bothost.yaml"
    server = {"command": sys.executable, "args": [str(PAGING_SERVER)]}
    config.write_text(
        yaml.safe_dump({"mcp": {"servers": {"paging": server, "weather": {"enabled": False}}}})
    )
    controller, terminal = pty.openpty()
    process = await bothost_process(
        home, config, "mcp", "call", "paging", "elicit", "{}", stdin=terminal, stderr=terminal
    )
    os.close(terminal)
    return process, controller


async def test_ctrl_c_at_a_servers_question_ends_mcp_call_at_once(home, tmp_path):
    """Found from outside: Ctrl-C at `mcp call`'s elicitation prompt ("Answer? [Y/n]")
    left the command hanging until Enter: the prompt read stdin in an executor thread,
    which asyncio.run joins on the way out."""
    import asyncio
    import os
    import signal

    process, controller = await elicit_at_a_terminal(home, tmp_path)
    seen = b""
    try:
        async with asyncio.timeout(60):
            while b"Answer?" not in seen:
                seen += await asyncio.to_thread(os.read, controller, 4096)
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(15):  # generous: it ends in well under a second
            assert await process.wait() == 130  # interrupted, as bothost chat (was 1)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(controller)


async def test_a_servers_question_is_answered_at_the_terminal(home, tmp_path):
    """`mcp call` asks at the terminal (stdin one, stdout the result): "Answer?", then each
    field, a default taken from an empty line; the answer goes back to the server."""
    import asyncio
    import os

    process, controller = await elicit_at_a_terminal(home, tmp_path)
    seen = b""
    try:
        async with asyncio.timeout(60):
            for asked, typed in ((b"Answer?", b"maybe\n"), (b"invalid", b"\n")):
                while asked not in seen:
                    seen += await asyncio.to_thread(os.read, controller, 4096)
                os.write(controller, typed)
            for asked, typed in ((b"name: ", b"Ana\n"), (b"color [blue]: ", b"\n")):
                while asked not in seen:
                    seen += await asyncio.to_thread(os.read, controller, 4096)
                os.write(controller, typed)
            out, _ = await process.communicate()
        assert process.returncode == 0, seen
        assert '"name": "Ana"' in out.decode() and '"color": "blue"' in out.decode(), out
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(controller)


def test_list_says_how_often_a_running_hosts_server_restarted(bothost, home):
    # found with a server that exits after its first tools/list: the host restarts it with
    # backoff, and between deaths `mcp list` read "ready 1 tools" with no sign of the loop
    from bothost.mcp.manager import status_path
    from bothost.mcp.runner import ServerStatus

    flapping = ServerStatus("paging", "config", True, "ready", tools=1, restarts=7)
    failed = ServerStatus("paging", "config", True, "failed", "server exited with code 3")
    failed.restarts = 1
    path = status_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    for status, said in ((flapping, "restarted 7 times"), (failed, "restarted once")):
        servers = [status.to_dict()]
        path.write_text(json.dumps({"pid": os.getpid(), "servers": servers}))
        lines = bothost("mcp", "list").output.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("paging "))
        details = [line.strip() for line in lines[at + 1 :] if line.startswith(" ")]
        assert f"{said} (why: bothost mcp logs paging)" in details, lines


def test_call_says_where_a_returned_image_was_saved(bothost, home):
    # found with server-everything's get-tiny-image: `mcp call` printed
    # "[image: /media/<file> …]", the web app's path, and a person at the terminal had to
    # guess the file was under $BOTHOST_HOME/media
    result = bothost("mcp", "call", "paging", "image")
    (saved,) = (home / "media").iterdir()
    assert f"[image: /media/{saved.name}" in result.stdout
    assert f"saved {saved}" in result.stderr.splitlines()


def test_logs_of_a_bundled_server_stamp_each_line_once(home, tmp_path):
    # found from outside: `mcp logs weather` showed "<time> INFO [stderr] <time> INFO …":
    # the bundled server stamped its stderr lines and the host stamped them again
    config = tmp_path / "bothost.yaml"
    config.write_text("mcp: {servers: {weather: {enabled: true}}}\n")
    base = ["--home", str(home), "--config", str(config)]
    listed = CliRunner().invoke(cli, [*base, "mcp", "tools", "weather"])
    assert listed.exit_code == 0, (listed.output, listed.exception)
    logs = CliRunner().invoke(cli, [*base, "mcp", "logs", "weather"]).output
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
    stderr_lines = [line for line in logs.splitlines() if "[stderr]" in line]
    assert stderr_lines, logs
    assert all(len(stamp.findall(line)) == 1 for line in stderr_lines), logs


@pytest.mark.parametrize(
    "args",
    [
        ["mcp", "remove", "ghost"],
        ["mcp", "enable", "ghost"],
        ["mcp", "disable", "ghost"],
        ["mcp", "call", "ghost", "echo"],
        ["mcp", "tools", "ghost"],
        ["mcp", "logs", "ghost"],
        ["mcp", "logout", "ghost"],
        ["rules", "remove", "99"],
    ],
)
def test_no_such_thing_exits_1_like_every_command_s_own_no(bothost, args):
    # found from outside: `mcp remove NAME` exited 2 (a usage error) while `rules remove N`
    # and `mcp logs NAME` exited 1 for the same "no such thing"; the help's convention is
    # 1 for a command's own "no", 2 for a command line that could never work
    out = bothost(*args, code=1).output
    assert "no MCP server named 'ghost'" in out or "no log" in out or "no stored rule" in out


def test_call_prints_a_block_meant_for_the_user_only(bothost):
    # the person at the terminal is the user: a block kept from the model is theirs to read
    output = bothost("mcp", "call", "paging", "echo", '{"text": "1 row", "for_user": "| a |"}')
    assert output.output == (
        "1 row\n[1 content block(s) meant for the user only: shown to them]\n| a |\n"
    ), output.output
