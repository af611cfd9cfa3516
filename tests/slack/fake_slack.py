"""A fake Slack on 127.0.0.1: the Web API methods the bot uses, and Socket Mode.

``/api/<method>`` answers like Slack (``{"ok": …}``, tokens in ``Authorization``, JSON or
form bodies) and records every call; ``apps.connections.open`` hands out
``ws://127.0.0.1:P/link``, where the fake sends envelopes (``events_api``, ``interactive``)
and waits for the bot's ``{"envelope_id"}`` acknowledgement, as Slack's Socket Mode does.
Messages the bot posts are kept per channel, so ``conversations.replies`` and button clicks
see the real conversation. Failures (a 429 with ``Retry-After``, an error code) can be
queued per method.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.helpers import serve_app

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"
BOT_USER, BOT_ID, TEAM = "UBOT", "BBOT", "T0TEAM"
WAIT = 10.0


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    token: str


@dataclass
class Failure:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.views: list[dict[str, Any]] = []
        self.zones: dict[str, str] = {}  # user id -> the tz users.info gives (unknown: not found)
        self.failures: dict[str, list[Failure]] = {}
        self.sockets: list[web.WebSocketResponse] = []
        self.acks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.changed = asyncio.Condition()
        self.clock = itertools.count(1)
        self.runner: web.AppRunner | None = None
        self.port = 0

    # --- server ------------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self.api)
        app.router.add_get("/link", self.link)
        self.runner, _ = await serve_app(app, access_log=None)
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        for ws in list(self.sockets):
            await ws.close()
        if self.runner is not None:
            await self.runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def next_ts(self) -> str:
        return f"{1_700_000_000 + next(self.clock)}.000100"

    async def api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            if request.content_type == "application/json":
                args.update(await request.json())
            else:
                args.update(dict(await request.post()))
        for key in ("blocks", "view"):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        await self.record(Call(method, args, token))
        queued = self.failures.get(method)
        if queued:
            failure = queued.pop(0)
            return web.json_response(failure.body, status=failure.status, headers=failure.headers)
        expected = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != expected:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        handler = getattr(self, "m_" + method.replace(".", "_"), None)
        body = handler(args) if handler else {"ok": True}
        return web.json_response(body)

    async def record(self, call: Call) -> None:
        async with self.changed:
            self.calls.append(call)
            self.changed.notify_all()

    # --- Web API methods ---------------------------------------------------------------------

    def m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://fake.slack.com/",
            "team": "Fake",
            "user": "bothost",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
        }

    def m_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = args.get("user", "")
        if user not in self.zones:
            return {"ok": False, "error": "user_not_found"}
        zone = self.zones[user]
        return {"ok": True, "user": {"id": user, "name": user.lower(), "tz": zone}}

    def m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"}

    def m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        message = {
            "type": "message",
            "ts": self.next_ts(),
            "user": BOT_USER,
            "bot_id": BOT_ID,
            "text": args.get("text", ""),
            "blocks": args.get("blocks") or [],
        }
        if args.get("thread_ts"):
            message["thread_ts"] = args["thread_ts"]
        self.messages.setdefault(args["channel"], []).append(message)
        return {"ok": True, "channel": args["channel"], "ts": message["ts"], "message": message}

    def m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.message(args["channel"], args["ts"])
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message["text"] = args.get("text", message["text"])
        message["blocks"] = args.get("blocks") or []
        return {"ok": True, "channel": args["channel"], "ts": args["ts"]}

    def m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self.next_ts()}

    def m_chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = {
            "type": "message",
            "ts": self.next_ts(),
            "user": BOT_USER,
            "bot_id": BOT_ID,
            "text": args.get("markdown_text") or "",
            "thread_ts": args["thread_ts"],
        }
        self.messages.setdefault(args["channel"], []).append(message)
        return {"ok": True, "channel": args["channel"], "ts": message["ts"]}

    def m_chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.message(args["channel"], args["ts"])
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message["text"] += args.get("markdown_text") or ""
        return {"ok": True, "channel": args["channel"], "ts": args["ts"]}

    def m_chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        return self.m_chat_appendStream(args)

    def m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        thread = args["ts"]
        found = [
            m
            for m in self.messages.get(args["channel"], [])
            if m["ts"] == thread or m.get("thread_ts") == thread
        ]
        return {
            "ok": True,
            "messages": sorted(found, key=lambda m: float(m["ts"])),
            "has_more": False,
            "response_metadata": {"next_cursor": ""},
        }

    def m_conversations_open(self, args: dict[str, Any]) -> dict[str, Any]:
        users = args.get("users", "")
        if not users or "," in users:
            return {"ok": False, "error": "user_not_found" if not users else "not_implemented"}
        return {"ok": True, "channel": {"id": f"D{users}"}}

    def m_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        view = dict(args["view"], id=f"V{len(self.views) + 1}")
        self.views.append(view)
        return {"ok": True, "view": view}

    # --- test helpers ------------------------------------------------------------------------

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        return next((m for m in self.messages.get(channel, []) if m["ts"] == ts), None)

    def add_message(self, channel: str, user: str, text: str, thread_ts: str | None = None) -> str:
        """A message a person wrote (kept for conversations.replies); its ts."""
        message = {"type": "message", "ts": self.next_ts(), "user": user, "text": text}
        if thread_ts:
            message["thread_ts"] = thread_ts
        self.messages.setdefault(channel, []).append(message)
        return message["ts"]

    def fail(
        self, method: str, status: int = 200, error: str = "", headers: dict[str, str] | None = None
    ) -> None:
        body = {"ok": False, "error": error or ("ratelimited" if status == 429 else "fatal_error")}
        self.failures.setdefault(method, []).append(Failure(status, body, headers or {}))

    def called(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def wait_for(self, predicate: Any, timeout: float = WAIT) -> Any:
        """Wait until ``predicate()`` is truthy (checked after every API call); its value."""
        async with asyncio.timeout(timeout):
            async with self.changed:
                while not (value := predicate()):
                    await self.changed.wait()
                return value

    async def wait_call(self, method: str, where: Any = None, count: int = 1) -> Call:
        """The ``count``-th call of ``method`` matching ``where(args)``."""

        def found() -> Call | None:
            matching = [c for c in self.called(method) if where is None or where(c.args)]
            return matching[count - 1] if len(matching) >= count else None

        return await self.wait_for(found)

    # --- Socket Mode -------------------------------------------------------------------------

    async def link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": len(self.sockets),
                "connection_info": {"app_id": "A0APP"},
            }
        )
        async with self.changed:
            self.changed.notify_all()
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    data = json.loads(message.data)
                    future = self.acks.get(data.get("envelope_id", ""))
                    if future is not None and not future.done():
                        future.set_result(data)
        finally:
            if ws in self.sockets:
                self.sockets.remove(ws)
        return ws

    async def envelope(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one envelope on the live connection; the bot's acknowledgement."""
        ws = await self.wait_for(lambda: next((s for s in self.sockets if not s.closed), None))
        envelope_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.acks[envelope_id] = future
        await ws.send_json(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind == "interactive",
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        async with asyncio.timeout(WAIT):
            return await future

    @staticmethod
    def event_payload(event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
        return {
            "token": "verification",
            "team_id": TEAM,
            "api_app_id": "A0APP",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }

    async def event(self, event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
        return await self.envelope("events_api", self.event_payload(event, event_id))

    def click_payload(self, user: str, channel: str, ts: str, action_id: str) -> dict[str, Any]:
        message = self.message(channel, ts)
        assert message is not None, f"no message {ts} in {channel}"
        for block in message.get("blocks") or []:
            for element in block.get("elements") or []:
                if element.get("action_id") == action_id:
                    action = {
                        "action_id": action_id,
                        "block_id": block.get("block_id", ""),
                        "value": element.get("value", ""),
                        "type": "button",
                        "action_ts": str(time.time()),
                    }
                    return {
                        "type": "block_actions",
                        "user": {"id": user, "team_id": TEAM},
                        "api_app_id": "A0APP",
                        "team": {"id": TEAM},
                        "container": {"type": "message", "message_ts": ts},
                        "channel": {"id": channel},
                        "message": dict(message),
                        "trigger_id": f"trigger-{uuid.uuid4().hex[:8]}",
                        "response_url": f"http://127.0.0.1:{self.port}/respond",
                        "actions": [action],
                    }
        raise AssertionError(f"no button {action_id} on message {ts}")

    async def click(self, user: str, channel: str, ts: str, action_id: str) -> dict[str, Any]:
        return await self.envelope("interactive", self.click_payload(user, channel, ts, action_id))

    async def submit(
        self, user: str, view: dict[str, Any], state: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        payload = {
            "type": "view_submission",
            "user": {"id": user, "team_id": TEAM},
            "team": {"id": TEAM},
            "api_app_id": "A0APP",
            "trigger_id": f"trigger-{uuid.uuid4().hex[:8]}",
            "view": dict(view, state={"values": state}, team_id=TEAM, type="modal"),
        }
        return await self.envelope("interactive", payload)
