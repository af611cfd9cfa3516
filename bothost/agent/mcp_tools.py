"""MCP servers as a tool source of the agent's registry: names, capabilities, calls.

Each running server is a group of tools named ``mcp__<server>__<tool>`` (sanitised to
``[A-Za-z0-9_-]``, at most 64 characters, unique: a name sanitising changed gets a suffix
from a hash of the original name, so a tool's name never depends on the server's other
tools, see :func:`tool_names`; a server name that could
make two servers' tool names meet gets one too, see :func:`server_part`; a name two servers'
tools get anyway belongs to neither, see :meth:`McpToolSource.shared`). The client has already
dropped tools whose name is not a non-empty string (:mod:`bothost.mcp.session`).
Capabilities follow DESIGN: a tool with no ``annotations`` is ``private`` only; with
annotations the MCP defaults apply (``readOnlyHint`` → no side effects, untrusted unless
``openWorldHint`` is false — unless ``destructiveHint`` is true as well, which is read as
not read-only; else ``destructiveHint`` default true → destructive,
``openWorldHint`` default true → untrusted and chosen egress); a server may state them
exactly in ``_meta["bothost/capabilities"]``; config (``mcp.servers.<name>.capabilities``)
may only add. Calls go through the manager, with progress shown as the turn's status and
elicitations asked through the session's platform: each call carries an
:class:`~bothost.mcp.elicitation.Asker` keyed by the session id, which is how the client
tells which conversation a server's question belongs to.

A tool's description (or its title, or its name, when it has no description) is the
server's writing, as much as an email body its tool returns: the model reads it wrapped
as untrusted content (:mod:`bothost.agent.untrusted`), with the server named, so a
description cannot pass for the host's instructions. The prose of its input schema
(parameter descriptions, titles, enum names, at any depth) is the server's too: it is taken
out of the schema and carried inside that same wrapper, one line per parameter
(:mod:`bothost.agent.mcp_schema`). Only activated servers' tools carry descriptions; the
groups table every turn carries holds none of a server's text.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import replace
from typing import Any

from bothost import redact
from bothost.agent.mcp_resources import LIST, READ, resource_tools
from bothost.agent.mcp_schema import notes_text, split
from bothost.agent.registry import Group
from bothost.agent.sampling import Conversation
from bothost.agent.tools import EGRESS, Capabilities, Tool, ToolContext, ToolError, ToolResult
from bothost.agent.untrusted import wrap_untrusted
from bothost.mcp.bundled import is_bundled
from bothost.mcp.elicitation import Asker
from bothost.mcp.roster import plugin_name
from bothost.rules.origin import MCP, PREFIX, RESOURCES, Origin
from bothost.usage import attribution

logger = logging.getLogger(__name__)

MAX_NAME = 64  # OpenAI and Anthropic both refuse longer tool names
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
META_KEY = "bothost/capabilities"
EMPTY_SCHEMA = {"type": "object", "properties": {}}
MAX_DESCRIPTION = 1024  # characters of a server's tool description; real ones are < 500


RUNS_OF_UNDERSCORES = re.compile(r"_{2,}")
SERVER_DIGITS = 6  # hash digits added to a server name that would make tool names ambiguous
# how a server name the host made ends (`-` and that hash): a name that ends so would pass
# for another server's made name (`a_b-63e5c1` is how `a__b` is written), so it gets one too
SERVER_MADE = re.compile(f"-[0-9a-f]{{{SERVER_DIGITS}}}\\Z")
SUFFIX_DIGITS = (8, 16, 40)  # hash digits that tell colliding names apart (more if needed)
# how every name the host made ends (`_` and one of those hashes): a tool's own name that
# ends so would pass for another tool's made name, so it is never used as it is
LOOKS_MADE = re.compile("_(?:" + "|".join(f"[0-9a-f]{{{d}}}" for d in SUFFIX_DIGITS) + r")\Z")


def suffixed(name: str, original: str, digits: int) -> str:
    """`name` cut to leave room for ``_`` and a short hash of the `original` tool name."""
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:digits]
    return f"{name[: MAX_NAME - digits - 1]}_{digest}"


def server_part(server: str) -> str:
    """The server's part of its tools' names, ending where the first ``__`` after the prefix
    is: a name that holds ``__`` or ends in ``_`` would let another server's tool take the
    same full name (server ``a__b``'s ``c`` and server ``a``'s ``b__c``), so such a name has
    its runs of ``_`` shortened and a short hash of it added. So does a name that already
    ends as such a made one does (``-`` and six hex digits: a server configured as
    ``a_b-63e5c1`` would otherwise take the tool names, and the config rules, of ``a__b``).
    Other names stay as they are."""
    plain = UNSAFE.sub("_", server)
    if "__" not in plain and not plain.endswith("_") and not SERVER_MADE.search(plain):
        return plain
    digest = hashlib.sha256(server.encode("utf-8", "surrogatepass")).hexdigest()[:SERVER_DIGITS]
    return f"{RUNS_OF_UNDERSCORES.sub('_', plain).rstrip('_')}-{digest}"


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` sanitised to ``[A-Za-z0-9_-]``, at most 64 characters."""
    name = f"{PREFIX}{server_part(server)}__{UNSAFE.sub('_', tool)}"
    return name if len(name) <= MAX_NAME else suffixed(name, f"{server}/{tool}", 8)


