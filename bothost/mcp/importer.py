"""Importing MCP servers from other clients' JSON files: Claude Desktop, Cursor, VS Code.

Claude Desktop and Cursor keep ``{"mcpServers": {name: {command, args, env}}}`` (Cursor
also ``url`` + ``headers``); VS Code keeps ``{"servers": {name: {type, command, args, env,
url, headers}}}`` in ``mcp.json``, or the same under ``"mcp"`` in ``settings.json``, which
may carry comments and trailing commas. Each entry becomes a row of the ``mcp_servers``
table (origin ``import``) or is skipped with a reason a person can act on: the name is
taken, the entry is malformed, its transport is SSE (bothost speaks stdio and Streamable
HTTP), or it needs something only the editor can fill in (``${input:…}`` prompts,
``${workspaceFolder}``). ``${env:NAME}`` means the same here as there: in ``env`` and
``headers`` it is kept and resolved whenever the server starts; bothost resolves nothing in a
command, its arguments or a URL, so there it is resolved once, now. A ``tools`` allowlist
(``includeTools`` too) is kept, never dropped, since dropping it would widen the server;
import starts no server, so a name the server lacks is warned about when it first lists its
tools.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bothost.config import McpServerConfig
from bothost.mcp import stored
from bothost.mcp.manager import McpManager, McpManagerError
from bothost.mcp.roster import NAME
from bothost.mcp.runner import describe

MAX_NAME = 40  # the manager's limit on server names
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
VARIABLE = re.compile(r"\$\{([^}]*)\}")
UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
# JSONC: a string (kept), a // or /* */ comment (dropped), or a comma before a closing bracket.
JSONC = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/|,(\s*[}\]])', re.S)


class ImportFileError(ValueError):
    """The file cannot be read as an MCP client configuration."""


class SkipEntry(Exception):
    """One entry cannot be imported; the message is the reason."""


@dataclass
class Entry:
    name: str  # the name in bothost
    source: str  # the name in the file
    transport: str = ""
    target: str = ""
    reason: str = ""  # why it was skipped
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImportReport:
    file: str
    format: str  # the key the servers were found under
    added: list[Entry]
    skipped: list[Entry]

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": self.format,
            "added": [e.to_dict() for e in self.added],
            "skipped": [e.to_dict() for e in self.skipped],
        }


def strip_jsonc(text: str) -> str:
    return JSONC.sub(lambda m: m.group(1) or m.group(2) or "", text)


def read_servers(path: Path) -> tuple[str, dict[str, Any]]:
    """The server entries of a client config file, and the key they were found under."""
    try:
        data = json.loads(strip_jsonc(Path(path).read_text(encoding="utf-8")))
    except OSError as exc:
        raise ImportFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ImportFileError(f"{path} is not JSON: {exc}") from None
    except RecursionError:  # deeper than the decoder's stack: no client writes that
        raise ImportFileError(f"{path} is not JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise ImportFileError(f"{path}: expected a JSON object at the top")
    for key, found in (
        ("mcpServers", data.get("mcpServers")),
        ("servers", data.get("servers")),
        (
            "mcp.servers",
            (data.get("mcp") or {}).get("servers") if isinstance(data.get("mcp"), dict) else None,
        ),
    ):
        if found is None:
            continue
        if not isinstance(found, dict):
            raise ImportFileError(f"{path}: {key} must be an object of servers by name")
        return key, found
    raise ImportFileError(
        f"{path} has no MCP servers: expected an `mcpServers` object "
        "(Claude Desktop, Cursor), `servers` (VS Code mcp.json) or "
        "`mcp.servers` (VS Code settings.json)"
    )


def fill(value: str, where: str, keep_env: bool = False) -> str:
    """Resolve what can be resolved now; skip the entry for what only the editor knows."""

    def one(match: re.Match[str]) -> str:
        variable = match.group(1)
        if variable.startswith("env:") and keep_env:
            return match.group(0)  # the same ${env:NAME} syntax: resolved when it starts
        if variable.startswith("env:"):
            if variable[4:] not in os.environ:
                raise SkipEntry(f"{where} uses ${{{variable}}}, which is not set")
            return os.environ[variable[4:]]
        if variable == "userHome":
            return str(Path.home())
        if variable.startswith("input:"):
            raise SkipEntry(
                f"{where} uses the VS Code input ${{{variable}}}, which only VS "
                "Code can prompt for; add it with `bothost mcp add` and a value"
            )
        raise SkipEntry(f"{where} uses ${{{variable}}}, which only the editor can fill in")

    return VARIABLE.sub(one, value)


def strings(raw: Any, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or any(isinstance(v, (dict, list)) for v in raw.values()):
        raise SkipEntry(f"invalid entry: {where} must map names to strings")
    return {str(k): fill(str(v), f"{where}.{k}", keep_env=True) for k, v in raw.items()}


def convert(raw: Any) -> McpServerConfig:
    """One entry of the file as a server config; :class:`SkipEntry` says why not."""
    if not isinstance(raw, dict):
        raise SkipEntry("invalid entry: not an object")
    kind = raw.get("type") or raw.get("transport")
    if kind == "sse":
        raise SkipEntry(
            "transport sse is not supported (bothost speaks stdio and "
            "Streamable HTTP; try the server's /mcp endpoint with `bothost mcp add`)"
        )
    if kind not in (None, "stdio", *HTTP_TYPES):
        raise SkipEntry(f"unsupported transport {kind!r}")
    command, url = raw.get("command"), raw.get("url") or raw.get("serverUrl")
    for key in ("cwd", "envFile"):
        if raw.get(key):
            raise SkipEntry(
                f"`{key}` is not supported; add it with `bothost mcp add` "
                "(a wrapper script can change directory or read the file)"
            )
    enabled = not raw.get("disabled", False)
    description = str(raw.get("description") or "")
    tools = allowlist(raw)
    if command and not url and kind in (None, "stdio"):
        args = raw.get("args") or []
        if (
            not isinstance(command, str)
            or not isinstance(args, list)
            or any(isinstance(a, (dict, list)) for a in args)
        ):
            raise SkipEntry("invalid entry: `command` must be a string and `args` a list")
        return McpServerConfig(
            command=fill(command, "command"),
            args=[fill(str(a), f"args[{i}]") for i, a in enumerate(args)],
            env=strings(raw.get("env"), "env"),
            enabled=enabled,
            description=description,
            tools=tools,
        )
    if url and not command and kind in (None, *HTTP_TYPES):
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise SkipEntry(f"invalid entry: url {url!r} is not an http(s) URL")
        return McpServerConfig(
            url=fill(url, "url"),
            headers=strings(raw.get("headers"), "headers"),
            enabled=enabled,
            description=description,
            tools=tools,
        )
    if command and url:
        raise SkipEntry("invalid entry: both `command` and `url`")
    raise SkipEntry(
        "invalid entry: no `command` (stdio) or `url` (HTTP)"
        if not (command or url)
        else f"invalid entry: type {kind!r} with {'a command' if command else 'a url'}"
    )


def allowlist(raw: dict[str, Any]) -> list[str]:
    """The entry's tool allowlist: dropping it would silently offer every tool of the server."""
    if raw.get("excludeTools"):
        raise SkipEntry(
            "`excludeTools` is not supported; add it with `bothost mcp add` and list "
            "the tools to keep under `tools`"
        )
    tools = raw.get("tools", raw.get("includeTools"))
    if tools is None:
        return []
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        raise SkipEntry("invalid entry: `tools` must be a list of tool names")
    return list(tools)


