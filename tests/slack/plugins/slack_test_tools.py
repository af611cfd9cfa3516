"""Test-only plugin for the Slack tests: a destructive tool, a tool that asks for a secret,
and a provider that streams its answer word by word."""

from __future__ import annotations

from bothost.hookspecs import hookimpl
from bothost.llm.base import ChatResponse
from bothost.platform import Question

SECRET_FORM = {
    "type": "object",
    "properties": {
        "password": {"type": "string", "title": "Password", "format": "password"},
        "remember": {"type": "boolean", "title": "Remember for this session"},
        "port": {"type": "integer", "title": "Port", "default": 22},
    },
    "required": ["password"],
}


def wipe(target: str = "all") -> str:
    """Pretend to wipe something; needs approval."""
    return f"wiped {target}"


async def sudo_check(ctx) -> str:
    """Ask the person for a password, as an MCP server's elicitation does."""
    answer = await ctx.session.platform.ask(
        ctx.session.address,
        Question(
            text="db-1 asks: sudo password for deploy",
            kind="form",
            schema=SECRET_FORM,
            secret=True,
            timeout=10,
        ),
    )
    if not isinstance(answer, dict):
        return f"no answer ({answer!r})"
    return (
        f"got a password of {len(answer['password'])} characters, "
        f"remember={answer.get('remember')}, port={answer.get('port')}"
    )


class Chunky:
    """Streams 'one two three four' a word at a time."""

    name = "chunky"

    def __init__(self, config=None) -> None:
        pass

    async def complete(self, request) -> ChatResponse:
        words = ["one ", "two ", "three ", "four"]
        for word in words:
            if request.on_text:
                await request.on_text(word)
        return ChatResponse(text="".join(words))


async def copy_files(ctx) -> str:
    """Report progress the way a long MCP call does."""
    for step in (1, 2, 3):
        await ctx.progress(f"copying {step}/3")
    return "copied 3 files"


@hookimpl
def register_tools(register):
    register(wipe, destructive=True)
    register(sudo_check)
    register(copy_files)


@hookimpl
def register_llm_providers(register):
    register("chunky", Chunky)
