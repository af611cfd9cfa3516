"""The offline agent: answers commands without a model, and never pretends to be one.

It understands ``help``, ``tools`` and ``call <tool> {json}`` (any tool the registry knows;
an MCP tool's server is activated first, in its own round, exactly as a model would do it).
Plugins teach it more commands through the ``register_offline_commands`` hook
(``events``, ``tick``…). Anything else gets one line on how to configure a model.
"""

from __future__ import annotations

import uuid
from typing import Any

from bothost import jsondecode
from bothost.agent.tools import readable
from bothost.agent.untrusted import own_words
from bothost.agent.untrusted import unwrap as unwrap_untrusted
from bothost.hookspecs import OfflineCommand
from bothost.llm.base import ChatRequest, ChatResponse, ToolCallRequest

HELP = """I am the offline agent: no language model is configured, so I answer commands.
  help                 this text
  tools                the tools I can call
  call TOOL {json}     call a tool with JSON arguments, e.g. call events_list {"status": "pending"}
{extra}To chat in plain language, configure a model in bothost.yaml, e.g.
  llm:
    provider: openai
    model: gpt-4.1-mini
    api_key: ${env:OPENAI_API_KEY}
For Anthropic, a local Ollama and the rest, run `bothost docs llm`."""
# tests/docs/test_help_text.py runs the `e.g.` call on a fresh install and loads the YAML.

NO_MODEL = (
    "No language model is configured, so I only understand commands "
    "(try `help`). Set `llm.provider` in bothost.yaml to chat; `bothost docs llm` tells how."
)

# extra commands: name -> (help line, function(args text) -> tool call (name, arguments), or a
# line to say)
Command = tuple[str, OfflineCommand]


class OfflineProvider:
    name = "offline"
    wants_catalog = True  # `tools` and `call` reach tools of groups not yet activated
    free = True  # calls no model: no usage is recorded and no budget applies

    def __init__(self, config: Any = None, commands: dict[str, Command] | None = None) -> None:
        self.commands = dict(commands or {})

    async def complete(self, request: ChatRequest) -> ChatResponse:
        last = request.messages[-1] if request.messages else {}
        if last.get("role") == "tool":
            return await self.after_tool(request)
        text = own_words((last.get("content") or "").strip())  # not a thread's earlier words
        word = text.partition(" ")[0].lower()
        if word in ("help", "/help", "?"):
            return await say(request, self.help())
        if word in ("tools", "/tools"):
            return await say(request, list_tools(request, await catalog_of(request)))
        wanted = self.requested(text)
        if wanted is None:
            return await say(request, NO_MODEL)
        if isinstance(wanted, str):
            return await say(request, wanted)
        return activate_or_call(request, await catalog_of(request, wanted[0]), *wanted)

    def help(self) -> str:
        extra = "".join(f"  {line}\n" for line, _ in self.commands.values())
        return HELP.replace("{extra}", extra)

    def requested(self, text: str) -> tuple[str, dict[str, Any]] | str | None:
        """The tool call a command asks for, a line saying what is wrong, or None."""
        word, _, rest = text.strip().partition(" ")
        word, rest = word.lower(), rest.strip()
        if word in self.commands:
            return self.commands[word][1](rest)
        if word not in ("call", "/call"):
            return None
        name, _, raw = rest.partition(" ")
        if not name:
            return "Usage: call TOOL {json arguments}"
        try:
            arguments = jsondecode.decode(raw) if raw.strip() else {}
        except jsondecode.JsonInputError as exc:
            return f"Arguments must be a JSON object: {exc}"
        if not isinstance(arguments, dict):
            return 'Arguments must be a JSON object, e.g. {"a": 1}'
        return name, arguments

    async def after_tool(self, request: ChatRequest) -> ChatResponse:
        """Report the tool result; after an activation, make the call the user asked for."""
        results = trailing_tool_results(request.messages)
        assistant: dict[str, Any] = next(
            (
                m
                for m in reversed(request.messages)
                if m.get("role") == "assistant" and m.get("tool_calls")
            ),
            {},
        )
        called = [c["name"] for c in assistant.get("tool_calls", [])]
        if called == ["activate_tools"] and not results[-1].get("is_error"):
            user_text = next(
                (m["content"] for m in reversed(request.messages) if m.get("role") == "user"), ""
            )
            wanted = self.requested(own_words(user_text))
            # the person's own `call activate_tools` is the call just made, not one that
            # waited for it: calling it again would activate again, round after round
            if isinstance(wanted, tuple) and wanted[0] != "activate_tools":
                return calls(wanted)
        # the person reads the results directly: data as lines of text, not JSON
        shown = (readable(unwrap(m.get("content", ""))) for m in results)
        return await say(request, "\n".join(shown))


async def catalog_of(request: ChatRequest, tool: str | None = None) -> list[dict[str, Any]]:
    """The turn's catalog: every group's tools for ``tools`` (each MCP server started to list
    its own: nothing else knows them), only ``tool``'s group started for ``call``."""
    if request.load_catalog is None:
        return []
    return await (request.load_catalog(tool=tool) if tool else request.load_catalog())


def activate_or_call(
    request: ChatRequest, catalog: list[dict[str, Any]], name: str, arguments: dict[str, Any]
) -> ChatResponse:
    """Call the tool; first activate its group if it has one that is not active yet."""
    visible = {t["name"] for t in request.tools}
    group = next((t.get("group") for t in catalog if t["name"] == name), None)
    if name not in visible and group:
        return calls(("activate_tools", {"groups": [group]}))
    return calls((name, arguments))


def unwrap(text: str) -> str:
    """The person reads tool output directly: the untrusted-content markers are for models."""
    return unwrap_untrusted(text).strip("\n")


def trailing_tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        out.append(message)
    return list(reversed(out))


def calls(*pairs: tuple[str, dict[str, Any]]) -> ChatResponse:
    return ChatResponse(
        tool_calls=[
            ToolCallRequest(id=f"offline-{uuid.uuid4().hex[:8]}", name=n, arguments=a)
            for n, a in pairs
        ]
    )


async def say(request: ChatRequest, text: str) -> ChatResponse:
    if request.on_text:
        await request.on_text(text)
    return ChatResponse(text=text)


def list_tools(request: ChatRequest, catalog: list[dict[str, Any]]) -> str:
    lines = ["Tools:"]
    for tool in request.tools:
        lines.append(f"  {tool['name']} — {first_line(tool['description'])[:100]}")
    # an active group's tools are among request.tools, which carry no group of their own
    visible = {t["name"] for t in request.tools}
    groups = sorted({t["group"] for t in catalog if t.get("group") and t["name"] not in visible})
    for group in groups:
        names = [t["name"] for t in catalog if t.get("group") == group]
        lines.append(
            f"  [{group}] {len(names)} more, activated on first call: "
            + ", ".join(names[:8])
            + (" …" if len(names) > 8 else "")
        )
    return "\n".join(lines)


def first_line(description: str) -> str:
    """A description's first line in its author's words: an MCP server's arrives wrapped."""
    return next((line for line in unwrap(description).splitlines() if line.strip()), "")
