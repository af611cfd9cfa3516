"""The Slack platform plugin: chat, threads, streaming, briefings and approvals on Slack.

Hook implementations only; the platform lives in :mod:`.platform`, its config section in
:mod:`.config`, what ``bothost doctor`` checks in :mod:`.doctor`.
"""

from collections.abc import Callable
from typing import Any

from bothost.plugins.slack import doctor
from bothost.plugins.slack.config import SlackConfig

from bothost.hookspecs import hookimpl
from bothost.platform import Deferred


@hookimpl
def register_config(register: Callable[[str, type], None]) -> None:
    register("platforms.slack", SlackConfig)


def slack_platform() -> Any:
    from bothost.plugins.slack.platform import SlackPlatform  # slack_bolt's, when it starts

    return SlackPlatform()


@hookimpl
def register_platforms(register: Callable[[Any], None]) -> None:
    register(Deferred("slack", slack_platform))  # made when used: see bothost.platform


@hookimpl
def register_routes(app: Any) -> None:
    from bothost.plugins.slack.http_mode import add_routes

    add_routes(app)


@hookimpl
async def doctor_checks(config: Any, offline: bool, report: Callable[..., None]) -> None:
    await doctor.doctor_checks(config, offline, report)
