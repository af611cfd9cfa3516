"""Private notices to Slack admins: a remote MCP server waits for a login.

Each admin in ``platforms.slack.admins`` gets one DM per spell (``conversations.open`` with
the admin, then ``chat.postMessage``): a Block Kit ``button`` whose ``url`` is the admin's own
one-time login link (see :mod:`bothost.mcp.oauth.links` for why the link is safe to leave
in Slack's history), or, when the host has no public address, the CLI command instead. Who
was told already is the host's to know (:meth:`~bothost.api.HostApi.mcp_login_link`), so a
restart or a second host does not tell anyone twice. Slack sends an interaction for a click
on a URL button too; it is acknowledged and otherwise ignored (the browser does the work).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from bothost.plugins.slack.access import own
from bothost.plugins.slack.blocks import context, section

from bothost.platform import LoginNotice

if TYPE_CHECKING:
    from bothost.plugins.slack.platform import SlackPlatform

logger = logging.getLogger(__name__)

LOGIN = "bothost_mcp_login"  # action_id of the DM's button
NO_ADDRESS = (
    "Log in on the host with `{command}` (it prints the address to open), or from the "
    "dashboard. _This host has no public address for a login link: set "
    "`platforms.web.public_url` to get a button here._"
)


class LoginNotices:
    def __init__(self, platform: SlackPlatform) -> None:
        self.platform = platform

    def register(self, app: Any) -> None:
        app.action(LOGIN)(self.on_click)

    async def on_click(self, ack: Any) -> None:
        await ack()  # the button opens its URL in the browser; nothing to do here

    async def notify(self, notice: LoginNotice) -> None:
        """One DM per admin not told yet this spell; a failed DM is logged, the rest go on."""
        from slack_sdk.errors import SlackApiError

        for admin in own(self.platform.config.admins):  # Slack's ids, `slack:` or not
            link = await self.platform.host.mcp_login_link(notice.server, f"slack:{admin}")
            if link is None:
                continue  # told already this spell
            try:
                opened = await self.platform.client.conversations_open(users=admin)
                channel = opened["channel"]["id"]
                text, blocks = message(notice, link)
                await self.platform.post(channel, None, text, blocks=blocks)
            except SlackApiError as exc:  # im:write missing, a deactivated user…
                logger.warning(
                    "slack: could not DM admin %s about %s: %s",
                    admin,
                    notice.server,
                    exc.response.get("error"),
                )


def message(notice: LoginNotice, link: str) -> tuple[str, list[dict[str, Any]]]:
    """The DM's fallback text and blocks."""
    what = f"MCP server *{notice.server}* needs a login before its tools can be used."
    if notice.why:
        what += f"\n_{notice.why}_"
    if not link:
        how = NO_ADDRESS.format(command=notice.command)
        return f"{what}\n{how}", [section(what), context(how)]
    button = {
        "type": "button",
        "action_id": LOGIN,
        "text": {"type": "plain_text", "text": f"Log in to {notice.server}"},
        "url": link,
        "style": "primary",
    }
    note = (
        "The button works once, for 24 hours, and only until someone logs the server in. "
        f"Or log in on the host with `{notice.command}`."
    )
    return (
        f"{what} Log in: {link}",
        [section(what), {"type": "actions", "elements": [button]}, context(note)],
    )
