"""The small kit the bundled MCP servers (weather, ssh, gmail, gcal) are written on.

It owns the MCP server side of the protocol so each server module holds only its tools and
watchers. A server is a `Server`, decorated functions, and a `main()`::

    from bothost.mcp_servers.kit import Context, Outbox, Server, ToolError

    server = Server("weather", version="0.1.0", instructions="Weather by place name.")

    @server.tool(
        annotations={"readOnlyHint": True, "openWorldHint": True},
        capabilities={"private": False, "untrusted": True, "egress": "none",
                      "destructive": False},
        output_schema=None,
    )
    async def current(location: str, units: str = "metric", ctx: Context | None = None) -> str:
        \"\"\"Current conditions at a place.

        Args:
            location: A place name or "lat,lon".
        \"\"\"
        raise ToolError(f"Unknown place {location!r}")

    @server.watcher(interval_env="WEATHER_POLL_SECONDS", default_interval=600)
    async def watch(server: Server) -> None:
        outbox = Outbox(server.notify)  # an event counts as sent only once a client got it
        if await outbox.send("event/weather_alert", {"id": "…", "summary": "…",
                                                     "severity": "warning", "occurred_at": "…"}):
            ...  # only now remember it as sent

    def main() -> None:
        server.run()

Tools: the input schema comes from type hints (str, int, float, bool, list[X], dict,
Literal[…], X | None; a default makes a parameter optional) and the docstring (first
paragraph → description, `Args:` → parameter descriptions). A parameter named `ctx` gets
the call's `Context` (`elicit`, `progress`, `log`). Every tool declares its bothost
`capabilities`, sent as `_meta["bothost/capabilities"]`. A returned dict becomes
`structuredContent` (plus a JSON text mirror) when `output_schema` is given; `ToolError`
becomes an `isError` result; any other exception an `isError` result with a short message
and a traceback on stderr.

Protocol: JSON-RPC 2.0 over newline-delimited stdio (`server.run()`), or Streamable HTTP
with Host/Origin checks (`--http HOST:PORT`, path `/mcp`). Revisions 2026-07-28 (stateless:
`server/discover`, per-request `_meta`, events on `subscriptions/listen`), 2025-11-25,
2025-06-18, 2025-03-26, 2024-11-05. Requests run concurrently; unknown methods get -32601
at once; `notifications/cancelled` cancels a running call; logs go to stderr only.
See docs/servers/kit.md.
"""

from .context import Context
from .modern import STATELESS_PROTOCOLS
from .server import Server
from .session import EVENTS_CAPABILITY, LATEST_PROTOCOL, SUPPORTED_PROTOCOLS, Session
from .tool import CAPABILITIES_META, Tool, ToolError
from .watchers import Notify, Outbox

__all__ = [
    "CAPABILITIES_META",
    "EVENTS_CAPABILITY",
    "LATEST_PROTOCOL",
    "STATELESS_PROTOCOLS",
    "SUPPORTED_PROTOCOLS",
    "Context",
    "Notify",
    "Outbox",
    "Server",
    "Session",
    "Tool",
    "ToolError",
]
