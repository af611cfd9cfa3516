"""A tool's origin: which tool a stored decision is about, whatever the model calls it.

The model sees a tool by a name the host makes (``mcp__<server>__<tool>``, sanitised, cut,
with a hash: :mod:`bothost.agent.mcp_tools`), and such a name is not the tool: a server
that renames its tools, a server renamed in config, two servers swapping names, or the
host's naming scheme itself changing would hand a name, and any approval keyed by it, to
another tool. So a stored decision (a remembered answer, a rule added for a tool the host
knew) is keyed by the tool's origin instead: for an MCP tool the server's name in config,
a hash of what that server runs (its command and arguments, or its URL: ``source``) and
the tool's name exactly as the server lists it. A native tool's origin is its registered
name. An origin is stored as one JSON object (:meth:`Origin.text`).

Rows written before origins were kept carry one the store migration could establish from
their name alone (``legacy``), or ``unknown``: see :func:`from_name`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

NATIVE, MCP, RESOURCES, UNKNOWN = "native", "mcp", "resources", "unknown"
# a server's sampling requests (bothost.agent.sampling): no tool, but answers are kept alike
SAMPLING = "sampling"
KINDS = (NATIVE, MCP, RESOURCES, SAMPLING, UNKNOWN)
SOURCE_DIGITS = 16  # hex digits of the hash of what a server runs: 64 bits, never met by chance
PREFIX = "mcp__"  # every MCP tool name's prefix (bothost.agent.mcp_tools names them)
# a tool part no sanitising can have produced from another name: `_` is what unsafe
# characters became, and a cut or hashed name always holds one
VERBATIM = re.compile(r"[A-Za-z0-9-]+")
GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Origin:
    """Where a tool comes from; two tools with equal origins are the same tool."""

    kind: str  # native | mcp | resources (the host's resource tools of a server) | sampling
    # (a server's requests for the model) | unknown
    tool: str = ""  # as the server lists it; a native tool's name; resources: list | read
    server: str = ""  # the MCP server's name; "" for a native tool, and in a legacy origin
    source: str = ""  # a hash of what the server runs (see server_source); "" in a legacy one
    legacy: bool = False  # established by the store migration from a name (see from_name)

    def text(self) -> str:
        """The stored form: a JSON object of the fields that are set."""
        data: dict[str, Any] = {"kind": self.kind}
        for key in ("tool", "server", "source"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        if self.legacy:
            data["legacy"] = True
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    def label(self) -> str:
        """How people read it: ``server s, tool 'a.b'``."""
        if self.kind == UNKNOWN:
            return "origin unknown (stored before origins were kept)"
        if self.kind == NATIVE:
            return f"native tool {self.tool!r}"
        if self.kind == SAMPLING:
            return f"server {self.server}, sampling (the server asks the model)"
        what = "resource tool" if self.kind == RESOURCES else "tool"
        if self.legacy:
            return f"{what} {self.tool!r} of the server its name names"
        return f"server {self.server}, {what} {self.tool!r}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.text())
        data["label"] = self.label()
        return data


def parse(text: str | None) -> Origin | None:
    """An origin from its stored form; None for NULL. A row that cannot be read is unknown:
    it must not be taken for a rule without an origin, which would match by name."""
    if text is None:
        return None
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("kind") not in KINDS:
            raise ValueError(text)
        fields = {k: data.get(k, "") for k in ("tool", "server", "source")}
        if not all(isinstance(v, str) for v in fields.values()):
            raise ValueError(text)
        return Origin(data["kind"], legacy=data.get("legacy") is True, **fields)
    except ValueError:
        return Origin(UNKNOWN)


def native(name: str) -> Origin:
    return Origin(NATIVE, name)


def server_source(command: str | None, args: list[str], url: str | None) -> str:
    """A hash of what a server runs: its URL, or its command and arguments (not its env,
    headers or description: a token rotated is the same server, another program is not)."""
    what = json.dumps([url or "", command or "", list(args)], ensure_ascii=False)
    return hashlib.sha256(what.encode("utf-8", "surrogatepass")).hexdigest()[:SOURCE_DIGITS]


def pinnable(name: str) -> bool:
    """Whether a rule's tool pattern names one MCP tool, so a stored rule keeps its origin."""
    return name.startswith(PREFIX) and not GLOB.search(name)


def covers(pinned: Origin, written: str, origin: Origin, name: str) -> bool:
    """Whether a rule pinned to ``pinned`` (``written``: its tool pattern, a literal name for
    a legacy origin) is about the tool of ``origin``, now called ``name``."""
    if pinned.kind == UNKNOWN or pinned.kind != origin.kind or pinned.tool != origin.tool:
        return False
    if pinned.legacy:  # the server is the one the stored name names, and only that name
        return not GLOB.search(written) and written == name
    return pinned.server == origin.server and pinned.source == origin.source


def from_name(name: str) -> Origin | None:
    """The origin a row written before origins were kept can be given from its name alone.

    Until 2026-12-03 a tool whose name sanitising changed (``a.b``) was called what a tool
    named ``a_b`` is called, unless both were listed; a row naming ``mcp__s__a_b`` may be
    about either. A name whose tool part holds no ``_`` was never anything but that tool's
    (only sanitising, cutting and hashing make ``_``), so it gets a legacy origin: that tool,
    of the server the name names. Any other literal MCP name is ``unknown`` (it matches no
    tool where matching more would allow more: see :mod:`bothost.rules.match`). A glob or a
    native name needs none: None.
    """
    if GLOB.search(name) or not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX) :].partition("__")
    if sep and server and VERBATIM.fullmatch(tool):
        return Origin(MCP, tool, legacy=True)
    return Origin(UNKNOWN)
