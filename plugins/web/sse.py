"""Writing Server-Sent Events on an aiohttp response (the page's live channel).

One event is ``event: <name>`` plus one ``data:`` line of JSON; a comment line keeps idle
connections open through proxies. A write to a page that went away raises
``ConnectionResetError``; callers treat it as the end of the stream.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

KEEPALIVE = 15.0  # seconds between comment lines on an idle stream (proxies cut at ~60 s)


def frame(event: str, data: Any) -> bytes:
    text = json.dumps(data, ensure_ascii=False, default=str)
    return f"event: {event}\ndata: {text}\n\n".encode()


async def open_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",  # nginx would otherwise hold the deltas back
        }
    )
    await response.prepare(request)
    return response


async def keepalive(response: web.StreamResponse) -> None:
    await response.write(b": keepalive\n\n")
