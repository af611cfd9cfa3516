"""One declared tool: its MCP definition, and how a call becomes a `CallToolResult`.

A tool is a plain (preferably async) function. What it returns decides the result: a
`str` becomes one text block; a `dict` becomes `structuredContent` when the tool has an
`outputSchema` (with a JSON text mirror, for clients that read only `content`) and a JSON
text block otherwise; a list of MCP content blocks is passed through; anything else
JSON-serialisable is sent as JSON text. `ToolError` is the expected-failure path: its
message reaches the model as an `isError` result. Any other exception is a bug, so the
model gets a short line and the traceback goes to stderr.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .schema import CONTEXT_PARAM, check_arguments, input_schema, parse_docstring

logger = logging.getLogger(__name__)

CAPABILITIES_META = "bothost/capabilities"
CAPABILITY_KEYS = {"private", "untrusted", "egress", "destructive"}
EGRESS_VALUES = {"none", "fixed", "chosen"}
CONTENT_TYPES = {"text", "image", "audio", "resource", "resource_link"}


class ToolError(Exception):
    """An expected failure of a tool; its message is what the model reads."""


@dataclass
class Tool:
    """A registered tool: the function plus everything `tools/list` says about it."""

    name: str
    fn: Callable[..., Any]
    description: str
    input_schema: dict[str, Any]
    capabilities: dict[str, Any]
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    wants_context: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        capabilities: dict[str, Any],
        annotations: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> Tool:
        if output_schema is not None and output_schema.get("type") != "object":
            raise ValueError(
                f"tool {name or fn.__name__!r}: output_schema must be an object schema"
            )
        summary, param_docs = parse_docstring(fn.__doc__)
        return cls(
            name=name or fn.__name__,
            fn=fn,
            description=description or summary,
            input_schema=input_schema(fn, param_docs),
            capabilities=_checked_capabilities(name or fn.__name__, capabilities),
            annotations=annotations,
            output_schema=output_schema,
            title=title,
            wants_context=CONTEXT_PARAM in inspect.signature(fn).parameters,
        )

    def definition(self) -> dict[str, Any]:
        """This tool as an entry of `tools/list`."""
        entry: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.title:
            entry["title"] = self.title
        if self.annotations:
            entry["annotations"] = self.annotations
        if self.output_schema:
            entry["outputSchema"] = self.output_schema
        entry["_meta"] = {**self.meta, CAPABILITIES_META: self.capabilities}
        return entry

    async def call(self, arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """Run the tool; always returns a `CallToolResult` (failures are `isError`)."""
        problem = check_arguments(self.input_schema, arguments)
        if problem:
            return error_result(f"Invalid arguments for {self.name}: {problem}")
        kwargs = dict(arguments)
        if self.wants_context:
            kwargs[CONTEXT_PARAM] = ctx
        try:
            if inspect.iscoroutinefunction(self.fn):
                value = await self.fn(**kwargs)
            else:
                value = await asyncio.to_thread(self.fn, **kwargs)
        except ToolError as exc:
            return error_result(str(exc) or type(exc).__name__)
        except Exception as exc:  # boundary: one tool's bug must not end the server
            logger.exception("tool %s failed", self.name)
            return error_result(
                f"{self.name} failed unexpectedly: {type(exc).__name__}: {exc}"[:500]
            )
        return self.to_result(value)

    def to_result(self, value: Any) -> dict[str, Any]:
        if isinstance(value, str):
            return {"content": [text_block(value)], "isError": False}
        if isinstance(value, dict) and self.output_schema is not None:
            return {
                "content": [text_block(json.dumps(value, ensure_ascii=False))],
                "structuredContent": value,
                "isError": False,
            }
        if self.output_schema is not None:
            # Clients reject a schema'd tool's success without structuredContent.
            logger.warning(
                "tool %s has an output_schema but returned %s", self.name, type(value).__name__
            )
        if isinstance(value, list) and value and all(_is_content(v) for v in value):
            return {"content": value, "isError": False}
        if value is None:
            return {"content": [], "isError": False}
        text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
        return {"content": [text_block(text)], "isError": False}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def error_result(message: str) -> dict[str, Any]:
    return {"content": [text_block(message)], "isError": True}


def _is_content(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in CONTENT_TYPES


def _checked_capabilities(tool: str, capabilities: dict[str, Any]) -> dict[str, Any]:
    """Refuse a tool without a full, well-formed capability declaration at import time."""
    if not isinstance(capabilities, dict) or not CAPABILITY_KEYS <= set(capabilities):
        raise ValueError(
            f"tool {tool!r}: capabilities must declare {sorted(CAPABILITY_KEYS)}, "
            f"got {capabilities!r}"
        )
    if capabilities["egress"] not in EGRESS_VALUES:
        raise ValueError(f"tool {tool!r}: egress must be one of {sorted(EGRESS_VALUES)}")
    for key in ("private", "untrusted", "destructive"):
        if not isinstance(capabilities[key], bool):
            raise ValueError(f"tool {tool!r}: capability {key!r} must be true or false")
    return dict(capabilities)
