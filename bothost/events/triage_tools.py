"""Triage rules in chat: the agent's tools and the offline agent's ``triage …`` commands.

``add_triage_rule`` (match, priority, note, optional unless and within) stores a rule with
origin ``chat`` and the person's platform-qualified id, and answers with the rule it made;
``triage_rules`` lists, tests, removes and restores (two tools, not five: every request of
every conversation carries the native tools' definitions). Changing rules is for admins
(the terminal, the local web chat, a platform's ``admins``): anyone else gets an error
result saying who can, so the model can tell them; the tools are offered to everyone for
that reason, and refuse in the tool rather than by being hidden. The tick agent is never an
admin, so no event's text can teach the triage. The offline agent takes the command line's
words: :func:`register_offline_commands`.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any, Literal

from bothost import identity, jsondecode
from bothost.agent.tools import ToolContext, ToolError
from bothost.events import triage_rules as triage_rules_
from bothost.events import triage_store
from bothost.events.triage import PRIORITIES
from bothost.events.triage_store import TriageRuleError
from bothost.hookspecs import OfflineCommand

ORIGIN = "chat"
USAGE = (
    "Usage: triage list | triage add KEY=GLOB... priority=P [note=TEXT] | triage remove N "
    "| triage remove default:NAME | triage restore default:NAME | triage test {json}"
)


def admin_only(ctx: ToolContext) -> str:
    """The person's platform-qualified id; :class:`ToolError` saying who can for a non-admin."""
    if not ctx.session.is_admin:
        raise ToolError(triage_rules_.who_can(ctx.host.config))
    return identity.person(ctx.session.address.platform, ctx.session.user or "")


async def add_triage_rule(
    ctx: ToolContext,
    match: dict,
    priority: str,
    note: str = "",
    unless: list[dict] | None = None,
    within: dict | None = None,
) -> str:
    """Add a triage rule: events it matches get this priority from the next tick on.

    Args:
        match: keys source, type or payload.<field>, each a glob that must fit, e.g.
            {"payload.from": "*@corp.example"} or {"type": "event/new_email",
            "payload.labels": "CATEGORY_PROMOTIONS"}.
        priority: urgent, high, normal, low (folded into one line) or drop (never shown).
        note: why, in the person's words; shown in the listing.
        unless: mappings like match; the rule does not apply when one of them fits.
        within: a time field and a duration, e.g. {"payload.start": "24h"}: only events
            whose time is from now to now plus the duration.
    """
    by = admin_only(ctx)
    try:
        rule = triage_rules_.rule_from_data(match, priority, note, unless, within)
    except (TriageRuleError, TypeError, ValueError) as exc:
        raise ToolError(str(exc)) from None
    rule_id = await ctx.host.store.run(lambda db: triage_store.add(db, rule, ORIGIN, by))
    why = f" ({rule.note})" if rule.note else ""
    return (
        f"Added triage rule #{rule_id}: {triage_rules_.describe(rule)}{why}. It applies from "
        f"the next tick; `triage remove {rule_id}` takes it back."
    )


async def triage_rules(
    ctx: ToolContext,
    action: Literal["list", "test", "remove", "restore"],
    rule: str = "",
    event: dict | None = None,
) -> str:
    """List the triage rules, test which one decides an event, or (admins) remove one.

    Args:
        action: list (every rule in the order the tick tries them), test (which rule
            decides `event`, and why), remove (the stored rule or shipped default named by
            `rule`) or restore (put back the shipped default named by `rule`).
        rule: for remove, a stored rule's id (7) or a default (default:gmail-promotions);
            for restore, a default.
        event: for test, {"source": ..., "type": ..., "payload": {...}}.
    """
    tick = ctx.host.config.tick
    try:
        if action == "list":
            entries = await ctx.host.store.run(lambda db: triage_rules_.listing(db, tick))
            return listing_text(entries)
        if action == "test":
            found = await ctx.host.store.run(lambda db: triage_rules_.decide(db, tick, event))
            return found.line()
        if action not in ("remove", "restore"):
            raise ToolError(f"unknown action {action!r}; expected list, test, remove or restore")
        by = admin_only(ctx)
        if not rule:
            raise ToolError(f"{action} needs `rule`: an id such as 7, or default:NAME")
        if action == "remove":
            return await ctx.host.store.run(
                lambda db: triage_store.remove(db, str(rule), ORIGIN, by)
            )
        return await ctx.host.store.run(lambda db: triage_store.restore(db, str(rule)))
    except TriageRuleError as exc:
        raise ToolError(str(exc)) from None


