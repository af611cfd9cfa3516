"""The Slack platform plugin: chat, threads, streaming, briefings and approvals on Slack.

Hook implementations only; the platform lives in :mod:`.platform`, its config section in
:mod:`.config`, what ``bothost doctor`` checks in :mod:`.doctor`.
"""

from bothost.plugins.slack import doctor
from bothost.plugins.slack.app import check
from bothost.plugins.slack.config import SlackConfig
from bothost.plugins.slack.http_mode import add_routes
from bothost.plugins.slack.platform import SlackPlatform

from bothost.hookspecs import hookimpl

__all__ = ["check"]


@hookimpl
def register_config(register):
    register("platforms.slack", SlackConfig)


@hookimpl
def register_platforms(register):
    register(SlackPlatform())


@hookimpl
def register_routes(app):
    add_routes(app)


@hookimpl
async def doctor_checks(config, offline, report):
    await doctor.doctor_checks(config, offline, report)
