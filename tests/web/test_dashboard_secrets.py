"""The dashboard never shows an MCP server's secrets (its command line, env, URL)."""

import json
import sys

import aiohttp

from tests.helpers import make_host
from tests.web.conftest import base_url, host_config

TOKEN = "dash-flag-token-0123456789abcdef"
KEY = "sk-dash-space-key-0123456789abcdef"
REFERENCED = "dash-env-referenced-0123456789ab"
URL_PASSWORD = "dash-url-password-0123456789"
ENV_SECRET = "dash-env-value-0123456789abcdef"


async def test_the_dashboard_shows_no_secret_of_an_mcp_servers_command_line(
    home, tmp_path, secret, monkeypatch
):
    monkeypatch.setenv("DASH_REFERENCED", REFERENCED)
    exits = "import sys; sys.stderr.write(' '.join(sys.argv)); sys.exit(3)"
    servers = {
        "weather": {"enabled": False},
        "flags": {
            "command": sys.executable,
            "args": [
                "-c",
                exits,
                f"--token={TOKEN}",
                "--api-key",
                KEY,
                "--auth=${env:DASH_REFERENCED}",
                "${env:DASH_REFERENCED}",  # positional: known as a secret by where it came from
            ],
            "env": {"SERVICE_SECRET": ENV_SECRET},
        },
        "remote": {"url": f"http://user:{URL_PASSWORD}@127.0.0.1:9/mcp?token={TOKEN}"},
    }
    host = make_host(home, host_config(tmp_path, secret, mcp={"servers": servers}))
    await host.start(tick=False)
    try:
        async with aiohttp.ClientSession() as client:
            async with client.get(base_url(host) + "/api/dashboard") as response:
                shown = await response.text()
            async with client.get(base_url(host) + "/") as response:
                page = await response.text()
    finally:
        await host.stop()
    assert "flags" in shown and "remote" in shown, shown
    for leaked in (TOKEN, KEY, REFERENCED, URL_PASSWORD, ENV_SECRET):
        assert leaked not in shown, (leaked, json.loads(shown)["mcp"])
        assert leaked not in page
