"""The ``platforms.slack`` config section, declared by this plugin through ``register_config``.

Which token is needed depends on the mode: Socket Mode connects with the app-level token,
HTTP mode verifies requests with the signing secret, so an unset ``${env:…}`` for the other
one is no error (:meth:`SlackConfig.needs_env`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


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

    def needs_env(self, key: str) -> bool:
        """Whether an unset ``${env:…}`` at ``key`` stops the load."""
        if not self.enabled:
            return False
        if key == "app_token":
            return self.mode == "socket"
        if key == "signing_secret":
            return self.mode == "http"
        return True
