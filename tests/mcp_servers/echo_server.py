"""A tiny MCP server on the kit, for tests: one tool per kit feature.

Run it as `python tests/mcp_servers/echo_server.py` (stdio) or with `--http HOST:PORT`.
With ECHO_WATCH=1 its watcher pushes one `event/echo_tick` per poll
(`ECHO_POLL_SECONDS`, default 3600: effectively once, at start-up).
"""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from bothost.mcp_servers.kit import Context, Server, ToolError

# ECHO_INSTRUCTIONS lets a test choose what `initialize` carries (escaping, length).
INSTRUCTIONS = os.environ.get("ECHO_INSTRUCTIONS", "Echoes things back, for tests.")
server = Server("echo", version="1.0.0", instructions=INSTRUCTIONS)

PURE = {"private": False, "untrusted": False, "egress": "none", "destructive": False}
SUM_SCHEMA = {
    "type": "object",
    "properties": {
        "sum": {"type": "number"},
        "terms": {"type": "array", "items": {"type": "number"}},
    },
    "required": ["sum"],
}


@server.tool(annotations={"readOnlyHint": True, "openWorldHint": False}, capabilities=PURE)
async def echo(text: str, times: int = 1, shout: bool = False) -> str:
    """Repeat a text.

    Args:
        text: What to repeat.
        times: How many times.
        shout: Upper-case it.
    """
    out = " ".join([text] * times)
    return out.upper() if shout else out


@server.tool(capabilities=PURE, output_schema=SUM_SCHEMA, annotations={"readOnlyHint": True})
async def add(a: float, b: float, more: list[float] | None = None) -> dict:
    """Add numbers; the result is structured."""
    terms = [a, b, *(more or [])]
    return {"sum": sum(terms), "terms": terms}


@server.tool(capabilities=PURE)
async def fail(message: str, kind: Literal["tool", "bug"] = "tool") -> str:
    """Fail on purpose: `tool` raises ToolError, `bug` raises RuntimeError."""
    if kind == "tool":
        raise ToolError(message)
    raise RuntimeError(message)


@server.tool(capabilities=PURE)
async def ask(question: str, ctx: Context, timeout: float = 10) -> str:
    """Ask the user a question through elicitation."""
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    content = await ctx.elicit(question, schema, timeout=timeout)
    if content is None:
        return "no answer"
    return f"answer: {content.get('answer')}"


@server.tool(capabilities=PURE)
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress every tenth of the time."""
    for step in range(10):
        await ctx.progress(step, 10, f"step {step}")
        await asyncio.sleep(seconds / 10)
    await ctx.log("info", "slow finished")
    return f"slept {seconds}"


@server.tool(capabilities=PURE)
async def announce(summary: str) -> str:
    """Push an `event/echo` notification to the client."""
    sent = await server.notify(
        "event/echo",
        {
            "id": summary,
            "summary": summary,
            "severity": "info",
            "occurred_at": "2026-01-01T00:00:00Z",
        },
    )
    return f"sent to {sent}"


@server.tool(capabilities=PURE)
async def stray_output() -> str:
    """Write to stdout behind the protocol's back (print and the raw descriptor)."""
    print("stray print")
    os.write(1, b"stray bytes\n")
    return "wrote"


@server.watcher(interval_env="ECHO_POLL_SECONDS", default_interval=3600)
async def tick(server: Server) -> None:
    if os.environ.get("ECHO_WATCH") != "1":
        return
    state = server.state_dir() / "ticks"
    count = int(state.read_text()) + 1 if state.exists() else 1
    state.write_text(str(count))
    await server.notify(
        "event/echo_tick",
        {
            "id": f"tick-{count}",
            "summary": f"tick {count}",
            "severity": "info",
            "occurred_at": "2026-01-01T00:00:00Z",
        },
    )


def main() -> None:
    server.run()


if __name__ == "__main__":
    main()
