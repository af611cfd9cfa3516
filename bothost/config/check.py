"""Checks of a built config that look past one key: names, addresses, budgets, plugin names.

Two stages. :func:`check_semantics` runs inside :func:`bothost.config.load` and needs only
the config and the keys this package understands. Sections whose meaning belongs to a domain
above the config (the tick's rules and timetable, a server's roots, permission rules) are
checked by their domain: the loader hands :func:`check_semantics` the :data:`SectionCheck`
functions it is given, and the host passes every domain's
(:data:`bothost.host.config_load.SECTION_CHECKS`), so this package imports none of them.
:func:`check_registered` runs once plugins are loaded (the CLI's
:class:`~bothost.cli.runtime.Runtime` does it before any command uses the config), because
only the plugins know which ``llm.provider`` names and which ``deliver_to`` platforms exist.
Each error names the file that set the value (the last source holding its key path), the key
path, and a "did you mean" when a known name is close. :func:`check_serving` is what only a
serving host needs of the config (its listener); ``run`` and ``doctor`` both call it, so doctor
refuses what run would, with the same line and exit status.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from bothost.api import is_loopback
from bothost.config.http import listens, spelling
from bothost.config.schema import ConfigError
from bothost.platform import target_check
from bothost.store.target import TargetError, store_target

if TYPE_CHECKING:
    from bothost.config import Config, McpServerConfig

SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
RESERVED_SERVER_NAMES = frozenset({"config"})  # the admin tools' group (bothost.mcp.roster)

# A domain's check of its own section: raises ConfigError naming the file and key path.
SectionCheck = Callable[["Config"], None]


def source_of(config: Config, *keys: str) -> str:
    """The file that set the value at ``keys``: the last source that has that key path."""
    for where, data in reversed(config.layers):
        node: Any = data
        for key in keys:
            if not isinstance(node, dict) or key not in node:
                break
            node = node[key]
        else:
            return where
    return "merged config"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1)
    listing = f"known: {', '.join(known)}"
    return f"; did you mean {close[0]!r}? ({listing})" if close else f" ({listing})"


# The least context a turn can run in: a system prompt, the tools' table and a few messages.
MIN_CONTEXT_TOKENS = 2000


def check_semantics(config: Config, checks: Iterable[SectionCheck] = ()) -> None:
    """Every check that needs only the config; ``checks``: the domains' own, run between
    core's checks of names and addresses and of usage and the store."""
    check_budgets(config)
    for name, server in config.mcp.servers.items():
        where = source_of(config, "mcp", "servers", name)
        if not SERVER_NAME.fullmatch(name):
            raise ConfigError(
                f"{where}: mcp.servers.{name}: a server name uses letters, digits, _ and -"
            )
        if name in RESERVED_SERVER_NAMES:
            raise ConfigError(
                f"{where}: mcp.servers.{name}: {name!r} is reserved for the admin tools' "
                "group; choose another server name"
            )
        if bool(server.command) == bool(server.url):
            raise ConfigError(
                f"{where}: mcp.servers.{name}: expected exactly one of 'command' "
                "(stdio) or 'url' (HTTP)"
            )
        wrong = timeout_problem(server)
        if wrong:
            raise ConfigError(f"{where}: mcp.servers.{name}.max_timeout: {wrong}")
        wrong = address_problem(server)
        if wrong:
            raise ConfigError(f"{where}: mcp.servers.{name}.{wrong}")
    wrong = url_problem(config.mcp.registry)
    if wrong:
        where = source_of(config, "mcp", "registry")
        raise ConfigError(f"{where}: mcp.registry: {wrong.replace(' (Streamable HTTP)', '')}")
    # found from outside: "localhost:11434/v1" loaded, and every turn then failed as
    # "cannot reach localhost:11434/v1: localhost:11434/v1"
    wrong = config.llm.base_url and url_problem(ENV_REFERENCE.sub("x", config.llm.base_url))
    if wrong:
        where = source_of(config, "llm", "base_url")
        raise ConfigError(f"{where}: llm.base_url: {wrong.replace(' (Streamable HTTP)', '')}")
    for i, target in enumerate(config.tick.deliver_to):
        if ":" not in target:
            raise ConfigError(
                f"{source_of(config, 'tick', 'deliver_to')}: tick.deliver_to[{i}]: "
                f"expected an address 'platform:channel', got {target!r}"
            )
    check_sections(config, checks)
    check_usage(config)
    check_store(config)


