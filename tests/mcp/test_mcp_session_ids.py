"""Session bookkeeping against a scripted in-memory transport: ids, cancellation, closing."""

from __future__ import annotations

import asyncio
import logging

from mcp_helpers import wait_for

from bothost.mcp.session import ClientSession


class ScriptedTransport:
    """Answers initialize; records everything else; lets the test inject messages."""

    pid = None
    on_session_lost = None

    def __init__(self) -> None:
        self.sent: list[dict] = []

    async def start(self, on_message, on_close) -> None:
        self.deliver, self.close_with = on_message, on_close

    async def send(self, message: dict, headers: dict | None = None) -> None:
        self.sent.append(message)
        if message.get("method") == "server/discover":  # an older server: no such method
            error = {"code": -32601, "message": "Method not found"}
            self.deliver({"jsonrpc": "2.0", "id": message["id"], "error": error}, None)
        if message.get("method") == "initialize":
            self.deliver(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "scripted", "version": "0"},
                    },
                },
                None,
            )

    def negotiated(self, version: str) -> None:
        pass

    async def opened(self) -> None:
        pass

    def abandoned(self, request_id) -> None:
        pass

    async def close(self) -> None:
        self.close_with("closed by the host")


async def started() -> tuple[ClientSession, ScriptedTransport]:
    transport = ScriptedTransport()
    session = ClientSession(transport, name="scripted", log=logging.getLogger("scripted"))
    await session.start()
    return session, transport


async def test_a_stringified_id_still_finds_its_request():
    session, transport = await started()
    call = asyncio.create_task(session.request("ping"))
    await wait_for(lambda: transport.sent[-1].get("method") == "ping")
    transport.deliver({"jsonrpc": "2.0", "id": str(transport.sent[-1]["id"]), "result": {}}, None)
    assert await call == {}
    await session.close()


async def test_server_cancels_its_own_pending_request():
    async def never(question):
        await asyncio.Event().wait()

    session, transport = await started()
    session.ask = never
    transport.deliver(
        {
            "jsonrpc": "2.0",
            "id": "q1",
            "method": "elicitation/create",
            "params": {"message": "?", "requestedSchema": {}},
        },
        None,
    )
    await wait_for(lambda: "q1" in session.inbound._handlers)
    transport.deliver(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "q1"}}, None
    )
    await wait_for(lambda: "q1" not in session.inbound._handlers)
    answers = [m for m in transport.sent if m.get("id") == "q1"]
    assert answers == []  # a cancelled request is never answered
    await session.close()


async def test_caller_giving_up_sends_cancelled():
    session, transport = await started()
    call = asyncio.create_task(session.call_tool("slow"))
    await wait_for(lambda: transport.sent[-1].get("method") == "tools/call")
    call.cancel()
    await wait_for(lambda: transport.sent[-1].get("method") == "notifications/cancelled")
    assert transport.sent[-1]["params"]["requestId"] == transport.sent[-2]["id"]
    await session.close()
