"""What ``bothost doctor`` asks outside the config: the model's endpoint and the web port.

Each probe has a short deadline and returns a problem as a line of text (``None`` when all
is well), so doctor can report it next to the others instead of failing on it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import json
import socket
import urllib.error
import urllib.request
from typing import Any

from bothost.llm.base import ChatRequest, LlmError

LLM_DEADLINE = 15.0  # one token; a model slower than this would time turns out anyway
HEALTH_DEADLINE = 3.0  # a host on this machine answers /healthz in milliseconds
HEALTH_BYTES = 1_000_000  # a health report is a few KB; more is not ours
OURS = {"store", "mcp", "tick"}  # keys of bothost's /healthz body (bothost.http.server.health)


async def ask_llm(factory: Any, llm_config: Any) -> str | None:
    """Ask the configured model for one token; the problem, or None if it answered."""
    # no retries: a dead URL or a failing model is one request and one line, not the
    # provider's backoff (a turn keeps its retries: bothost.config.LlmConfig.max_retries)
    provider = factory(dataclasses.replace(llm_config, timeout=LLM_DEADLINE, max_retries=0))
    request = ChatRequest(
        system="Answer with one word.", messages=[{"role": "user", "content": "ping"}], max_tokens=1
    )
    try:
        async with asyncio.timeout(LLM_DEADLINE):
            await provider.complete(request)
    except TimeoutError:
        return f"no answer within {LLM_DEADLINE:.0f} s"
    except LlmError as exc:
        return " ".join(str(exc).split())  # one line, whatever the server's message held
    except Exception as exc:  # boundary: a provider plugin may raise anything
        return " ".join(f"{type(exc).__name__}: {exc}".split())
    finally:
        close = getattr(provider, "close", None)
        if close is not None:
            await close()
    return None


def web_port(host: str, port: int, ours: bool | None = None) -> tuple[bool, str]:
    """Whether the host could listen on ``host:port`` now, and what was found there.

    ``ours``: whether this setup's host is running (``None``: cannot tell); a bothost
    answering on the port while it is not is another setup's, and holds the port."""
    if port == 0:
        return True, "any free port (chosen at start)"
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the HTTP server does
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return False, f"cannot listen on {host}:{port}: {exc.strerror or exc}"
        else:
            return True, f"{host}:{port} is free"
    if is_bothost(host, port):
        if ours is False:
            where = f"{host}:{port} is in use by another bothost host"
            return False, f"{where} (none is serving this setup's database)"
        return True, f"{host}:{port} is in use by a running bothost host (its /healthz answers)"
    return False, f"{host}:{port} is in use by another program"


def is_bothost(host: str, port: int) -> bool:
    target = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
    if ":" in target and not target.startswith("["):
        target = f"[{target}]"
    url = f"http://{target}:{port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=HEALTH_DEADLINE) as response:
            body = json.loads(response.read(HEALTH_BYTES))
    except urllib.error.HTTPError as exc:  # an unhealthy bothost answers 503 with its body
        try:
            body = json.loads(exc.read(HEALTH_BYTES))
        except (OSError, ValueError):
            return False
    except (OSError, ValueError):
        return False
    return isinstance(body, dict) and OURS <= set(body)
