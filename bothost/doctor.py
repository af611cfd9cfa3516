"""``bothost doctor``: each check says what it found and, when something is wrong, the fix."""

from __future__ import annotations

import asyncio
import stat
from dataclasses import dataclass
from typing import Any

from bothost.executables import resolve_command


@dataclass
class Finding:
    check: str
    ok: bool
    detail: str
    fix: str = ""


def diagnose(runtime: Any) -> list[Finding]:
    findings: list[Finding] = []
    config = runtime.config  # a config error is the command's error: one line, exit 2
    findings.append(Finding("config", True, "loaded from " + ", ".join(config.sources)))
    findings += check_home(runtime)
    findings += check_plugins(runtime)
    findings += check_store(runtime)
    findings += check_llm(config)
    missing = check_mcp(config)
    findings += missing
    findings += check_mcp_running(runtime, skip={f.check.removeprefix("mcp ") for f in missing})
    findings += check_slack(config)
    return findings


def check_home(runtime: Any) -> list[Finding]:
    home = runtime.home
    if home.exists() and stat.S_IMODE(home.stat().st_mode) & 0o077:
        return [Finding("home", False, f"{home} is readable by other users",
                        f"chmod 700 {home}")]
    return [Finding("home", True, str(home))]


def check_plugins(runtime: Any) -> list[Finding]:
    out = []
    for info in runtime.plugins:
        if info.error:
            out.append(Finding(f"plugin {info.name}", False, info.error,
                               f"reinstall or fix it, or add {info.name!r} to plugins.disabled"))
    return out or [Finding("plugins", True, f"{len(runtime.plugins)} found")]


def check_store(runtime: Any) -> list[Finding]:
    try:
        tables = runtime.store.call(lambda db: db.table_names())
    except Exception as exc:
        return [Finding("database", False, str(exc),
                        "check the disk and permissions of BOTHOST_HOME")]
    return [Finding("database", True, f"{len(tables)} tables")]


def check_llm(config: Any) -> list[Finding]:
    llm = config.llm
    if llm.provider == "offline":
        return [Finding("llm", True, "offline agent (no model configured)")]
    if llm.provider == "anthropic" and not llm.api_key:
        return [Finding("llm", False, "anthropic needs an API key",
                        "set llm.api_key: ${env:ANTHROPIC_API_KEY}")]
    if llm.provider == "openai" and not llm.api_key and not llm.base_url:
        return [Finding("llm", False, "openai needs an API key (or a base_url such as Ollama)",
                        "set llm.api_key: ${env:OPENAI_API_KEY}")]
    return [Finding("llm", True, f"{llm.provider} {llm.model or ''}".strip())]


def check_mcp(config: Any) -> list[Finding]:
    out = []
    for name, server in config.mcp.servers.items():
        if not server.enabled or not server.command:
            continue
        if resolve_command(server.command) is None:
            out.append(Finding(f"mcp {name}", False, f"command {server.command!r} not found",
                               f"install it, or set mcp.servers.{name}.enabled: false"))
    return out


def check_mcp_running(runtime: Any, skip: set[str]) -> list[Finding]:
    """Start the enabled servers briefly (as `bothost mcp list --check` does) and report.

    Servers in ``skip`` were already reported (their command is missing) and are not started.
    """
    from bothost.mcp import commands, stored

    manager = commands.manager_for(runtime.config, runtime.store, runtime.home)
    names = set(runtime.config.mcp.servers) | set(runtime.store.call(stored.load))
    try:
        statuses = asyncio.run(commands.list_servers(manager, check=True, only=names - skip))
    except Exception as exc:
        return [Finding("mcp", False, f"could not start the MCP servers: {exc}",
                        "see bothost mcp list and bothost mcp logs NAME")]
    out = []
    for s in statuses:
        if s.name in skip or not s.enabled or s.state in ("disabled", "shadowed"):
            continue
        if s.state == "ready":
            out.append(Finding(f"mcp {s.name}", True, f"ready, {s.tools} tools"))
        else:
            out.append(Finding(f"mcp {s.name}", False, f"{s.state}: {s.error or 'not ready'}",
                               f"bothost mcp logs {s.name}; fix it or bothost mcp disable "
                               f"{s.name}"))
    return out


def check_slack(config: Any) -> list[Finding]:
    slack = config.platforms.slack
    if not slack.enabled:
        return []
    from bothost.plugins.slack.app import check

    try:
        problem = asyncio.run(check(slack))
    except Exception as exc:
        problem = str(exc)
    if problem:
        return [Finding("slack", False, problem,
                        "see docs/slack.md to create the app and its tokens")]
    return [Finding("slack", True, f"{slack.mode} mode, tokens work")]
