"""Who may talk to the bot on Slack, where, and who is an admin.

``allowed_users: []`` means admins only; ``["*"]`` means everyone in the workspace. Anyone
else gets one line carrying their user id, so they can ask an admin to add them.
``allowed_channels: []`` allows every channel the bot is in; direct messages are governed by
the user lists alone. Admins get the ``config`` tools and may answer any approval. The ids
here are Slack's, bare (``U0123``) or qualified (``slack:U0123``).
"""

from __future__ import annotations

from bothost.plugins.slack.config import SlackConfig

EVERYONE = "*"


PREFIX = "slack:"


def own(ids: list[str]) -> list[str]:
    """Slack's ids of a list in this section, in order: bare ones are Slack's, and so may be
    written ``slack:U0123`` as elsewhere; one qualified with another platform is no Slack id
    (it matches nobody here, where Slack says who is speaking)."""
    return [i.removeprefix(PREFIX) for i in ids if i.startswith(PREFIX) or ":" not in i]


class Access:
    # the section's keys this reads: a running platform takes their edits live
    KEYS = ("allowed_users", "allowed_channels", "admins")

    def __init__(self, config: SlackConfig) -> None:
        self.admins = set(own(config.admins))
        self.users = set(own(config.allowed_users))
        self.channels = set(own(config.allowed_channels))

    def is_admin(self, user: str) -> bool:
        return user in self.admins

    def user_allowed(self, user: str) -> bool:
        return bool(user) and (EVERYONE in self.users or user in self.users or self.is_admin(user))

    def channel_allowed(self, channel: str, is_dm: bool) -> bool:
        return is_dm or not self.channels or channel in self.channels

    def may_answer(self, user: str, requester: str) -> bool:
        """Whether ``user`` may answer a question asked on behalf of ``requester``."""
        return (bool(requester) and user == requester) or self.is_admin(user)

    @staticmethod
    def refusal(user: str) -> str:
        return (
            f"Sorry, I only talk to people on my list. Ask an admin to add your Slack user "
            f"id {user} to platforms.slack.allowed_users."
        )

    @staticmethod
    def channel_refusal(channel: str) -> str:
        return (
            f"I don't answer in this channel. An admin can add {channel} to "
            "platforms.slack.allowed_channels."
        )
