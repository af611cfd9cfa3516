"""Rules that name nothing: each permission rule that no tool known now can match.

A rule names tools by the name the model sees, and names change: an upgrade that makes
names another way (a hash added since 4da1b1e and 62ef529), a server renamed in config, a
tool the server renamed or dropped, a typo. A rule written for the old name then matches
nothing, silently: a ``deny`` stops refusing. So wherever the host knows the tool listing
(start-up once the MCP servers have settled, ``bothost doctor``, ``bothost rules list``
beside a running host) each such rule is named, with the nearest name known now.

It is a warning, never an error: a server that is down, disabled or still starting lists
no tools, so a rule that could name a tool of such a server is not judged at all.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from bothost.agent.explain import ListedManager, live, with_hints
from bothost.agent.mcp_tools import McpToolSource, tool_name
from bothost.mcp import commands
from bothost.rules import overlap
from bothost.rules.match import Rule, summary
from bothost.rules.origin import PREFIX, UNKNOWN, Origin, covers, native

# the tick agent's own tool, added to its turns only (bothost.events.llm_triage): no
# registry lists it, yet a rule may name it
TURN_TOOLS = ("notify",)
# how alike a name must be to be offered as the one meant (difflib's ratio; its default):
# past `mcp__`, `a__b__wipe` and its name since 62ef529 `a_b-63e5c1__wipe` are 0.69, while
# `gone__wipe` and `a_b-63e5c1__wipe`, sharing only the tool, are 0.54
NEAR = 0.6


@dataclass
class Known:
    """The tools known now, and the servers whose tools are not (down, disabled, starting)."""

    tools: dict[str, Origin] = field(default_factory=dict)  # name the model sees -> origin
    unlisted: set[str] = field(default_factory=set)  # server names


@dataclass
class Unmatched:
    """A rule that no known tool matches, with the nearest known name (or "")."""

    rule: Rule
    nearest: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.rule.ref, "nearest": self.nearest or None, "message": self.message}


def known(tools: Iterable[Any], servers: Iterable[str], listed: Iterable[str]) -> Known:
    """``tools`` (each with ``name`` and ``where_from()``), of every server in ``listed``
    among ``servers`` (every server configured or added, enabled or not)."""
    found = {t.name: t.where_from() for t in tools}
    found |= {name: native(name) for name in TURN_TOOLS if name not in found}
    return Known(found, set(servers) - set(listed))


def registry_tools(registry: Any) -> tuple[list[Any], set[str]]:
    """Every tool ``registry`` can offer now (native ones, and those of each ready group)
    and the groups those came from."""
    tools = list(registry.native.values())
    ready = set()
    for group in registry.groups(is_admin=True):
        if group.status == "ready":
            tools += registry.group_tools(group.name)
            ready.add(group.name)
    return tools, ready


def unmatched(rules: list[Rule], now: Known) -> list[Unmatched]:
    """Each of ``rules`` that no tool of ``now`` matches and that could name no tool of an
    unlisted server. An ``allow`` whose origin is unknown is left out: it matches no tool by
    design, and ``bothost doctor`` names those on a line of their own."""
    out = []
    for rule in rules:
        pinned = rule.tool_origin
        if pinned is not None and pinned.kind == UNKNOWN and rule.action == "allow":
            continue
        if names_a_tool(rule, now) or may_name_unlisted(rule, now):
            continue
        near = nearest(rule.spec.tool, now)
        message = f"{summary(rule)} matches no tool known now"
        if near:
            message += f" (nearest: {near})"
        out.append(Unmatched(rule, near, message))
    return out


def names_a_tool(rule: Rule, now: Known) -> bool:
    """Whether the rule matches some known tool as :func:`bothost.rules.match.match_tool`
    matches: by origin if it has one, else (or for a deny or ask, too) by its pattern."""
    spec, pinned = rule.spec, rule.tool_origin
    if pinned is not None:
        if any(covers(pinned, spec.tool, origin, name) for name, origin in now.tools.items()):
            return True
        if rule.action == "allow":
            return False
    return any(fnmatchcase(name, spec.tool) for name in now.tools)


def may_name_unlisted(rule: Rule, now: Known) -> bool:
    """Whether the rule may be about a tool of a server whose tools are not known now."""
    pinned = rule.tool_origin
    if pinned is not None and pinned.server in now.unlisted:
        return True
    return any(overlap.globs_meet(rule.spec.tool, tool_name(s, "") + "*") for s in now.unlisted)


def nearest(pattern: str, now: Known) -> str:
    """The known name most like ``pattern``, or "" when none is much like it. An MCP
    pattern is compared with MCP names only, past the ``mcp__`` they all share (which alone
    would make any two short names look alike)."""
    mcp = pattern.startswith(PREFIX)
    cut = len(PREFIX) if mcp else 0
    names = {n[cut:]: n for n in now.tools if n.startswith(PREFIX) == mcp}
    close = difflib.get_close_matches(pattern[cut:], sorted(names), n=1, cutoff=NEAR)
    return names[close[0]] if close else ""


async def beside_running_host(runtime: Any) -> Known | None:
    """The tools a running host offers now: the native ones and those of the servers it
    publishes listings of and runs as the config says now (bothost.agent.explain.live);
    None when no host runs, so there is nothing to judge the rules by (and the command's
    own host is not built: a read-only home stays readable)."""
    if not commands.live_listings(runtime.home):
        return None
    host = runtime.host()
    listings = with_hints(await live(host))
    manager = commands.manager_for(host.config, host.store, host.home)
    await manager.reload()
    source = McpToolSource(ListedManager(listings), host.config)
    tools, ready = registry_tools(host.registry)
    for server in listings:
        tools += source.tools(server)
    return known(tools, manager.runners, ready | set(listings))
