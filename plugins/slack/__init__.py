"""The Slack platform plugin: chat, threads, streaming, briefings and approvals on Slack.

Hook implementations only; the platform lives in :mod:`.platform`. ``check(config)`` is
what ``bothost doctor`` calls to test the tokens.
"""

from bothost.plugins.slack.app import check
from bothost.plugins.slack.http_mode import add_routes
from bothost.plugins.slack.platform import SlackPlatform

from bothost.hookspecs import hookimpl

__all__ = ["check"]


@hookimpl
def register_platforms(register):
    register(SlackPlatform())


@hookimpl
def register_routes(app):
    add_routes(app)
