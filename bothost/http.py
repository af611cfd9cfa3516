"""The host's one aiohttp application and its listener (``platforms.web``).

Plugins add routes through ``register_routes(app)``; ``app[bothost.http.HOST]`` is the host. The core
serves ``GET /healthz``. A bind address other than loopback requires
``platforms.web.token``, because the web chat gives admin rights to whoever reaches it.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from typing import Any

from aiohttp import web

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
        for impl in reversed(self.host.pm.hook.register_routes.get_hookimpls()):
            impl.function(app=app)
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
        sockets = site._server.sockets if site._server else []  # noqa: SLF001 — the real port
        self.port = sockets[0].getsockname()[1] if sockets else web_config.port
        logger.info("listening on http://%s:%s/", web_config.host, self.port)

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    async def healthz(self, request: web.Request) -> web.Response:
        return web.json_response(await health(self.host))


async def health(host: Any) -> dict[str, Any]:
    """Status per component; used by ``/healthz`` and ``bothost doctor``."""
    try:
        await host.store.run(lambda db: db.execute("SELECT 1").fetchone())
        store = {"ok": True}
    except Exception as exc:
        store = {"ok": False, "error": str(exc)}
    platforms = {name: {"ok": True} for name in host.active}
    servers = {}
    if host.mcp is not None and hasattr(host.mcp, "status"):
        for s in host.mcp.status():
            servers[s.name] = {"ok": s.state in ("ready", "disabled"), "state": s.state,
                               "error": s.error}
    tick = {"ok": True, "running": host.ticker is not None}
    return {"ok": store["ok"], "store": store, "platforms": platforms, "mcp": servers,
            "tick": tick, "tasks": host.supervisor.status()}
