"""The driver the official MCP conformance suite runs against our client.

The suite starts a mock server and runs ``python conformance_client.py <url>`` with
``MCP_CONFORMANCE_SCENARIO`` set; we connect with :class:`bothost.mcp.ClientSession` over
Streamable HTTP, do what the scenario expects, and exit 0 only when every step worked.
Elicitation is answered like a person who accepts the form as offered, so the client's
schema defaults (SEP-1034) fill it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from bothost.mcp.http import HttpTransport
from bothost.mcp.session import ClientSession

SCENARIO_CALLS = {  # scenario -> (tool, arguments)
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
DEADLINE = 30.0


async def accept_as_offered(question):
    return {}


async def run(url: str, scenario: str) -> int:
    log = logging.getLogger("conformance")
    session = ClientSession(
        HttpTransport(url, log=log), name="conformance", log=log, ask=accept_as_offered
    )
    try:
        async with asyncio.timeout(DEADLINE):
            await session.start()
            tools = await session.refresh_tools() if "tools" in session.capabilities else []
            if scenario in SCENARIO_CALLS:
                tool, arguments = SCENARIO_CALLS[scenario]
                if tool not in {t["name"] for t in tools}:
                    log.error("tool %s not offered", tool)
                    return 1
                result = await session.call_tool(tool, arguments)
                print(result.text)
                if result.is_error:
                    return 1
    finally:
        await session.close()
    return 0


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    sys.exit(asyncio.run(run(sys.argv[-1], scenario)))


if __name__ == "__main__":
    main()
