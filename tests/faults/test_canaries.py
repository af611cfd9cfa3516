"""Canary secrets in every config place; nothing bothost writes or shows may hold one.

A distinct canary goes into every place a credential can live — the LLM key, the web token,
the webhook secret and a target's secret and URL password, the Slack tokens, an MCP server's
``--token`` and ``KEY=value`` arguments, its env values, an HTTP server's headers and URL
password and query, and values that reach the config only through ``${env:…}``. The real
``bothost run`` then serves (offline LLM, web on a free port, a stdio MCP server that prints
its own secrets to stderr, an HTTP MCP server that is down, Slack in Socket Mode against the
fake Slack), and is used: health, dashboard, metrics, chat (tools, a tool call), signed
webhooks, two Slack mentions, every ``mcp`` listing, ``config show``, ``doctor``,
``plugins``, ``mcp logs``, a tick that delivers to the webhook target. After it
stops, every file in the home (the database included, as bytes), every process's stdout and
stderr and every HTTP answer is scanned: a canary may appear only in the config file.

MCP servers legitimately receive their env and args; what is scanned is what bothost writes
and shows.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from bothost.plugins.web.signing import sign_headers

from tests.helpers import free_port, run_bothost
from tests.slack import fake_slack
from tests.slack.fake_slack import BOT_USER, TEAM, FakeSlack

SERVER = Path(__file__).with_name("canary_server.py")
STEP_TIMEOUT = 120  # seconds for one CLI command (doctor and --check start servers)
READY_TIMEOUT = 60  # seconds for the host to serve and its stdio server to be ready
# The whole test: a host and 22 CLI commands, one after another, each a new process. They
# cost 17 s of CPU (0.3-1.5 s each, getrusage of the children) and nothing else: no sleep,
# no timeout waited out. At load 10-12 on 2 cores the commands alone took 107 s of wall time
# and the test 147-167 s, against the suite's 180 s: that bound measured the machine's load.
TEST_TIMEOUT = 600


def canary(label: str) -> str:
    """A unique, plain-looking value: only its exact bytes can give it away."""
    return f"cnry{label}{secrets.token_hex(6)}"


def whsec(label: str) -> str:
    raw = canary(label).encode()  # 4 + len + 12 characters: padded to a multiple of 3
    raw += b"x" * (-len(raw) % 3)
    return "whsec_" + base64.b64encode(raw).decode()


@pytest.fixture
def canaries():
    values = {
        "llm.api_key": canary("llm"),
        "web.token": canary("web"),
        "webhook.secret": whsec("hook"),
        "target.secret": whsec("tgt"),
        "target.url_password": canary("tgtpw"),
        "target.url_query": canary("tgtq"),
        "slack.bot_token": "xoxb-" + canary("bot"),
        "slack.app_token": "xapp-" + canary("app"),
        "slack.signing_secret": canary("sign"),
        "arg --token": canary("argtok"),
        "arg --password=": canary("argpw"),
        "arg API_KEY=": canary("argkv"),
        "env value": canary("envplain"),
        "header value": canary("hdr"),
        "url password": canary("urlpw"),
        "url query": canary("urlq"),
        # only in the environment; the config says ${env:…}
        "${env} arg": canary("envarg"),
        "${env} env": canary("envenv"),
        "${env} header": canary("envhdr"),
    }
    for value in values.values():
        assert value.replace("whsec_", "").isalnum() or "-" in value, value
    return values


class SlackThread:
    """The fake Slack on its own event loop in a thread (this test is synchronous)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.fake: FakeSlack = self.run(self._start())

    async def _start(self) -> FakeSlack:
        fake = FakeSlack()
        await fake.start()
        return fake

    def run(self, coro, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def mention(self, channel: str, text: str) -> None:
        """A user mentions the bot; returns once the bot has answered in the thread."""
        text = f"<@{BOT_USER}> {text}"
        ts = self.fake.add_message(channel, "UALICE", text)
        self.run(
            self.fake.event(
                {
                    "type": "app_mention",
                    "user": "UALICE",
                    "text": text,
                    "ts": ts,
                    "channel": channel,
                    "event_ts": ts,
                    "team": TEAM,
                }
            )
        )
        self.run(
            self.fake.wait_for(
                lambda: any(
                    m.get("user") == BOT_USER and m.get("thread_ts") == ts
                    for m in self.fake.messages.get(channel, [])
                )
            )
        )

    def close(self) -> None:
        self.run(self.fake.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def slack(canaries, monkeypatch):
    # the fake accepts only its own tokens: make the canaries its tokens
    monkeypatch.setattr(fake_slack, "BOT_TOKEN", canaries["slack.bot_token"])
    monkeypatch.setattr(fake_slack, "APP_TOKEN", canaries["slack.app_token"])
    running = SlackThread()
    yield running
    running.close()


def write_config(path: Path, c: dict[str, str], port: int, dead: int, slack_api: str) -> None:
    config = {
        "llm": {"provider": "offline", "api_key": c["llm.api_key"]},
        "platforms": {
            "console": {"enabled": False},
            "web": {"port": port, "token": c["web.token"]},
            "webhook": {
                "secret": c["webhook.secret"],
                "targets": {
                    "ops": {
                        "url": f"http://hook:{c['target.url_password']}@127.0.0.1:{dead}/hook"
                        f"?token={c['target.url_query']}",
                        "secret": c["target.secret"],
                    }
                },
            },
            "slack": {
                "enabled": True,
                "mode": "socket",
                "api_url": slack_api,
                "bot_token": c["slack.bot_token"],
                "app_token": c["slack.app_token"],
                "signing_secret": c["slack.signing_secret"],
                "allowed_users": ["*"],
            },
        },
        "mcp": {
            "servers": {
                "weather": {"enabled": False},
                "canary": {
                    "command": sys.executable,
                    "args": [
                        str(SERVER),
                        "--token",
                        c["arg --token"],
                        f"--password={c['arg --password=']}",
                        f"API_KEY={c['arg API_KEY=']}",
                        "--api-key",
                        "${env:CANARY_SRC_ARG}",
                    ],
                    "env": {"CANARY_PLAIN": c["env value"], "CANARY_REF": "${env:CANARY_SRC_ENV}"},
                },
                "remote": {
                    "url": f"http://mcp:{c['url password']}@127.0.0.1:{dead}/mcp"
                    f"?token={c['url query']}",
                    "headers": {
                        "Authorization": f"Bearer {c['header value']}",
                        "X-Api-Key": "${env:CANARY_SRC_HEADER}",
                    },
                },
            }
        },
        "tick": {"deliver_to": ["web:briefings", "webhook:ops"]},
    }
    path.write_text(yaml.safe_dump(config))


class Seen:
    """Everything bothost showed, by where it showed it."""

    def __init__(self) -> None:
        self.outputs: dict[str, bytes] = {}

    def add(self, where: str, data: bytes) -> None:
        self.outputs[f"{where} #{len(self.outputs)}"] = data


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 3xx itself is the answer to look at


def http(
    seen: Seen,
    port: int,
    token: str,
    method: str,
    path: str,
    body: object = None,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
    follow: bool = True,
) -> tuple[int, bytes]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method=method,
        headers={**auth, "Content-Type": "application/json", **(headers or {})},
    )
    opener = urllib.request.build_opener(*([] if follow else [NoRedirect()]))
    try:
        with opener.open(request, timeout=30) as response:
            status, answer, head = response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        status, answer, head = exc.code, exc.read(), exc.headers
    seen.add(f"HTTP {method} {path} ({status})", str(head).encode() + b"\n" + answer)
    return status, answer


def wait_ready(seen: Seen, port: int, token: str, host: subprocess.Popen) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        assert host.poll() is None, "bothost run exited early"
        try:
            status, answer = http(Seen(), port, token, "GET", "/api/dashboard")
        except OSError:
            status, answer = 0, b""
        if status == 200:
            states = {s["name"]: s["state"] for s in json.loads(answer).get("mcp", [])}
            if states.get("canary") == "ready":
                return
        time.sleep(0.2)  # polling a condition, bounded by READY_TIMEOUT
    raise AssertionError("the host or its canary server did not get ready")


@pytest.mark.timeout(TEST_TIMEOUT)
def test_no_canary_leaves_the_config(tmp_path, home, canaries, slack):
    port, dead = free_port(), free_port()
    config = tmp_path / "config.yaml"
    write_config(config, canaries, port, dead, slack.fake.api_url)
    env = {
        **os.environ,
        "BOTHOST_HOME": str(home),
        "HOME": str(home),
        "CANARY_SRC_ARG": canaries["${env} arg"],
        "CANARY_SRC_ENV": canaries["${env} env"],
        "CANARY_SRC_HEADER": canaries["${env} header"],
    }
    env.pop("BOTHOST_CONFIG", None)
    seen = Seen()
    token = canaries["web.token"]

    def cli(*args: str) -> subprocess.CompletedProcess:
        done = run_bothost(*args, config=config, env=env, timeout=STEP_TIMEOUT, text=False)
        seen.add(f"bothost {' '.join(args)} stdout", done.stdout)
        seen.add(f"bothost {' '.join(args)} stderr", done.stderr)
        return done

    host_out, host_err = tmp_path / "run.stdout", tmp_path / "run.stderr"
    with host_out.open("wb") as out, host_err.open("wb") as err:
        # by hand, not with tests.helpers.bothost_process (asyncio's): this test is synchronous
        # and reads the host's -vv output from files once it has stopped
        host = subprocess.Popen(
            [sys.executable, "-m", "bothost", "--config", str(config), "-vv", "run"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
        )
    try:
        wait_ready(seen, port, token, host)
        for path in (
            "/healthz",
            "/api/dashboard",
            "/metrics",
            "/",
            "/openapi.json",
            "/api/history?session=canary",
        ):
            http(seen, port, token, "GET", path)
        # a browser's first visit: the token in the address (the answer and logs must not
        # hold it, only the request did)
        status, _ = http(seen, port, "", "GET", f"/?token={token}", follow=False)
        assert status == 303
        for text in (
            "help",
            "tools",
            "call mcp__canary__whoami {}",
            "call mcp__remote__anything {}",
        ):
            status, _ = http(
                seen, port, token, "POST", "/api/chat", {"session": "canary", "text": text}
            )
            assert status == 200, text
        secret = canaries["webhook.secret"]
        for path, body in (
            ("/webhook/events/canary", {"type": "event/canary", "payload": {"summary": "hello"}}),
            ("/webhook/message", {"text": "tools", "user": "u1"}),
        ):
            raw = json.dumps(body).encode()
            status, _ = http(
                seen,
                port,
                token,
                "POST",
                path,
                raw=raw,
                headers=sign_headers(secret, f"msg_{secrets.token_hex(4)}", raw),
            )
            assert status == 200, path
        for args in (
            ("mcp", "list"),
            ("mcp", "list", "--json"),
            ("mcp", "list", "--check"),
            ("mcp", "list", "--check", "--json"),
            ("config", "show"),
            ("config", "show", "--json"),
            ("doctor",),
            ("doctor", "--json"),
            ("plugins",),
            ("plugins", "--json"),
            ("mcp", "tools", "canary"),
            ("mcp", "call", "canary", "whoami"),
            ("mcp", "logs", "canary"),
            ("mcp", "logs", "remote"),
            ("events", "list"),
            ("tick",),
            ("briefings",),
            ("-vv", "chat", "-m", "tools"),
            ("-vv", "mcp", "list", "--check"),
            ("-vv", "mcp", "call", "canary", "whoami"),
            ("-vv", "doctor"),
            ("-vv", "tick"),
        ):
            cli(*args)
        http(seen, port, token, "GET", "/api/dashboard")
        slack.mention("C0GENERAL", "tools")
        slack.mention("C0GENERAL", "call mcp__canary__whoami {}")
    finally:
        host.send_signal(signal.SIGTERM)
        try:
            host.wait(30)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait(10)
    seen.add("bothost run stdout", host_out.read_bytes())
    seen.add("bothost run stderr", host_err.read_bytes())
    seen.add("what the bot posted to Slack", json.dumps(slack.fake.messages).encode())
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        seen.add(f"file {path.relative_to(home)}", path.read_bytes())

    config_text = config.read_text()
    held = {name for name, value in canaries.items() if value in config_text}
    assert held == {n for n in canaries if not n.startswith("${env}")}  # the test's own check
    server_log = b"".join(
        data for name, data in seen.outputs.items() if name.startswith("file logs/mcp/canary.log")
    )
    assert b"canary server starting with" in server_log and b"***" in server_log
    leaks = [
        f"{name} in {where}"
        for name, value in canaries.items()
        for where, data in seen.outputs.items()
        if value.encode() in data
    ]
    assert not leaks, "canaries leaked:\n" + "\n".join(leaks)
