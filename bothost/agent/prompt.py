"""The system prompt of a turn: the main agent prompt, plugin fragments, the tool groups.

MCP tools load lazily: instead of every tool's schema, the prompt carries a compact table of
the groups (enabled MCP servers, and ``config`` for admins) that ``activate_tools`` opens.
Once a session has activated a server, the server's ``instructions`` follow, wrapped as
untrusted content (a server is a third party) and bounded in length.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from bothost.agent.interlock import UNTRUSTED_NOTE
from bothost.agent.untrusted import wrap_untrusted
from bothost.hookcall import call_each
from bothost.models import Session

# A server's `instructions` ride in every later request of the session: a few paragraphs is
# what real servers send (the bundled ssh server's are ~1 KB); more is a server filling the
# context on its own.
MAX_INSTRUCTIONS = 4000

if TYPE_CHECKING:
    from bothost.host import Host


def main_prompt(path: str | None = None) -> str:
    if path:
        return Path(path).expanduser().read_text(encoding="utf-8")
    return (resources.files("bothost.defaults") / "agents" / "main.md").read_text("utf-8")


def groups_table(host: Host, session: Session, granted: set[str]) -> str:
    groups = host.registry.groups(session.is_admin)
    if not groups:
        return ""
    # Every turn carries this list, so each word is paid for on every request (issue 19: a
    # table with a header row, tool counts and a status column cost 40 % more, and a model
    # chooses a group by what it is about, not by how many tools it has).
    lines = ["Tool groups for activate_tools:"]
    for g in groups:
        state = "active" if g.name in granted else g.status
        # a server still starting is waited for when activated, so it is offered as ready
        note = "" if state in ("ready", "starting") else f" ({state})"
        lines.append(f"- {g.name}{note}: {g.description}")
    return "\n".join(lines)


async def system_prompt(
    host: Host, session: Session, granted: set[str], base: str | None = None
) -> str:
    parts = [(base or main_prompt(host.config.agent.prompt)).strip(), UNTRUSTED_NOTE]
    for fragment in await call_each(host.pm, "system_prompt", session=session):
        if isinstance(fragment, str) and fragment.strip():
            parts.append(fragment.strip())
    table = groups_table(host, session, granted)
    if table:
        parts.append(table)
    parts.extend(
        instructions(g.name, g.instructions)
        for g in host.registry.groups(session.is_admin)
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
