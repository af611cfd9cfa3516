"""What an MCP server hands on — results, resources, prompts, events — with the host's
credentials masked, at the one place every use of them passes (:class:`McpManager`).

A server can echo what it was given: a ``${env:…}`` argument, an env value, a header. Turns
masked that (:func:`bothost.redact.conceal`), but ``bothost mcp call`` printed it, and an
event whose summary carried it was stored and shown by ``events list`` and in briefings.
Masking here, before anything is shown or stored, covers every output alike. Only the known
credentials are masked (as in turns), not secret-*shaped* text: a tool that reads a config
file must see it as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from bothost import redact
from bothost.mcp.content import CallResult
from bothost.models import Event


def conceal_data(value: Any) -> Any:
    """``value`` (JSON-like) with the known credentials masked in every string and key."""
    if not redact.KNOWN.credentials:  # nothing to mask: the common case costs one look
        return value
    try:
        return _walk(value)
    except RecursionError:  # nested past any use: the queue refuses such a payload anyway
        return value


def _walk(value: Any) -> Any:
    if isinstance(value, str):
        return redact.conceal(value)
    if isinstance(value, dict):
        return {_walk(k): _walk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v) for v in value]
    return value


def text(found: str) -> str:
    """Text a server produced (a rendered prompt) as people and the model may see it."""
    return redact.conceal(found)


def result(found: CallResult) -> CallResult:
    """A call's or a resource's result as people and the model may see it."""
    if not redact.KNOWN.credentials:
        return found
    return dataclasses.replace(
        found,
        text=redact.conceal(found.text),
        for_user=redact.conceal(found.for_user),
        structured=conceal_data(found.structured),
        raw=conceal_data(found.raw),
    )


def events(on_events: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """An ``on_events([Event, …])`` that gets them masked (before storing)."""
    if on_events is None:
        return None

    def concealing(events: list[Event]) -> Any:
        if redact.KNOWN.credentials:
            events = [
                dataclasses.replace(e, type=redact.conceal(e.type), payload=conceal_data(e.payload))
                for e in events
            ]
        return on_events(events)

    return concealing