def own_names(server: str, tool: str) -> list[str]:
    """The names `tool` of `server` may have, best first, each made from that name alone.

    A name that needs no change is the first; one that sanitising changed ends in ``_`` and
    a short hash of the original (``a.b`` is always ``a_b_<hash>``, never ``a_b``, which is
    the name of a tool called ``a_b``); one cut to 64 characters already ends in a hash (see
    :func:`tool_name`). A name that already ends as a made one does (``_`` and 8, 16 or 40
    hex digits: ``a_b_2e7336dc``) is not used as it is either: it gets a hash of its own
    (``a_b_2e7336dc_<hash>``), so a tool can never be named what the host made of another
    tool's name (and take a permission rule written for it) merely by being called that.
    Longer hashes follow, for names some other tool's list holds too.
    """
    plain = tool_name(server, tool)
    unchanged = plain == f"{PREFIX}{server_part(server)}__{tool}" and not LOOKS_MADE.search(tool)
    cut = len(f"{PREFIX}{server_part(server)}__{UNSAFE.sub('_', tool)}") > MAX_NAME
    first = plain if unchanged or cut else suffixed(plain, tool, SUFFIX_DIGITS[0])
    return [first, *(suffixed(plain, tool, digits) for digits in SUFFIX_DIGITS[1:])]


def resource_names(server: str, which: str) -> list[str]:
    """The names the host's resource tool `which` of `server` may have, best first: its plain
    name, then ones with a hash that no tool of the server's own can have."""
    plain = tool_name(server, which)
    return [plain, *(suffixed(plain, f"resources:{which}", d) for d in SUFFIX_DIGITS)]


def tool_names(
    server: str, tools: list[str], host_tools: dict[str, list[str]] | None = None
) -> dict[str, str]:
    """The model-facing name of each of a server's tools: unique, and stable.

    Permission rules and remembered approval answers name a tool by this name, so a name must
    never pass from one tool to another while both are listed (``a.b`` listed alone was
    ``mcp__s__a_b``, and kept no name of its own once the server added ``a_b``: the answer
    given for one covered the other). So each tool's names come from its own name alone
    (:func:`own_names`), and a tool gets the first of them that no other listed tool could
    have: a name two tools could both have (only a name made to look like another's hash
    does that) belongs to neither, and each moves to a longer hash. A tool left with no name
    is not offered (vanishingly rare). `host_tools` are the host's own tools among the
    server's, by the names :func:`own_names` gave them; their names are returned too, keyed
    by those names' first. The result never depends on the order a server lists them in.
    """
    choices = {tool: own_names(server, tool) for tool in set(tools)}
    reserved = list((host_tools or {}).values())
    count: dict[str, int] = {}
    for names in [*choices.values(), *reserved]:
        for name in names:
            count[name] = count.get(name, 0) + 1
    out = {}
    for key, names in [*choices.items(), *((names[0], names) for names in reserved)]:
        free = [name for name in names if count[name] == 1]
        if free:
            out[key] = free[0]
    return out


def listed_origin(server: str, listing: dict[str, Any], name: str) -> Origin | None:
    """The origin of the tool that a published listing of `server` (``source``, ``tools``
    by the server's own names, ``resources``: bothost.mcp.manager) names `name`, named as
    :meth:`McpToolSource.tools` names them; None when no tool of it is so named."""
    tools, source = listing.get("tools"), listing.get("source")
    if not isinstance(tools, list) or not isinstance(source, str) or not source:
        return None
    tools = [t for t in tools if isinstance(t, str)]
    host = {w: resource_names(server, w) for w in (LIST, READ)} if listing.get("resources") else {}
    resource_keys = {names[0]: which for which, names in host.items()}
    for key, made in tool_names(server, tools, host).items():
        if made != name:
            continue
        if key in resource_keys:
            return Origin(RESOURCES, resource_keys[key], server, source)
        return Origin(MCP, key, server, source)
    return None


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def capabilities(
    definition: dict[str, Any], extra: list[str] | None = None, exact: bool = True
) -> Capabilities:
    """A tool's capabilities: its annotations' (MCP's defaults), or what its ``_meta`` states,
    plus ``extra`` (config's). ``exact``: the server may state them exactly, lower than its
    annotations say (a bundled server, :mod:`bothost.mcp.bundled`); else ``_meta`` only adds."""
    caps = annotated(definition)
    meta = mapping(definition.get("_meta")).get(META_KEY)
    if isinstance(meta, dict):
        egress = meta.get("egress", "none")
        stated = Capabilities(
            private=bool(meta.get("private")),
            untrusted=bool(meta.get("untrusted")),
            egress=egress if egress in EGRESS else "chosen",
            destructive=bool(meta.get("destructive")),
        )
        caps = stated if exact else caps.plus(words(stated))
    return caps.plus(extra or [])


