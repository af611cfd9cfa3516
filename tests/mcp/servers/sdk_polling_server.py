"""An official Python SDK 2.x server (``MCPServer``) that drops a call's SSE stream midway.

It runs the SDK's Streamable HTTP transport with an in-memory event store, so it keeps what
it sends and replays it after the ``Last-Event-ID`` a GET names, and its tools call
``ctx.close_sse_stream()`` (the SDK's way to make a client poll during a long call): one
reports progress and closes its stream halfway, one closes its stream and then asks a
question. ``python sdk_polling_server.py PORT`` serves 127.0.0.1:PORT/mcp.
"""

from __future__ import annotations

import itertools
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from pydantic import BaseModel

RETRY_MS = 100  # the `retry:` of the priming event: how soon the client comes back


class MemoryStore(EventStore):
    """Every event, in order, with the stream it went on."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, object]] = []
        self.ids = itertools.count(1)

    async def store_event(self, stream_id, message):  # type: ignore[no-untyped-def]
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback: EventCallback):  # type: ignore[no-untyped-def]
        stream = next((s for e, s, _ in self.events if e == last_event_id), None)
        if stream is None:
            return None
        after = False
        for event_id, stream_id, message in self.events:
            if after and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))  # type: ignore[arg-type]
            after = after or event_id == last_event_id
        return stream


server = MCPServer("sdk-polling")


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress, and drops its stream after the second step."""
    for step in range(steps):
        await ctx.report_progress(step, steps, f"step {step}")
        if step == 1:
            await ctx.close_sse_stream()
        await anyio.sleep(0.05)
    return f"counted to {steps}"


class City(BaseModel):
    city: str


@server.tool()
async def ask_later(ctx: Context) -> str:
    """Drops its stream, then asks which city."""
    await ctx.close_sse_stream()
    await anyio.sleep(0.05)
    result = await ctx.elicit("Which city?", City)
    data = getattr(result, "data", None)
    return f"city: {data.city if data is not None else result.action}"


if __name__ == "__main__":
    app = server.streamable_http_app(event_store=MemoryStore(), retry_interval=RETRY_MS)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