def check_sections(config: Config, checks: Iterable[SectionCheck]) -> None:
    """Run each domain's check of its own section, in order; the first error stops the load."""
    for check in checks:
        check(config)


def check_usage(config: Config) -> None:
    """Prices and budgets that could not work: negative figures, a price without its input or
    output figure, a cost budget for a model the price table does not know."""
    usage = config.usage
    for model, price in usage.prices.items():
        where = source_of(config, "usage", "prices", model)
        for name in ("input", "output"):
            if getattr(price, name) is None:
                raise ConfigError(
                    f"{where}: usage.prices.{model}.{name}: expected a price per million tokens"
                )
        for name in ("input", "output", "cached", "cache_write"):
            value = getattr(price, name)
            if value is not None and value < 0:
                raise ConfigError(
                    f"{where}: usage.prices.{model}.{name}: expected a price of 0 or more, "
                    f"got {value:g}"
                )
    for name in ("user_daily", "global_daily", "tick_daily"):
        budget = getattr(usage.budgets, name)
        where = source_of(config, "usage", "budgets", name)
        path = f"usage.budgets.{name}"
        if budget.tokens is not None and budget.tokens <= 0:
            raise ConfigError(f"{where}: {path}.tokens: expected more than 0, got {budget.tokens}")
        if budget.cost is None:
            continue
        if budget.cost <= 0:
            raise ConfigError(f"{where}: {path}.cost: expected more than 0, got {budget.cost:g}")
        if (config.llm.provider or "offline") == "offline":
            continue  # the offline agent costs nothing; the budget waits for a model
        wanted = config.llm.model
        if not wanted or wanted not in usage.prices:
            known = did_you_mean(wanted, usage.prices) if wanted and usage.prices else ""
            what = f"llm.model {wanted!r}" if wanted else "llm.model (unset)"
            raise ConfigError(
                f"{where}: {path}.cost: a cost budget needs a price for {what} in "
                f"usage.prices{known}"
            )


def check_budgets(config: Config) -> None:
    llm = config.llm
    if llm.max_tokens < 1:
        raise ConfigError(
            f"{source_of(config, 'llm', 'max_tokens')}: llm.max_tokens: expected at least 1, "
            f"got {llm.max_tokens}"
        )
    least = llm.max_tokens + MIN_CONTEXT_TOKENS
    if llm.context_tokens < least:
        raise ConfigError(
            f"{source_of(config, 'llm', 'context_tokens')}: llm.context_tokens: expected at "
            f"least llm.max_tokens + {MIN_CONTEXT_TOKENS} ({least}), got {llm.context_tokens}"
        )
    budget = config.agent.output_budget
    if budget is not None and budget < 1:
        raise ConfigError(
            f"{source_of(config, 'agent', 'output_budget')}: agent.output_budget: expected a "
            f"positive number of characters or null, got {budget}"
        )


def check_store(config: Config) -> None:
    try:
        store_target(config.store.url, Path("."))
    except TargetError as exc:
        raise ConfigError(f"{source_of(config, 'store', 'url')}: store.url: {exc}") from None