def words(caps: Capabilities) -> list[str]:
    """``caps`` as config names them (``private``, ``egress:chosen``…), for :meth:`plus`."""
    flags = [f for f in ("private", "untrusted", "destructive") if getattr(caps, f)]
    return [*flags, f"egress:{caps.egress}"]


def annotated(definition: dict[str, Any]) -> Capabilities:
    """What the tool's MCP ``annotations`` mean (DESIGN's reading of the spec's defaults)."""
    annotations = definition.get("annotations")
    if not isinstance(annotations, dict):
        caps = Capabilities(private=True)
    elif annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") is not True:
        # a tool that also says destructiveHint: true contradicts itself; the spec lets
        # readOnlyHint win, but a hint is only a hint, so the stricter reading is taken
        open_world = annotations.get("openWorldHint", True) is not False
        caps = Capabilities(untrusted=open_world)
    else:
        open_world = annotations.get("openWorldHint", True) is not False
        caps = Capabilities(
            untrusted=open_world,
            egress="chosen" if open_world else "none",
            destructive=annotations.get("destructiveHint", True) is not False,
        )
    return caps


def object_root(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with the root both providers require: ``type: "object"`` (OpenAI refuses a
    function without it, "got 'type: None'") and ``properties`` (refused without, from some
    no-argument tools). The client has skipped tools whose root is another type
    (:mod:`bothost.mcp.session`); what a server left out is what MCP means anyway."""
    return {"type": "object", "properties": {}, **schema}


class McpToolSource:
    """The registry's view of the MCP manager: one group per enabled server."""

    def __init__(self, manager: Any, config: Any) -> None:
        self.manager = manager
        self.config = config
        self.warned: set[tuple[str, ...]] = set()  # shared names already logged, with servers

    def asker(self, session: Any, server: str = "") -> Asker:
        """The person of `session`, asked through its platform; keyed by the session id.
        It can post into the conversation too (a URL-mode elicitation's link), and carries
        the conversation and the turn's attribution for the server's sampling requests
        (taken now: they are handled in another task, outside the turn's context)."""
        platform = getattr(session, "platform", None)

        async def ask(question: Any) -> Any:
            if platform is None:
                return None
            question.user = session.user
            return await platform.ask(session.address, question)

        send = getattr(platform, "send", None)

        async def tell(text: str) -> None:  # a failure is the caller's: the link went unseen
            assert send is not None
            await send(session.address, redact.conceal(text, server))

        context = Conversation(session, attribution.current())
        return Asker(session.id, ask, tell if send is not None else None, context)

    def server_config(self, name: str) -> Any:
        return self.config.mcp.servers.get(name)

    async def settle(self, groups: set[str]) -> None:
        await self.manager.settle(groups)

    def claims(self, name: str) -> set[str]:
        """The servers whose tools could be called ``name`` (their ``mcp__<server>__``
        prefix), known from the name alone: for a server not started, nothing else is."""
        groups = self.groups()
        return {g.name for g in groups if name.startswith(f"{PREFIX}{server_part(g.name)}__")}

    def groups(self) -> list[Group]:
        out = []
        for status in self.manager.status():
            if not status.enabled or status.state in ("shadowed", "disabled"):
                continue
            description, third_party = self.manager.description(status.name)
            if not description:
                server = self.server_config(status.name)  # not running: the config file's
                description = getattr(server, "description", "") or status.note or status.target
                third_party = False
            out.append(
                Group(
                    name=status.name,
                    description=description[:100],
                    description_source=f"MCP server {status.name}" if third_party else None,
                    tool_count=status.tools,
                    # a command's server not started yet starts when activated: as one starting
                    status="starting" if self.manager.waiting(status) else status.state,
                    instructions=self.manager.instructions(status.name),
                )
            )
        return out

    def made_names(
        self, group: str
    ) -> tuple[list[dict[str, Any]], dict[str, list[str]], dict[str, str]]:
        """`group`'s tool definitions, the host's resource tools' names (see
        :func:`resource_names`) and the name :func:`tool_names` gives each tool."""
        definitions = [d for d in self.manager.tools(group) if isinstance(d.get("name"), str)]
        resources = "resources" in self.manager.capabilities(group)
        # the host's resource tools: a server's tool of the same name does not take theirs
        host = {w: resource_names(group, w) for w in (LIST, READ)} if resources else {}
        return definitions, host, tool_names(group, [d["name"] for d in definitions], host)

    def shared(self, group: str, names: set[str]) -> set[str]:
        """Those of `names` (`group`'s) that another server's tools are given too.

        Server parts never meet by design (:func:`server_part`), so this takes two hashed
        server parts meeting: then the tool that kept the name would be checked against the
        rules written for the other's. Like two tools of one server (:func:`tool_names`),
        such a name belongs to neither; it is logged once."""
        out: set[str] = set()
        for status in self.manager.status():
            if status.name == group or not names or status.state in ("shadowed", "disabled"):
                continue
            met = names & set(self.made_names(status.name)[2].values())
            for name in sorted(met):
                servers = tuple(sorted((group, status.name)))
                if (name, *servers) not in self.warned:
                    self.warned.add((name, *servers))
                    logger.warning(
                        "MCP servers %s both have a tool named %s: neither is offered",
                        ", ".join(servers),
                        name,
                    )
            out |= met
        return out

    def tools(self, group: str) -> list[Tool]:
        server = self.server_config(group)
        extra = getattr(server, "capabilities", {}) or {}
        exact = server is not None and is_bundled(server)  # only ours lower by _meta
        tools = []
        definitions, host, names = self.made_names(group)
        shared = self.shared(group, set(names.values()))
        resources = bool(host)
        source = self.manager.source(group)
        for definition in definitions:
            raw_name = definition["name"]
            if raw_name not in names or names[raw_name] in shared:
                continue  # its every name is one another tool could have: see tool_names
            schema, notes = split(mapping(definition.get("inputSchema")) or EMPTY_SCHEMA)
            schema = object_root(schema)
            text = (
                text_of(definition.get("description"))
                or text_of(definition.get("title"))
                or raw_name
            )[:MAX_DESCRIPTION]
            tools.append(
                Tool(
                    name=names[raw_name],
                    description=wrap_untrusted(
                        "\n\n".join(filter(None, (text, notes_text(notes)))),
                        f"MCP server {group}",
                    ),
                    schema=schema,
                    run=self.runner(group, raw_name),
                    capabilities=capabilities(
                        definition, extra.get(raw_name, []) + extra.get("*", []), exact
                    ),
                    own_deadline=True,  # the MCP layer's: see bothost.mcp.deadline
                    group=group,
                    plugin=plugin_name(group),
                    origin=Origin(MCP, raw_name, group, source),
                )
            )
        if resources:
            for tool in resource_tools(self.manager, group, lambda w: names[host[w][0]]):
                which = LIST if tool.name == names[host[LIST][0]] else READ
                if tool.name not in shared:
                    tools.append(replace(tool, origin=Origin(RESOURCES, which, group, source)))
        return tools

    async def show_user(self, session: Any, text: str, server: str = "") -> None:
        """Post what a server meant for the user only into their conversation (the model
        reads only that it was shown); a session with nobody to post to drops it, logged.
        Masked as the server's results are (its own OAuth secrets too)."""
        send = getattr(session.platform, "send", None)
        if send is None:
            logger.info("content for the user only not shown: %s has no platform", session.id)
            return
        try:
            await send(session.address, redact.conceal(text, server))
        except Exception:  # boundary: the platform's failure must not fail the tool call
            logger.exception("showing content for the user only failed in %s", session.id)

    def runner(self, server: str, tool: str) -> Any:
        async def run(arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
            async def progress(value: Any, total: Any = None, message: Any = None) -> None:
                if ctx.progress is None:
                    return
                shown = f"{value}/{total}" if total else f"{value}"
                count = "" if value is None else f" ({shown})"  # a task's status has none
                await ctx.progress(f"{server}/{tool}: {message or ''}{count}".strip())

            result = await self.manager.call_tool(
                server, tool, arguments, on_progress=progress, ask=self.asker(ctx.session, server)
            )
            if result.is_error and not result.text:
                raise ToolError(f"{server}/{tool} failed")
            if result.for_user:
                for_user = f"{server}/{tool}:\n{result.for_user}"
                await self.show_user(ctx.session, for_user, server)
            links = [f"/media/{p.name}" for p in result.media]
            return ToolResult(
                result.text, is_error=result.is_error, structured=result.structured, media=links
            )

        return run
