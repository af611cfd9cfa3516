"""The host's one aiohttp application and its listener (core's ``http:`` section).

Plugins add routes through ``register_routes(app)``; ``app[bothost.api.HOST]`` is the
host. The core serves ``GET /healthz``, which names no file or directory (see
:func:`hide_paths`): no answer the listener gives without the token shows where the host
keeps its files (a path names the account running it). A bind address other than loopback requires
``http.token`` (:func:`bothost.config.check.check_serving`, a config error).
The listening socket is the host's own (not an aiohttp site) so that its protocol factory
is :class:`bothost.http.listener.ConnectionGuard`'s: header and body deadlines and a connection
cap keep clients that stall from taking the listener down. A plugin's direct routes
(:func:`bothost.api.direct_post`) are served by :mod:`bothost.http.direct` before the app.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import logging
import os
import re
import time
from typing import Any

from aiohttp import web

from bothost import jsondecode
from bothost.api import HOST, app_key  # HOST: kept importable from here for older plugins
from bothost.config.check import check_serving
from bothost.config.http import spelling
from bothost.crosshost import lease
from bothost.crosshost.leadership import LEADER_LOCK
from bothost.hooks.startup import call_register
from bothost.http import direct
from bothost.http.listener import BACKLOG, AcceptErrors, ConnectionGuard, Throttle
from bothost.mcp.oauth.links import START_PATH, start_route
from bothost.mcp.oauth.login import CALLBACK_PATH, callback_route
from bothost.mcp.placement import STANDBY
from bothost.store.errors import StoreBusyError, database_errors
from bothost.store.health import RETRY_AFTER, one_line, storage_failure


def store_errors() -> tuple[type[Exception], ...]:
    """What may mean "the store cannot write" (evaluated per exception: see store.errors)."""
    return (*database_errors(), OSError)


logger = logging.getLogger(__name__)

HEALTH_TIMEOUT = 5.0  # seconds for the store to answer /healthz; longer is a failure itself
RETRY_HEADERS = {"Retry-After": str(RETRY_AFTER)}
# What to do when the listener cannot bind, by errno: the OS's reason alone names no setting
LISTEN_FIXES = {
    errno.EADDRINUSE: "; another program (or another bothost run) holds the port: stop it, "
    "or set {port} to a free port",
    errno.EACCES: "; ports below 1024 need privileges: set {port} above 1023",
    errno.EADDRNOTAVAIL: "; no interface has that address: check {host}",
}
REFUSAL_LOG_INTERVAL = 10.0  # seconds between log lines about writes refused with 503
# An absolute file path inside an answer's text (not a URL's path: that follows "://" or a
# host name); ":" and brackets end it, as they end a path in "PATH: error" messages.
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])/(?:[^\s/'\"(),;:\[\]]+/)*([^\s/'\"(),;:\[\]]+)")


def hide_paths(value: Any) -> Any:
    """``value`` (text, or a JSON-able dict or list of it) with each absolute path cut to
    ``…/`` and its last part: ``/home/ann/.bothost/bothost.db`` becomes ``…/bothost.db``."""
    if isinstance(value, str):
        return ABSOLUTE_PATH.sub(r"…/\1", value) if "/" in value else value
    if isinstance(value, dict):
        return {key: hide_paths(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [hide_paths(inner) for inner in value]
    return value


class HttpError(Exception):
    """The listener cannot start as configured."""


class HttpServer:
    def __init__(self, host: Any) -> None:
        self.host = host
        self.app: web.Application | None = None
        self.runner: web.AppRunner | None = None
        self.port: int | None = None
        self.started_at = time.time()
        self.guard = ConnectionGuard()
        self.store_failures = StoreFailures()
        self.listener: asyncio.Server | None = None
        self.answer_headers: dict[str, str] = {}  # every answer's, declared by plugins

    def build(self) -> web.Application:
        app = web.Application(
            client_max_size=jsondecode.MAX_BYTES,  # a request body, JSON or not
            middlewares=[self.guard.middleware, self.store_failures.middleware],
        )
        app[HOST] = self.host
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get(CALLBACK_PATH, callback_route)  # OAuth logins of MCP servers
        app.router.add_get(START_PATH, start_route)  # the one-time links admins are sent
        call_register(self.host.pm, "register_routes", app=app)
        self.answer_headers = dict(app.get(app_key("ANSWER_HEADERS"), {}))
        app.on_response_prepare.append(self.add_answer_headers)
        self.app = app
        return app

    async def add_answer_headers(self, request: web.Request, response: web.StreamResponse) -> None:
        """``on_response_prepare``: the headers plugins declared for every answer
        (:func:`bothost.api.answer_headers`), where the handler set none of that name."""
        for name, value in self.answer_headers.items():
            response.headers.setdefault(name, value)

    async def start(self) -> None:
        web_config = self.host.config.http
        check_serving(self.host.config)  # `run` checked it first; this is for a host built in code
        self.runner = web.AppRunner(
            self.build(), handle_signals=False, **self.guard.handler_options()
        )
        await self.runner.setup()
        assert self.runner.server is not None and self.app is not None
        self.guard.attach(self.runner.server, self.answer_headers)
        # direct routes (the signed webhook events) are served past the app's machinery
        direct.install(self.runner.server, self.app, self.guard, self.store_failures.refusal)
        loop = asyncio.get_running_loop()
        AcceptErrors.install(loop, self.connection_status)
        try:
            self.listener = await loop.create_server(
                self.guard.factory, web_config.host, web_config.port, backlog=BACKLOG
            )
        except OSError as exc:
            await self.runner.cleanup()
            self.runner = None
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            config = self.host.config
            fix = LISTEN_FIXES.get(exc.errno, "") if exc.errno else ""
            fix = fix.format(port=spelling(config, "port"), host=spelling(config, "host"))
            section = spelling(config, "port").rsplit(".", 1)[0]  # http, or the alias
            raise HttpError(
                f"{section}: cannot listen on {web_config.host}:{web_config.port}: {reason}{fix}"
            ) from exc
        sockets = self.listener.sockets  # the real port when 0 was asked for
        self.port = int(sockets[0].getsockname()[1]) if sockets else web_config.port
        logger.info(
            "listening on http://%s:%s/ (at most %d connections)",
            web_config.host,
            self.port,
            self.guard.cap,
        )

    def connection_status(self) -> str:
        open_now = self.guard.open_count() if self.guard.server is not None else 0
        return f"{open_now} connections open, cap {self.guard.cap}"

    async def stop(self) -> None:
        if any(self.guard.counts.values()):
            logger.info(
                "HTTP listener: %s",
                ", ".join(
                    f"{n} {what.replace('_', ' ')}" for what, n in self.guard.counts.items() if n
                ),
            )
        self.guard.close()
        if self.listener is not None:
            self.listener.close()  # no new connections; aiohttp closes the open ones
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None
        if self.listener is not None:
            try:
                async with asyncio.timeout(5):  # aiohttp has closed its connections by now
                    await self.listener.wait_closed()
            except TimeoutError:
                logger.warning("HTTP listener: connections still open 5 s after stopping")
            self.listener = None

    async def healthz(self, request: web.Request) -> web.Response:
        report = hide_paths(await health(self.host))
        if not self.sees_details(request):
            report = summary(report)
        if report["ok"]:
            return web.json_response(report)
        # the store cannot write: monitors see 503, and senders learn when to come back
        return web.json_response(report, status=503, headers=RETRY_HEADERS)

    def sees_details(self, request: web.Request) -> bool:
        """Whether ``/healthz`` may show everything: always without a token (only loopback
        is served then), else only to a caller presenting it as a bearer token."""
        token = self.host.config.http.token
        if not token:
            return True
        auth = request.headers.get("Authorization", "")
        presented = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        return hmac.compare_digest(presented.encode(), token.encode())


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """What a probe without the token learns: each part's ``ok`` (and an MCP server's
    state), never the database's path, the leader's host, or an error's text (which can
    name internal hosts, users and paths)."""

    def part(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if "ok" in value:
            return {k: value[k] for k in ("ok", "state") if k in value}
        return {name: part(inner) for name, inner in value.items()}

    return {key: part(value) for key, value in report.items()}


class StoreFailures:
    """A request that failed because the store cannot write, or whose store job was withdrawn
    unstarted while the store was busy (:class:`StoreBusyError`), gets 503 and ``Retry-After``.

    A webhook sender retries that later (a 500 would say "our bug"); nothing was
    acknowledged, so nothing is lost. A full disk fails every write, so the log gets the
    first refusal and then one line per :data:`REFUSAL_LOG_INTERVAL` with a count.
    """

    def __init__(self) -> None:
        self.lines = Throttle(REFUSAL_LOG_INTERVAL)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            return await handler(request)
        except Exception as exc:
            response = self.refusal(request, exc)
            if response is None:
                raise
            return response

    def refusal(self, request: web.BaseRequest, exc: Exception) -> web.Response | None:
        """The 503 for ``exc`` when it means the store cannot write (or was busy); None for
        any other exception."""
        if isinstance(exc, StoreBusyError):  # a job withdrawn unstarted (start_within)
            self.log(f"{request.method} {request.path}", "busy: a job was withdrawn unstarted")
            return web.json_response(
                {"error": hide_paths(f"{exc}; retry later")}, status=503, headers=RETRY_HEADERS
            )
        if not isinstance(exc, store_errors()) or not storage_failure(exc):
            return None
        reason = one_line(exc)
        self.log(f"{request.method} {request.path}", reason)
        return web.json_response(
            {"error": f"the store cannot write right now ({hide_paths(reason)}); retry later"},
            status=503,
            headers=RETRY_HEADERS,
        )

    def log(self, what: str, reason: str) -> None:
        unlogged = self.lines.due()
        if unlogged is not None:
            logger.warning(
                "%s: the store cannot write (%s): %d request(s) answered 503 "
                "since the last such line",
                what,
                reason,
                unlogged + 1,
            )


async def health(host: Any) -> dict[str, Any]:
    """Status per component; used by ``/healthz`` and ``bothost doctor``.

    Components: the store (whether it can write: see :mod:`bothost.store.health`), each
    active platform (its own ``health()``
    when it has one), each MCP server, the tick (running, and the last tick's outcome),
    the event queue (pending and failed counts, and ``held``: the sources at
    ``tick.max_pending_per_source``, which make ``events.ok`` false, not the whole answer:
    the host serves, those producers wait) and the supervised tasks. ``ok`` is the
    store's, since nothing works without it; the others report and never throw.
    """

    def read(db: Any) -> dict[str, Any]:
        counts = dict(
            db.execute(
                "SELECT status, COUNT(*) FROM events"
                " WHERE status IN ('pending', 'claimed', 'failed')"
                " GROUP BY status"
            ).fetchall()
        )
        last = db.execute(
            "SELECT started_at, finished_at, status, error FROM ticks ORDER BY id DESC LIMIT 1"
        ).fetchone()
        now = time.time()
        leader = lease.holder(db, LEADER_LOCK, now)
        ticking = lease.holder(db, lease.TICK_LOCK, now)
        queue = getattr(host, "events", None)  # counted again: a tick may have made room
        held = queue.bounds.refresh(db) if queue is not None else {}
        return {"counts": counts, "last": last, "leader": leader, "ticking": ticking, "held": held}

    store: dict[str, Any]
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT):
            found = await host.store.run(read)
            store = await host.store.run(host.store.probe)
    except TimeoutError:
        found = {"counts": {}, "last": None}
        store = {"ok": False, "error": f"the store did not answer within {HEALTH_TIMEOUT:g} s"}
    except Exception as exc:  # the health page reports what failed; it never fails itself
        found = {"counts": {}, "last": None}
        store = {**host.store.health.report(), "ok": False, "error": one_line(exc)}
    # which kind of database; not which one: the file's path names the account running the
    # host, a server's URL an internal host (`bothost doctor` and `db check` say which)
    store["backend"] = host.store.dialect
    platforms = {name: platform_health(p) for name, p in host.active.items()}
    servers = {}
    if host.mcp is not None:
        for s in host.mcp.status():
            healthy = s.state in ("ready", "disabled", "shadowed", STANDBY)
            servers[s.name] = {"ok": healthy, "state": s.state, "error": s.error}
    tick: dict[str, Any] = {
        "ok": True,
        "running": host.ticker is not None,
        "enabled": bool(host.config.tick.enabled),
        # the leader host's process (host:pid:id; bothost.crosshost.leadership), whether it is
        # this one, and the process ticking right now (the tick lease), if any
        "leader": found.get("leader"),
        "leading": bool(getattr(getattr(host, "leadership", None), "leading", False)),
        "ticking": found.get("ticking"),
    }
    if found["last"]:
        started, finished, status, error = found["last"]
        tick["last"] = {
            "started_at": started,
            "finished_at": finished,
            "status": status,
            "error": error,
        }
        tick["ok"] = status not in ("failed", "error")
    counts = found["counts"]
    held = found.get("held", {})
    events = {
        "ok": not counts.get("failed") and not held,
        "held": held,
        "pending": counts.get("pending", 0),
        "claimed": counts.get("claimed", 0),
        "failed": counts.get("failed", 0),
    }
    return {
        "ok": store["ok"],
        "store": store,
        "platforms": platforms,
        "mcp": servers,
        "tick": tick,
        "events": events,
        "crosshost": host.crosshost.health(),  # whether notices from other hosts arrive
        "tasks": host.supervisor.status(),
        # a config edit not applied: its problem, or the keys that wait for a restart
        "config": host.reload_status.to_dict(),
        "uptime": round(time.time() - host.http.started_at, 1),
    }


def platform_health(platform: Any) -> dict[str, Any]:
    report = getattr(platform, "health", None)
    if report is None:
        return {"ok": True}
    try:
        return {"ok": True, **report()}
    except Exception as exc:  # a platform's report must not break the health page
        return {"ok": False, "error": str(exc)}