def listing_text(entries: list[triage_rules_.Entry]) -> str:
    lines = [f"Triage rules, {triage_rules_.ORDER}:"]
    for entry in entries:
        if entry.removed:
            lines.append(f"off {entry.ref} ({entry.why_off})")
            continue
        note = f" — {entry.rule.note}" if entry.rule.note else ""
        by = f" (by {entry.added_by})" if entry.added_by else ""
        lines.append(f"{entry.ref}: {triage_rules_.describe(entry.rule)}{note}{by}")
    return "\n".join(lines)


TOOLS = (add_triage_rule, triage_rules)


def register_tools(register: Any) -> None:
    for func in TOOLS:
        register(func)


# --- the offline agent ---------------------------------------------------------------------

OPTIONS = {"--match", "--priority", "--note", "--unless", "--within"}


def add_arguments(words: list[str]) -> dict[str, Any]:
    """``payload.from=*@corp.example priority=high note=mail from corp`` (the words after
    ``note=`` that hold no ``=`` are the note's), or the command line's ``--match K=G
    --priority P --note T --unless K=G --within K=D``: a tool call's arguments."""
    match: dict[str, str] = {}
    unless: list[dict[str, str]] = []
    within: dict[str, str] = {}
    found: dict[str, Any] = {"match": match}
    last = ""
    pending = list(words)
    while pending:
        word = pending.pop(0)
        if word in OPTIONS and pending:
            word = f"{word[2:]}={pending.pop(0)}" if word != "--match" else pending.pop(0)
        key, sep, value = word.partition("=")
        if not sep:
            if last != "note":
                raise TriageRuleError(f"expected KEY=GLOB, got {word!r}")
            found["note"] += f" {word}"
            continue
        last = key
        if key in ("priority", "note"):
            found[key] = value
        elif key == "unless":
            unless.append(triage_rules_.pairs([value], "unless"))
        elif key == "within":
            within.update(triage_rules_.pairs([value], "within"))
        else:
            match[key] = value
    if "priority" not in found:
        raise TriageRuleError(f"a rule needs priority=P ({', '.join(PRIORITIES)})")
    if unless:
        found["unless"] = unless
    if within:
        found["within"] = within
    return found


def offline_triage(rest: str) -> tuple[str, dict[str, Any]] | str:
    """The tool call ``triage WORDS`` asks for, or a line saying what is wrong."""
    verb, _, args = rest.strip().partition(" ")
    args = args.strip()
    try:
        if verb == "list" and not args:
            return "triage_rules", {"action": "list"}
        if verb == "add":
            try:
                words = shlex.split(args)
            except ValueError:  # an apostrophe in a note: "note=Ana's mail"
                words = args.split()
            return "add_triage_rule", add_arguments(words)
        if verb in ("remove", "restore") and args:
            return "triage_rules", {"action": verb, "rule": args}
        if verb == "test" and args:
            return "triage_rules", {"action": "test", "event": jsondecode.decode_object(args)}
    except (TriageRuleError, jsondecode.JsonInputError) as exc:
        return f"{exc}\n{USAGE}"
    return USAGE


def register_offline_commands(register: Callable[[str, str, OfflineCommand], None]) -> None:
    register(
        "triage",
        "triage list|add|remove|restore|test   triage rules (`bothost docs events`)",
        offline_triage,
    )
