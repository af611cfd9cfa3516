"""Who a person or a channel is: an id qualified by the platform that vouches for it.

An id means something only on its platform. Slack's ``U0123ANA`` is a person Slack signed
in; a webhook's ``user`` and ``channel`` are names its sender chose and may copy anyone's.
So wherever a permission rule, a remembered answer or a list names a person or a channel,
it writes ``platform:id`` (``slack:U0123ANA``, ``web:web``, ``webhook:ci-bot``,
``console:root``), and a session is that person by its platform's name and its user id
together (:func:`person`): no sender can name itself into another platform's identity.

A bare id is read by where it stands: in a platform's own section (Slack's ``admins``) it is
that platform's; in ``permissions`` one of Slack's shape (:data:`SLACK_ID`) is a Slack id and
any other is refused with a hint (:func:`qualify`); in a row stored before ids were
qualified, :func:`legacy` decides.
"""

from __future__ import annotations

import re

SLACK = "slack"
SLACK_ID = re.compile(r"[UWCGD][A-Z0-9]{6,}")  # users U/W; channels C, G (private), D (DM)
# the platform of an old stored id whose platform cannot be told: no platform is called
# this, and matching skips it, so an `allow` naming such an id allows nobody
UNKNOWN = "unknown"
EVERY = "*"  # as a platform: any platform (an old `deny` keeps covering the id everywhere)
HINT = "write it with its platform: slack:ID, web:NAME, webhook:NAME or console:NAME"


class IdentityError(ValueError):
    """A bare id that names no platform; the message says how to qualify it."""


def qualified(platform: str, user: str) -> str:
    return f"{platform}:{user}"


def person(platform: str, user: str) -> str:
    """The identity rules match for ``user`` of a session on ``platform``. ``user`` is taken
    as the platform gave it, ``:`` and all: a webhook sender's ``slack:U1`` stays
    ``webhook:slack:U1``."""
    return qualified(platform, user)


def platform_of(pattern: str) -> str | None:
    """The platform part of a qualified id or pattern; None for a bare one."""
    platform, sep, _ = pattern.partition(":")
    return platform if sep and platform else None


def qualify(pattern: str) -> str:
    """``pattern`` (an id or a glob over ids, from config, the CLI or the dashboard) as a
    qualified pattern: as is when it names its platform; ``slack:ID`` for a bare id of
    Slack's shape. IdentityError for any other bare one."""
    if platform_of(pattern) is not None:
        return pattern
    if SLACK_ID.fullmatch(pattern):
        return qualified(SLACK, pattern)
    raise IdentityError(f"{pattern!r} names no platform; {HINT}")


def legacy(pattern: str, action: str) -> str:
    """A pattern of a row stored before ids were qualified, read as it can be now.

    Slack's shape is Slack (every Slack id has it; the ids other platforms gave were the
    web's ``web``, the terminal's login name and names webhook senders chose). Any other
    bare id cannot be placed: a ``deny`` or ``ask`` keeps covering it on every platform
    (``*:ID``: covering more only refuses or asks more), an ``allow`` covers nobody
    (``unknown:ID``), so no sender's chosen name inherits it.
    """
    if platform_of(pattern) is not None:
        return pattern
    if SLACK_ID.fullmatch(pattern):
        return qualified(SLACK, pattern)
    return qualified(EVERY if action in ("deny", "ask") else UNKNOWN, pattern)


def session_user(user: str, platform: str) -> str:
    """The platform's own id of ``user`` named for a session on ``platform`` (``rules
    test --user``, the dashboard's test): a qualified one must be of that platform.
    IdentityError otherwise."""
    named = platform_of(user)
    if named is None:
        return user
    if named != platform:
        raise IdentityError(f"{user!r} is a {named} id, and the conversation is on {platform}")
    return user[len(named) + 1 :]
