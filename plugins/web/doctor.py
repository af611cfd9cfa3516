"""What ``bothost doctor`` checks of the web and webhook platforms: their briefing targets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def doctor_checks(config: Any, report: Callable[..., None]) -> None:
    web, webhook = config.platforms.web, config.platforms.webhook
    for target in config.tick.deliver_to:
        name, _, channel = target.partition(":")
        if name == "web" and not web.enabled:
            report(
                f"deliver_to {target}",
                False,
                "platforms.web is not enabled; briefings to it would be retried and then fail",
                f"enable platforms.web, or remove {target!r} from tick.deliver_to",
            )
        elif name == "webhook" and channel not in webhook.targets:
            report(
                f"deliver_to {target}",
                False,
                f"no webhook target {channel!r} in platforms.webhook.targets",
                f"add platforms.webhook.targets.{channel}.url",
            )
