"""Tools as the agent sees them: a name, a JSON schema, capabilities and a way to run.

A plain function becomes a :class:`Tool` through :func:`tool_from_function`: its name is the
tool name, its docstring the description (the ``Args:`` section describes parameters) and its
type hints the JSON schema. A parameter named ``ctx`` receives the :class:`ToolContext` and is
not part of the schema. Expected failures raise :class:`ToolError` and reach the model as
error results.

A tool's capabilities are declared once, but a call may reach further than its tool: the
``egress_of`` a tool may declare reads one call's arguments and says that call's egress
(``schedule`` to another conversation is ``chosen``), and :meth:`Tool.capabilities_for` is
what the interlock and the approvals judge. It only adds to what was declared.
"""

from __future__ import annotations

import inspect
import logging
import re
import types
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from bothost import jsondecode
from bothost.models import Session
from bothost.rules.origin import Origin, native

if TYPE_CHECKING:
    from bothost.api import HostApi

logger = logging.getLogger(__name__)

EGRESS = ("none", "fixed", "chosen")
# The most tools one request offers the model: OpenAI refuses a request with more than 128
# functions (a 400 for the whole request), and a model chooses worse among that many anyway.
# The registry leaves out whole granted groups past it (bothost.agent.registry).
MAX_OFFERED = 128


# one call's egress from its arguments and the session it is made in (Tool.egress_of)
EgressOf = Callable[[dict[str, Any], Session], str]


class ToolError(Exception):
    """An expected failure of a tool; the message is shown to the model as an error result."""


@dataclass(frozen=True)
class Capabilities:
    private: bool = False
    untrusted: bool = False
    egress: str = "none"
    destructive: bool = False

    def __post_init__(self) -> None:
        if self.egress not in EGRESS:
            raise ValueError(f"egress must be one of {EGRESS}, got {self.egress!r}")

    @property
    def side_effects(self) -> bool:
        return self.destructive or self.egress != "none"

    def plus(self, extra: list[str]) -> Capabilities:
        """Add capabilities named in config (``private``, ``egress:chosen``…); never remove."""
        flags = dict(private=self.private, untrusted=self.untrusted, destructive=self.destructive)
        egress = self.egress
        for word in extra:
            if word.startswith("egress:"):
                wanted = word.split(":", 1)[1]
                if EGRESS.index(wanted) > EGRESS.index(egress):
                    egress = wanted
            elif word in ("private", "untrusted", "destructive"):
                flags[word] = True
        return Capabilities(egress=egress, **flags)


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    structured: Any = None
    media: list[str] = field(default_factory=list)


@dataclass
class ToolContext:
    """What a running tool may use: its session, the host interface, a progress reporter."""

    session: Session
    host: HostApi
    call_id: str = ""
    progress: Callable[[str], Awaitable[None]] | None = None
    beside: int = 0  # tools the turn offers beside the registry's (the tick agent's notify)


@dataclass
class Tool:
    name: str
    description: str
    schema: dict[str, Any]
    run: Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
    capabilities: Capabilities = Capabilities()
    timeout: float | None = None
    # the tool bounds its own run, so the turn adds no timeout (MCP calls: progress extends
    # theirs up to the server's max_timeout, and it pauses while a person is asked)
    own_deadline: bool = False
    group: str | None = None  # None for native tools; an MCP server name, or "config"
    plugin: str = ""
    admin_only: bool = False
    # what stored decisions key it by (bothost.rules.origin); None: a native tool's, its name
    origin: Origin | None = None
    egress_of: EgressOf | None = None  # a call's own egress, when its arguments decide it

    def capabilities_for(self, arguments: dict[str, Any], session: Session) -> Capabilities:
        """The capabilities of one call: the declared ones, raised to the egress that
        ``egress_of`` finds in the call (never lowered). An ``egress_of`` that fails or says
        something unknown makes the call ``chosen``: the interlock and approvals see the most."""
        if self.egress_of is None:
            return self.capabilities
        try:
            egress = self.egress_of(arguments, session)
        except Exception:
            logger.exception("the egress of a %s call could not be told", self.name)
            egress = "chosen"
        return self.capabilities.plus([f"egress:{egress if egress in EGRESS else 'chosen'}"])

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.schema}

    def where_from(self) -> Origin:
        """The tool's origin: the one its source gave it, or a native tool's name."""
        return self.origin if self.origin is not None else native(self.name)


