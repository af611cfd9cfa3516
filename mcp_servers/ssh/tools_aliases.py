"""Tools that manage aliases: `list_aliases`, `add_alias`, `remove_alias`.

Adding an alias does not connect: the host may be down right now, and a password alias
would have to ask for its password only to throw the connection away. The first tool
call that uses the alias connects, and checks the host key.
"""

from __future__ import annotations

from typing import Literal

from bothost.mcp_servers.kit import Server

from .aliases import Alias, Monitors
from .capabilities import DELETES_CONFIG, READS_CONFIG, WRITES_CONFIG
from .service import SshService, tool_errors

CONFIG_READ = {"readOnlyHint": True, "openWorldHint": False}
CONFIG_WRITE = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
CONFIG_DELETE = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}


def register(server: Server, svc: SshService) -> None:
    @server.tool(annotations=CONFIG_READ, capabilities=READS_CONFIG)
    @tool_errors
    async def list_aliases() -> dict:
        """List the configured SSH aliases (where and how each connects; never a secret)."""
        aliases = svc.aliases.load()
        return {"aliases": [a.public() for _, a in sorted(aliases.items())]}

    @server.tool(annotations=CONFIG_WRITE, capabilities=WRITES_CONFIG)
    @tool_errors
    async def add_alias(
        name: str,
        host: str,
        user: str,
        port: int = 22,
        auth: Literal["key", "agent", "password"] = "key",
        key_file: str | None = None,
        sudo: Literal["nopasswd", "prompt", "none"] = "nopasswd",
        accept_new_host_key: bool = False,
        description: str = "",
        disk_alert_percent: int | None = None,
        disk_paths: list[str] | None = None,
        alert_failed_units: bool = False,
        alert_unreachable: bool = False,
        replace: bool = False,
    ) -> dict:
        """Add (or with replace=true, change) an SSH alias. It does not connect yet.

        Args:
            name: Short name used by every other tool, e.g. "db-1".
            host: Host name or IP address.
            user: Login user.
            port: SSH port.
            auth: "key" (key_file, else default keys and the agent), "agent", or
                "password" (asked from the user when connecting; never stored).
            key_file: Path of a private key on this machine (for auth "key").
            sudo: How exec/systemd get root: "nopasswd" (sudo -n, fails at once if a
                password is needed), "prompt" (asks the user; kept in memory for a while),
                or "none" (sudo refused).
            accept_new_host_key: Trust and record the host key on first connect if
                known_hosts does not have it yet. A changed key is always refused.
            description: Free text for people.
            disk_alert_percent: Monitor: alert when a disk in disk_paths is this full (%).
            disk_paths: Monitor: paths whose filesystems are checked (default ["/"]).
            alert_failed_units: Monitor: alert on failed systemd units.
            alert_unreachable: Monitor: alert when the host cannot be reached.
            replace: Overwrite an existing alias of the same name.
        """
        monitors = Monitors(
            disk_percent=disk_alert_percent,
            disk_paths=list(disk_paths) if disk_paths else ["/"],
            failed_units=alert_failed_units,
            unreachable=alert_unreachable,
        )
        alias = Alias(
            name=name,
            host=host,
            user=user,
            port=port,
            auth=auth,
            key_file=key_file,
            sudo=sudo,
            accept_new_host_key=accept_new_host_key,
            description=description,
            monitors=monitors,
        )
        svc.aliases.add(alias, replace=replace)
        svc.forget(name)  # an old connection or password belongs to the old definition
        return {"added": alias.public(), "aliases_file": str(svc.aliases.path)}

    @server.tool(annotations=CONFIG_DELETE, capabilities=DELETES_CONFIG)
    @tool_errors
    async def remove_alias(name: str) -> str:
        """Remove an SSH alias, closing its connection and forgetting its passwords.

        Args:
            name: The alias to remove.
        """
        alias = svc.aliases.remove(name)
        svc.forget(name)
        return f"removed alias {name!r} ({alias.target}); its host key stays in known_hosts"
