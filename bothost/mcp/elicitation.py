"""``elicitation/create``: a server asks the user for a few values, mid-call.

The request becomes a :class:`~bothost.platform.Question` of kind ``form`` handed to an
async ``ask`` callback: the :class:`Asker` a tool call brought (the person in the
conversation that made the call; the session picks it, see
:meth:`~bothost.mcp.session.ClientSession.asker_for`), else the session's default. The
answer maps onto the spec's three actions: a dict (the values) or ``True`` → ``accept``;
``False`` → ``decline``; ``None`` (nobody there, timed out) → ``cancel``. Fields the person
left out get the schema's ``default`` (SEP-1034), and only the primitive types the spec
allows are sent back. An answer is checked against the form (:mod:`bothost.mcp.formvalues`:
text turned into numbers and booleans, choices, bounds, required fields); one that does not
fit is asked again with the problems named, and after ``MAX_ASKS`` such answers the
question is cancelled: the server never gets values its schema refuses.

URL mode (2025-11-25) asks for nothing typed: the server names a link for the person to open
(a login, a payment) and tells the client later, by ``notifications/elicitation/complete``,
that what it needed is done. The link is posted into the conversation with the server's
message, marked as the server's (the Asker's ``tell``), and the answer is ``accept`` once it
is shown, as the spec has a client answer; with nowhere to show it, ``cancel``. Only an
``http`` or ``https`` link with a host, no credentials and no hidden characters is shown:
anything else is refused (-32602), since a person is meant to open it.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bothost import hidden
from bothost.mcp import formvalues, jsonrpc
from bothost.mcp.jsonrpc import McpError
from bothost.platform import Question

ASK_TIMEOUT = 300.0  # how long a person has to answer a server's question
MAX_ASKS = 3  # answers that do not fit the form before the question is given up (cancel)
MAX_URL = 2048  # characters of a URL-mode link: what browsers and chat platforms keep whole
MAX_URL_MESSAGE = 1000  # characters of the server's message shown beside the link
TELL_TIMEOUT = 30.0  # posting the link into the conversation (a platform's send)
PRIMITIVES = (str, int, float, bool)

Ask = Callable[[Question], Awaitable[Any]]
Tell = Callable[[str], Awaitable[Any]]


@dataclass(frozen=True)
class Asker:
    """Who answers a server's questions during one tool call.

    ``key`` names the conversation (a session id): calls with the same key have the same
    person behind them, which is what lets a question that names no call (stdio) still find
    its person while only one conversation has calls in flight. ``ask`` asks that person;
    ``tell`` posts a message into their conversation (a URL-mode elicitation's link), and
    ``context`` is what the host's sampler needs of the conversation (opaque here:
    :mod:`bothost.agent.sampling`).
    """

    key: str
    ask: Ask
    tell: Tell | None = None
    context: Any = None


def with_defaults(schema: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """`values` plus the schema's defaults for properties it lacks; primitives only."""
    result: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for key, spec in properties.items():
        if key in values and values[key] is not None:
            result[key] = values[key]
        elif isinstance(spec, dict) and "default" in spec:
            result[key] = spec["default"]
    for key, value in values.items():  # keep answers to fields the schema did not declare
        if key not in properties and value is not None:
            result[key] = value
    return {k: v for k, v in result.items() if allowed(v)}


def allowed(value: Any) -> bool:
    """Elicitation answers are primitives, or a list of strings (multi-select enums)."""
    if isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    return isinstance(value, PRIMITIVES)


async def answer(
    params: dict[str, Any],
    ask: Any,
    server: str,
    log: logging.Logger,
    tell: Tell | None = None,
) -> dict[str, Any]:
    """Ask a person (form mode) or show them a link (URL mode: ``tell``) and build the
    ``ElicitResult``."""
    mode = params.get("mode", "form")
    if mode == "url":
        return await shown_link(params, tell, server, log)
    if mode != "form":
        raise McpError(
            jsonrpc.INVALID_PARAMS,
            f"elicitation mode {str(mode)[:40]!r} is not supported (form and url are)",
        )
    schema = params.get("requestedSchema") or {}
    if ask is None:
        log.info("elicitation from %s cancelled: nobody to ask", server)
        return {"action": "cancel"}
    text = f"{server} asks: {params.get('message', '')}"
    for _ in range(MAX_ASKS):
        question = Question(text, kind="form", schema=schema, timeout=ASK_TIMEOUT)
        reply = await asked(ask, question, server, log)
        if reply is None:
            return {"action": "cancel"}
        if reply is False:
            return {"action": "decline"}
        values, problems = formvalues.checked(schema, reply if isinstance(reply, dict) else {})
        content = with_defaults(schema, values)
        for name, problem in formvalues.missing(schema, content).items():
            problems.setdefault(name, problem)  # a field answered wrong is named for that
        if not problems:
            return {"action": "accept", "content": content}
        said = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
        log.info("elicitation answer for %s not accepted: %s", server, said)
        text = f"{server} asks: {params.get('message', '')}\n(Not accepted: {said}. Answer again.)"
    log.warning("elicitation from %s cancelled: %d answers did not fit", server, MAX_ASKS)
    return {"action": "cancel"}


async def asked(ask: Any, question: Question, server: str, log: logging.Logger) -> Any:
    """The person's reply, or None (nobody answered in time, or asking failed)."""
    try:
        async with asyncio.timeout(ASK_TIMEOUT):
            return await ask(question)
    except TimeoutError:
        return None
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("asking the user for %s's elicitation failed", server)
        return None


def link_problem(url: Any) -> str | None:
    """Why `url` is not a link to show a person, or None."""
    if not isinstance(url, str) or not url:
        return "url must be a non-empty string"
    if len(url) > MAX_URL:
        return f"url is longer than {MAX_URL} characters"
    if any(hidden.is_hidden(c) or c.isspace() for c in url):
        return "url holds spaces, control or hidden characters"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "url must be an http or https link with a host"
    if parts.username or parts.password:
        return "url must not carry credentials"
    return None


async def shown_link(
    params: dict[str, Any], tell: Tell | None, server: str, log: logging.Logger
) -> dict[str, Any]:
    """A URL-mode elicitation: the link posted into the conversation, then ``accept``."""
    url, elicitation_id = params.get("url"), params.get("elicitationId")
    problem = link_problem(url)
    if problem is None and not isinstance(elicitation_id, str):
        problem = "elicitationId must be a string"
    if problem is not None:
        raise McpError(jsonrpc.INVALID_PARAMS, f"URL elicitation refused: {problem}")
    if tell is None:
        log.info(
            "URL elicitation %.80s from %s cancelled: nowhere to show it", elicitation_id, server
        )
        return {"action": "cancel"}
    host = urllib.parse.urlsplit(str(url)).hostname
    message = " ".join(str(params.get("message") or "").split())[:MAX_URL_MESSAGE]
    text = f"MCP server {server} asks you to open a link on {host}:\n{url}"
    if message:
        text += f"\n{server} says: {message}"
    try:
        async with asyncio.timeout(TELL_TIMEOUT):
            await tell(text)
    except asyncio.CancelledError:
        raise
    except Exception:  # boundary: the platform's failure is the server's cancel
        log.exception("showing %s's URL elicitation failed", server)
        return {"action": "cancel"}
    log.info("URL elicitation %.80s from %s shown", elicitation_id, server)
    return {"action": "accept"}


def completed(params: dict[str, Any], server: str, log: logging.Logger) -> None:
    """``notifications/elicitation/complete``: the server says a link's business is done."""
    elicitation_id = params.get("elicitationId")
    log.info("URL elicitation %.80r from %s complete", elicitation_id, server)
