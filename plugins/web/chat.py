"""The web chat's HTTP side: the page, chatting (plain and streamed), the live stream,
answers to questions, the transcript and the dashboard data.

Every message from here is an admin's (the request passed :mod:`security`: loopback or the
token) on the session ``web:<session>``. ``POST /api/chat`` answers with the whole reply as
JSON for simple clients; ``POST /api/chat/stream`` answers with Server-Sent Events
(``delta``, ``status``, then ``done`` with the reply), which the page reads as the reply is
written. Questions the turn asks arrive on the page's ``GET /api/events`` stream and are
answered with ``POST /api/answer``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from importlib import resources
from typing import Any

from aiohttp import web
from bothost.plugins.web import body, dashboard, feedback, sse
from bothost.plugins.web.platform import WebPlatform
from bothost.plugins.web.rules import RuleRoutes
from bothost.plugins.web.schedules import ScheduleRoutes
from bothost.plugins.web.security import (
    PAGE_HEADERS,
    Access,
    csrf_token,
    same,
    set_page_cookies,
)
from bothost.plugins.web.sessions import SESSION_FORM, valid_session

from bothost.api import HostApi
from bothost.models import Address, IncomingMessage

logger = logging.getLogger(__name__)

MAX_TEXT = 100_000  # characters in one chat message; more is a paste accident
HISTORY = 100  # transcript messages a page loads
CONVERSATIONS = 50  # conversations the page lists, newest first
MAX_COMPLETE_TEXT = 2_000  # characters of a /prompt line completed: a line, not a paste


def static_text(name: str) -> str:
    return (resources.files("bothost.plugins.web") / "static" / name).read_text("utf-8")


class BadRequest(web.HTTPBadRequest):
    def __init__(self, reason: str) -> None:
        super().__init__(text=json.dumps({"error": reason}), content_type="application/json")


json_body = body.json_object  # 400 for what the host's decoding refuses, 413 over the limit


def session_of(value: Any) -> str:
    session = "default" if value is None else value
    if not valid_session(session):
        raise BadRequest(f"session must be {SESSION_FORM}")
    return session


def start_of(value: str | None) -> int | None:
    """``start`` of ``/api/history``: a message id (digits), or absent for the current one."""
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or len(value) > 18:
        raise BadRequest("start must be a conversation's start (a whole number)")
    return int(value)


OAUTH_CALLBACK = "/oauth/callback"  # served by the core's listener (bothost.http.server)


class ChatRoutes:
    def __init__(self, host: HostApi, platform: WebPlatform, access: Access) -> None:
        self.host, self.platform, self.access = host, platform, access

    def add(self, app: web.Application) -> None:
        guard = self.access.guard
        app.router.add_get("/", self.index)
        app.router.add_post("/api/chat", guard(self.chat, writes=True))
        app.router.add_post("/api/chat/stream", guard(self.chat_stream, writes=True))
        app.router.add_post("/api/answer", guard(self.answer, writes=True))
        app.router.add_post("/api/feedback", guard(self.feedback, writes=True))
        app.router.add_get("/api/events", guard(self.events))
        app.router.add_get("/api/history", guard(self.history))
        app.router.add_get("/api/conversations", guard(self.conversations))
        app.router.add_get("/api/prompt/complete", guard(self.complete_prompt))
        app.router.add_get("/api/dashboard", guard(self.dashboard))
        rules = RuleRoutes(self.host)
        app.router.add_get("/api/rules", guard(rules.list))
        app.router.add_post("/api/rules", guard(rules.add, writes=True))
        app.router.add_post("/api/rules/remove", guard(rules.remove, writes=True))
        app.router.add_post("/api/rules/test", guard(rules.test, writes=True))
        jobs = ScheduleRoutes(self.host)
        app.router.add_get("/api/schedules", guard(jobs.list))
        app.router.add_post("/api/schedules/cancel", guard(jobs.cancel, writes=True))
        app.router.add_post("/api/mcp/{name}/login", guard(self.mcp_login, writes=True))

    async def mcp_login(self, request: web.Request) -> web.Response:
        """Begin an OAuth login to a remote MCP server; the URL for the person to open.
        The redirect comes back to this listener as the person's browser reaches it."""
        callback = f"{request.scheme}://{request.host}{OAUTH_CALLBACK}"
        try:
            url = await self.host.start_mcp_login(request.match_info["name"], callback)
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=409, headers=PAGE_HEADERS)
        return web.json_response({"url": url}, headers=PAGE_HEADERS)

    async def index(self, request: web.Request) -> web.StreamResponse:
        token = self.access.token
        offered = request.query.get("token")
        if token is not None and offered is not None and same(offered, token):
            # keep the token out of the address bar and history: cookie, then a clean URL
            redirect = web.HTTPSeeOther("/", headers=PAGE_HEADERS)
            set_page_cookies(redirect, csrf_token(request), token, secure=self.secure(request))
            raise redirect
        self.access.check_reader(request)
        csrf = csrf_token(request)
        html = static_text("index.html").replace("__CSRF__", csrf)
        response = web.Response(text=html, content_type="text/html", headers=PAGE_HEADERS)
        set_page_cookies(response, csrf, token, secure=self.secure(request))
        return response

    def secure(self, request: web.Request) -> bool:
        """Whether cookies get ``Secure``: over HTTPS, or behind a proxy that ends TLS
        (``platforms.web.public_url`` is https, while this listener sees plain http)."""
        public = getattr(self.host.config.platforms.web, "public_url", None) or ""
        return request.secure or public.lower().startswith("https://")

    def message(self, body: dict[str, Any]) -> IncomingMessage:
        session = session_of(body.get("session"))
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BadRequest("text must be a non-empty string")
        if len(text) > MAX_TEXT:
            raise BadRequest(f"text is longer than {MAX_TEXT} characters")
        return IncomingMessage(
            address=Address("web", session),
            text=text,
            user="web",
            user_name="web operator",
            is_admin=True,
        )

    async def complete_prompt(self, request: web.Request) -> web.Response:
        """``GET /api/prompt/complete?text=/prompt files/su``: ``{"values": [...]}``, the
        words that may replace the last word typed (bothost.agent.prompt_completion)."""
        text = request.query.get("text", "")[:MAX_COMPLETE_TEXT]
        return web.json_response({"values": await self.host.complete_prompt(text)})

    async def chat(self, request: web.Request) -> web.Response:
        message = self.message(await json_body(request))
        self.platform.counters["chat", "plain"] += 1
        reply = await self.host.handle_message(message, platform=self.platform)
        return web.json_response(
            {"session": message.address.channel, "reply": reply.text, "outcome": reply.outcome}
        )

    async def chat_stream(self, request: web.Request) -> web.StreamResponse:
        message = self.message(await json_body(request))
        self.platform.counters["chat", "stream"] += 1
        response = await sse.open_stream(request)
        gone = False

        async def emit(event: str, data: Any) -> None:
            nonlocal gone
            if gone:
                return
            try:
                await response.write(sse.frame(event, data))
            except ConnectionResetError:
                gone = True  # the page left; the turn still finishes and is stored

        async def on_text(delta: str) -> None:
            await emit("delta", {"text": delta})

        async def on_status(text: str) -> None:
            await emit("status", {"text": text})

        reply = await self.host.handle_message(
            message, on_text=on_text, on_status=on_status, platform=self.platform
        )
        await emit(
            "done",
            {"session": message.address.channel, "reply": reply.text, "outcome": reply.outcome},
        )
        if not gone:
            await response.write_eof()
        return response

    async def answer(self, request: web.Request) -> web.Response:
        body = await json_body(request)
        session = session_of(body.get("session"))
        question_id = body.get("id")
        if not isinstance(question_id, str):
            raise BadRequest("id must be the question's id")
        if not await self.platform.answer(session, question_id, body.get("answer")):
            raise web.HTTPNotFound(
                text=json.dumps({"error": "no such open question"}), content_type="application/json"
            )
        return web.json_response({"ok": True})

    async def feedback(self, request: web.Request) -> web.Response:
        return await feedback.apply(self.host, await json_body(request))

    async def events(self, request: web.Request) -> web.StreamResponse:
        session = session_of(request.query.get("session"))
        hub = self.platform.hub
        response = await sse.open_stream(request)
        queue = hub.subscribe(session)
        try:
            await response.write(sse.frame("hello", {"session": session}))
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), sse.KEEPALIVE)
                except TimeoutError:
                    await sse.keepalive(response)
                    continue
                if item is None:
                    break
                await response.write(sse.frame(*item))
        except ConnectionResetError:
            pass  # the page closed or reloaded
        finally:
            hub.unsubscribe(session, queue)
        return response

    async def history(self, request: web.Request) -> web.Response:
        """The session's current conversation, or with ``start`` (a listed conversation's)
        an earlier one, as the page showed it live."""
        address = Address("web", session_of(request.query.get("session")))
        start = start_of(request.query.get("start"))
        lines = await self.host.queries.transcript(address, HISTORY, start=start)
        return web.json_response(
            {
                "messages": [
                    {"role": m.role, "text": m.text, "at": m.at, "stopped": m.stopped}
                    for m in lines
                ]
            }
        )

    async def conversations(self, request: web.Request) -> web.Response:
        """The web sessions' conversations, newest first (each session cut at its ``/new``s)."""
        found = await self.host.queries.conversations("web", CONVERSATIONS)
        return web.json_response(
            {
                "conversations": [
                    {
                        "session": c.channel,
                        "start": c.start,
                        "current": c.current,
                        "first": c.first,
                        "started_at": c.started_at,
                        "updated_at": c.updated_at,
                        "messages": c.messages,
                    }
                    for c in found
                ]
            }
        )

    async def dashboard(self, request: web.Request) -> web.Response:
        data = await dashboard.snapshot(self.host)
        data["clients"] = self.platform.hub.clients()
        return web.json_response(data, dumps=lambda v: json.dumps(v, default=str))
