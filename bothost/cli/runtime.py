"""What CLI commands share: the config, home, plugins and store, each built on first use.

Nothing touches the disk until a command needs it, so a config error exits having written
nothing. The config a command sees holds the sections its plugins declare (``register_config``)
and has been checked against what the plugins registered (LLM providers, platforms), so every
command refuses a wrong plugin value or an unknown name alike, at load.
``Runtime.host()`` builds a :class:`~bothost.host.host.Host` on the same store.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import click

from bothost import config as config_module
from bothost import redact
from bothost.config.home import HomeError
from bothost.hooks.discovery import PluginInfo, load_plugins, new_plugin_manager
from bothost.hooks.startup import Registered, build_migrations
from bothost.host import config_load
from bothost.store import Store, StoreError
from bothost.store.corruption import OPEN_CHECK_SECONDS
from bothost.store.target import DEFAULT_FILE, store_target

T = TypeVar("T")


class Runtime:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock  # the deadline of `events push --wait` (tests pass a fake)
        self.config_file: str | None = None
        self.home_option: str | None = None
        self.plugin_commands: dict[str, Any] | None = None
        self.verbose = 0
        self._host: Any = None
        self._configured = False

    def configure(self, params: dict[str, Any]) -> None:
        if self._configured:
            return
        self.config_file = params.get("config_file")
        self.home_option = params.get("home")
        self._configured = True

    @cached_property
    def home(self) -> Path:
        if self.home_option:
            return Path(self.home_option).expanduser().resolve()
        return config_module.default_home().resolve()

    @cached_property
    def config(self) -> config_module.Config:
        """The config with the plugins' sections, checked against what the plugins registered."""
        config = self._loaded_config
        pm = self._plugins[0]
        config_module.bind_sections(config, pm)
        redact.remember(redact.config_secrets(config) | config_module.secret_values(config))
        config_module.check_registered(
            config, providers=self.registered.providers, platforms=self.registered.platforms
        )
        return config

    @cached_property
    def registered(self) -> Registered:
        """The plugins' providers and platforms, for the config's check and the host alike."""
        return Registered.collect(self._plugins[0])

    @cached_property
    def _loaded_config(self) -> config_module.Config:
        """Core's keys only: enough to know which plugins to load."""
        config = config_load.load_core(self.config_file, self.home)  # each domain checks its own
        redact.remember(redact.config_secrets(config))  # every log of this command hides them
        return config

    @cached_property
    def _plugins(self) -> tuple[Any, list[PluginInfo]]:
        pm = new_plugin_manager()
        config = self._loaded_config  # plugins.dirs and plugins.disabled decide what loads
        infos = load_plugins(pm, config.plugins.dirs, config.plugins.disabled)
        return pm, infos

    @property
    def pm(self) -> Any:
        self.config  # noqa: B018 (no plugin runs for a config its plugins refuse)
        return self._plugins[0]

    @property
    def plugins(self) -> list[PluginInfo]:
        self.config  # noqa: B018
        return self._plugins[1]

    def host(self, lock_wait: float | None = None, check_within: float | None = None) -> Any:
        """The host for this command (built once; started by the command if it needs to);
        ``lock_wait``: seconds after which its store waits no more on another process's
        lock (None: each wait is bounded by the store's busy timeout); ``check_within``:
        seconds the database file's pages may be checked for damage at open (None: a
        command's budget; ``run`` gives more, see :mod:`bothost.store.corruption`)."""
        if self._host is None:
            from bothost.host.host import Host

            with ctrl_c_interrupts():  # the open may wait out another process's lock
                self._host = Host(
                    self.config,
                    self.home,
                    self.pm,
                    self.registered,
                    lock_wait=lock_wait,
                    check_within=OPEN_CHECK_SECONDS if check_within is None else check_within,
                )
            self._host.config_file = self.config_file  # what a config reload reads again
        return self._host

    async def host_within(self, patience: float) -> Any:
        """:meth:`host`, its database opened again while another process holds it locked,
        for up to ``patience`` seconds (``events push --wait``): the open waits out the lock
        only for the store's busy timeout, and a push must not be lost to a long write. No
        wait of the store on the lock, the open's or a later job's, runs past ``patience``."""
        give_up = self.clock() + patience
        while True:
            try:
                return self.host(lock_wait=max(0.0, give_up - self.clock()))
            except StoreError as exc:
                left = give_up - self.clock()
                if not busy(exc) or left <= 0:
                    raise
                click.echo(f"bothost: {exc}; trying again for up to {math.ceil(left)} s", err=True)
                await asyncio.sleep(min(OPEN_RETRY_SECONDS, left))

    @property
    def store(self) -> Any:
        return self.host().store

    def has_home(self) -> bool:
        """Whether what a command would read exists: the home, or another store's URL."""
        return self.config.store.url is not None or self.home.exists()

    @property
    def stored(self) -> Any:
        """The store, for a command that only reads it: :class:`HomeError` when the home
        (and so its database) is not there yet, rather than creating both to show nothing."""
        if not self.has_home():
            raise HomeError(
                f"no home at {self.home} yet, so nothing is stored there: `bothost run` (or "
                "`bothost chat`) creates it; or choose another --home / BOTHOST_HOME"
            )
        if self._host is None and self.config.store.url is None and not writable(self.home):
            if (self.home / DEFAULT_FILE).exists():  # else: nothing to read, "not writable"
                return self.read_only_store  # a backup, a read-only mount, a 0555 home
        return self.store

    @cached_property
    def read_only_store(self) -> Any:
        """The home's database opened for reading only (no home made, nothing migrated)."""
        return Store(store_target(None, self.home), build_migrations(self.pm), read_only=True)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run(coro)

    async def ingest_event(
        self, source: str, type: str, payload: dict[str, Any], dedupe_key: str | None = None
    ) -> int | None:
        from bothost.host.wiring import start_events

        host = self.host()
        host.events = await start_events(host, tick=False)
        try:
            return await host.ingest_event(source, type, payload, dedupe_key=dedupe_key)
        finally:
            await host.events.close()

    async def push_event(
        self, source: str, type: str, payload: dict[str, Any], patience: float
    ) -> Any:
        """``bothost events push``: see :func:`bothost.events.push.push_event`. ``patience``
        (``--wait``) covers the open and the push together: the push gets what the open of
        a locked database left of it (at least one try), not the whole wait again."""
        from bothost.events.push import push_event
        from bothost.host.wiring import start_events

        give_up = self.clock() + patience
        host = await self.host_within(patience)
        left = max(0.0, give_up - self.clock())
        host.events = await start_events(host, tick=False)
        try:
            return await push_event(host, source, type, payload, patience=left)
        finally:
            await host.events.close()

    @asynccontextmanager
    async def recording_events(self) -> AsyncIterator[Any]:
        """The ``on_events`` for a command's MCP servers (a
        :class:`~bothost.events.push.Recorder`): as in the host, each server's backlog goes
        through ``Host.take_events`` (the intake) at once (an event no store can take is
        refused alone, its neighbours are kept), and all of it is written before this ends; a
        store that fails is tried for a bounded time, and ``recorder.error()`` names what it
        lost."""
        from bothost.events.push import Recorder
        from bothost.host.wiring import start_events

        host = self.host()
        host.events = await start_events(host, tick=False)
        try:
            yield Recorder(host)
        finally:
            await host.events.close()

    def close(self) -> None:
        if self._host is not None and not self._host.started:
            self._host.store.close()
        if "read_only_store" in self.__dict__:
            self.read_only_store.close()


