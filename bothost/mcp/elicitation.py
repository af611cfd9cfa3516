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
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bothost.mcp import formvalues, jsonrpc
from bothost.mcp.jsonrpc import McpError
from bothost.platform import Question

ASK_TIMEOUT = 300.0  # how long a person has to answer a server's question
MAX_ASKS = 3  # answers that do not fit the form before the question is given up (cancel)
PRIMITIVES = (str, int, float, bool)

Ask = Callable[[Question], Awaitable[Any]]


@dataclass(frozen=True)
class Asker:
    """Who answers a server's questions during one tool call.

    ``key`` names the conversation (a session id): calls with the same key have the same
    person behind them, which is what lets a question that names no call (stdio) still find
    its person while only one conversation has calls in flight. ``ask`` asks that person.
    """

    key: str
    ask: Ask


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
    params: dict[str, Any], ask: Any, server: str, log: logging.Logger
) -> dict[str, Any]:
    """Ask a person and build the ``ElicitResult``."""
    if params.get("mode", "form") != "form":
        raise McpError(
            jsonrpc.INVALID_PARAMS,
            f"elicitation mode {params.get('mode')!r} is not supported (form only)",
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
