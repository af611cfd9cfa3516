"""One entry of a client's file at a time: what it becomes, or why it is skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bothost.mcp.importer import SkipEntry, bothost_name, convert, strip_jsonc


def test_stdio_entry_keeps_env_references_in_env_and_resolves_them_in_args(monkeypatch):
    monkeypatch.setenv("NOTES_DIR", "/srv/notes")
    config = convert(
        {
            "command": "npx",
            "args": ["-y", "fs-server", "${env:NOTES_DIR}", 3],
            "env": {"TOKEN": "${env:FS_TOKEN}", "LEVEL": 2},
            "disabled": True,
            "description": "Files",
        }
    )
    assert config.command == "npx"
    assert config.args == ["-y", "fs-server", "/srv/notes", "3"]
    assert config.env == {"TOKEN": "${env:FS_TOKEN}", "LEVEL": "2"}
    assert (config.enabled, config.description) == (False, "Files")


def test_user_home_is_filled_and_unset_env_in_args_skips(monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    assert convert({"command": "srv", "args": ["${userHome}/x"]}).args == [f"{Path.home()}/x"]
    with pytest.raises(
        SkipEntry,
        match=r"args\[0\] uses \$\{env:NOT_SET_ANYWHERE\}, which is "
        "not set",
    ):
        convert({"command": "srv", "args": ["${env:NOT_SET_ANYWHERE}"]})


@pytest.mark.parametrize(
    "entry",
    [
        {"url": "https://x.example/mcp"},
        {"type": "http", "url": "https://x.example/mcp", "headers": {"A": "${env:TOKEN}"}},
        {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
    ],
)
def test_http_entries(entry):
    config = convert(entry)
    assert config.url == entry["url"] and config.command is None
    assert config.headers == entry.get("headers", {})


@pytest.mark.parametrize(
    "entry, reason",
    [
        ("npx", "not an object"),
        ({"type": "sse", "url": "http://x/sse"}, "transport sse is not supported"),
        ({"type": "websocket", "url": "ws://x"}, "unsupported transport 'websocket'"),
        ({"command": "a", "url": "http://x/mcp"}, "both `command` and `url`"),
        ({"args": []}, "no `command` (stdio) or `url` (HTTP)"),
        ({"type": "http", "command": "a"}, "type 'http' with a command"),
        ({"command": "a", "args": "b c"}, "`args` a list"),
        ({"command": "a", "env": {"K": {"nested": 1}}}, "env must map names to strings"),
        ({"url": "file:///etc/passwd"}, "not an http(s) URL"),
        ({"command": "a", "cwd": "/srv"}, "`cwd` is not supported"),
        ({"command": "a", "envFile": ".env"}, "`envFile` is not supported"),
        ({"url": "https://x/mcp", "headers": {"A": "${input:key}"}}, "the VS Code input"),
    ],
)
def test_skipped_entries(entry, reason):
    with pytest.raises(SkipEntry) as caught:
        convert(entry)
    assert reason in str(caught.value)


def test_jsonc_comments_and_trailing_commas_outside_strings():
    text = '{"a": "http://x//y /* no */", // note\n "b": [1, 2,], /* c */ "c": {"d": 1,},}'
    assert json.loads(strip_jsonc(text)) == {
        "a": "http://x//y /* no */",
        "b": [1, 2],
        "c": {"d": 1},
    }


def test_names_made_safe():
    assert bothost_name("my server.v2") == "my-server-v2"
    assert bothost_name("x" * 60) == "x" * 40
    assert bothost_name("!!!") == "server"
