"""A started host with the web plugin on an ephemeral port, and signing helpers."""

from __future__ import annotations

import json
import textwrap
import uuid

import aiohttp
import pytest
from bothost.plugins.web.signing import new_secret, sign_headers

from tests.helpers import make_host

DANGER_PLUGIN = textwrap.dedent('''
    from bothost.hookspecs import hookimpl


    def wipe_disk(target: str = "all") -> str:
        """Pretend to wipe a disk (a destructive tool for approval tests)."""
        return f"wiped {target}"


    @hookimpl
    def register_tools(register):
        register(wipe_disk, destructive=True)
''')


@pytest.fixture
def secret():
    return new_secret()


def host_config(tmp_path, secret, **extra):
    plugins = tmp_path / "plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / "danger.py").write_text(DANGER_PLUGIN)
    data = {
        "platforms": {"webhook": {"secret": secret}},
        "plugins": {"dirs": [str(plugins)]},
        "agent": {"approval": "ask"},
    }
    for key, value in extra.items():
        data[key] = value
    return data


@pytest.fixture
async def web_host(home, tmp_path, secret, store_target):
    """A started host serving HTTP on 127.0.0.1 (no MCP, no tick) with webhooks on; on
    PostgreSQL too in modules marked ``both_backends``."""
    data = host_config(tmp_path, secret)
    if isinstance(store_target, str):
        data = {**data, "store": {"url": store_target}}
    host = make_host(home, data)
    await host.start(mcp=False, tick=False)
    yield host
    await host.stop()


@pytest.fixture
async def client():
    # unsafe: keep cookies for 127.0.0.1, like a browser does
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        yield session


def base_url(host) -> str:
    return f"http://127.0.0.1:{host.http.port}"


def signed(secret: str, data, msg_id: str | None = None, now: float | None = None):
    """(body bytes, headers) of a Standard Webhooks request carrying ``data`` as JSON."""
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    headers = sign_headers(secret, msg_id or f"msg_{uuid.uuid4().hex}", body, now=now)
    headers["Content-Type"] = "application/json"
    return body, headers
