"""Fixtures of the interop tests, made once per module (the HTTP servers once per run) so each
peer starts once: a web page for mcp-server-fetch, server-everything and our SDK 2.x server on
Streamable HTTP, the files, repository and memory the other servers read, and the
`mcp.servers` config naming them all."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from interop_cases import ARTICLE, ROBOTS, SDK_SERVER, Places, prepare, servers
from peers import server_everything

from tests.helpers import free_port, serve_app
from tests.mcp.mcp_helpers import listening_process


def readabilipy_ready() -> None:
    """Fail at once, saying why, if mcp-server-fetch would install its Node half mid-test.

    Its readabilipy runs `npm install` inside the server on the first fetch when Node is on
    PATH and its node_modules is missing: 15 s in the middle of a call, and two fetch
    servers at once (two test workers) race on one folder, so one crashes with only "Error
    executing tool fetch". `make .venv/.installed` installs it once, before any test.
    """
    import readabilipy

    javascript = Path(readabilipy.__file__).parent / "javascript"
    if shutil.which("node") and shutil.which("npm") and not (javascript / "node_modules").is_dir():
        raise AssertionError(
            f"readabilipy's Node modules are missing in {javascript}: run "
            f"`npm install` there (the Makefile's .venv/.installed step does it)"
        )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pages():
    """A small site on 127.0.0.1: an article, and a robots.txt that keeps /private out."""
    readabilipy_ready()

    async def article(request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE, content_type="text/html")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text=ROBOTS)

    async def private(request: web.Request) -> web.Response:
        raise AssertionError("fetch ignored robots.txt")

    app = web.Application()
    app.router.add_get("/article", article)
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/private/{rest:.*}", private)
    runner, url = await serve_app(app)
    yield url
    await runner.cleanup()


@pytest.fixture(scope="session")
def everything_url(tmp_path_factory):
    """server-everything in its Streamable HTTP mode; yields its /mcp URL."""
    command = server_everything()  # may skip: before anything is started
    port = free_port()
    log = tmp_path_factory.mktemp("everything") / "everything.log"
    with listening_process([*command, "streamableHttp"], port, log, {"PORT": str(port)}):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="session")
def sdk_url(tmp_path_factory):
    """Our SDK 2.x server on the SDK's own Streamable HTTP transport; yields its /mcp URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("sdk") / "sdk.log"
    command = [sys.executable, str(SDK_SERVER), "--http", str(port)]
    with listening_process(command, port, log, {}):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def interop_home(tmp_path_factory):
    path = tmp_path_factory.mktemp("interop") / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture(scope="module")
def places(tmp_path_factory, pages, interop_home) -> Places:
    return prepare(tmp_path_factory.mktemp("places"), pages, interop_home)


@pytest.fixture(scope="module")
def interop_servers(places, everything_url, sdk_url) -> dict[str, dict[str, Any]]:
    return servers(places, everything_url, sdk_url)
