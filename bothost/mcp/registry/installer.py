"""``bothost mcp install REGISTRY_NAME``: an MCP registry entry installed as a server.

The entry is looked up, a plan made for this machine (:mod:`bothost.mcp.registry.plan`),
then a PyPI or npm package goes through the ordinary isolated install
(:func:`bothost.mcp.install.install_server`), while a remote needs nothing installed and is
registered directly (an OCI image is refused by the plan). Either way the row's ``install``
column records the registry and the entry, and the server is started once to list its
tools — unless a required variable is not set here, when it is registered and not started,
and the result says which variables to set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bothost.config import McpServerConfig
from bothost.mcp import stored
from bothost.mcp.install import (
    Progress,
    check_name_free,
    default_name,
    install_server,
    quiet,
    save_record,
    started,
)
from bothost.mcp.manager import McpManager
from bothost.mcp.registry.client import Registry
from bothost.mcp.registry.entries import Entry
from bothost.mcp.registry.plan import Ask, Plan, plan


@dataclass
class RegistryInstall:
    """What was installed: enough for a few lines of output or ``--json``."""

    name: str
    entry: Entry
    plan: Plan
    target: str  # the command run, or the url
    version: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    started: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "entry": self.entry.name,
            "version": self.version,
            "kind": self.plan.kind,
            "spec": self.plan.spec,
            "target": self.target,
            "args": self.plan.args,
            "env": self.plan.env,  # secrets are ${env:NAME} references here
            "headers": self.plan.headers,
            "unset": self.plan.unset,
            "optional": self.plan.optional,
            "started": self.started,
            "tools": self.tools,
        }


async def install_entry(
    manager: McpManager,
    registry_url: str,
    entry_name: str,
    *,
    name: str | None = None,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    command: str | None = None,
    ask: Ask | None = None,
    progress: Progress = lambda _line: None,
    output: Progress = quiet,
) -> RegistryInstall:
    """Look ``entry_name`` up in the registry at ``registry_url`` and install it; ``progress``
    and ``output`` as :func:`~bothost.mcp.install.install_server` takes them."""
    async with Registry(registry_url) as registry:
        entry = await registry.find(entry_name)
        url = registry.url
    chosen = plan(entry, list(args or []), dict(env or {}), ask)
    name = name or default_name(entry.name)
    others = f" (it also offers: {', '.join(chosen.others)})" if chosen.others else ""
    progress(f"{entry.name} {entry.version}: {chosen.kind} {chosen.spec}{others}")
    record = {"registry": url, "entry": entry.name, "entry_version": entry.version}
    if chosen.kind in ("pypi", "npm"):
        result = await install_server(
            manager,
            chosen.spec,
            name=name,
            args=chosen.args,
            env=chosen.env,
            command=command,
            progress=progress,
            output=output,
            description=entry.description,
            start=not chosen.unset,
            record=record,
        )
        installed = result.installed
        return RegistryInstall(
            result.name,
            entry,
            chosen,
            str(installed.command),
            installed.version,
            result.tools,
            result.status is not None,
        )
    return await register(manager, name, entry, chosen, record, progress)


async def register(
    manager: McpManager,
    name: str,
    entry: Entry,
    chosen: Plan,
    record: dict[str, Any],
    progress: Progress,
) -> RegistryInstall:
    """A remote: nothing to install, the server is added (and started)."""
    await check_name_free(manager, name)
    config = McpServerConfig(
        url=chosen.spec,
        headers=chosen.headers,
        env=chosen.env,
        description=entry.description[:200],
    )
    target = chosen.spec
    await manager.add_server(name, config, origin="install")
    try:
        details = {
            "kind": chosen.kind,
            "package": chosen.spec,
            "spec": chosen.spec,
            "version": entry.version,
            "folder": "",
            "command": config.command or "",
            **record,
        }
        await manager.store.run(lambda db: save_record(db, name, details))
        done = RegistryInstall(name, entry, chosen, target, entry.version)
        if not chosen.unset:
            progress(f"starting {name}: {target}")
            _status, done.tools = await started(manager, name, f"{name} was added but")
            done.started = True
        return done
    except BaseException:
        await manager.store.run(lambda db: stored.delete(db, name))
        raise
