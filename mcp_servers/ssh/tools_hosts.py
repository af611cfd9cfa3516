"""Tools that run things on a host: `exec`, `sysinfo`, `systemd`.

`exec` returns structured output (exit status, stdout, stderr, flags) so a model can tell
a failing command from a failing connection: the first is a normal result with a non-zero
`exit_status`, the second an error result. sudo problems (not installed, a password
needed under `nopasswd`, a wrong password) are error results that say what to change.
"""

from __future__ import annotations

from typing import Literal

from bothost.mcp_servers.kit import Context, Server

from . import system
from .capabilities import CHANGES, READ_ONLY, READS_HOST, RUNS_ON_HOST
from .errors import SshError
from .service import SshService, tool_errors

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0
JOURNAL_LINES = 50

EXEC_SCHEMA = {
    "type": "object",
    "properties": {
        "exit_status": {"type": ["integer", "null"]},
        "stdout": {"type": "string"},
        "stderr": {"type": "string"},
        "truncated": {"type": "boolean"},
        "timed_out": {"type": "boolean"},
        "seconds": {"type": "number"},
    },
    "required": ["exit_status", "stdout", "stderr", "truncated", "timed_out"],
}


def register(server: Server, svc: SshService) -> None:
    @server.tool(annotations=CHANGES, capabilities=RUNS_ON_HOST, output_schema=EXEC_SCHEMA)
    @tool_errors
    async def exec(
        alias: str,
        command: str,
        timeout: float = DEFAULT_TIMEOUT,
        sudo: bool = False,
        sudo_user: str | None = None,
        cwd: str | None = None,
        ctx: Context | None = None,
    ) -> dict:
        """Run a shell command on a host and return its exit status and output.

        Args:
            alias: SSH alias.
            command: Shell command line (run by the login shell, or sh -c under sudo).
            timeout: Seconds before the command is cut off.
            sudo: Run as root through sudo (the alias's sudo method decides how).
            sudo_user: Run as this user through sudo (implies sudo).
            cwd: Directory to run in.
        """
        if not 0 < timeout <= MAX_TIMEOUT:
            raise SshError(f"timeout must be between 0 and {MAX_TIMEOUT:.0f} seconds")
        result = await svc.execute(alias, command, timeout, ctx, sudo, sudo_user, cwd)
        return result.as_dict()

    @server.tool(annotations=READ_ONLY, capabilities=READS_HOST)
    @tool_errors
    async def sysinfo(alias: str, ctx: Context | None = None) -> dict:
        """Describe a Linux host: OS, kernel, uptime, load, CPUs, memory, disks, failed units.

        Args:
            alias: SSH alias.
        """
        return await svc.with_client(alias, ctx, system.sysinfo, timeout=system.QUERY_TIMEOUT)

    @server.tool(annotations=CHANGES, capabilities=RUNS_ON_HOST)
    @tool_errors
    async def systemd(
        alias: str,
        action: Literal[
            "status",
            "list",
            "failed",
            "logs",
            "start",
            "stop",
            "restart",
            "reload",
            "enable",
            "disable",
        ],
        unit: str | None = None,
        sudo: bool = False,
        lines: int = JOURNAL_LINES,
        ctx: Context | None = None,
    ) -> dict:
        """Inspect or control systemd services on a host.

        "status", "list", "failed" and "logs" only read; the others change the unit's
        state (usually needs sudo=true).

        Args:
            alias: SSH alias.
            action: What to do.
            unit: Unit name, e.g. "nginx.service" (all actions but list and failed).
            sudo: Run systemctl through sudo.
            lines: How many journal lines "logs" returns.
        """
        command = system.systemd_command(action, unit, lines)
        result = await svc.execute(alias, command, system.QUERY_TIMEOUT, ctx, sudo=sudo)
        if result.exit_status is None:
            raise SshError(f"systemctl {action} did not finish within {system.QUERY_TIMEOUT:.0f} s")
        if result.exit_status == 127:
            raise SshError(f"systemctl is not available on {alias}")
        answer: dict = {"action": action, "unit": unit, "exit_status": result.exit_status}
        if action == "status" and result.exit_status == 0:
            answer["status"] = system.parse_show(result.stdout)
        elif action in ("list", "failed") and result.exit_status == 0:
            answer["units"] = system.parse_units(result.stdout)
        else:
            answer["output"] = (result.stdout + result.stderr).strip()
        answer["ok"] = result.exit_status == 0
        return answer