def check_registered(
    config: Config, providers: Iterable[str], platforms: Mapping[str, Any] | Iterable[str]
) -> None:
    """Refuse an ``llm.provider`` or a ``deliver_to`` platform no plugin registered, and a
    ``deliver_to`` target its platform refuses (its optional ``target_problem(channel)``,
    asked only of the platforms ``deliver_to`` names, and never by making a deferred one:
    :func:`bothost.platform.target_check`). ``platforms`` maps names to the
    registered platforms (names alone skip the platforms' own checks)."""
    providers = set(providers)
    provider = config.llm.provider or "offline"
    if provider not in providers:
        raise ConfigError(
            f"{source_of(config, 'llm', 'provider')}: llm.provider: unknown "
            f"provider {provider!r}{did_you_mean(provider, providers)}"
        )
    registered = platforms if isinstance(platforms, Mapping) else dict.fromkeys(platforms)
    names = set(registered)  # console: too is a platform (the console plugin's)
    for i, target in enumerate(config.tick.deliver_to):
        name, _, channel = target.partition(":")
        where = f"{source_of(config, 'tick', 'deliver_to')}: tick.deliver_to[{i}]"
        if name not in names:
            raise ConfigError(
                f"{where}: no platform {name!r} for {target!r}{did_you_mean(name, names)}"
            )
        judge = target_check(registered[name])
        problem = judge(channel, config) if judge is not None else None
        if problem:
            raise ConfigError(f"{where}: {target!r}: {problem}")


def check_serving(config: Config) -> None:
    """Refuse what only ``bothost run`` needs of the config: a listener bound beyond loopback
    needs ``http.token``, because the web chat gives admin rights to whoever reaches it.
    Called by ``run`` before anything is written, by ``doctor``, and by the listener
    itself (a host built in code). The error names the keys as the config spelled them."""
    if not listens(config):
        return  # nothing listens
    if not is_loopback(config.http.host) and not config.http.token:
        host_key = spelling(config, "host")
        token_key = host_key.rsplit(".", 1)[0] + ".token"  # in the spelling the user wrote
        raise ConfigError(
            f"{source_of(config, 'http', 'host')}: {host_key}: binding "
            f"{config.http.host} (not loopback) requires {token_key}"
        )


def timeout_problem(server: McpServerConfig) -> str | None:
    """What is wrong with a server's ``max_timeout`` (config and servers added at run time
    alike), or None: progress extends a call beyond its timeout, never below it."""
    if server.max_timeout is not None and server.max_timeout < server.timeout:
        return f"expected at least the timeout ({server.timeout:g} s), got {server.max_timeout:g} s"
    return None


ENV_REFERENCE = re.compile(r"\$\{env:[^}]*\}")  # resolved later: checked as a plain word


def address_problem(server: McpServerConfig) -> str | None:
    """What is wrong with a server's ``url`` or ``headers`` as a request would carry them
    (config and servers added at run time alike), or None; the ``key: problem`` names the
    key and never shows a value (a URL or header may hold a credential). Found from outside:
    ``ftp://…`` failed each start as "POST ftp://x: ftp://x", ``http://[::1`` with a
    traceback on the terminal, and a header value with a line break could not be sent."""
    if server.url:
        wrong = url_problem(ENV_REFERENCE.sub("x", server.url))
        if wrong:
            return f"url: {wrong}"
    for key, value in server.headers.items():
        if any(c in str(key) + str(value) for c in "\r\n\0"):
            return f"headers.{key}: a header name or value holds a line break or NUL"
    return None


def url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as an MCP server's Streamable HTTP address, or None; in
    words of our own, never quoting the url (it may hold a credential, or come from a
    variable whose value must not be shown). A value with white space or a line break was
    taken and then failed at connect as an unknown host, or lost its line break unseen."""
    if any(c.isspace() or ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in url):
        return "not a URL (it holds white space or a control character)"
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # urlsplit's own fixed words ("Invalid IPv6 URL")
        return f"not a URL ({exc})"
    try:
        _ = parts.port  # a ValueError when out of range or not a number
    except ValueError:  # its words quote the port text
        return "not a URL (the port is not a number from 0 to 65535)"
    if parts.scheme not in ("http", "https"):
        return "expected an http:// or https:// URL (Streamable HTTP)"
    if not parts.hostname:
        return "expected an http:// or https:// URL with a host"
    return None
