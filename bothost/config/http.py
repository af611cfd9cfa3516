"""Core's ``http:`` section: where the host's one HTTP listener binds, and its token.

The listener (:mod:`bothost.http.server`), doctor and the host read only this section.
``platforms.web.{host,port,token}`` are its older spelling and keep working as aliases
(DESIGN.md, "Listener settings"): :func:`fold_aliases` moves them into ``http`` in each
source before core's keys are checked, so the web plugin's section never holds them. Within
one source, the two spellings of a key that disagree are an error naming both; across
sources, the later source wins as for any key.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bothost.config.schema import ConfigError, convert

if TYPE_CHECKING:
    from bothost.config import Config

logger = logging.getLogger(__name__)

HTTP = "http"
ALIAS = ("platforms", "web")  # the older home of these keys, before core owned them
KEYS = ("host", "port", "token")


@dataclass
class HttpConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    # required when host is not loopback: the web chat gives admin rights to whoever reaches it
    token: str | None = None

    RANGES = {"port": (0, 65535)}  # TCP's; 0 lets the system pick a free port (tests do)


def fold_aliases(data: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``data`` (one source) with ``platforms.web.{host,port,token}`` moved into ``http``,
    and the key path the source wrote for each key it sets (``{"port": "platforms.web.port"}``).

    A wrong value under the alias is refused naming the alias, as the user wrote it.
    """
    spelled = {key: f"{HTTP}.{key}" for key in KEYS if key in (data.get(HTTP) or {})}
    platforms = data.get(ALIAS[0])
    web = platforms.get(ALIAS[1]) if isinstance(platforms, dict) else None
    aliased = {key: web[key] for key in KEYS if key in web} if isinstance(web, dict) else {}
    if not aliased or not isinstance(platforms, dict):
        return data, spelled
    alias_path = ".".join(ALIAS)
    convert(HttpConfig, aliased, alias_path, where, ALIAS[1], None)  # errors name the alias
    http = dict(data.get(HTTP) or {})
    for key, value in aliased.items():
        if key in http and http[key] != value:
            raise ConfigError(
                f"{where}: {alias_path}.{key} ({value!r}) and {HTTP}.{key} ({http[key]!r}) "
                f"disagree; {alias_path}.{key} is the older spelling of {HTTP}.{key}: keep one"
            )
        http[key] = value
        spelled[key] = f"{alias_path}.{key}"
    logger.info(
        "%s: %s is read as %s (the new key)",
        where,
        ", ".join(f"{alias_path}.{key}" for key in aliased),
        ", ".join(f"{HTTP}.{key}" for key in aliased),
    )
    rest = {k: v for k, v in web.items() if k not in KEYS} if isinstance(web, dict) else {}
    folded = {**data, HTTP: http, ALIAS[0]: {**platforms, ALIAS[1]: rest}}
    return folded, spelled


def spelling(config: Config, key: str) -> str:
    """The key path the config wrote for ``http.<key>`` (the alias, if that set it)."""
    return config.http_spelled.get(key, f"{HTTP}.{key}")


def as_written(config: Config, path: str) -> str:
    """``path`` (a changed key, say) as the config wrote it: ``http.port`` set through the
    alias is ``platforms.web.port``; any other path is itself."""
    section, _, key = path.partition(".")
    return spelling(config, key) if section == HTTP and key in KEYS else path


def listens(config: Config) -> bool:
    """Whether the host serves HTTP at all: while the web platform is declared and enabled
    (its routes are what the listener is for; ``enabled`` is a platform's own switch)."""
    web = config.platforms.get("web")
    return web is not None and bool(getattr(web, "enabled", True))
