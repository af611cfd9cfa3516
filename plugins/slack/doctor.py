"""What ``bothost doctor`` checks of Slack: its briefing targets and, online, its tokens."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FIX_TOKENS = "see `bothost docs slack` to create the app and its tokens"


async def doctor_checks(config: Any, offline: bool, report: Callable[..., None]) -> None:
    slack = config.platforms.slack
    for target in config.tick.deliver_to:
        if target.partition(":")[0] == "slack" and not slack.enabled:
            report(
                f"deliver_to {target}",
                False,
                "platforms.slack is not enabled; briefings to it would be retried and then fail",
                f"enable platforms.slack, or remove {target!r} from tick.deliver_to",
            )
    if offline or not slack.enabled:
        return
    from bothost.plugins.slack.app import check  # slack_bolt is a sixth of a CLI start

    problem = await check(slack)
    if problem:
        report("slack", False, problem, FIX_TOKENS)
    else:
        report("slack", True, f"{slack.mode} mode, tokens work")
