"""What a Linux host is and how it is doing: `sysinfo`, disk use, and systemd units.

Everything comes from one shell round trip per question, reading /proc and the standard
tools (`uname`, `df -P`, `systemctl`), because those exist on every Linux host while
agents and extra packages do not. Parsers are plain functions of the command's text so
they are tested without a host. `systemctl` may be missing or unable to talk to systemd
(containers): that is reported as "unavailable", not as an error of the whole call.
"""

from __future__ import annotations

import re
import shlex

from . import commands
from .errors import SshError
from .sshlib import paramiko

QUERY_TIMEOUT = 30.0
UNIT_PATTERN = re.compile(r"^[A-Za-z0-9@._:\\-]{1,200}$")
SYSTEMD_ACTIONS = (
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
)
CHANGING_ACTIONS = {"start", "stop", "restart", "reload", "enable", "disable"}
SHOW_PROPERTIES = "Id,Description,LoadState,ActiveState,SubState,UnitFileState,MainPID,ActiveEnterTimestamp,Result"  # noqa: E501
FAILED_UNITS = "systemctl list-units --failed --plain --no-legend --no-pager"

_SYSINFO = "; ".join(
    [
        "echo '@@uname'; uname -snrm",
        "echo '@@os'; cat /etc/os-release 2>/dev/null",
        "echo '@@uptime'; cat /proc/uptime",
        "echo '@@load'; cat /proc/loadavg",
        "echo '@@cpus'; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN",
        "echo '@@mem'; cat /proc/meminfo",
        "echo '@@df'; df -P -k -x tmpfs -x devtmpfs -x squashfs 2>/dev/null || df -P -k",
        f"echo '@@failed'; {FAILED_UNITS} 2>/dev/null || echo '@@unavailable'",
    ]
)


def _sections(text: str) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("@@") and line[2:].isalpha() and line[2:] != "unavailable":
            current = line[2:]
            sections[current] = []
        elif current:
            sections[current].append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}


def parse_df(text: str) -> list[dict]:
    """Rows of `df -P -k` as dicts (sizes in KiB, `use_percent` an int)."""
    rows = []
    for line in text.splitlines()[1:]:
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[4].rstrip("%").isdigit():
            continue
        rows.append(
            {
                "filesystem": parts[0],
                "size_kib": int(parts[1]),
                "used_kib": int(parts[2]),
                "available_kib": int(parts[3]),
                "use_percent": int(parts[4].rstrip("%")),
                "mount": parts[5],
            }
        )
    return rows


def parse_units(text: str) -> list[dict] | None:
    """Rows of `systemctl list-units --plain --no-legend`; None when systemctl was unusable."""
    if "@@unavailable" in text:
        return None
    units = []
    for line in text.splitlines():
        parts = line.lstrip("● ").split(None, 4)
        if len(parts) >= 4:
            unit, load, active, sub = parts[:4]
            units.append(
                {
                    "unit": unit,
                    "load": load,
                    "active": active,
                    "sub": sub,
                    "description": parts[4] if len(parts) > 4 else "",
                }
            )
    return units


def parse_sysinfo(text: str) -> dict:
    s = _sections(text)
    uname = s.get("uname", "").split()
    os_release = dict(line.split("=", 1) for line in s.get("os", "").splitlines() if "=" in line)
    meminfo = {}
    for line in s.get("mem", "").splitlines():
        key, _, value = line.partition(":")
        if value.strip().split()[:1] and value.split()[0].isdigit():
            meminfo[key] = int(value.split()[0])
    load = s.get("load", "").split()
    uptime = s.get("uptime", "").split()
    return {
        "hostname": uname[1] if len(uname) > 1 else None,
        "kernel": " ".join(uname[2:3]) or None,
        "arch": uname[3] if len(uname) > 3 else None,
        "os": os_release.get("PRETTY_NAME", "").strip('"') or None,
        "uptime_seconds": float(uptime[0]) if uptime else None,
        "load": [float(x) for x in load[:3]] if len(load) >= 3 else None,
        "cpus": int(s["cpus"].strip()) if s.get("cpus", "").strip().isdigit() else None,
        "memory_kib": {"total": meminfo.get("MemTotal"), "available": meminfo.get("MemAvailable")},
        "disks": parse_df(s.get("df", "")),
        "failed_units": parse_units(s.get("failed", "") if "failed" in s else "@@unavailable"),
    }


def sysinfo(client: paramiko.SSHClient) -> dict:
    result = commands.run(client, _SYSINFO, QUERY_TIMEOUT)
    if result.exit_status is None:
        raise SshError("sysinfo did not finish in time")
    return parse_sysinfo(result.stdout)


def disk_usage(client: paramiko.SSHClient, paths: list[str]) -> list[dict]:
    """`df` rows of the filesystems holding `paths`, in order (one per path)."""
    command = "df -P -k -- " + " ".join(shlex.quote(p) for p in paths)
    result = commands.run(client, command, QUERY_TIMEOUT)
    rows = parse_df(result.stdout)
    if len(rows) != len(paths):
        raise SshError(f"df failed: {result.stderr.strip() or 'unexpected output'}")
    return [{**row, "path": path} for row, path in zip(rows, paths, strict=True)]


def failed_units(client: paramiko.SSHClient) -> list[dict] | None:
    result = commands.run(client, FAILED_UNITS, QUERY_TIMEOUT)
    return parse_units(result.stdout) if result.exit_status == 0 else None


def systemd_command(action: str, unit: str | None, lines: int) -> str:
    """The shell command for one `systemd` tool action (validated; quoted)."""
    if action not in SYSTEMD_ACTIONS:
        raise SshError(f"action must be one of {', '.join(SYSTEMD_ACTIONS)}")
    if action in ("list", "failed"):
        state = "--failed" if action == "failed" else "--all"
        return f"systemctl list-units --type=service {state} --plain --no-legend --no-pager"
    if not unit or not UNIT_PATTERN.match(unit) or unit.startswith("-"):
        raise SshError(f"action {action!r} needs a valid unit name")
    quoted = shlex.quote(unit)
    if action == "status":
        return f"systemctl show {quoted} --no-pager --property={SHOW_PROPERTIES}"
    if action == "logs":
        return f"journalctl -u {quoted} -n {int(lines)} --no-pager -o short-iso"
    return f"systemctl {action} -- {quoted}"


def parse_show(text: str) -> dict:
    """`systemctl show` key=value lines as a dict."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
