"""Configuration: the typed model, where it comes from, and every error it can raise.

Sources are deep-merged in order (mappings key by key; lists and scalars replace): the
packaged ``config/bothost.yaml``, ``$BOTHOST_HOME/bothost.yaml``, then ``--config FILE`` or
``BOTHOST_CONFIG``. Each source is checked on its own for unknown keys and wrong types, so an
error names the file it came from, the key path and what was expected. ``${env:NAME}`` is
resolved while building; an unset name is an error only inside a part that is enabled.

The model here holds core's keys only. The sections under ``platforms`` (and any other
top-level key) belong to the plugins that declare them through ``register_config``
(:mod:`bothost.config.sections`): :func:`load_core` reads core's keys and sets those parts
aside, :func:`bind_sections` checks and builds them once the plugins are loaded, and
:func:`load` does both.

A section whose meaning belongs to a domain above the config (``tick`` to events, the
servers' ``roots`` to mcp, ``permissions`` to rules) is checked by that domain: the loaders
take its checks as ``checks`` (:data:`~bothost.config.check.SectionCheck`), and the host's
loader (:mod:`bothost.host.config_load`) passes every domain's, so this package imports none.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bothost.config.check import SectionCheck, check_registered, check_semantics
from bothost.config.env import check_shell_references, unset_env_error
from bothost.config.file import read_yaml, without_holders
from bothost.config.home import HomeError
from bothost.config.http import HttpConfig, fold_aliases
from bothost.config.schema import (
    ConfigError,
    Unset,
    build,
    check_source,
    clear_unset,
    parse_duration,
)
from bothost.config.sections import PLATFORMS, Platforms, Section, bind, collect_sections
from bothost.hooks.discovery import load_plugins, new_plugin_manager
from bothost.redact import MASK, mask_config  # bothost.redact owns what counts as secret

if TYPE_CHECKING:
    import pluggy

__all__ = [
    "Config",
    "ConfigError",
    "load",
    "load_core",
    "bind_sections",
    "default_home",
    "mask_secrets",
    "parse_duration",
    "check_registered",
    "read_yaml",
]

ENV_PATTERN = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
# What is left of a string once its well-formed references are taken out: any "${env"
# there is a reference written wrong, which would otherwise be used as literal text (sent
# as the API key, say) with no word said.
ENV_LEFTOVER = "${env"


@dataclass
class LlmConfig:
    provider: str = "offline"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = parse_duration("120s")
    max_tokens: int = 4096
    temperature: float | None = None
    # the model's context window as bothost may use it: compaction and the tool output
    # budget are sized from it. 32,000 fits every current hosted model and common local ones
    # (Ollama's and llama.cpp's own defaults are smaller: set theirs); larger costs more.
    context_tokens: int = 32000
    # retries of a failed request (429, 5xx, a lost connection) the provider makes
    # (bothost.llm.wire), with backoff: a turn rides out a provider's brief trouble. Not a
    # config key: doctor's probe (bothost.host.probes.ask_llm) sets 0, to fail fast with
    # one request.
    max_retries: int = 3

    RANGES = {"temperature": (0, 2)}  # the widest any provider takes (OpenAI's; Anthropic's 0-1)
    INTERNAL = ("max_retries",)


@dataclass
class AgentConfig:
    max_rounds: int = 12
    turn_timeout: float = parse_duration("300s")
    approval: str = "ask"
    approval_timeout: float = parse_duration("300s")
    tool_timeout: float = parse_duration("60s")
    output_budget: int | None = None  # per result, on top of the shared, context-sized one
    prompt: str | None = None

    CHOICES = {"approval": ("ask", "allow", "read-only")}
    # at least one round, or no turn can call a tool; past 1,000 a turn is a runaway loop
    RANGES = {"max_rounds": (1, 1000)}


@dataclass
class McpAuthConfig:
    """OAuth for a remote server (``mcp.servers.NAME.auth``); discovery finds the rest.

    Without this section a server that answers 401 is still logged in to with dynamic
    registration (or a Client ID Metadata Document); the keys are for servers that need
    pre-registered credentials or machine-to-machine (``client_credentials``) access.
    """

    grant: str = "authorization_code"
    client_id: str | None = None
    client_secret: str | None = None
    # a URL serving our client metadata (SEP-991), used as client_id where the server accepts it
    client_metadata_url: str | None = None
    private_key: str | None = None  # PEM: client_credentials with private_key_jwt
    signing_algorithm: str = "ES256"
    scopes: list[str] = field(default_factory=list)  # instead of what the server asks for
    redirect_uri: str | None = None  # default: the host's /oauth/callback or a loopback port
    # cross_app_access (SEP-990): an enterprise IdP's ID token, exchanged there for an ID-JAG
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    id_token: str | None = None
    # jwt_bearer (SEP-1933): the workload's identity JWT, from a file read at each token
    # request (platforms rotate it) or given here (usually ${env:…})
    assertion_file: str | None = None
    assertion: str | None = None
    # DPoP-bound tokens (RFC 9449): None when the authorization server's metadata offers
    # ES256 in dpop_signing_alg_values_supported or the server challenges with DPoP
    dpop: bool | None = None

    CHOICES = {
        "grant": ("authorization_code", "client_credentials", "cross_app_access", "jwt_bearer"),
        "signing_algorithm": ("ES256", "RS256"),
    }


# The longest an MCP call may wait for news (`timeout`) or be kept going by progress
# (`max_timeout`): a day covers the longest build or crawl anyone waits on through a chat,
# while "99999999999999999999d" was accepted and meant a call that never ended, holding its
# turn and the person waiting on it for good.
MCP_TIMEOUT_LIMIT = parse_duration("1d")


@dataclass
class McpServerConfig:
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    env_passthrough: list[str] = field(default_factory=list)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    description: str = ""
    tools: list[str] = field(default_factory=list)
    timeout: float = parse_duration("60s")
    # progress extends a call up to this; None: DEFAULT_MAX_TIMEOUT, or `timeout` if longer
    max_timeout: float | None = None
    capabilities: dict[str, list[str]] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)  # absolute paths, told on roots/list
    auth: McpAuthConfig | None = None
    # on the leader only (several hosts on one store); None: by command (bothost.mcp.placement)
    singleton: bool | None = None
    # resource URIs and globs subscribed once the server is ready; each update is an event
    # (bothost.mcp.subscriptions)
    subscribe: list[str] = field(default_factory=list)
    log_level: str | None = None  # sent as logging/setLevel after initialize
    # the server may ask the host's model (sampling/createMessage), each request approved
    # by a person first: off unless set (bothost.agent.sampling)
    sampling: bool = False
    # the MCP revision: "auto" (2026-07-28 if the server speaks it, else initialize), or one
    # pinned (bothost.mcp.revision): 2025-11-25 for a server whose tools still ask the
    # client mid-call, which only the older revisions allow
    protocol: str = "auto"

    RANGES = {"timeout": (0, MCP_TIMEOUT_LIMIT), "max_timeout": (0, MCP_TIMEOUT_LIMIT)}
    # MCP's (RFC 5424) names, least severe first
    CHOICES = {
        "protocol": ("auto", "2026-07-28", "2025-11-25"),
        "log_level": (
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency",
        ),
    }


@dataclass
class McpConfig:
    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    # where `mcp search` and `mcp install REGISTRY_NAME` look (base URL; bothost.mcp.registry)
    registry: str = "https://registry.modelcontextprotocol.io"


@dataclass
class TickRule:
    """First match wins: every ``match`` glob fits, no ``unless`` mapping fits whole, and
    each ``within`` field is a time from now to now plus its duration (``24h``)."""

    match: dict[str, str] = field(default_factory=dict)
    priority: str = "normal"
    unless: list[dict[str, str]] = field(default_factory=list)
    within: dict[str, str] = field(default_factory=dict)
    note: str = ""

    CHOICES = {"priority": ("urgent", "high", "normal", "low", "drop")}


@dataclass
class TickConfig:
    enabled: bool = True
    interval: float = parse_duration("15m")
    schedules: list[str] = field(default_factory=list)
    timezone: str | None = None
    deliver_to: list[str] = field(default_factory=lambda: ["web:briefings"])
    quiet_hours: str | None = None
    dedupe_window: float = parse_duration("24h")
    rules: list[TickRule] = field(default_factory=list)
    defaults: bool = True  # the shipped source defaults (bothost.events.defaults) apply
    digest: str | None = None  # a cron at which held low events are posted, folded
    max_attempts: int = 5
    lease: float = parse_duration("5m")
    # events one source may have pending before more of its are held (docs/events.md)
    max_pending_per_source: int = 100_000

    # at least one try, or no briefing is ever sent; 1,000 ticks of 15 minutes is 10 days
    RANGES = {"max_attempts": (1, 1000), "max_pending_per_source": (1, 1_000_000_000)}


@dataclass
class SchedulesConfig:
    """Bounds on the jobs people schedule (bothost.schedules; docs/schedules.md)."""

    max_per_person: int = 50  # scheduled jobs one person may have at once
    min_repeat: float = parse_duration("5m")  # the shortest repeat a cron may have
    max_attempts: int = 5  # failed tries of one run before the job is `failed`

    DURATIONS = ("min_repeat",)
    RANGES = {"max_per_person": (1, 100_000), "max_attempts": (1, 1000), "min_repeat": (60, 86400)}


@dataclass
class RuleWho:
    """Whose calls a permission rule covers; every key given must match (a list: any item)."""

    users: list[str] = field(default_factory=list)  # user ids, globs
    channels: list[str] = field(default_factory=list)  # channel ids or addresses, globs
    admins: bool | None = None  # true: admins only; false: everyone but admins
    conversation: str | None = None  # one session's address, exactly (remembered answers)


@dataclass
class PermissionRule:
    """One entry of ``permissions``: which calls, whose, and what happens to them."""

    tool: str = ""  # a glob over the tool name the model sees
    args: dict[str, str] = field(default_factory=dict)  # argument name -> glob or "re:REGEX"
    exact: bool = False  # true: the call has no arguments besides those in `args`
    who: RuleWho | None = None
    action: str = ""
    note: str = ""

    CHOICES = {"action": ("allow", "ask", "deny")}


@dataclass
class Price:
    """What one model costs per million tokens, in ``usage.currency``."""

    input: float | None = None
    output: float | None = None
    cached: float | None = None  # prompt tokens read from the cache; None: the input price
    cache_write: float | None = None  # written to the cache (Anthropic); None: the input price


@dataclass
class Budget:
    """A daily limit (UTC day): tokens (input + output), cost, or both — whichever is hit first."""

    tokens: int | None = None
    cost: float | None = None

    @property
    def set(self) -> bool:
        return self.tokens is not None or self.cost is not None


@dataclass
class Budgets:
    user_daily: Budget = field(default_factory=Budget)  # each person's turns
    global_daily: Budget = field(default_factory=Budget)  # everything: people and the tick
    tick_daily: Budget = field(default_factory=Budget)  # the tick agent, within the global one


@dataclass
class UsageConfig:
    prices: dict[str, Price] = field(default_factory=dict)  # by model name, as in llm.model
    currency: str = "USD"  # only a label for the costs shown
    budgets: Budgets = field(default_factory=Budgets)


@dataclass
class StoreConfig:
    # unset: the SQLite file $BOTHOST_HOME/bothost.db; postgresql://…: a shared PostgreSQL
    # database (several hosts); sqlite:///path or a plain path: another SQLite file
    url: str | None = None  # its password is masked wherever it is shown (redact.mask_url)

    # a number here is a slip, not a file name: `url: 5` opened the SQLite file "5"
    TEXT_ONLY = ("url",)


@dataclass
class PluginsConfig:
    dirs: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class PluginParts:
    """What :func:`load_core` set aside for the plugins' sections: the merged data with
    ``${env:…}`` resolved, and the unset names found in it (key path, variable)."""

    data: dict[str, Any] = field(default_factory=dict)
    unset: list[tuple[str, str]] = field(default_factory=list)


T = TypeVar("T")


@dataclass
class Config:
    llm: LlmConfig = field(default_factory=LlmConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    tick: TickConfig = field(default_factory=TickConfig)
    schedules: SchedulesConfig = field(default_factory=SchedulesConfig)
    usage: UsageConfig = field(default_factory=UsageConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    plugins: PluginsConfig = field(default_factory=PluginsConfig)
    http: HttpConfig = field(default_factory=HttpConfig)
    permissions: list[PermissionRule] = field(default_factory=list)
    log_level: str = "info"
    # the plugins' sections (filled by bind_sections): platforms.NAME, then top-level ones
    platforms: Platforms = field(default_factory=Platforms)
    sections: dict[str, Any] = field(default_factory=dict)
    declared: dict[str, Section] = field(default_factory=dict, repr=False)
    pending: PluginParts = field(default_factory=PluginParts, repr=False)
    sources: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    layers: list[tuple[str, dict[str, Any]]] = field(default_factory=list, repr=False)
    # the key path each http key was set by, when the alias (bothost.config.http.spelling)
    http_spelled: dict[str, str] = field(default_factory=dict, repr=False)

    CHOICES = {"log_level": ("debug", "info", "warning", "error")}
    INTERNAL = (
        "platforms",
        "sections",
        "declared",
        "pending",
        "sources",
        "raw",
        "layers",
        "http_spelled",
    )

    def section(self, path: str, kind: type[T] | None = None) -> T:
        """The section a plugin declared at ``path`` (``"platforms.discord"``, ``"pager"``).

        ``kind`` (the schema class) only types the result for a type checker. A path no
        loaded plugin declared raises :class:`KeyError`.
        """
        keys = path.split(".")
        if len(keys) == 2 and keys[0] == PLATFORMS and keys[1] in self.platforms:
            return self.platforms[keys[1]]
        if path in self.sections:
            return self.sections[path]
        raise KeyError(f"{path}: no loaded plugin declares this section")


def core_keys() -> list[str]:
    """The top-level keys core's own schema owns (``platforms`` holds plugins' sections)."""
    return sorted(
        {f.name for f in dataclasses.fields(Config) if f.name not in Config.INTERNAL} | {PLATFORMS}
    )


def default_home() -> Path:
    return Path(os.environ.get("BOTHOST_HOME") or Path.home() / ".bothost").expanduser()


def packaged_file(*parts: str) -> Path:
    """A file of the packaged ``config/`` (``bothost.defaults``): beside its ``__init__``,
    found without importlib.resources, whose import was a tenth of a one-shot command's
    start (issue 19); the package is a plain directory in every install."""
    defaults = importlib.import_module("bothost.defaults")  # config/, mapped by package-dir
    return Path(str(defaults.__file__)).parent.joinpath(*parts)


def packaged_default_path() -> Path:
    return packaged_file("bothost.yaml")


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def source_paths(home: Path, explicit: str | Path | None) -> list[Path]:
    paths = [packaged_default_path()]
    home_file = home / "bothost.yaml"
    try:
        if home_file.exists():
            paths.append(home_file)
    except OSError as exc:  # the home itself cannot be searched
        raise HomeError(
            f"{home}: not readable ({exc.strerror or exc}); fix its permissions "
            "or choose another --home / BOTHOST_HOME"
        ) from exc
    explicit = explicit or os.environ.get("BOTHOST_CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.exists():
            raise ConfigError(f"{path}: no such config file")
        paths.append(path)
    return paths


def interpolate(value: Any, path: str, unset: list[tuple[str, str]]) -> Any:
    """Resolve ``${env:NAME}`` in every string; record unset names with their key path."""
    if isinstance(value, dict):
        return {
            k: interpolate(v, f"{path}.{k}" if path else str(k), unset) for k, v in value.items()
        }
    if isinstance(value, list):
        return [interpolate(v, f"{path}[{i}]", unset) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${env:" not in value:
        return value
    missing = [name for name in ENV_PATTERN.findall(value) if name not in os.environ]
    if missing:
        unset.append((path, missing[0]))
        return Unset(missing[0])
    return ENV_PATTERN.sub(lambda m: os.environ[m.group(1)], value)


def check_env_references(value: Any, where: str, path: str = "") -> None:
    """Refuse a ``${env…`` that is not a well-formed ``${env:NAME}``, naming file and key."""
    if isinstance(value, dict):
        for k, v in value.items():
            check_env_references(v, where, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_env_references(v, where, f"{path}[{i}]")
    elif isinstance(value, str) and ENV_LEFTOVER in ENV_PATTERN.sub("", value):
        raise ConfigError(
            f"{where}: {path or '(top level)'}: expected ${{env:NAME}} (NAME of letters, "
            f"digits and _), got {value!r}"
        )


def load(
    config_file: str | Path | None = None,
    home: Path | None = None,
    pm: pluggy.PluginManager | None = None,
    checks: Iterable[SectionCheck] = (),
) -> Config:
    """Read, merge, validate and type every config source, the plugins' sections included.

    The sections are those the plugins of ``pm`` declare; without ``pm``, the plugins the
    config itself selects (``plugins.dirs``, ``plugins.disabled``) are loaded to ask them.
    ``checks``: the domains' checks of their sections (:func:`load_core`).
    Raises :class:`ConfigError`.
    """
    config = load_core(config_file, home, checks)
    if pm is None:
        pm = new_plugin_manager()
        load_plugins(pm, config.plugins.dirs, config.plugins.disabled)
    bind_sections(config, pm)
    return config


def load_core(
    config_file: str | Path | None = None,
    home: Path | None = None,
    checks: Iterable[SectionCheck] = (),
) -> Config:
    """Read and merge every source; check and type core's keys, set the plugins' parts aside.

    ``checks`` are the domains' checks of their own sections, run with core's own (the host's
    loader, :mod:`bothost.host.config_load`, passes them all; without them a ``tick``,
    ``roots`` or ``permissions`` value is only checked for its type). The result has no
    plugin sections yet (:func:`bind_sections` adds them).
    """
    home = home or default_home()
    merged: dict[str, Any] = {}
    paths = source_paths(home, config_file)
    layers = []
    packaged = packaged_default_path()
    spelled: dict[str, str] = {}
    for path in paths:
        data = without_holders(read_yaml(path, twin=path == packaged))  # the twin, if current
        data, written = fold_aliases(data, str(path))  # platforms.web.port is http.port
        spelled.update(written)
        check_env_references(data, str(path))
        check_source(Config, core_part(data, str(path)), str(path))
        merged = deep_merge(merged, data)
        check_shell_references(data, merged, str(path))
        layers.append((str(path), data))
    unset: list[tuple[str, str]] = []
    resolved = interpolate(merged, "", unset)
    core = set(core_keys())
    config = build(Config, core_part(resolved, "merged config"), "", "merged config")
    config.layers = layers  # before the check below, whose errors name the file
    config.http_spelled = {k: v for k, v in spelled.items() if not v.startswith("http.")}
    check_enabled_env(config, [(p, n) for p, n in unset if owned_by_core(p, core)])
    config.pending = PluginParts(  # after the check above, which clears Unset everywhere
        {k: v for k, v in resolved.items() if k == PLATFORMS or k not in core},
        [(p, n) for p, n in unset if not owned_by_core(p, core)],
    )
    config.sources = [str(p) for p in paths]
    config.raw = merged
    check_semantics(config, checks)
    return config


def bind_sections(config: Config, pm: pluggy.PluginManager) -> None:
    """Check and build the sections the plugins of ``pm`` declare (``register_config``)."""
    bind_declared(config, collect_sections(pm, core_keys()))


def bind_declared(config: Config, declared: dict[str, Section]) -> None:
    """:func:`bind_sections` with sections already collected: a running host's reload, for
    ``register_config`` is called once per process."""
    bind(config, declared, core_keys(), lenient={str(packaged_default_path())})


def core_part(data: dict[str, Any], where: str) -> dict[str, Any]:
    """``data`` without the parts plugins own (``platforms`` and unknown top-level keys)."""
    platforms = data.get(PLATFORMS)
    if platforms is not None and not isinstance(platforms, dict):
        raise ConfigError(f"{where}: {PLATFORMS}: expected a mapping, got {platforms!r}")
    core = set(core_keys()) - {PLATFORMS}
    return {k: v for k, v in data.items() if k in core}


def owned_by_core(path: str, core: set[str]) -> bool:
    top = re.split(r"[.\[]", path, maxsplit=1)[0]
    return top in core and top != PLATFORMS


def part_enabled(config: Config, path: str) -> bool:
    parts = path.split(".")
    if parts[0] == "mcp" and len(parts) > 2:
        server = config.mcp.servers.get(parts[2])
        return bool(server and server.enabled)
    if parts[0] == "llm":
        return config.llm.provider not in ("", "offline")
    return True


def check_enabled_env(config: Config, unset: list[tuple[str, str]]) -> None:
    for path, name in unset:
        if part_enabled(config, path):
            raise unset_env_error(config, path, name)
    clear_unset(config)


def mask_secrets(data: Any, key: str = "", config: Config | None = None) -> Any:
    """A copy of raw config data with credentials replaced by ``***`` (secret keys, env and
    headers values, secret arguments, URL passwords and secret query parameters, and the keys
    a plugin's section declares secret when ``config`` is given)."""
    masked = mask_config(data, key)
    for path in secret_paths(config) if config is not None else []:
        node = masked
        for part in path[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(path[-1]) not in (None, ""):
            node[path[-1]] = MASK
    return masked


def secret_paths(config: Config) -> list[tuple[str, ...]]:
    """Key paths the plugins' schemas declare secret (``SECRETS``)."""
    return [(*s.keys, key) for s in config.declared.values() for key in s.secrets]


def secret_values(config: Config) -> set[str]:
    """The values at :func:`secret_paths`, resolved: logs must hide them too."""
    found = set()
    for path in secret_paths(config):
        section: Any = config.section(".".join(path[:-1]))
        value = getattr(section, path[-1], None)
        if isinstance(value, str) and value:
            found.add(value)
    return found