# Between two opens of a locked database: each open itself waits out the lock for the
# store's busy timeout (10 s), so this only keeps a lock-free failure from spinning.
OPEN_RETRY_SECONDS = 1.0


def busy(exc: BaseException) -> bool:
    """Whether opening the store failed because another process held its lock."""
    cause = exc.__cause__
    return isinstance(cause, sqlite3.OperationalError) and (
        getattr(cause, "sqlite_errorname", "") == "SQLITE_BUSY"
        or "locked" in str(cause)  # an open's first read: "database is locked"
    )


# How many rows a listing prints at most: SQLite's LIMIT takes a 64-bit integer (a larger
# one was an OverflowError) and no screen or script wants more than this from one command.
MAX_ROWS = 1_000_000
COUNT = click.IntRange(1, MAX_ROWS)  # a --limit or --lines: at least one, at most MAX_ROWS


def writable(home: Path) -> bool:
    """Whether a command could write in ``home``: its mode for this user (root too, without
    CAP_DAC_OVERRIDE) and not a read-only mount."""
    try:
        return os.access(home, os.W_OK) and not os.statvfs(home).f_flag & os.ST_RDONLY
    except OSError:
        return False


class Seconds(click.ParamType):
    """A number of seconds: refused as a usage error when it is NaN, not above 0 (or below
    0 with ``zero``), or above ``most``; zero or less for ``--timeout`` otherwise started
    the server and then "timed out", and NaN passes every comparison of a range check."""

    name = "seconds"

    def __init__(self, zero: bool = False, most: float = math.inf) -> None:
        self.zero, self.most = zero, most

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            seconds = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        least_ok = seconds >= 0 if self.zero else seconds > 0  # NaN fails both
        if not least_ok or seconds > self.most:
            self.fail(f"expected {self.bounds()}, got {value!r}", param, ctx)
        return seconds

    def bounds(self) -> str:
        least = "0" if self.zero else "more than 0"
        return f"{least} seconds" if self.most == math.inf else f"{least} to {self.most:g} seconds"


@contextmanager
def ctrl_c_interrupts() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt at once for the length of a blocking wait.

    Inside ``asyncio.run`` the first Ctrl-C only cancels the main task, which a coroutine
    blocked in plain code does not see until that returns: opening the store while another
    process holds SQLite's write lock waits up to its busy timeout (10 s), and Ctrl-C on
    `bothost tick` was ignored that long, then the command failed with the lock's error
    and 1 instead of 130. Elsewhere (not the main thread, Ctrl-C ignored, or the default
    handler already) the handler is left as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGINT)
    if before in (signal.SIG_IGN, signal.SIG_DFL, signal.default_int_handler, None):
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
