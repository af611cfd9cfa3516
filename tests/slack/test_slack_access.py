"""Slack's own lists (``admins``, ``allowed_users``, ``allowed_channels``) hold Slack's ids,
bare as the section implies or qualified as everywhere else; another platform's id in them
names nobody on Slack."""

from __future__ import annotations

from bothost.plugins.slack.access import Access
from bothost.plugins.slack.config import SlackConfig


def test_slack_lists_take_bare_and_slack_qualified_ids_and_no_others():
    access = Access(
        SlackConfig(
            admins=["U0ADMIN01", "slack:U0ADMIN02", "webhook:U0ADMIN03"],
            allowed_users=["slack:U0ALICE1"],
            allowed_channels=["slack:C0OPS0001", "C0DEV0001"],
        )
    )
    assert access.is_admin("U0ADMIN01") and access.is_admin("U0ADMIN02")
    assert not access.is_admin("U0ADMIN03") and not access.is_admin("webhook:U0ADMIN03")
    assert access.user_allowed("U0ALICE1") and not access.user_allowed("U0BOB001")
    assert access.channel_allowed("C0OPS0001", False) and access.channel_allowed("C0DEV0001", False)
    assert not access.channel_allowed("C0ELSE01", False)