def bothost_name(source: str) -> str:
    return UNSAFE.sub("-", source).strip("-")[:MAX_NAME] or "server"


async def import_file(manager: McpManager, path: Path, dry_run: bool = False) -> ImportReport:
    """Add every importable entry of `path` to the table; report what was added or skipped."""
    key, servers = read_servers(path)
    rows = await manager.store.run(stored.load)
    taken = {n: "the config file" for n in manager.config_servers}
    taken.update(
        {
            n: f"added by {r.origin}"
            for n, r in rows.items()
            if r.origin != stored.OVERRIDE and n not in taken
        }
    )
    report = ImportReport(str(path), key, [], [])
    for source, raw in servers.items():
        entry = Entry(bothost_name(str(source)), str(source))
        if entry.name != entry.source:
            entry.note = f"renamed from {entry.source!r}"
        try:
            if not NAME.fullmatch(entry.name):
                raise SkipEntry("the name cannot be made into a server name")
            if entry.name in taken:
                raise SkipEntry(f"a server named {entry.name!r} exists ({taken[entry.name]})")
            config = convert(raw)
            entry.transport, entry.target = describe(config)
            if config.tools:  # checked against the server when it first lists its tools
                only = f"only tools {', '.join(config.tools)}"
                entry.note = f"{entry.note}; {only}" if entry.note else only
            if not dry_run:
                await manager.add_server(entry.name, config, origin="import")
        except (SkipEntry, McpManagerError) as exc:
            entry.reason = str(exc)
            report.skipped.append(entry)
            continue
        taken[entry.name] = "imported from this file"
        report.added.append(entry)
    return report
