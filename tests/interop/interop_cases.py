"""The interop matrix: which peers run, how they are configured, and what a person (and so the
model) must read of each call. Shared by the ``bothost mcp call`` and the agent-turn tests.

Each case names a server, a tool and its arguments, whether the result is an error, and a
check on the text the server's result becomes. The same text is printed by ``bothost mcp
call`` and sent to the model as the tool's result, so one check serves both paths.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peers import node_server, program, python_script

HERE = Path(__file__).resolve().parent
SDK_SERVER = HERE / "sdk_server.py"
# fetch reaches our page on 127.0.0.1 directly, whatever proxy the machine running the
# tests sets (bothost passes the proxy variables on to servers)
NO_PROXY = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
NOTES = "line one\nline two\n"
MEMORY = {
    "type": "entity",
    "name": "Ada",
    "entityType": "person",
    "observations": ["wrote the first program"],
}
ARTICLE = (
    "<html><head><title>Interop notes</title></head><body><article><h1>Interop notes</h1>"
    "<p>The quick brown fox jumps over the lazy dog while the host reads <b>markdown</b>.</p>"
    "<p>A second paragraph, so the page simplifies to an article body.</p>"
    "</article></body></html>"
)
ROBOTS = "User-agent: *\nDisallow: /private\n"
IMAGE_REF = re.compile(r"\[image: /media/[0-9a-f]+\.png \(image/png, [0-9.]+ k?B\)\]")
# a run this long of base64 characters is inlined binary, never text meant for a person
BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{200,}")
JSONRPC_CODE = re.compile(r"-32[0-9]{3}")


@dataclass(frozen=True)
class Places:
    """What the cases point at: a folder of files, a git repository, our web page."""

    files: Path
    repo: Path
    memory: Path
    pages: str  # http://127.0.0.1:PORT
    media: Path  # the host's media/ folder, where images land


def prepare(root: Path, pages: str, home: Path) -> Places:
    files = root / "files"
    files.mkdir()
    (files / "notes.txt").write_text(NOTES)
    (files / "pixel.png").write_bytes(png_bytes())
    repo = root / "repo"
    repo.mkdir()
    git = [
        program("git"),
        "-C",
        str(repo),
        "-c",
        "user.name=Interop",
        "-c",
        "user.email=i@example.com",
    ]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "README").write_text("interop\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "interop: first commit"], check=True)
    memory = root / "memory.jsonl"
    memory.write_text(json.dumps(MEMORY) + "\n")
    return Places(files, repo, memory, pages, home / "media")


def png_bytes() -> bytes:
    from sdk_server import png_pixel  # beside this module; imports the SDK, so only when used

    return png_pixel()


def servers(places: Places, everything_url: str, sdk_url: str) -> dict[str, dict[str, Any]]:
    """The `mcp.servers` config: every peer, as a user would configure it."""
    return {
        "time": {"command": python_script("mcp-server-time"), "args": ["--local-timezone", "UTC"]},
        "fetch": {
            "command": python_script("mcp-server-fetch"),
            "args": ["--allow-private-ips"],  # our page is on 127.0.0.1; robots.txt still counts
            "env": NO_PROXY,
        },
        "git": {
            "command": python_script("mcp-server-git"),
            "args": ["--repository", str(places.repo)],
        },
        "filesystem": {
            "command": node_server(
                "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem"
            )[0],
            "args": [str(places.files)],
        },
        "memory": {
            "command": node_server("@modelcontextprotocol/server-memory", "mcp-server-memory")[0],
            "env": {"MEMORY_FILE_PATH": str(places.memory)},
        },
        "everything": {
            "command": node_server(
                "@modelcontextprotocol/server-everything", "mcp-server-everything"
            )[0]
        },
        "everything_http": {"url": everything_url},
        "sdk": {"command": sys.executable, "args": [str(SDK_SERVER)]},
        "sdk_http": {"url": sdk_url},
    }


@dataclass(frozen=True)
class Case:
    id: str
    server: str
    tool: str
    arguments: Callable[[Places], dict[str, Any]]
    check: Callable[[str, Places], None]
    error: bool = False
    cli: bool = False  # also through `bothost mcp call` (a process each: only a few)
    agent: bool = True  # in an agent turn too


def saved_image(text: str, places: Places) -> bytes:
    """The image a reference names, read back from media/ (a link, never base64 inline)."""
    assert IMAGE_REF.search(text), text
    assert "iVBORw0KGgo" not in text  # the start of every base64 PNG
    name = re.search(r"/media/([0-9a-f]+\.png)", text)
    assert name, text
    return (places.media / name.group(1)).read_bytes()


def is_image_reference(text: str, places: Places) -> None:
    assert saved_image(text, places).startswith(b"\x89PNG")


def is_our_pixel(text: str, places: Places) -> None:
    assert saved_image(text, places) == png_bytes()


def json_text(expected: Callable[[Any], bool]) -> Callable[[str, Places], None]:
    """The server's own JSON text, shown as it sent it (not a `{"result": …}` wrapper)."""

    def check(text: str, places: Places) -> None:
        value = json.loads(text)
        assert expected(value), text

    return check


