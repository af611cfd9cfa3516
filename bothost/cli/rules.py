"""``bothost rules …``: list, add, remove and test permission rules.

Thin commands over :mod:`bothost.rules`. ``add`` and ``remove`` change the
``permission_rules`` table, which a running host reads on every tool call, so a change
applies at once; rules in config are changed in the config file. ``test`` prints which rule
decides a call, and why, for the person the options name (by default the local operator).
"""

from __future__ import annotations

import getpass
import json
import sys
from datetime import datetime
from typing import Any

import click

from bothost import identity, jsondecode
from bothost.agent import unmatched
from bothost.agent.explain import explain, find_tool, pin
from bothost.cli.runtime import Runtime
from bothost.models import Address, AddressError, Session
from bothost.rules import store as rule_store
from bothost.rules.match import (
    ACTIONS,
    PRECEDENCE,
    RuleError,
    allow_above,
    describe,
    spec_from_data,
)
from bothost.rules.origin import pinnable

pass_runtime = click.make_pass_decorator(Runtime)
USAGE_EXIT = 2


def say(line: str) -> None:
    """One line on stderr, beside a command's answer (``rules add`` starting a server)."""
    click.echo(line, err=True)


def when(epoch: float | None) -> str:
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M") if epoch else ""


@click.group("rules")
def rules_group() -> None:
    """Permission rules: which tool calls run, ask or are refused."""


