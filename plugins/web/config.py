"""The ``platforms.web`` and ``platforms.webhook`` config sections, declared by this plugin.

``platforms.web`` also configures the host's one HTTP listener (``bothost.http``), which
serves every plugin's routes; with this plugin disabled nobody declares it and the host
listens nowhere. The webhook section is never "enabled" as such: an unset secret simply
leaves the webhook routes off, so an unset ``${env:…}`` in it is no error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bothost.plugins.web import callback

MAX_WEBHOOK_BODY = 1_000_000  # bytes; a webhook carries one event, not a file


@dataclass
class WebConfig:
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    # The address people's browsers reach this listener at (https://bot.example.com): the
    # login links admins are sent in chat start with it. Unset: no links; they are told the
    # CLI command instead, since a bind address is no proof of what a browser can reach.
    public_url: str | None = None

    RANGES = {"port": (0, 65535)}  # TCP's; 0 lets the system pick a free port (tests do)


@dataclass
class WebhookTarget:
    url: str = ""
    secret: str | None = None


@dataclass
class WebhookConfig:
    secret: str | None = None
    targets: dict[str, WebhookTarget] = field(default_factory=dict)
    max_body: int = MAX_WEBHOOK_BODY
    # Internal networks a sender's callback_url may reach anyway (["10.20.0.0/16"]); by
    # default none may (see bothost.plugins.web.callback).
    callback_allow: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:  # a typo must not leave a network open or a callback refused in silence
            # an unset ${env:…} entry reads as "" here; an empty entry allows nothing
            callback.networks([v for v in self.callback_allow if v])
        except ValueError as exc:
            raise TypeError(str(exc)) from None

    def needs_env(self, key: str) -> bool:
        """Never: an unset webhook secret leaves the routes (or that target) off."""
        return False
