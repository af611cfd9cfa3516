"""The host's one aiohttp application and its listener (``platforms.web``).

Plugins add routes through ``register_routes(app)``; ``app[bothost.http.HOST]`` is the
host. The core serves ``GET /healthz``. A bind address other than loopback requires
``platforms.web.token``, because the web chat gives admin rights to whoever reaches it.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import Any

from aiohttp import web

from bothost.startup import call_register

logger = logging.getLogger(__name__)

HOST: web.AppKey[Any] = web.AppKey("host", object)  # request.app[HOST] is the Host


class HttpError(Exception):
    """The listener cannot start as configured."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpServer:
    def __init__(self, host: Any) -> None:
        self.host = host
        self.app: web.Application | None = None
        self.runner: web.AppRunner | None = None
        self.port: int | None = None
        self.started_at = time.time()

    def build(self) -> web.Application:
        app = web.Application(client_max_size=4 * 1024 * 1024)
        app[HOST] = self.host
        app.router.add_get("/healthz", self.healthz)
        call_register(self.host.pm, "register_routes", app=app)
        self.app = app
        return app

    async def start(self) -> None:
        web_config = self.host.config.platforms.web
        if not is_loopback(web_config.host) and not web_config.token:
            raise HttpError(
                f"platforms.web.host: binding {web_config.host} (not loopback) requires "
                "platforms.web.token"
            )
        self.runner = web.AppRunner(self.build(), access_log=None, handle_signals=False)
        await self.runner.setup()
        site = web.TCPSite(self.runner, web_config.host, web_config.port)
        try:
            await site.start()
        except OSError as exc:
            await self.runner.cleanup()
            self.runner = None
            raise HttpError(f"platforms.web: cannot listen on {web_config.host}:"
                            f"{web_config.port}: {exc.strerror or exc}") from exc
        addresses = self.runner.addresses  # the real port when 0 was asked for
        self.port = int(addresses[0][1]) if addresses else web_config.port
        logger.info("listening on http://%s:%s/", web_config.host, self.port)

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    async def healthz(self, request: web.Request) -> web.Response:
        return web.json_response(await health(self.host))


async def health(host: Any) -> dict[str, Any]:
    """Status per component; used by ``/healthz`` and ``bothost doctor``.

    Components: the store (a query answers), each active platform (its own ``health()``
    when it has one), each MCP server, the tick (running, and the last tick's outcome),
    the event queue (pending and failed counts) and the supervised tasks. ``ok`` is the
    store's, since nothing works without it; the others report and never throw.
    """

    def read(db: Any) -> dict[str, Any]:
        conn = db.conn
        counts = dict(conn.execute("SELECT status, COUNT(*) FROM events"
                                   " WHERE status IN ('pending', 'claimed', 'failed')"
                                   " GROUP BY status").fetchall())
        last = conn.execute("SELECT started_at, finished_at, status, error FROM ticks"
                            " ORDER BY id DESC LIMIT 1").fetchone()
        return {"counts": counts, "last": last}

    try:
        found = await host.store.run(read)
        store: dict[str, Any] = {"ok": True}
    except Exception as exc:
        found = {"counts": {}, "last": None}
        store = {"ok": False, "error": str(exc)}
    platforms = {name: platform_health(p) for name, p in host.active.items()}
    servers = {}
    if host.mcp is not None:
        for s in host.mcp.status():
            healthy = s.state in ("ready", "disabled", "shadowed")
            servers[s.name] = {"ok": healthy, "state": s.state,
                               "error": s.error}
    tick: dict[str, Any] = {"ok": True, "running": host.ticker is not None,
                            "enabled": bool(host.config.tick.enabled)}
    if found["last"]:
        started, finished, status, error = found["last"]
        tick["last"] = {"started_at": started, "finished_at": finished, "status": status,
                        "error": error}
        tick["ok"] = status not in ("failed", "error")
    counts = found["counts"]
    events = {"ok": not counts.get("failed"), "pending": counts.get("pending", 0),
              "claimed": counts.get("claimed", 0), "failed": counts.get("failed", 0)}
    return {"ok": store["ok"], "store": store, "platforms": platforms, "mcp": servers,
            "tick": tick, "events": events, "tasks": host.supervisor.status(),
            "uptime": round(time.time() - host.http.started_at, 1)}


def platform_health(platform: Any) -> dict[str, Any]:
    report = getattr(platform, "health", None)
    if report is None:
        return {"ok": True}
    try:
        return {"ok": True, **report()}
    except Exception as exc:  # a platform's report must not break the health page
        return {"ok": False, "error": str(exc)}