@rules_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def list_command(runtime: Runtime, as_json: bool) -> None:
    """Every rule in the order it is checked, then the remembered answers."""
    permissions = runtime.config.permissions
    rules, answers = runtime.stored.call(lambda db: rule_store.listing(db, permissions))
    now = runtime.run(unmatched.beside_running_host(runtime))
    stale = unmatched.unmatched(rules, now) if now is not None else None
    if as_json:
        data = {
            "precedence": PRECEDENCE,
            "rules": [{**r.to_dict(), "position": i} for i, r in enumerate(rules, 1)],
            "remembered": [a.to_dict() for a in answers],
            "unmatched": [u.to_dict() for u in stale] if stale is not None else None,
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    if not rules:
        click.echo("No permission rules: the default decides (see agent.approval).")
    else:
        click.echo(f"Rules, {PRECEDENCE}:")
    for i, rule in enumerate(rules, 1):
        click.echo(f"{i:>3}  {rule.ref:16} {rule.origin:7} {describe(rule)}")
    if answers:
        click.echo("Remembered answers (say yes where a call would be asked):")
    for answer in answers:
        by = f"  by {answer.created_by} {when(answer.created_at)}".rstrip()
        click.echo(f"     {answer.ref:16} {answer.origin:7} {describe(answer)}{by}")
    for found in stale or []:  # a running host's tools: a rule no name reaches does nothing
        say(f"note: {found.message}: correct its tool or remove it")


@rules_group.command("add")
@click.argument("tool")
@click.argument("action", type=click.Choice(ACTIONS))
@click.option("--arg", "args", multiple=True, metavar="NAME=PATTERN", help="Argument pattern.")
@click.option("--exact", is_flag=True, help="No arguments besides those given with --arg.")
@click.option(
    "--user",
    "users",
    multiple=True,
    help="Only this person's calls, platform-qualified: slack:U0123, webhook:NAME (repeatable).",
)
@click.option(
    "--channel", "channels", multiple=True, help="Only in this address (slack:C0123, web:*)."
)
@click.option("--admins/--non-admins", default=None, help="Only admins, or only non-admins.")
@click.option("--note", default="", help="Shown with a refusal and in the listing.")
@click.option("--first", is_flag=True, help="Before every other stored rule (default: after).")
@pass_runtime
def add_command(
    runtime: Runtime,
    tool: str,
    action: str,
    args: tuple[str, ...],
    exact: bool,
    users: tuple[str, ...],
    channels: tuple[str, ...],
    admins: bool | None,
    note: str,
    first: bool,
) -> None:
    """Add a rule: bothost rules add mcp__ssh__exec deny --arg 'command=re:rm .*'.

    A TOOL that names one MCP tool is kept with that tool's origin (its server is started
    to ask), so a later renaming never moves the rule to another tool."""
    data: dict[str, Any] = {"tool": tool, "action": action, "exact": exact, "note": note}
    data["args"] = {}
    for pair in args:
        name, sep, pattern = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=PATTERN, got {pair!r}", param_hint="--arg")
        data["args"][name] = pattern
    who = {"users": list(users), "channels": list(channels), "admins": admins}
    if any(v not in (None, []) for v in who.values()):
        data["who"] = who
    try:
        spec = spec_from_data(data)
    except RuleError as exc:
        raise click.UsageError(str(exc)) from None
    by = f"cli:{getpass.getuser()}"
    origin, problem = None, ""
    if pinnable(tool):  # one MCP tool: kept by its origin, so no renaming moves the rule
        origin, problem = runtime.run(pin(runtime.host(), tool, say))
    rule_id = runtime.store.call(
        lambda db: rule_store.add(db, spec, by, first=first, tool_origin=origin)
    )
    if origin is not None:
        click.echo(f"Added rule #{rule_id} ({origin.label()}).")
    elif problem:
        click.echo(f"Added rule #{rule_id} (by name only: {problem}).")
    else:
        click.echo(f"Added rule #{rule_id}.")
    if spec.action == "deny":  # an allow above a deny still decides what it matches
        for rule in runtime.store.call(lambda db: rule_store.allows_above(db, rule_id)):
            say(
                f"note: {allow_above(rule)}: remove it (bothost rules remove {rule.id})"
                " or add this rule with --first"
            )


@rules_group.command("remove")
@click.argument("rule_id", metavar="ID")
@pass_runtime
def remove_command(runtime: Runtime, rule_id: str) -> None:
    """Remove a stored rule or a remembered answer by its id (#7 or 7)."""
    if rule_id.startswith("permissions["):
        raise click.UsageError(f"{rule_id} is in the config file: change it there")
    try:
        number = int(rule_id.removeprefix("#"))
    except ValueError:
        raise click.BadParameter(f"expected a rule id such as 7, got {rule_id!r}") from None
    if not runtime.store.call(lambda db: rule_store.remove(db, number)):
        click.echo(f"bothost: no stored rule #{number} (bothost rules list)", err=True)
        sys.exit(1)
    click.echo(f"Removed rule #{number}.")


@rules_group.command("test")
@click.argument("tool")
@click.argument("arguments", required=False, default="{}", metavar="[JSON]")
@click.option(
    "--user",
    default=None,
    help="The person calling: an id of the conversation's platform, or qualified"
    " (slack:U0123, webhook:NAME; default: you, an admin).",
)
@click.option(
    "--channel",
    "address",
    default=None,
    help="The conversation's address (default: console:, or the --user's platform).",
)
@click.option("--admin/--no-admin", default=None, help="Whether that person is an admin.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@pass_runtime
def test_command(
    runtime: Runtime,
    tool: str,
    arguments: str,
    user: str | None,
    address: str | None,
    admin: bool | None,
    as_json: bool,
) -> None:
    """Which rule decides a call, and why: bothost rules test mcp__gmail__send '{"to": "a@b"}'."""
    try:
        values = jsondecode.decode_object(arguments)
    except jsondecode.JsonInputError as exc:
        raise click.BadParameter(str(exc), param_hint="JSON") from None
    if address is None:
        address = f"{identity.platform_of(user or '') or 'console'}:"
    try:
        where = Address.parse(address)
    except AddressError as exc:
        raise click.BadParameter(str(exc), param_hint="--channel") from None
    try:  # the session's user is its platform's own id: identities are qualified by it
        who = identity.session_user(user, where.platform) if user else getpass.getuser()
    except identity.IdentityError as exc:
        raise click.BadParameter(str(exc), param_hint="--user") from None
    is_admin = admin if admin is not None else user is None  # the operator is an admin
    session = Session(str(where), where, who, is_admin)
    host = runtime.host()

    async def run() -> Any:
        found, problem = await find_tool(host, tool, say)
        result = await explain(host, tool, values, session, found)
        if problem:
            result.notes.insert(0, problem)
        return result

    result = runtime.run(run())
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    for line in result.lines():
        click.echo(line)
