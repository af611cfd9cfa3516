"""Running one command on a connected host: deadline, output caps, and sudo.

`run` opens an exec channel and reads stdout and stderr until the command exits, the
deadline passes or the caller's `stop` event is set (a cancelled tool call). A command cut
off either way is signalled before its channel closes: without a terminal, closing the
channel alone leaves a quiet command (`sleep`) running on the host.
Output beyond a cap is drained and counted but not kept, so a chatty command cannot eat
the server's memory or the model's context. `sudo_command` wraps a command for a sudo
method: `nopasswd` uses `sudo -n`, which fails at once instead of waiting for a password
nobody will type; `prompt` feeds the password on stdin (`-S`) with an empty prompt and
`-k`, and the command itself gets /dev/null as stdin, so the password can never reach it.
"""

from __future__ import annotations

import re
import select
import shlex
import threading
import time
from dataclasses import dataclass

from .errors import SshError
from .sshlib import paramiko

MAX_OUTPUT_BYTES = 256 * 1024  # per stream; more is almost never read and floods the context
CHUNK = 32 * 1024
OPEN_TIMEOUT = 10.0
POLL_SECONDS = 0.5  # upper bound on one wait; data and exit wake the wait earlier
# How long a cut-off command has to end on TERM before it gets KILL.
STOP_GRACE_SECONDS = 2.0
SUDO_MISSING_STATUSES = (126, 127)  # the shell's "cannot run" and "not found"
# dash says "Permission denied" when a PATH entry is unreadable and nothing else matched.
_SUDO_MISSING = re.compile(r"\bsudo\b.*(not found|No such file|Permission denied)")


@dataclass
class CommandResult:
    """What a command did; `exit_status` is None when it was cut off or killed."""

    exit_status: int | None
    stdout: str
    stderr: str
    truncated: bool = False
    timed_out: bool = False
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "exit_status": self.exit_status,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "truncated": self.truncated,
            "timed_out": self.timed_out,
            "seconds": round(self.seconds, 3),
        }


class _Capped:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.limit - self.size
        if room > 0:
            self.parts.append(data[:room])
            self.size += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))

    @property
    def full(self) -> bool:
        return self.size >= self.limit

    def text(self) -> str:
        return b"".join(self.parts).decode("utf-8", errors="replace")


def run(
    client: paramiko.SSHClient,
    command: str,
    timeout: float,
    stdin: bytes | None = None,
    max_bytes: int = MAX_OUTPUT_BYTES,
    stop_when_full: bool = False,
    stop: threading.Event | None = None,
) -> CommandResult:
    """Run `command` through the remote user's shell; see the module docstring."""
    transport = client.get_transport()
    if transport is None or not transport.is_active():
        raise SshError("the connection is closed")
    started = time.monotonic()
    deadline = started + timeout
    try:
        channel = transport.open_session(timeout=OPEN_TIMEOUT)
    except (paramiko.SSHException, OSError) as exc:
        # A connection that cannot open a session is of no more use (a silent peer keeps
        # TCP up for minutes): closed, the pool connects afresh on the next call.
        transport.close()
        raise SshError(f"the host refused a new session: {exc}") from None
    out, err = _Capped(max_bytes), _Capped(max_bytes)
    timed_out = cut_off = False
    try:
        channel.exec_command(command)
        if stdin:
            channel.sendall(stdin)
        channel.shutdown_write()
        while True:
            if channel.recv_ready():
                out.add(channel.recv(CHUNK))
            elif channel.recv_stderr_ready():
                err.add(channel.recv_stderr(CHUNK))
            elif channel.exit_status_ready() and (channel.eof_received or channel.closed):
                break
            elif channel.closed:
                break
            elif stop_when_full and (out.full or err.full):
                break
            elif stop is not None and stop.is_set():
                cut_off = True
                break
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = cut_off = True
                    break
                if channel.eof_received:  # output is over; only the exit status is left
                    channel.status_event.wait(min(remaining, POLL_SECONDS))
                else:
                    select.select([channel], [], [], min(remaining, POLL_SECONDS))
        if cut_off:
            stop_command(channel)
        status = (
            None if cut_off else channel.recv_exit_status() if channel.exit_status_ready() else None
        )
    finally:
        channel.close()
    return CommandResult(
        exit_status=status,
        stdout=out.text(),
        stderr=err.text(),
        truncated=bool(out.dropped or err.dropped) or (stop_when_full and (out.full or err.full)),
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


def stop_command(channel: paramiko.Channel) -> None:
    """Signal a running command: TERM, then KILL if it has not ended within a grace.

    This is RFC 4254's "signal" channel request, which OpenSSH (7.9 and later) delivers to
    the command's whole process group. OpenSSH refuses it for a root login, whose session
    runs without privilege separation: there only the closed channel remains, and a
    command that neither reads nor writes runs on.
    """
    for name in ("TERM", "KILL"):
        if channel.closed or channel.exit_status_ready():
            return
        message = paramiko.Message()
        message.add_byte(paramiko.common.cMSG_CHANNEL_REQUEST)
        message.add_int(channel.remote_chanid)
        message.add_string("signal")
        message.add_boolean(False)
        message.add_string(name)
        try:
            channel.transport._send_user_message(message)
        except (paramiko.SSHException, OSError, EOFError):
            return  # the connection is gone, and with it the session
        channel.status_event.wait(STOP_GRACE_SECONDS)


def shell_command(command: str, cwd: str | None = None) -> str:
    """`command`, run from `cwd` when given."""
    return f"cd {shlex.quote(cwd)} && {command}" if cwd else command


def sudo_command(command: str, method: str, user: str | None = None) -> str:
    """`command` wrapped for the alias's sudo `method` (`nopasswd` or `prompt`)."""
    as_user = ["-u", user] if user else []
    if method == "nopasswd":
        flags = ["-n"]
    elif method == "prompt":
        flags = ["-k", "-S", "-p", ""]
        # If sudo needs no password after all, the line we send stays unread on stdin:
        # the command must never see it.
        command = f"exec </dev/null; {command}"
    else:
        raise SshError("sudo is disabled for this alias (sudo method 'none')")
    argv = ["sudo", *flags, *as_user, "--", "sh", "-c", command]
    return " ".join(shlex.quote(a) for a in argv)


def sudo_failure(result: CommandResult, method: str, alias: str) -> str | None:
    """The reason sudo itself refused (not the command failing), else None."""
    if result.exit_status in SUDO_MISSING_STATUSES and _SUDO_MISSING.search(result.stderr):
        return f"sudo is not installed (or not runnable) on {alias}"
    if result.exit_status != 1:
        return None
    first = result.stderr.lstrip().splitlines()[0] if result.stderr.strip() else ""
    lowered = result.stderr.lower()
    if not (first.startswith("sudo:") or first.startswith("Sorry")):
        return None
    if "password is required" in lowered:
        return (
            f"sudo on {alias} wants a password and the alias's sudo method is 'nopasswd' "
            "(it never waits). Use sudo method 'prompt', or give the login user a NOPASSWD "
            "sudoers rule"
        )
    if "incorrect password" in lowered or "sorry, try again" in lowered:
        return f"sudo on {alias} rejected the password"
    if "no password was provided" in lowered:
        return f"sudo on {alias} got no password"
    if "not in the sudoers" in lowered or "not allowed to" in lowered or "may not run" in lowered:
        return f"sudo on {alias} refused: {first.removeprefix('sudo:').strip()}"
    if method == "prompt" and "a terminal is required" in lowered:
        return f"sudo on {alias} insists on a terminal (requiretty)"
    return None