def contains(*parts: str) -> Callable[[str, Places], None]:
    def check(text: str, places: Places) -> None:
        for part in parts:
            assert part in text, (part, text)

    return check


def exactly(expected: str) -> Callable[[str, Places], None]:
    def check(text: str, places: Places) -> None:
        assert text == expected, text

    return check


def fetched_article(text: str, places: Places) -> None:
    assert text.startswith(f"Contents of {places.pages}/article:\n"), text
    assert "reads **markdown**." in text and "<p>" not in text


CASES = [
    Case(
        "time-structured",
        "time",
        "get_current_time",
        lambda p: {"timezone": "Europe/Zurich"},
        json_text(lambda v: v["timezone"] == "Europe/Zurich" and "datetime" in v),
        cli=True,
    ),
    Case(
        "time-error",
        "time",
        "get_current_time",
        lambda p: {"timezone": "Mars/Olympus"},
        contains("Invalid timezone", "Mars/Olympus"),
        error=True,
    ),
    Case(
        "fetch-text",
        "fetch",
        "fetch",
        lambda p: {"url": f"{p.pages}/article"},
        fetched_article,
        cli=True,
    ),
    Case(
        "fetch-robots-error",
        "fetch",
        "fetch",
        lambda p: {"url": f"{p.pages}/private/page"},
        contains("robots.txt", "autonomous fetching of this page is not allowed"),
        error=True,
    ),
    Case(
        "git-text",
        "git",
        "git_log",
        lambda p: {"repo_path": str(p.repo), "max_count": 1},
        contains("Commit history:", "interop: first commit"),
        cli=True,
    ),
    Case(
        "git-error",
        "git",
        "git_status",
        lambda p: {"repo_path": str(p.files)},
        contains("outside the allowed repository"),
        error=True,
    ),
    Case(
        "filesystem-text",
        "filesystem",
        "read_text_file",
        lambda p: {"path": str(p.files / "notes.txt")},
        exactly(NOTES),  # the file as it is, not {"content": "line one\\nline two\\n"}
        cli=True,
    ),
    Case(
        "filesystem-image",
        "filesystem",
        "read_media_file",
        lambda p: {"path": str(p.files / "pixel.png")},
        is_our_pixel,
        cli=True,
    ),
    Case(
        "filesystem-error",
        "filesystem",
        "read_text_file",
        lambda p: {"path": str(p.repo / "README")},
        contains("Access denied", "outside allowed directories"),
        error=True,
    ),
    Case(
        "memory-structured",
        "memory",
        "read_graph",
        lambda p: {},
        json_text(lambda v: [e["name"] for e in v["entities"]] == ["Ada"] and v["relations"] == []),
        cli=True,
    ),
    Case(
        "everything-text",
        "everything",
        "echo",
        lambda p: {"message": "over stdio"},
        exactly("Echo: over stdio"),
    ),
    Case(
        "everything-structured",
        "everything",
        "get-structured-content",
        lambda p: {"location": "New York"},
        json_text(lambda v: set(v) == {"temperature", "conditions", "humidity"}),
        cli=True,
    ),
    Case(
        # the TypeScript SDK answers bad arguments with an error result whose text starts
        # "MCP error -32602: "; only the CLI sends such arguments (a turn checks them first)
        "everything-error",
        "everything",
        "get-sum",
        lambda p: {"a": "one", "b": 2},
        contains("Input validation error", "expected number"),
        error=True,
        cli=True,
        agent=False,
    ),
    Case(
        "everything-image",
        "everything",
        "get-tiny-image",
        lambda p: {},
        is_image_reference,
    ),
    Case(
        # resources as the agent offers them (read_resource is ours, so turns only)
        "everything-resource-text",
        "everything",
        "read_resource",
        lambda p: {"uri": "demo://resource/dynamic/text/1"},
        contains("Resource 1: This is a plaintext resource"),
    ),
    Case(
        "everything-resource-blob",
        "everything",
        "read_resource",
        lambda p: {"uri": "demo://resource/dynamic/blob/2"},
        # a text/plain blob: read as text, since the model cannot open a /media/ link
        contains("[resource demo://resource/dynamic/blob/2]", "Resource 2: This is a base64 blob"),
    ),
    Case(
        "everything-http-text",
        "everything_http",
        "echo",
        lambda p: {"message": "over http"},
        exactly("Echo: over http"),
    ),
    Case(
        "everything-http-structured",
        "everything_http",
        "get-structured-content",
        lambda p: {"location": "Chicago"},
        json_text(lambda v: "temperature" in v),
    ),
    Case(
        "everything-http-image",
        "everything_http",
        "get-tiny-image",
        lambda p: {},
        is_image_reference,
        cli=True,
    ),
    Case(
        "sdk-text",
        "sdk",
        "greet",
        lambda p: {"name": "Ada"},
        exactly("Hello, Ada!\nNice to meet you."),  # not {"result": "Hello, Ada!\\n…"}
        cli=True,
    ),
    Case(
        "sdk-structured",
        "sdk",
        "forecast",
        lambda p: {"city": "Bern"},
        json_text(lambda v: v == {"city": "Bern", "temperature": 21.5, "conditions": "sunny"}),
    ),
    Case("sdk-image", "sdk", "pixel", lambda p: {}, is_our_pixel),
    Case(
        "sdk-http-text",
        "sdk_http",
        "greet",
        lambda p: {"name": "Bo"},
        exactly("Hello, Bo!\nNice to meet you."),
    ),
    Case(
        "sdk-http-structured",
        "sdk_http",
        "forecast",
        lambda p: {"city": "Chur"},
        json_text(lambda v: v == {"city": "Chur", "temperature": 21.5, "conditions": "sunny"}),
        cli=True,
    ),
    Case("sdk-http-image", "sdk_http", "pixel", lambda p: {}, is_our_pixel),
    Case(
        "sdk-http-error",
        "sdk_http",
        "fail",
        lambda p: {"reason": "over http"},
        contains("cannot do that: over http"),
        error=True,
    ),
    Case(
        "sdk-error",
        "sdk",
        "fail",
        lambda p: {"reason": "no such thing"},
        contains("cannot do that: no such thing"),
        error=True,
        cli=True,
    ),
]


def check_readable(case: Case, text: str, places: Places) -> None:
    """What every result must be for a person: no inlined binary, no protocol codes."""
    assert not BASE64_RUN.search(text), text[:300]
    if case.error:
        assert not JSONRPC_CODE.search(text), text
    case.check(text, places)
