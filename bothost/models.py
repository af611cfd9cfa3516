"""The values that flow between the parts: addresses, messages, sessions, events, briefings.

Plain dataclasses with no behaviour beyond parsing and formatting, so every part (platforms,
agent, queue, tick) can share them without importing each other.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bothost.platform import Platform


class AddressError(ValueError):
    """A string that is not ``platform:channel[:thread]``."""


@dataclass(frozen=True)
class Address:
    """Where a conversation or a briefing lives: ``platform:channel[:thread]``."""

    platform: str
    channel: str = ""
    thread: str | None = None

    @classmethod
    def parse(cls, text: str) -> Address:
        platform, sep, rest = text.partition(":")
        if not sep or not platform or not platform.replace("_", "").replace("-", "").isalnum():
            raise AddressError(f"expected 'platform:channel[:thread]', got {text!r}")
        channel, _, thread = rest.partition(":")
        return cls(platform, channel, thread or None)

    def __str__(self) -> str:
        base = f"{self.platform}:{self.channel}"
        return f"{base}:{self.thread}" if self.thread else base


@dataclass
class IncomingMessage:
    """A message a person sent to the bot, as a platform hands it to the host."""

    address: Address
    text: str
    user: str = ""
    user_name: str = ""
    is_admin: bool = False
    context: list[dict[str, str]] = field(default_factory=list)  # e.g. earlier thread messages
    meta: dict[str, Any] = field(default_factory=dict)
    received_at: float = field(default_factory=time.time)
    # the platform's id of this delivery: a retry or a twin of it (Slack's app_mention and
    # message events of one message) carries the same one; HostApi.take_delivery keeps it
    delivery: str | None = None
    # a stop word here stops every session under the address's channel, not only its own
    # (a top-level `stop` in a Slack DM stops the DM's threads)
    stops_channel: bool = False


@dataclass
class Session:
    """One conversation: messages, grants and approvals are kept per session."""

    id: str
    address: Address
    user: str = ""
    is_admin: bool = False
    platform: Platform | None = None  # what sends (and may ask) for this session


@dataclass
class Event:
    """Something a server, webhook or person pushed for the tick to triage."""

    source: str
    type: str
    payload: dict[str, Any]
    received_at: float = field(default_factory=time.time)
    dedupe_key: str | None = None
    id: int | None = None
    status: str = "pending"
    attempts: int = 0


@dataclass
class BriefingItem:
    priority: str
    summary: str
    why: str = ""
    event_ids: list[int] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    source: str = ""
    url: str | None = None


@dataclass
class Briefing:
    """A rendered briefing: its structure (items by priority) and plain text."""

    title: str
    items: list[BriefingItem]
    text: str
    targets: list[str]
    event_ids: list[int] = field(default_factory=list)
    low_count: int = 0
    muted_count: int = 0
    muted_summary: str = ""
    id: int | None = None
    low_summary: str = ""  # the low events folded per source: "3 promotions, 2 social"
    created_at: float = field(default_factory=time.time)
    footer: str = ""  # one closing line from our code (e.g. why the rules triaged, not the model)
    # the same on every retry of one delivery, so a receiver can drop a second copy (a
    # scheduled job's ``job_7_…``); empty: a stored briefing's id serves (``brf_ID``)
    key: str = ""

    def low_line(self) -> str:
        """The low events in one line: ``+ 5 low: 3 promotions, 2 social — `bothost events
        list --priority low```; they are never listed one per line."""
        what = f": {self.low_summary}" if self.low_summary else ""
        return f"+ {self.low_count} low{what} — `bothost events list --priority low`"
