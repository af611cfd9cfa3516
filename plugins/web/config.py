"""The ``platforms.web`` and ``platforms.webhook`` config sections, declared by this plugin.

While ``platforms.web`` is enabled the host's one HTTP listener (``bothost.http.server``)
serves every plugin's routes, bound as core's ``http:`` section says; with this plugin
disabled nobody declares it and the host listens nowhere. The webhook section is never
"enabled" as such: an unset secret simply leaves the webhook routes off, so an unset
``${env:…}`` in it is no error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from bothost.plugins.web import callback
from bothost.plugins.web.signing import secret_bytes

MAX_WEBHOOK_BODY = 1_000_000  # bytes; a webhook carries one event, not a file
# A webhook's source (the path segment of /webhook/events/{source}) and a target's name: a
# word, not a path (no `.`, `..`, `/`, control characters), as `deliver_to: webhook:NAME`,
# the events table and `events list --source` show it
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
NAME_RULE = "1-64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit"


@dataclass
class WebConfig:
    # host, port and token are core's `http:` section; written here they are its aliases,
    # moved there when the config loads (bothost.config.http), so this section never has them
    enabled: bool = True
    # The address people's browsers reach this listener at (https://bot.example.com): the
    # login links admins are sent in chat start with it. Unset: no links; they are told the
    # CLI command instead, since a bind address is no proof of what a browser can reach.
    public_url: str | None = None


def secret_problem(secret: str | None) -> None:
    """Refuse a ``whsec_`` secret that is not base64 (found from outside: it loaded, then
    every inbound webhook was a 500 and every delivery failed). The value is not shown."""
    if secret:
        try:
            secret_bytes(secret)
        except ValueError as exc:
            raise TypeError(f"secret: {exc}") from None


@dataclass
class WebhookTarget:
    url: str = ""
    secret: str | None = None

    def __post_init__(self) -> None:
        # an unset ${env:…} reads as "" (the target is then off, see needs_env); anything
        # else is an address every tick would POST to
        parts = urlsplit(self.url) if self.url else None
        if parts is not None and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise TypeError(f"url: expected an http:// or https:// URL, got {self.url!r}")
        secret_problem(self.secret)


def webhook_target_problem(channel: str, config: Any) -> str | None:
    """Why ``tick.deliver_to: webhook:<channel>`` cannot work, or None: a briefing goes to
    a target of ``platforms.webhook.targets``, which must name it (checked at config load,
    without importing the webhook sender: see bothost.platform.target_check)."""
    if channel in config.platforms.webhook.targets:
        return None
    return (
        f"no webhook target {channel!r} in platforms.webhook.targets; "
        f"add platforms.webhook.targets.{channel}.url"
    )


@dataclass
class WebhookConfig:
    secret: str | None = None
    targets: dict[str, WebhookTarget] = field(default_factory=dict)
    max_body: int = MAX_WEBHOOK_BODY
    # Internal networks a sender's callback_url may reach anyway (["10.20.0.0/16"]); by
    # default none may (see bothost.plugins.web.callback).
    callback_allow: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        secret_problem(self.secret)
        try:  # a typo must not leave a network open or a callback refused in silence
            # an unset ${env:…} entry reads as "" here; an empty entry allows nothing
            callback.networks([v for v in self.callback_allow if v])
        except ValueError as exc:
            raise TypeError(str(exc)) from None
        for name in self.targets:
            if not NAME_PATTERN.fullmatch(name):
                raise TypeError(f"targets[{name!r}]: a target name is {NAME_RULE}")

    def needs_env(self, key: str) -> bool:
        """Never: an unset webhook secret leaves the routes (or that target) off."""
        return False
