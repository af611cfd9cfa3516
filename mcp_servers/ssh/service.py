"""The asyncio face of the ssh server: connecting (asking for passwords), and running
blocking paramiko work in threads with deadlines.

Tools and the monitor go through one `SshService`. It owns the order of things a call
needs: look up the alias, ask the user for a password through elicitation when the alias
needs one and none is remembered, borrow the pooled connection, run the blocking work in
a worker thread bounded by a deadline, and remember a password only after the host
accepted it. Configuration comes from the environment (see `from_env`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from bothost.mcp_servers.kit import ToolError

from . import commands
from .aliases import Alias, AliasStore
from .connections import DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_TTL, ConnectionPool
from .errors import AuthError, SshError
from .passwords import DEFAULT_TTL_SECONDS, LOGIN, SUDO, PasswordCache
from .sshlib import paramiko

logger = logging.getLogger(__name__)

T = TypeVar("T")

ELICIT_TIMEOUT = 180.0  # a person has to find and type the password
THREAD_GRACE = 15.0  # beyond a call's own timeout, for connecting and tearing down
SFTP_TIMEOUT = 120.0  # one SFTP operation (a read, a listing, an edit)
PASSWORD_SCHEMA = {
    "type": "object",
    "properties": {
        "password": {"type": "string", "title": "Password", "description": "Not stored"}
    },
    "required": ["password"],
}


def tool_errors(fn: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Turn `SshError` from a tool body into the kit's `ToolError` (an `isError` result)."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> T:
        try:
            return await fn(*args, **kwargs)
        except SshError as exc:
            raise ToolError(str(exc)) from None

    return call


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ[name])
    except (KeyError, ValueError):
        return default


class SshService:
    """Aliases, pooled connections and remembered passwords, for tools and the monitor."""

    def __init__(
        self, aliases: AliasStore, pool: ConnectionPool, passwords: PasswordCache, state_dir: Path
    ) -> None:
        self.aliases = aliases
        self.pool = pool
        self.passwords = passwords
        self.state_dir = state_dir
        self._locks: dict[str, asyncio.Lock] = {}

    @classmethod
    def from_env(cls, state_dir: Path) -> SshService:
        """`SSH_MCP_ALIASES`, `SSH_MCP_KNOWN_HOSTS`, `SSH_MCP_POOL_TTL`,
        `SSH_MCP_PASSWORD_TTL`, `SSH_MCP_CONNECT_TIMEOUT`; see docs/servers/ssh.md."""
        aliases = Path(os.environ.get("SSH_MCP_ALIASES") or state_dir / "aliases.json")
        known = os.environ.get("SSH_MCP_KNOWN_HOSTS") or "~/.ssh/known_hosts"
        pool = ConnectionPool(
            Path(known).expanduser(),
            idle_ttl=_env_float("SSH_MCP_POOL_TTL", DEFAULT_IDLE_TTL),
            connect_timeout=_env_float("SSH_MCP_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT),
        )
        passwords = PasswordCache(_env_float("SSH_MCP_PASSWORD_TTL", DEFAULT_TTL_SECONDS))
        return cls(AliasStore(aliases.expanduser()), pool, passwords, state_dir)

    async def thread(self, fn: Callable[..., T], *args: Any, timeout: float) -> T:
        """`fn(*args)` in a worker thread; `SshError` if it takes longer than `timeout`."""
        try:
            return await asyncio.wait_for(asyncio.to_thread(fn, *args), timeout)
        except TimeoutError:
            raise SshError(f"gave up after {timeout:.0f} s without an answer") from None

    # connecting ---------------------------------------------------------------------

    async def connect(
        self, name: str, ctx: Any = None, interactive: bool = True
    ) -> tuple[Alias, paramiko.SSHClient]:
        """The alias and its pooled connection; may ask the user for the login password."""
        alias = self.aliases.get(name)
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            password = None
            if alias.auth == "password" and not self.pool.live(alias):
                password = self.passwords.get(LOGIN, name)
                if password is None:
                    if not interactive:
                        raise SshError(f"alias {name!r} needs a password nobody is there to type")
                    password = await self.ask_password(ctx, alias, LOGIN)
            deadline = self.pool.connect_timeout * 3 + THREAD_GRACE
            try:
                client = await self.thread(self.pool.client, alias, password, timeout=deadline)
            except AuthError:
                self.passwords.forget(LOGIN, name)
                raise
            if password is not None:
                self.passwords.put(LOGIN, name, password)
        return alias, client

    async def ask_password(self, ctx: Any, alias: Alias, kind: str) -> str:
        """Ask the user through elicitation; `SshError` when nobody answers."""
        what = "sudo password" if kind == SUDO else "password"
        if ctx is None or not getattr(ctx, "can_elicit", False):
            raise SshError(
                f"alias {alias.name!r} needs a {what}, and this client cannot ask the user "
                "(no elicitation support); nothing was done"
            )
        message = (
            f"The {what} of {alias.user} on {alias.host} (ssh alias {alias.name!r}). "
            "It is kept in memory only, for a limited time."
        )
        content = await ctx.elicit(message, PASSWORD_SCHEMA, timeout=ELICIT_TIMEOUT)
        password = (content or {}).get("password")
        if not isinstance(password, str) or not password:
            raise SshError(f"no {what} was given for {alias.name!r}; nothing was done")
        return password

    def forget(self, name: str) -> None:
        """Drop the connection and remembered passwords of alias `name`."""
        self.pool.drop(name)
        self.passwords.forget_alias(name)

    # doing --------------------------------------------------------------------------

    async def with_sftp(
        self, name: str, ctx: Any, fn: Callable[..., T], *args: Any, timeout: float = SFTP_TIMEOUT
    ) -> T:
        """`fn(sftp, *args)` on a fresh SFTP channel of the alias's connection."""
        _, client = await self.connect(name, ctx)

        def work() -> T:
            try:
                sftp = client.open_sftp()
            except (paramiko.SSHException, OSError) as exc:
                client.close()  # of no more use: the pool connects afresh (commands.run too)
                raise SshError(f"{name}: cannot start SFTP: {exc}") from None
            try:
                sftp.get_channel().settimeout(timeout)
                return fn(sftp, *args)
            finally:
                sftp.close()

        return await self.thread(work, timeout=timeout + THREAD_GRACE)

    async def with_client(
        self, name: str, ctx: Any, fn: Callable[..., T], *args: Any, timeout: float
    ) -> T:
        """`fn(client, *args)` with the alias's connection, in a thread."""
        _, client = await self.connect(name, ctx)
        return await self.thread(fn, client, *args, timeout=timeout + THREAD_GRACE)

    async def execute(
        self,
        name: str,
        command: str,
        timeout: float,
        ctx: Any = None,
        sudo: bool = False,
        sudo_user: str | None = None,
        cwd: str | None = None,
    ) -> commands.CommandResult:
        """Run `command` on the alias, as root or `sudo_user` when asked."""
        method = self.aliases.get(name).sudo
        if (sudo or sudo_user) and method == "none":  # refuse before asking for any password
            raise SshError(f"sudo is disabled for alias {name!r} (sudo method 'none')")
        alias, client = await self.connect(name, ctx)
        line = commands.shell_command(command, cwd)
        stdin = None
        if sudo or sudo_user:
            line = commands.sudo_command(line, method, sudo_user)
            if method == "prompt":
                password = self.passwords.get(SUDO, name) or await self.ask_password(
                    ctx, alias, SUDO
                )
                stdin = (password + "\n").encode()
        stop = threading.Event()
        run = functools.partial(commands.run, stop=stop)
        try:
            result = await self.thread(
                run, client, line, timeout, stdin, timeout=timeout + THREAD_GRACE
            )
        finally:
            stop.set()  # a cancelled call (Ctrl-C) or a hung thread: end the command on the host
        if sudo or sudo_user:
            problem = commands.sudo_failure(result, method, name)
            if problem:
                self.passwords.forget(SUDO, name)
                raise SshError(problem)
            if stdin is not None:
                self.passwords.put(SUDO, name, password)
        return result
