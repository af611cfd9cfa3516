"""The ssh server's one expected-failure type, and readable text for what paramiko raises.

Every module below the tool layer raises `SshError` for failures the model should read
(a refused host key, a missing file, sudo wanting a password); the tool layer turns it into
an `isError` result. `describe` maps socket, SFTP and paramiko exceptions to one line that
names the host or path, so nothing else needs to know paramiko's exception zoo.
"""

from __future__ import annotations

import errno
import socket

from .sshlib import paramiko


class SshError(Exception):
    """An expected failure whose message is meant for the model and the user."""


class HostKeyError(SshError):
    """The server's host key is unknown (and not to be accepted) or has changed."""


class AuthError(SshError):
    """The host refused our credentials (so a remembered password must be forgotten)."""


def describe(exc: BaseException, where: str) -> str:
    """One line saying what went wrong at `where` (a host:port or a remote path)."""
    if isinstance(exc, SshError):
        return str(exc)
    if isinstance(exc, paramiko.AuthenticationException):
        return f"authentication failed for {where}: {exc}"
    if _no_credentials(exc):
        return (
            f"authentication failed for {where}: no key or agent to offer (is the key_file "
            "readable, and is SSH_AUTH_SOCK passed through to the server?)"
        )
    if isinstance(exc, paramiko.BadHostKeyException):
        return f"host key for {where} does not match known_hosts"
    # paramiko's "every address failed"
    if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError):
        reasons = sorted({e.strerror or str(e) for e in exc.errors.values()})
        return f"cannot connect to {where}: {', '.join(reasons)}"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host of {where}: {exc.strerror or exc}"
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused by {where}"
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"timed out talking to {where}"
    if isinstance(exc, paramiko.SSHException):
        return f"SSH error with {where}: {exc}"
    if isinstance(exc, FileNotFoundError) or getattr(exc, "errno", None) == errno.ENOENT:
        return f"no such file or directory: {where}"
    if isinstance(exc, PermissionError) or getattr(exc, "errno", None) == errno.EACCES:
        return f"permission denied: {where}"
    if isinstance(exc, OSError):
        return f"{where}: {exc.strerror or exc}"
    return f"{where}: {type(exc).__name__}: {exc}"


def wrap(exc: BaseException, where: str) -> SshError:
    """An `SshError` carrying `describe`'s text, for `raise wrap(exc, where) from exc`."""
    if isinstance(exc, SshError):
        return exc
    if isinstance(exc, paramiko.AuthenticationException) or _no_credentials(exc):
        return AuthError(describe(exc, where))
    return SshError(describe(exc, where))


def _no_credentials(exc: BaseException) -> bool:
    # paramiko says this (as a plain SSHException) when it had nothing at all to try.
    return isinstance(exc, paramiko.SSHException) and "No authentication methods" in str(exc)
