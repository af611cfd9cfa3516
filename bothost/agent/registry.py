"""The tool registry: native tools from plugins plus tool sources queried per round.

Native tools are registered once at startup (``register_tools``). Tool *sources* — the MCP
manager, the admin ``config`` group — can change at run time, so the registry asks them for
their groups and tools each round. A session sees the native tools plus the tools of the
groups it was granted (``activate_tools``); names are unique and sorted for a stable order.
One request offers at most ``MAX_OFFERED`` tools, in a share of the context window: a granted
group that does not fit is left out whole (:meth:`ToolRegistry.offered`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bothost.agent.tools import MAX_OFFERED, Tool, tool_from_function
from bothost.llm.base import estimate_tokens

logger = logging.getLogger(__name__)


@dataclass
class Group:
    """A named set of tools that a session activates as a whole (an MCP server, ``config``)."""

    name: str
    description: str = ""
    tool_count: int = 0
    status: str = "ready"
    admin_only: bool = False
    instructions: str = ""  # how to use the group, from a third party (an MCP server's own)
    # who wrote `description` when the operator did not (an installed package, the model):
    # the groups table marks it as untrusted content from this source
    description_source: str | None = None


class ToolSource(Protocol):
    def groups(self) -> list[Group]: ...

    def tools(self, group: str) -> list[Tool]: ...


class RegistryError(Exception):
    """A tool was registered twice or with an invalid definition."""


class ToolRegistry:
    def __init__(self) -> None:
        self.native: dict[str, Tool] = {}
        self.sources: list[ToolSource] = []

    def register(
        self, func_or_tool: Callable[..., Any] | Tool, plugin: str = "", **options: Any
    ) -> Tool:
        tool = (
            func_or_tool
            if isinstance(func_or_tool, Tool)
            else tool_from_function(func_or_tool, plugin=plugin, **options)
        )
        if tool.name in self.native:
            raise RegistryError(
                f"tool {tool.name!r} registered twice (by {self.native[tool.name].plugin!r} "
                f"and {plugin!r})"
            )
        self.native[tool.name] = tool
        return tool

    def add_source(self, source: ToolSource) -> None:
        self.sources.append(source)

    def groups(self, is_admin: bool = True) -> list[Group]:
        found: dict[str, Group] = {}
        for source in self.sources:
            try:
                for group in source.groups():
                    if group.admin_only and not is_admin:
                        continue
                    found.setdefault(group.name, group)
            except Exception:
                logger.exception("tool source %r failed to list its groups", source)
        return [found[name] for name in sorted(found)]

    async def settle(self, groups: set[str]) -> None:
        """Give the sources of these groups a chance to finish starting them (MCP servers
        start in the background; a source without ``settle`` is always ready)."""
        for source in self.sources:
            settle = getattr(source, "settle", None)
            if settle is None:
                continue
            try:
                await settle(groups)
            except Exception:
                logger.exception("tool source %r failed to settle %s", source, sorted(groups))

    def owners(self, name: str) -> set[str]:
        """The groups a tool called ``name`` could belong to, found without starting any: a
        source that can tell from the name alone says so (``claims``: an MCP server's tools
        are ``mcp__<server>__…``); the others by the tools they list now."""
        found: set[str] = set()
        for source in self.sources:
            try:
                claims = getattr(source, "claims", None)
                if claims is not None:
                    found |= set(claims(name))
                    continue
                for group in source.groups():
                    if any(t.name == name for t in source.tools(group.name)):
                        found.add(group.name)
            except Exception:
                logger.exception("tool source %r failed to say who owns %s", source, name)
        return found

    def group_tools(self, group: str) -> list[Tool]:
        for source in self.sources:
            try:
                if any(g.name == group for g in source.groups()):
                    return sorted(source.tools(group), key=lambda t: t.name)
            except Exception:
                logger.exception("tool source %r failed to list tools of %s", source, group)
        return []

    def visible(self, granted: set[str], is_admin: bool = True) -> list[Tool]:
        """Native tools plus the tools of the granted groups, sorted by name (see
        :meth:`offered`: a group that does not fit is left out)."""
        return self.offered(granted, is_admin)[0]

    def offered(
        self,
        granted: set[str],
        is_admin: bool = True,
        token_budget: int | None = None,
        added: int = 0,
    ) -> tuple[list[Tool], dict[str, int]]:
        """The tools one request offers, sorted by name, and the granted groups left out.

        Native tools first, then each granted group whole, in name order, while the total
        and the ``added`` tools the caller offers beside them (the tick agent's ``notify``)
        stay within ``MAX_OFFERED`` tools and the granted groups' definitions within
        ``token_budget`` estimated tokens (when given): a group that would take either past
        is left out (with its tool count), never cut, so no tool of it goes missing unseen.
        The groups table says which (:mod:`bothost.agent.prompt`).
        """
        tools, left_out = self.offer(granted, is_admin, token_budget, added)
        counts = {group: count for group, (count, _why) in left_out.items()}
        return tools, counts

    def offer(
        self,
        granted: set[str],
        is_admin: bool = True,
        token_budget: int | None = None,
        added: int = 0,
    ) -> tuple[list[Tool], dict[str, tuple[int, str]]]:
        """:meth:`offered`, with why each group left out is (a turn tells the model and
        the person that reason, per group)."""
        tools, left_out = self._offer(granted, is_admin, token_budget, added)
        return [tools[name] for name in sorted(tools)], left_out

    def not_offered(
        self,
        granted: set[str],
        is_admin: bool = True,
        token_budget: int | None = None,
        added: int = 0,
    ) -> dict[str, tuple[int, str]]:
        """The granted groups :meth:`offered` leaves out, each with its tool count and why
        (``activate_tools`` says so, rather than announcing tools no request carries)."""
        return self._offer(granted, is_admin, token_budget, added)[1]

    def _offer(
        self, granted: set[str], is_admin: bool, token_budget: int | None, added: int
    ) -> tuple[dict[str, Tool], dict[str, tuple[int, str]]]:
        tools = {n: t for n, t in self.native.items() if is_admin or not t.admin_only}
        allowed = {g.name for g in self.groups(is_admin)}
        left_out: dict[str, tuple[int, str]] = {}
        spent = 0
        for group in sorted(granted & allowed):
            new = {t.name: t for t in self.group_tools(group) if t.name not in tools}
            cost = estimate_tokens([t.spec() for t in new.values()]) if token_budget else 0
            if len(new) > MAX_OFFERED:
                why = f"more than the {MAX_OFFERED} one request may offer"
            elif added + len(tools) + len(new) > MAX_OFFERED:
                why = (
                    f"they do not fit beside the built-in tools and the other active groups "
                    f"({added + len(tools)} tools already; one request offers at most "
                    f"{MAX_OFFERED})"
                )
            elif token_budget is not None and spent + cost > token_budget:
                why = (
                    f"their definitions take about {cost} tokens, more than the "
                    f"{max(0, token_budget - spent)} left of the {token_budget} the context "
                    "window has for tool definitions"
                )
            else:
                tools.update(new)
                spent += cost
                continue
            left_out[group] = (len(new), why)
        return tools, left_out

    def lookup(self, name: str, is_admin: bool = True) -> Tool | None:
        """Any tool the registry knows, granted or not (the offline agent's ``call``)."""
        tool = self.native.get(name)
        if tool and (is_admin or not tool.admin_only):
            return tool
        for group in self.groups(is_admin):
            for candidate in self.group_tools(group.name):
                if candidate.name == name:
                    return candidate
        return None
