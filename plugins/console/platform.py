"""The terminal as a chat platform.

Active only when stdin is a terminal (``bothost run`` under systemd has none); end of input
ends the console, not the host. The local operator is an admin. Replies stream to stdout as
they arrive; approvals are asked as ``[y/N]`` and form fields one by one (secret ones
without echo). Without a terminal there is nobody to ask, which means no.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import sys
from typing import Any

from bothost.api import HostApi, Reply
from bothost.models import Address, Briefing, IncomingMessage
from bothost.platform import Choice, Question, in_daemon_thread, terminal_input

logger = logging.getLogger(__name__)

PROMPT = "you> "


class ConsolePlatform:
    name = "console"

    def __init__(self) -> None:
        self.host: HostApi | None = None
        self.lock = asyncio.Lock()  # one question or reply on the terminal at a time

    def enabled(self, host: HostApi) -> bool:
        return host.config.platforms.console.enabled and sys.stdin.isatty()

    async def start(self, host: HostApi) -> None:
        self.host = host
        host.supervise("console", self.read_loop)

    def bind(self, host: HostApi) -> None:
        """Attach to ``host`` without reading the terminal (``bothost chat`` reads it)."""
        if self.host is None:
            self.host = host

    async def stop(self) -> None:
        pass

    async def read_loop(self) -> None:
        while True:
            try:
                # a daemon thread: Ctrl-C on `bothost run` must not wait for a line
                line = await in_daemon_thread(lambda: terminal_input(PROMPT), "console-input")
            except EOFError:
                logger.info("console input ended; the host keeps running")
                return
            if line.strip():
                await self.converse(line)

    async def converse(self, text: str) -> Reply:
        if self.host is None:
            raise RuntimeError("the console platform was not started")
        return await converse(self.host, text, platform=self)

    async def send(self, address: Address, text: str, **kwargs: Any) -> str:
        print(text, flush=True)
        return "stdout"

    async def send_briefing(self, address: Address, briefing: Briefing) -> str:
        print(briefing.text, flush=True)
        return "stdout"

    async def ask(self, address: Address, question: Question) -> Any:
        if not sys.stdin.isatty():
            return None
        async with self.lock:
            return await in_daemon_thread(lambda: ask_terminal(question), "console-ask")


def ask_terminal(question: Question) -> Any:
    if question.kind == "approval":
        # each further yes the question offers is its value's first letter ("c", "a")
        keys: dict[str, Choice] = {}
        for choice in question.choices:
            keys.setdefault(choice.value[0], choice)
        more = ", ".join(f"{k} = {c.label.lower()}" for k, c in keys.items())
        # terminal_input, not input(): see bothost.platform.terminal_input (Ctrl-C here)
        asked = f"\n{question.text} [y/N] {f'({more}) ' if more else ''}"
        answer = terminal_input(asked).strip().lower()
        return keys[answer].value if answer in keys else answer in ("y", "yes")
    print(f"\n{question.text}")
    values: dict[str, Any] = {}
    for name, prop in (question.schema.get("properties") or {}).items():
        label = prop.get("title") or prop.get("description") or name
        secret = question.secret or prop.get("format") == "password" or "password" in name
        raw = getpass.getpass(f"{label}: ") if secret else terminal_input(f"{label}: ")
        values[name] = coerce(raw, prop)
    return values


def coerce(raw: str, prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if raw == "" and "default" in prop:
        return prop["default"]
    if kind == "boolean":
        return raw.strip().lower() in ("y", "yes", "true", "1")
    if kind == "integer":
        return int(raw)
    if kind == "number":
        return float(raw)
    return raw


async def converse(host: HostApi, text: str, platform: Any = None) -> Reply:
    """One message from the local operator; the reply streams to stdout."""
    streamed = False

    async def on_text(delta: str) -> None:
        nonlocal streamed
        streamed = True
        sys.stdout.write(delta)
        sys.stdout.flush()

    message = IncomingMessage(
        address=Address("console", ""), text=text, user=getpass.getuser(), is_admin=True
    )
    reply = await host.handle_message(message, on_text=on_text, platform=platform)
    if streamed:
        sys.stdout.write("\n")
    else:
        sys.stdout.write(reply.text + "\n")
    sys.stdout.flush()
    return reply
