"""A Streamable HTTP MCP server that can be killed and started again under a running client.

``python restart_server.py FD STATE`` serves ``/mcp`` on the listening socket FD (handed
down by the test, as systemd's socket activation does, so a connection made while the
server is down waits in the socket's backlog for the next run instead of being refused).
It pushes numbered ``event/n`` notifications on each session's GET stream, and keeps its
count in the file STATE (a line per event), so a second run goes on where the first
stopped. Sessions live in memory only: after a restart every session id is unknown, and a
request or GET naming one is answered ``RESTART_UNKNOWN`` (400 with the TypeScript SDK
examples' JSON-RPC body "Bad Request: No valid session ID provided", or 404).

``RESTART_STORE=1`` makes it resumable: every event gets an ``id:`` and is written to
STATE whether or not a stream is open, and a GET with ``Last-Event-ID`` is first sent the
events after that id (a restarted server with an event store on disk); a run that finds
events on disk first makes ``RESTART_BACKLOG`` more before it serves anyone (what happened
while it was down), which only such a replay can bring to a client. Without a store an
event is made only while some GET stream is open, so none is ever lost by the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import uuid
from pathlib import Path

from aiohttp import web

UNKNOWN = int(os.environ.get("RESTART_UNKNOWN", "400"))
STORE = os.environ.get("RESTART_STORE") == "1"
POLL = float(os.environ.get("RESTART_POLL_SECONDS", "0.05"))
TOTAL = int(os.environ.get("RESTART_TOTAL", "5000"))  # the server stops making events here
RETRY_MS = int(os.environ.get("RESTART_RETRY_MS", "200"))  # the GET stream's `retry:`
BACKLOG = int(os.environ.get("RESTART_BACKLOG", "0"))


class Pusher:
    """Sessions, their GET streams and the numbered events (see module docstring)."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.sessions: set[str] = set()
        self.streams: dict[str, web.StreamResponse] = {}
        self.count = len(state.read_text().splitlines()) if state.exists() else 0

    def refused(self, request: web.Request) -> web.Response | None:
        session = request.headers.get("Mcp-Session-Id")
        if session in self.sessions:
            return None
        message = "Bad Request: No valid session ID provided" if UNKNOWN == 400 else "Not Found"
        body = {"jsonrpc": "2.0", "error": {"code": -32000, "message": message}, "id": None}
        return web.json_response(body, status=UNKNOWN)

    async def post(self, request: web.Request) -> web.Response:
        message = await request.json()
        method = message.get("method")
        if method == "initialize":
            session = uuid.uuid4().hex
            self.sessions.add(session)
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "restart", "version": "1.0.0"},
            }
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            return web.json_response(answer, headers={"Mcp-Session-Id": session})
        if refused := self.refused(request):
            return refused
        if "id" not in message:
            return web.Response(status=202)
        result = {"tools": []} if method == "tools/list" else {}
        return web.json_response({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def get(self, request: web.Request) -> web.StreamResponse:
        if refused := self.refused(request):
            return refused
        session = request.headers["Mcp-Session-Id"]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f"retry: {RETRY_MS}\n\n".encode())
        last = request.headers.get("Last-Event-ID")
        if STORE and last is not None and last.isdigit():
            for n in range(int(last) + 1, self.count + 1):
                await response.write(event(n))
        self.streams[session] = response
        try:
            await asyncio.Event().wait()  # open until the client goes or the server is killed
        finally:
            self.streams.pop(session, None)
        return response

    async def push(self) -> None:
        while self.count < TOTAL:
            await asyncio.sleep(POLL)
            if STORE or self.streams:
                await self.make()

    async def make(self) -> None:
        """One more event: on disk, then on every open stream."""
        self.count += 1
        with self.state.open("a") as state:
            state.write(f"{self.count}\n")
        for session, stream in list(self.streams.items()):
            try:
                await stream.write(event(self.count))
            except ConnectionError:
                self.streams.pop(session, None)


def event(n: int) -> bytes:
    note = {"jsonrpc": "2.0", "method": "event/n", "params": {"id": str(n), "n": n}}
    lead = f"id: {n}\n" if STORE else ""
    return f"{lead}event: message\ndata: {json.dumps(note)}\n\n".encode()


async def main(fd: int, state: Path) -> None:
    pusher = Pusher(state)
    if STORE and pusher.count:
        for _ in range(BACKLOG):
            await pusher.make()
    app = web.Application()
    app.router.add_post("/mcp", pusher.post)
    app.router.add_get("/mcp", pusher.get)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.SockSite(runner, socket.socket(fileno=fd)).start()
    print("serving", flush=True)
    await pusher.push()
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), Path(sys.argv[2])))