def tool_from_function(
    func: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    schema: dict[str, Any] | None = None,
    private: bool = False,
    untrusted: bool = False,
    egress: str = "none",
    destructive: bool = False,
    timeout: float | None = None,
    group: str | None = None,
    admin_only: bool = False,
    plugin: str = "",
    egress_of: EgressOf | None = None,
) -> Tool:
    doc = inspect.getdoc(func) or ""
    signature = inspect.signature(func)
    wants_ctx = "ctx" in signature.parameters

    async def run(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        kwargs = dict(arguments)
        if wants_ctx:
            kwargs["ctx"] = ctx
        result = func(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    return Tool(
        name=name or func.__name__,
        description=description or summary(doc) or (name or func.__name__),
        schema=schema or schema_from_signature(func, param_docs(doc)),
        run=run,
        capabilities=Capabilities(private, untrusted, egress, destructive),
        timeout=timeout,
        group=group,
        plugin=plugin,
        admin_only=admin_only,
        egress_of=egress_of,
    )


def summary(doc: str) -> str:
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def param_docs(doc: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section."""
    match = re.search(r"^Args:\s*\n(.*?)(?:\n\S|\Z)", doc, re.S | re.M)
    if not match:
        return {}
    found: dict[str, str] = {}
    for line in match.group(1).splitlines():
        m = re.match(r"\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


def schema_from_signature(func: Callable[..., Any], docs: dict[str, str]) -> dict[str, Any]:
    hints = typing.get_type_hints(func)
    properties: dict[str, Any] = {}
    required = []
    for pname, param in inspect.signature(func).parameters.items():
        if pname == "ctx" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = json_type(hints.get(pname, str))
        if pname in docs:
            prop["description"] = docs[pname]
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        elif param.default is not None:
            prop["default"] = param.default
        properties[pname] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    takes_any = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(func).parameters.values())
    if not takes_any:  # an extra name would reach the function as a TypeError, not a result
        schema["additionalProperties"] = False
    return schema


def json_type(tp: Any) -> dict[str, Any]:
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return json_type(args[0]) if len(args) == 1 else {"anyOf": [json_type(a) for a in args]}
    if origin is Literal:
        return {"enum": list(typing.get_args(tp))}
    if origin in (list, tuple, set):
        items = typing.get_args(tp)
        return {"type": "array", "items": json_type(items[0]) if items else {}}
    if origin is dict or tp is dict:
        return {"type": "object"}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if tp in simple:
        return {"type": simple[tp]}
    if tp is list:
        return {"type": "array"}
    return {}


def readable(text: str) -> str:
    """A tool result's text as a person reads it (the offline agent's reply, the dashboard):
    a JSON object or array, which tools that return data give, as indented ``key: value``
    lines; any other text as it is. The model reads the JSON itself."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        value = jsondecode.decode(stripped)  # depth-checked: the walk below recurses
    except jsondecode.JsonInputError:
        return text
    return "\n".join(lines_of(value)) or "(none)"


def lines_of(value: Any) -> list[str]:
    if isinstance(value, dict):
        out = []
        for key, item in value.items():
            if inline(item):
                out += f"{key}: {one_line(item)}".splitlines()
            else:
                out += [f"{key}:", *("  " + line for line in lines_of(item))]
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            first, *rest = lines_of(item) or ["(none)"]
            out += [f"- {first}", *("  " + line for line in rest)]
        return out
    return scalar(value).splitlines() or [""]


def inline(value: Any) -> bool:
    """Whether ``value`` fits after its key: a scalar, or a list of scalars."""
    if isinstance(value, dict):
        return not value
    return not isinstance(value, list) or not any(isinstance(v, dict | list) for v in value)


def one_line(value: Any) -> str:
    if isinstance(value, list | dict):
        return ", ".join(map(scalar, value)) if value else "(none)"
    return scalar(value)


def scalar(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
