"""Running the host: ``bothost run`` (until a signal) and ``bothost chat`` (the terminal).

``bothost chat`` talks through the console platform the console plugin registers (found by
name, like any platform: the core imports no plugin), attached to the host without being
started, since this command reads the terminal itself.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from typing import Any

from bothost.configschema import ConfigError
from bothost.logs import setup as setup_logging

logger = logging.getLogger(__name__)


async def serve(host: Any, verbose: int = 0) -> int:
    """Start everything configured and stay up until SIGINT or SIGTERM; the exit status."""
    setup_logging(host.config, host.home, verbose)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await host.start()
    except Exception as exc:
        print(f"bothost: {exc}", file=sys.stderr)
        await host.stop()
        return 1
    port = host.http.port
    if port:  # listening means platforms.web was declared
        print(
            f"bothost is running: http://{host.config.platforms.web.host}:{port}/  "
            "(Ctrl-C to stop)",
            file=sys.stderr,
            flush=True,
        )
    else:
        print("bothost is running (Ctrl-C to stop)", file=sys.stderr, flush=True)
    await stop.wait()
    print("bothost: stopping", file=sys.stderr, flush=True)
    await host.stop()
    return 0


async def chat(host: Any, message: str | None) -> None:
    """One message (``-m``) or an interactive conversation in the terminal."""
    console = host.platforms.get("console")
    if console is None:
        raise ConfigError(
            "plugins.disabled: bothost chat talks through the console plugin; "
            "enable it to chat in the terminal"
        )
    await host.start(serve_http=False, platforms=False, tick=False)
    if host.mcp is not None:  # their tools are missing from this conversation: say so
        for status in host.mcp.not_ready():
            why = f": {status.error}" if status.error else ""
            print(
                f"bothost: MCP server {status.name} not ready ({status.state}{why}); "
                "its tools are not listed",
                file=sys.stderr,
                flush=True,
            )
    console.bind(host)
    try:
        if message is not None:
            await console.converse(message)
            return
        while True:
            try:
                line = await asyncio.to_thread(input, "you> ")
            except EOFError:
                break
            if line.strip() in ("exit", "quit"):
                break
            if line.strip():
                await console.converse(line)
    finally:
        await host.stop()
