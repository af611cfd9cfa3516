"""The driver the official MCP conformance suite runs against our client.

The suite starts a mock server and runs ``python conformance_client.py <url>`` with
``MCP_CONFORMANCE_SCENARIO`` set; we connect with :class:`bothost.mcp.ClientSession` over
Streamable HTTP, do what the scenario expects, and exit 0 only when every step worked.
Elicitation is answered like a person who accepts the form as offered, so the client's
schema defaults (SEP-1034) fill it.

For the ``auth/*`` scenarios the transport gets bothost's OAuth hook, configured from
``MCP_CONFORMANCE_CONTEXT`` the way a user configures ``mcp.servers.NAME.auth`` (pre-registered
credentials, client credentials, the workload identity JWT of ``auth/wif-*``); the suite's
authorization server approves at once, so the driver plays the person's browser by reading
the redirect's ``Location`` itself. After the tools are listed it calls ``test-tool`` when
offered (the step-up scenarios ask for more scope on ``tools/call``). DPoP needs nothing
here: the ``auth/dpop*`` authorization servers offer it in their metadata.

The 2026-07-28 scenarios each want the client to use what the server offers: the header
scenarios every tool (with the arguments ``MCP_CONFORMANCE_CONTEXT`` names, if any), prompt
and resource; the SEP-2322 one every tool; the schema-preservation one the echo tool, given
the schema the client kept for the other tool.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from urllib.parse import parse_qsl, urlsplit

import aiohttp

from bothost.config import McpAuthConfig
from bothost.mcp.http import HttpTransport
from bothost.mcp.oauth.auth import OAuth
from bothost.mcp.oauth.tokens import MemoryTokens
from bothost.mcp.session import ClientSession

SCENARIO_CALLS = {  # scenario -> (tool, arguments)
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
# scenario -> what it wants used: "tools", "everything" (tools, prompts and resources)
USE_ALL = {
    "http-standard-headers": "everything",
    "http-custom-headers": "tools",
    "http-invalid-tool-headers": "tools",
    "sep-2322-client-request-state": "tools",
}
ECHO_TOOL, ECHOED_TOOL = "json_schema_echo", "json_schema_2020_12_tool"
DEADLINE = 30.0
# the suite checks that a server advertising CIMD gets this URL as the client_id
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://127.0.0.1:8765/oauth/callback"  # never visited: the driver reads it


class FollowRedirect:
    """The person's browser, for an authorization server that approves without asking."""

    redirect_uri = REDIRECT_URI

    async def authorize(self, url: str) -> dict[str, str]:
        timeout = aiohttp.ClientTimeout(total=10)
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.get(url, allow_redirects=False) as resp,
        ):
            location = resp.headers.get("Location", "")
        return dict(parse_qsl(urlsplit(location).query))


def oauth(scenario: str, url: str, log: logging.Logger) -> OAuth | None:
    if not scenario.startswith("auth/"):
        return None
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    grant = "authorization_code"
    if "client-credentials" in scenario:
        grant = "client_credentials"
    elif "cross-app-access" in scenario or "enterprise-managed" in scenario:
        grant = "cross_app_access"  # SEP-990: the suite's old name and its new one
    elif scenario.startswith("auth/wif"):
        grant = "jwt_bearer"  # the workload's identity JWT: the suite hands a valid one
    config = McpAuthConfig(
        grant=grant,
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        private_key=context.get("private_key_pem"),
        signing_algorithm=context.get("signing_algorithm", "ES256"),
        client_metadata_url=CLIENT_METADATA_URL,
        idp_token_endpoint=context.get("idp_token_endpoint"),
        idp_client_id=context.get("idp_client_id"),
        id_token=context.get("idp_id_token"),
        assertion=context.get("valid_jwt"),
    )
    return OAuth(
        "conformance", url, MemoryTokens(), config=config, log=log, authorizer=FollowRedirect()
    )


async def accept_as_offered(question):
    return {}


async def run(url: str, scenario: str) -> int:
    log = logging.getLogger("conformance")
    transport = HttpTransport(url, log=log, auth=oauth(scenario, url, log))
    session = ClientSession(transport, name="conformance", log=log, ask=accept_as_offered)
    try:
        async with asyncio.timeout(DEADLINE):
            await session.start()
            tools = await session.refresh_tools() if "tools" in session.capabilities else []
            if scenario.startswith("auth/") and "test-tool" in {t["name"] for t in tools}:
                result = await session.call_tool("test-tool", {})
                return 1 if result.is_error else 0
            if scenario in USE_ALL:
                return await use_all(session, tools, USE_ALL[scenario] == "everything")
            if scenario == "json-schema-2020-12-preservation":
                kept = next(t["inputSchema"] for t in tools if t["name"] == ECHOED_TOOL)
                result = await session.call_tool(ECHO_TOOL, {"schema": kept})
                return 1 if result.is_error else 0
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


async def use_all(session: ClientSession, tools: list[dict], everything: bool) -> int:
    """Call every tool kept (with the context's arguments where it names them), then list
    and use each prompt and resource; 1 when any call failed."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    calls = [(c["name"], c.get("arguments") or {}) for c in context.get("toolCalls", [])]
    calls = calls or [(t["name"], placeholder_arguments(t)) for t in tools]
    failed = 0
    for name, arguments in calls:
        failed += (await session.call_tool(name, arguments)).is_error
    if everything:
        for prompt in (await session.request("prompts/list")).get("prompts", []):
            await session.request("prompts/get", {"name": prompt["name"]})
        for resource in (await session.request("resources/list")).get("resources", []):
            await session.request("resources/read", {"uri": resource["uri"]})
    return 1 if failed else 0


def placeholder_arguments(tool: dict) -> dict:
    """A string for each required argument (the scenarios' tools take strings or nothing)."""
    return {name: "x" for name in tool.get("inputSchema", {}).get("required", [])}


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    sys.exit(asyncio.run(run(sys.argv[-1], scenario)))


if __name__ == "__main__":
    main()
