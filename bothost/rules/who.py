"""Whose calls a permission rule covers (``who``), by platform-qualified identities.

``who.users`` are globs over a session's identity, ``platform:user``
(:func:`bothost.identity.person`), so ``slack:U0123ANA`` never covers a webhook sender who
calls itself ``U0123ANA``; ``who.channels`` are globs over a session's address, or its
``platform:channel`` (``slack:C0123`` covers that channel's threads). Rules keep their ids
qualified wherever they come from: config and the CLI or dashboard through :func:`qualified`
after :func:`problems` (a bare id of Slack's shape is Slack's; any other is refused), stored
rows written before ids were qualified through :func:`legacy` (what the store migration
core:13 did to the rows there). Matching reads a bare pattern the same way again, so a rule
built in code without those steps still covers no other platform's ids.
"""

from __future__ import annotations

import dataclasses
from fnmatch import fnmatchcase
from typing import Any

from bothost import identity
from bothost.config import RuleWho
from bothost.models import Session

KEYS = ("users", "channels")  # the lists of who that name people and channels


def usable(pattern: str) -> str | None:
    """The qualified pattern matching uses; None for one that covers nobody (a bare id not
    of Slack's shape, or an old id of a platform that could not be told)."""
    try:
        pattern = identity.qualify(pattern)
    except identity.IdentityError:
        return None
    return None if identity.platform_of(pattern) == identity.UNKNOWN else pattern


def match_who(who: RuleWho, session: Session) -> list[str] | None:
    """What of ``who`` matched the session, or None when something did not."""
    found = []
    if who.users:
        me = identity.person(session.address.platform, session.user)
        user = next((u for u in who.users if is_user(u, me)), None)
        if user is None:
            return None
        found.append(f"who.users {user!r} matched {me!r}")
    if who.channels:
        channel = next((c for c in who.channels if in_channel(c, session)), None)
        if channel is None:
            return None
        found.append(f"who.channels {channel!r} matched {str(session.address)!r}")
    if who.admins is not None:
        if who.admins != session.is_admin:
            return None
        found.append(f"who.admins {str(who.admins).lower()}")
    if who.conversation is not None:
        if who.conversation != session.id:
            return None
        found.append(f"who.conversation {who.conversation!r}")
    return found


def is_user(pattern: str, me: str) -> bool:
    usable_pattern = usable(pattern)
    return usable_pattern is not None and fnmatchcase(me, usable_pattern)


def in_channel(pattern: str, session: Session) -> bool:
    """Whether the session is in the channel ``pattern`` names: its address, or its
    ``platform:channel`` (so ``slack:C0123`` covers its threads)."""
    usable_pattern = usable(pattern)
    if usable_pattern is None:
        return False
    address = session.address
    channel = f"{address.platform}:{address.channel}"
    return fnmatchcase(str(address), usable_pattern) or fnmatchcase(channel, usable_pattern)


def problems(who: RuleWho) -> list[tuple[str, str]]:
    """Bare ids that name no platform: (key path inside the rule, what to write)."""
    found = []
    for key in KEYS:
        for i, pattern in enumerate(getattr(who, key)):
            try:
                identity.qualify(pattern)
            except identity.IdentityError as exc:
                found.append((f"who.{key}[{i}]", str(exc)))
    return found


def qualified(who: RuleWho | None) -> RuleWho | None:
    """``who`` with its bare Slack ids written ``slack:ID`` (checked with :func:`problems`
    first; a bare id of another shape is left as it is, and covers nobody)."""
    if who is None:
        return None
    return dataclasses.replace(
        who,
        users=[qualify_or_keep(p) for p in who.users],
        channels=[qualify_or_keep(p) for p in who.channels],
    )


def qualify_or_keep(pattern: str) -> str:
    try:
        return identity.qualify(pattern)
    except identity.IdentityError:
        return pattern


def legacy(who: dict[str, Any], action: str) -> dict[str, Any]:
    """A stored ``who`` (plain data) with the ids a row written before they were qualified
    holds read as :func:`bothost.identity.legacy` reads them; qualified ones as they are."""
    out = dict(who)
    for key in KEYS:
        values = out.get(key)
        if isinstance(values, list):
            out[key] = [identity.legacy(v, action) if isinstance(v, str) else v for v in values]
    return out
