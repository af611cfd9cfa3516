"""Configuration: the typed model, where it comes from, and every error it can raise.

Sources are deep-merged in order (mappings key by key; lists and scalars replace): the
packaged ``config/bothost.yaml``, ``$BOTHOST_HOME/bothost.yaml``, then ``--config FILE`` or
``BOTHOST_CONFIG``. Each source is checked on its own for unknown keys and wrong types, so an
error names the file it came from, the key path and what was expected. ``${env:NAME}`` is
resolved while building; an unset name is an error only inside a part that is enabled.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from bothost.configcheck import check_registered, check_semantics
from bothost.configfile import read_yaml
from bothost.configschema import ConfigError, Unset, build, check_source, parse_duration
from bothost.home import HomeError

__all__ = ["Config", "ConfigError", "load", "default_home", "mask_secrets", "parse_duration",
           "check_registered", "read_yaml"]

ENV_PATTERN = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
SECRET_KEYS = {"api_key", "token", "bot_token", "app_token", "signing_secret", "secret"}
MASKED_MAPPINGS = {"env", "headers"}  # every value under these may hold a credential


@dataclass
class LlmConfig:
    provider: str = "offline"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = parse_duration("120s")
    max_tokens: int = 4096
    temperature: float | None = None
    context_tokens: int = 32000


@dataclass
class AgentConfig:
    max_rounds: int = 12
    turn_timeout: float = parse_duration("300s")
    approval: str = "ask"
    approval_timeout: float = parse_duration("300s")
    tool_timeout: float = parse_duration("60s")
    output_budget: int = 16000
    prompt: str | None = None

    CHOICES = {"approval": ("ask", "allow", "read-only")}


@dataclass
class ConsoleConfig:
    enabled: bool = True


@dataclass
class WebConfig:
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None


@dataclass
class WebhookTarget:
    url: str = ""
    secret: str | None = None


@dataclass
class WebhookConfig:
    secret: str | None = None
    targets: dict[str, WebhookTarget] = field(default_factory=dict)
    max_body: int = 1_000_000


@dataclass
class SlackConfig:
    enabled: bool = False
    mode: str = "socket"
    bot_token: str | None = None
    app_token: str | None = None
    signing_secret: str | None = None
    api_url: str = "https://slack.com/api/"
    allowed_users: list[str] = field(default_factory=list)
    allowed_channels: list[str] = field(default_factory=list)
    admins: list[str] = field(default_factory=list)
    require_mention: bool = True

    CHOICES = {"mode": ("socket", "http")}


@dataclass
class PlatformsConfig:
    console: ConsoleConfig = field(default_factory=ConsoleConfig)
    web: WebConfig = field(default_factory=WebConfig)
    webhook: WebhookConfig = field(default_factory=WebhookConfig)
    slack: SlackConfig = field(default_factory=SlackConfig)


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
    capabilities: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class McpConfig:
    servers: dict[str, McpServerConfig] = field(default_factory=dict)


@dataclass
class TickRule:
    match: dict[str, str] = field(default_factory=dict)
    priority: str = "normal"

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
    max_attempts: int = 5
    lease: float = parse_duration("5m")


@dataclass
class PluginsConfig:
    dirs: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class Config:
    llm: LlmConfig = field(default_factory=LlmConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    platforms: PlatformsConfig = field(default_factory=PlatformsConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    tick: TickConfig = field(default_factory=TickConfig)
    plugins: PluginsConfig = field(default_factory=PluginsConfig)
    log_level: str = "info"
    sources: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    layers: list[tuple[str, dict[str, Any]]] = field(default_factory=list, repr=False)

    CHOICES = {"log_level": ("debug", "info", "warning", "error")}
    INTERNAL = ("sources", "raw", "layers")


def default_home() -> Path:
    return Path(os.environ.get("BOTHOST_HOME") or Path.home() / ".bothost").expanduser()


def packaged_default_path() -> Path:
    return Path(str(resources.files("bothost.defaults") / "bothost.yaml"))


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
        raise HomeError(f"{home}: not readable ({exc.strerror or exc}); fix its permissions "
                        "or choose another --home / BOTHOST_HOME") from exc
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
        return {k: interpolate(v, f"{path}.{k}" if path else str(k), unset)
                for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, f"{path}[{i}]", unset) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${env:" not in value:
        return value
    missing = [name for name in ENV_PATTERN.findall(value) if name not in os.environ]
    if missing:
        unset.append((path, missing[0]))
        return Unset(missing[0])
    return ENV_PATTERN.sub(lambda m: os.environ[m.group(1)], value)


def load(config_file: str | Path | None = None, home: Path | None = None) -> Config:
    """Read, merge, validate and type every config source. Raises :class:`ConfigError`."""
    home = home or default_home()
    merged: dict[str, Any] = {}
    paths = source_paths(home, config_file)
    layers = []
    for path in paths:
        data = read_yaml(path)
        check_source(Config, data, str(path))
        merged = deep_merge(merged, data)
        layers.append((str(path), data))
    unset: list[tuple[str, str]] = []
    resolved = interpolate(merged, "", unset)
    config = build(Config, resolved, "", "merged config")
    config.sources = [str(p) for p in paths]
    config.raw = merged
    config.layers = layers
    check_enabled_env(config, unset)
    check_semantics(config)
    return config


def part_enabled(config: Config, path: str) -> bool:
    parts = path.split(".")
    if parts[0] == "platforms" and len(parts) > 1:
        if parts[1] == "webhook":
            return False  # an unset webhook secret simply leaves the webhook routes off
        if parts[1] == "slack" and parts[2:3] == ["app_token"]:  # Socket Mode's token only
            return config.platforms.slack.enabled and config.platforms.slack.mode == "socket"
        if parts[1] == "slack" and parts[2:3] == ["signing_secret"]:  # HTTP mode's only
            return config.platforms.slack.enabled and config.platforms.slack.mode == "http"
        section = getattr(config.platforms, parts[1], None)
        return bool(getattr(section, "enabled", True))
    if parts[0] == "mcp" and len(parts) > 2:
        server = config.mcp.servers.get(parts[2])
        return bool(server and server.enabled)
    if parts[0] == "llm":
        return config.llm.provider not in ("", "offline")
    return True


def check_enabled_env(config: Config, unset: list[tuple[str, str]]) -> None:
    for path, name in unset:
        if part_enabled(config, path):
            raise ConfigError(
                f"{path}: environment variable {name} is not set "
                f"(export it, or disable this part of the config)"
            )
    clear_unset(config)


def clear_unset(obj: Any) -> None:
    """Replace every :class:`Unset` left in disabled parts with None."""
    if dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if isinstance(value, Unset):
                setattr(obj, f.name, None)
            else:
                clear_unset(value)
    elif isinstance(obj, dict):
        for key, value in list(obj.items()):
            if isinstance(value, Unset):
                del obj[key]
            else:
                clear_unset(value)
    elif isinstance(obj, list):
        obj[:] = [v for v in obj if not isinstance(v, Unset)]
        for v in obj:
            clear_unset(v)


def mask_secrets(data: Any, key: str = "") -> Any:
    """A copy of raw config data with credentials replaced by ``***`` (secret keys, env and
    headers values, secret arguments, URL passwords and secret query parameters)."""
    from bothost.redact import mask_config  # bothost.redact owns what counts as a secret

    return mask_config(data, key)
