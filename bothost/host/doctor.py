"""``bothost doctor``: each check says what it found and, when something is wrong, the fix.

Doctor checks what would fail at run time, not only what the config says: the home is
writable, the database opens (not from a newer bothost) and passes ``PRAGMA quick_check``,
the model's endpoint answers one token (skipped with ``--offline``), each ``tick.deliver_to``
target has a platform, the web port is free or held by a running bothost, and the MCP
servers start. Each plugin checks its own part through the ``doctor_checks`` hook (Slack's
tokens, whether a target's platform is enabled); a plugin's finding named like one of
these replaces it, because the plugin knows its platform better. A config error is not a
finding: it is the command's error (one line, exit 2), as for every command, and so is what
``run`` alone refuses of the config (:func:`bothost.config.check.check_serving`, which ``run``
calls too): doctor exits as ``run`` would.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bothost import redact
from bothost.agent import unmatched
from bothost.agent.mcp_tools import McpToolSource
from bothost.config.check import check_serving
from bothost.config.home import HomeError, ensure_home
from bothost.config.http import listens, spelling
from bothost.hooks.call import accepted, impls
from bothost.host.probes import ask_llm, web_port
from bothost.host.reload import read_published
from bothost.mcp import commands, stored
from bothost.mcp.commands import PRIVATE_START_WAIT, start_bounded
from bothost.mcp.executables import resolve_command
from bothost.rules import store as rule_store
from bothost.rules.match import ask_beaten, asks_beaten
from bothost.rules.origin import UNKNOWN
from bothost.store import StoreError
from bothost.store.dump import data_tables
from bothost.store.health import MIN_FREE_BYTES, free_bytes
from bothost.store.hostlock import is_served
from bothost.store.postgres import PostgresBackend
from bothost.store.target import POSTGRES_SCHEMES, store_target

if TYPE_CHECKING:
    from bothost.agent.unmatched import Known

logger = logging.getLogger(__name__)

START_AFRESH = (
    "restore bothost.db from a backup (`bothost docs operations`), or move it away to start afresh"
)
# a server the store cannot reach or log in to: nothing to restore, something to check
CHECK_SERVER = (
    "check store.url (host, port, user, password, database name) and that the server "
    "runs and accepts this host (`bothost docs operations`)"
)
SHOWN_RULES = 10  # rule ids named on the permission rules line; the count says the rest
PLUGIN_CHECK_TIMEOUT = 60.0  # seconds for one plugin's checks; an outside service may be slow
SLOW_START = 2.0  # seconds of an MCP start before doctor says which server it waits for


@dataclass
class Finding:
    check: str
    ok: bool
    detail: str
    fix: str = ""


def diagnose(
    runtime: Any,
    offline: bool = False,
    shown: Callable[[Finding], None] = lambda finding: None,
    say: Callable[[str], None] = lambda line: None,
) -> list[Finding]:
    """Every check's findings. Each is given to ``shown`` as soon as it is known, so a slow
    check (a model, an MCP server's start) hides none of the others; ``say`` hears of a
    check that is slow to answer (``checking MCP server NAME…``)."""
    config = runtime.config  # a config error is the command's error: one line, exit 2
    check_serving(config)  # and so is what `run` refuses of it, checked by the same function
    findings: list[Finding] = []

    def found(new: list[Finding]) -> list[Finding]:
        findings.extend(new)
        for finding in new:
            shown(finding)
        return new

    found([Finding("config", True, "loaded from " + ", ".join(config.sources))])
    found(check_config_files(runtime))
    found(check_running_config(runtime.home))
    home = found(check_home(runtime))
    found(check_plugins(runtime))
    if not runtime.home.exists():  # a first run: opening the store would create the home
        store = []
        if config.store.url is None:
            found([Finding("database", True, "none yet (`bothost run` creates it)")])
        elif config.store.url.startswith(POSTGRES_SCHEMES):
            # beside ``store``, which stays empty: with it ok, the MCP check would start
            # servers, and they would make the home
            found(check_server_reachable(config.store.url))
    else:
        store = found(check_store(runtime) if all(f.ok for f in home) else [])
    if store and all(f.ok for f in store):
        found(check_rules(runtime))
    found(check_llm(runtime, offline))
    found(check_web(config, runtime.home))
    missing = found(check_mcp(config))
    if store and all(f.ok for f in store):
        skip = {f.check.removeprefix("mcp ") for f in missing}
        running, now = check_mcp_running(runtime, skip, say)
        found(running + check_rule_names(runtime, now))
    extra = plugin_checks(runtime, offline, shown)
    findings[:] = merge(findings, extra)
    # after the plugins: a platform judges its own targets, and a line once shown stays
    reported = {f.check for f in extra}
    found([f for f in check_delivery(runtime) if f.check not in reported])
    return findings


def merge(findings: list[Finding], extra: list[Finding]) -> list[Finding]:
    """``findings`` with each of ``extra`` replacing the one of the same name, or appended."""
    out = list(findings)
    for finding in extra:
        same = next((i for i, f in enumerate(out) if f.check == finding.check), None)
        if same is None:
            out.append(finding)
        else:
            out[same] = finding
    return out


def plugin_checks(
    runtime: Any, offline: bool, shown: Callable[[Finding], None] = lambda finding: None
) -> list[Finding]:
    """What the plugins' ``doctor_checks`` report, each plugin's failure a finding of its own;
    each given to ``shown`` as it is reported."""
    out: list[Finding] = []

    def report(check: str, ok: bool, detail: str, fix: str = "") -> None:
        out.append(Finding(str(check), bool(ok), str(detail), str(fix)))
        shown(out[-1])

    kwargs = {"config": runtime.config, "offline": offline, "report": report}
    for impl in impls(runtime.pm, "doctor_checks"):
        try:
            result = impl.function(**accepted(impl, kwargs))
            if inspect.isawaitable(result):
                asyncio.run(within(result, PLUGIN_CHECK_TIMEOUT))
        except Exception as exc:  # boundary: one plugin's broken check must not stop doctor
            logger.exception("plugin %s failed in doctor_checks", impl.plugin_name)
            report(
                f"plugin {impl.plugin_name}",
                False,
                f"its doctor check failed: {exc or type(exc).__name__}",
                "bothost -v doctor shows where; report it to the plugin's authors",
            )
    return out


async def within(awaitable: Any, seconds: float) -> Any:
    async with asyncio.timeout(seconds):
        return await awaitable


# Shorter configured "secrets" (a test's "x") would match ordinary words of the file.
MIN_SECRET_CHARS = 8


def check_config_files(runtime: Any) -> list[Finding]:
    """A config file that other users can read and that holds a secret as written (not as
    ``${env:NAME}``). The home's own file is covered by the home's check (0700)."""
    secrets = [v for v in redact.config_secrets(runtime.config) if len(v) >= MIN_SECRET_CHARS]
    home = runtime.home.resolve() if runtime.home.exists() else None
    found = []
    for source in runtime.config.sources:
        path = Path(source)
        try:
            shared = stat.S_IMODE(path.stat().st_mode) & 0o044
            if not shared or (home is not None and path.resolve().is_relative_to(home)):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(secret in text for secret in secrets):
            found.append(
                Finding(
                    "config",
                    False,
                    f"{path} holds a secret in plain text and other users can read it",
                    f"chmod 600 {path}, or write the secret as ${{env:NAME}} (configuration.md)",
                )
            )
    return found


def check_running_config(home: Path) -> list[Finding]:
    """What a host running on this home says of the config file as edited since it started
    (:mod:`bothost.host.reload`): an edit it refused, or keys that wait for a restart."""
    status = read_published(home)
    if status is None:
        return []  # no host runs here
    if status.get("error"):
        fix = "fix the config file: the running host keeps the config it had"
        return [Finding("running host", False, f"edit not applied: {status['error']}", fix)]
    waiting = status.get("restart_needed") or []
    if waiting:
        detail = "restart needed: " + ", ".join(waiting)
        return [Finding("running host", False, detail, "restart bothost run to apply them")]
    return [Finding("running host", True, "runs the config file as it is")]


def check_home(runtime: Any) -> list[Finding]:
    if not runtime.home.exists():  # doctor changes nothing: the first `bothost run` makes it
        return [missing_home(runtime.home)]
    try:
        home = ensure_home(runtime.home)
        with tempfile.TemporaryFile(dir=home):
            pass  # what every command does first: write in the home
    except HomeError as exc:
        return [
            Finding(
                "home",
                False,
                str(exc),
                "give the home back to this user (chown/chmod 700), or choose another --home",
            )
        ]
    except OSError as exc:
        return [
            Finding(
                "home",
                False,
                f"{runtime.home}: not writable ({exc.strerror or exc})",
                "give the home back to this user (chown/chmod 700), or choose another --home",
            )
        ]
    free = free_bytes(home)
    if free is not None and free < MIN_FREE_BYTES:
        return [
            Finding(
                "home",
                False,
                f"{home}: disk full ({free} bytes free)",
                "free some space on that disk, or choose another --home",
            )
        ]
    if stat.S_IMODE(home.stat().st_mode) & 0o077:
        return [Finding("home", False, f"{home} is readable by other users", f"chmod 700 {home}")]
    return [Finding("home", True, f"{home}, writable")]


def missing_home(home: Path) -> Finding:
    """A home not there yet: fine if it can be created (the nearest existing directory
    above it is writable), which every command that stores something then does."""
    above = next((p for p in home.parents if p.exists()), Path("/"))
    if above.is_dir() and os.access(above, os.W_OK | os.X_OK):
        return Finding("home", True, f"no home at {home} yet; `bothost run` creates it")
    return Finding(
        "home",
        False,
        f"no home at {home}, and it cannot be created: {above} is not a writable directory",
        "choose another --home / BOTHOST_HOME, or create it for this user (mkdir -m 700)",
    )


def check_plugins(runtime: Any) -> list[Finding]:
    out = []
    for info in runtime.plugins:
        if info.error:
            out.append(
                Finding(
                    f"plugin {info.name}",
                    False,
                    info.error,
                    f"reinstall or fix it, or add {info.name!r} to plugins.disabled",
                )
            )
    return out or [Finding("plugins", True, f"{len(runtime.plugins)} found")]


def check_store(runtime: Any) -> list[Finding]:
    try:
        store = runtime.store
    except StoreError as exc:
        if runtime.config.store.url is not None and "cannot connect" in str(exc):
            return [Finding("database", False, str(exc), CHECK_SERVER)]
        return [
            Finding(
                "database",
                False,
                str(exc),
                "bothost never changes a database it "
                "refuses; " + ("upgrade bothost" if "newer" in str(exc) else START_AFRESH),
            )
        ]

    if store.dialect != "sqlite":
        return check_server_store(store)

    def inspect(db: Any) -> tuple[list[str], int, int]:
        problems = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        return problems, version, len(data_tables(db))  # as `db export` counts them

    try:
        problems, version, tables = store.call(inspect)
    except Exception as exc:  # boundary: a corrupt file fails in many sqlite3 ways
        problems, version, tables = [str(exc)], 0, 0
    if problems != ["ok"]:
        shown = "; ".join(problems[:3]) + (
            f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        return [
            Finding(
                "database", False, f"{store.path} fails PRAGMA quick_check: {shown}", START_AFRESH
            )
        ]
    detail = f"{tables} data tables, schema {version} (ours), quick_check ok"
    return [Finding("database", True, detail + migrated_now(store))]


def migrated_now(store: Any) -> str:
    """What opening the database for this check applied (an upgrade): said, since doctor is
    often the first command an upgraded bothost runs and a migration is never undone."""
    applied = getattr(store, "applied", None) or []
    return f"; migrated now: {', '.join(applied)}" if applied else ""


def check_rules(runtime: Any) -> list[Finding]:
    """Stored ``allow`` rows kept from before tools' origins were (core:11) that could name
    another tool: they allow nothing now, so people are asked again; say which they are.
    And each ``ask`` a ``deny`` below it beats (since d5a89ba) for the calls both match."""
    rules, answers = runtime.store.call(
        lambda db: rule_store.listing(db, runtime.config.permissions)
    )
    found = [
        r.ref
        for r in rules + answers
        if r.action == "allow" and r.tool_origin is not None and r.tool_origin.kind == UNKNOWN
    ]
    out = [
        Finding("permission rules", True, ask_beaten(ask, deny)) for ask, deny in asks_beaten(rules)
    ]
    if not found:
        return out
    shown = ", ".join(found[:SHOWN_RULES]) + (" …" if len(found) > SHOWN_RULES else "")
    return [
        Finding(
            "permission rules",
            True,
            f"{len(found)} stored allow rule(s) or remembered answer(s) from before 2026-12-04 "
            f"name a tool that cannot be told from another and allow nothing ({shown}): "
            "see `bothost rules list`; `bothost rules remove ID` drops one",
        ),
        *out,
    ]


def check_server_store(store: Any) -> list[Finding]:
    """A database server (PostgreSQL): reachable and migrated, or why not."""

    def inspect(db: Any) -> tuple[int, int]:
        return len(data_tables(db)), db.value("SELECT COUNT(*) FROM _migrations")

    try:
        tables, applied = store.call(inspect)
    except Exception as exc:  # boundary: a server fails in many ways (network, auth, …)
        return [Finding("database", False, f"{store.label}: {exc}", "check store.url")]
    return [
        Finding(
            "database",
            True,
            f"{store.label}: {tables} data tables, {applied} migrations applied"
            + migrated_now(store),
        )
    ]


def check_server_reachable(url: str) -> list[Finding]:
    """A server store before the first run (no home yet): can this host log in to it?

    Nothing is migrated or written here; the first ``bothost run`` does that."""
    backend = PostgresBackend(url)
    try:
        backend.connect().raw.close()
    except StoreError as exc:  # no driver: the message names the extra to install
        return [Finding("database", False, f"{backend.label}: {exc}", CHECK_SERVER)]
    except Exception as exc:  # boundary: a server fails in many ways (network, auth, …)
        return [
            Finding("database", False, f"{backend.label}: {backend.explain(exc)}", CHECK_SERVER)
        ]
    return [Finding("database", True, f"{backend.label}: reachable; `bothost run` migrates it")]


def check_llm(runtime: Any, offline: bool) -> list[Finding]:
    llm = runtime.config.llm
    name = llm.provider or "offline"
    if name == "offline":
        return [Finding("llm", True, "offline agent (no model configured)")]
    if name == "anthropic" and not llm.api_key:
        return [
            Finding(
                "llm",
                False,
                "anthropic needs an API key",
                "set llm.api_key: ${env:ANTHROPIC_API_KEY}",
            )
        ]
    if name == "openai" and not llm.api_key and not llm.base_url:
        return [
            Finding(
                "llm",
                False,
                "openai needs an API key (or a base_url such as Ollama)",
                "set llm.api_key: ${env:OPENAI_API_KEY}",
            )
        ]
    label = f"{name} {llm.model or ''}".strip()
    if offline:
        return [Finding("llm", True, f"{label} (not contacted: --offline)")]
    factory = runtime.registered.providers[name]  # the config check made sure it exists
    problem = asyncio.run(ask_llm(factory, llm))
    if problem:
        return [
            Finding(
                "llm",
                False,
                f"{label}: {problem}",
                "check llm.base_url, llm.api_key and llm.model (or doctor --offline)",
            )
        ]
    return [Finding("llm", True, f"{label} answers")]


def check_delivery(runtime: Any) -> list[Finding]:
    """Each ``tick.deliver_to`` target must have a platform (its plugin may say more)."""
    platforms = runtime.registered.platforms
    out = []
    for target in runtime.config.tick.deliver_to:
        name = target.partition(":")[0]
        check = f"deliver_to {target}"
        if name in platforms:
            out.append(Finding(check, True, f"platform {name}"))
        else:
            out.append(
                Finding(
                    check, False, f"no platform {name!r}", "install the plugin that provides it"
                )
            )
    return out


def check_web(config: Any, home: Path) -> list[Finding]:
    """The host's HTTP listener (core's ``http:`` section), while the web platform is on."""
    if not listens(config):
        return []
    database = store_target(config.store.url, home)
    # on SQLite, a bothost answering there is this setup's only if a host holds its file
    # (on PostgreSQL several hosts share the database, and any of them may be it)
    ours = is_served(database) if isinstance(database, Path) else None
    ok, detail = web_port(config.http.host, config.http.port, ours)
    fix = f"stop that program, or set {spelling(config, 'port')}"
    return [Finding("web port", ok, detail, "" if ok else fix)]


def check_mcp(config: Any) -> list[Finding]:
    out = []
    for name, server in config.mcp.servers.items():
        if not server.enabled or not server.command:
            continue
        if resolve_command(server.command) is None:
            out.append(
                Finding(
                    f"mcp {name}",
                    False,
                    f"command {server.command!r} not found",
                    f"install it, or set mcp.servers.{name}.enabled: false",
                )
            )
    return out


def check_mcp_running(
    runtime: Any, skip: set[str], say: Callable[[str], None] = lambda line: None
) -> tuple[list[Finding], Known | None]:
    """Start the enabled servers briefly (as `bothost mcp list --check` does) and report;
    with the tools known then (the ready servers' and the native ones: see
    :func:`check_rule_names`), or None when the servers could not be started.

    Servers in ``skip`` were already reported (their command is missing) and are not started;
    ``say`` hears ``checking MCP server NAME…`` of each one slow to start.
    """
    manager = commands.manager_for(runtime.config, runtime.store, runtime.home)
    names = set(runtime.config.mcp.servers) | set(runtime.store.call(stored.load))
    try:
        statuses, now = asyncio.run(started(runtime, manager, names - skip, say))
    except Exception as exc:
        failed = Finding(
            "mcp",
            False,
            f"could not start the MCP servers: {exc}",
            "see bothost mcp list and bothost mcp logs NAME",
        )
        return [failed], None
    out = []
    for s in statuses:
        if s.name in skip or not s.enabled or s.state in ("disabled", "shadowed"):
            continue
        if s.state == "ready":
            out.append(Finding(f"mcp {s.name}", True, f"ready, {s.tools} tools"))
        else:
            out.append(
                Finding(
                    f"mcp {s.name}",
                    False,
                    f"{s.state}: {s.error or 'not ready'}",
                    f"bothost mcp logs {s.name}; fix it or bothost mcp disable {s.name}",
                )
            )
    return out, now


async def started(
    runtime: Any, manager: Any, names: set[str], say: Callable[[str], None]
) -> tuple[list[Any], Known]:
    """The servers' states once ``names`` have started (or failed), and the tools known
    while they run; they are stopped again. Each server still starting after
    :data:`SLOW_START` seconds is named to ``say``: its verdict may take a minute."""
    starting = asyncio.ensure_future(start_bounded(manager, names, PRIVATE_START_WAIT))
    try:  # stopped however this ends: a Ctrl-C while a server hangs leaves none behind
        await asyncio.wait({starting}, timeout=SLOW_START)
        if not starting.done():
            for status in manager.status():
                if status.name in names and status.state == "starting":
                    say(f"checking MCP server {status.name}…")
        await starting  # as `mcp list --check`
        statuses = manager.status()
        ready = {s.name for s in statuses if s.state == "ready"}
        tools, native = unmatched.registry_tools(runtime.host().registry)
        source = McpToolSource(manager, runtime.config)
        for server in sorted(ready):
            tools += source.tools(server)
        return statuses, unmatched.known(tools, [s.name for s in statuses], native | ready)
    finally:
        await manager.stop()


def check_rule_names(runtime: Any, now: Known | None) -> list[Finding]:
    """Each permission rule that no tool known now matches (:mod:`bothost.agent.unmatched`):
    one written for a name an upgrade or a rename changed does nothing. A warning: a server
    that did not start is not judged."""
    if now is None:
        return []
    permissions = runtime.config.permissions
    rules, _ = runtime.store.call(lambda db: rule_store.listing(db, permissions))
    return [
        Finding("permission rules", True, f"{u.message}: correct its tool or remove it")
        for u in unmatched.unmatched(rules, now)
    ]
