"""The system prompt of a turn: the main agent prompt, plugin fragments, the tool groups.

MCP tools load lazily: instead of every tool's schema, the prompt carries a compact table of
the groups (enabled MCP servers, and ``config`` for admins) that ``activate_tools`` opens.
Once a session has activated a server, the server's ``instructions`` follow, wrapped as
untrusted content (a server is a third party) and bounded in length. A group's description
in the table is the operator's (config, ``mcp add``), except for a server ``mcp install``
added (the package's words) or ``register_mcp`` (the model's): that one is marked too.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from bothost.agent.interlock import UNTRUSTED_NOTE
from bothost.agent.untrusted import escape, escape_attribute, wrap_untrusted
from bothost.config import packaged_file
from bothost.hooks.call import call_each
from bothost.models import Session

# A server's `instructions` ride in every later request of the session: a few paragraphs is
# what real servers send (the bundled ssh server's are ~1 KB); more is a server filling the
# context on its own.
MAX_INSTRUCTIONS = 4000

if TYPE_CHECKING:
    from bothost.agent.registry import Group
    from bothost.host.host import Host


def main_prompt(path: str | None = None) -> str:
    """The main agent prompt: ``agent.prompt``'s file, read again only once it changed (a
    person may edit it while the host runs), or the packaged one."""
    if path:
        found = Path(path).expanduser()
        stat = found.stat()
        return read_prompt(found, stat.st_mtime_ns, stat.st_size)
    return packaged_prompt()


@functools.cache
def packaged_prompt() -> str:
    # read once per process: every turn read it again (issue 19: ~0.3 ms of a turn's time)
    return packaged_file("agents", "main.md").read_text("utf-8")


@functools.lru_cache(maxsize=4)  # a host has one prompt file; the key holds its version
def read_prompt(path: Path, mtime_ns: int, size: int) -> str:
    return path.read_text(encoding="utf-8")


def groups_table(
    host: Host,
    session: Session,
    granted: set[str],
    groups: list[Group] | None = None,
    left_out: dict[str, tuple[int, str]] | None = None,
) -> str:
    if groups is None:
        groups = host.registry.groups(session.is_admin)
    if not groups:
        return ""
    # Every turn carries this list, so each word is paid for on every request (issue 19: a
    # table with a header row, tool counts and a status column cost 40 % more, and a model
    # chooses a group by what it is about, not by how many tools it has).
    lines = ["Tool groups for activate_tools:"]
    left_out = left_out or {}
    for g in groups:
        state = "active" if g.name in granted else g.status
        if g.name in left_out:  # granted, but one request cannot offer its tools
            count, why = left_out[g.name]
            state = f"active, not offered: {count} tools, {why}"
        # a server still starting is waited for when activated, so it is offered as ready
        note = "" if state in ("ready", "starting") else f" ({state})"
        lines.append(f"- {g.name}{note}: {described(g)}")
    return "\n".join(lines)


def described(group: Group) -> str:
    """A group's description as the table shows it: as written when the operator wrote it;
    else marked on its one line, as untrusted content from its source. Only a server that
    ``mcp install`` or ``register_mcp`` added pays the tags' tokens."""
    if group.description_source is None:
        return group.description
    source = escape_attribute(group.description_source)
    text = escape(" ".join(group.description.split()))
    return f'<untrusted-content source="{source}">{text}</untrusted-content>'


async def system_prompt(
    host: Host,
    session: Session,
    granted: set[str],
    base: str | None = None,
    left_out: dict[str, tuple[int, str]] | None = None,
) -> str:
    parts = [(base or main_prompt(host.config.agent.prompt)).strip(), UNTRUSTED_NOTE]
    for fragment in await call_each(host.pm, "system_prompt", session=session):
        if isinstance(fragment, str) and fragment.strip():
            parts.append(fragment.strip())
    groups = host.registry.groups(session.is_admin)
    table = groups_table(host, session, granted, groups, left_out)
    if table:
        parts.append(table)
    parts.extend(
        instructions(g.name, g.instructions)
        for g in groups
        if g.name in granted and g.instructions.strip()
    )
    return "\n\n".join(parts)


def instructions(group: str, text: str) -> str:
    """A group's instructions as the model reads them: untrusted, and cut at the bound."""
    text = text.strip()
    cut = len(text) > MAX_INSTRUCTIONS
    wrapped = wrap_untrusted(text[:MAX_INSTRUCTIONS], f"instructions of MCP server {group}")
    note = f"\n(instructions cut at {MAX_INSTRUCTIONS} characters)" if cut else ""
    return f"How to use the tools of {group}, as its server describes them:\n{wrapped}{note}"
