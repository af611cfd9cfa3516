"""What ``bothost doctor`` checks of the web platform: its briefing targets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def doctor_checks(config: Any, report: Callable[..., None]) -> None:
    # a webhook: target platforms.webhook.targets does not name is refused when the config
    # loads (config.webhook_target_problem), so doctor never sees one
    web = config.platforms.web
    for target in config.tick.deliver_to:
        if target.partition(":")[0] == "web" and not web.enabled:
            report(
                f"deliver_to {target}",
                False,
                "platforms.web is not enabled; briefings to it would be retried and then fail",
                f"enable platforms.web, or remove {target!r} from tick.deliver_to",
            )
