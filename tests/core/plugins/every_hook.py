"""Test-only plugin implementing every hook in bothost/hookspecs.py (datasette's
``my_plugin``): each call is written to ``$EVERY_HOOK_LOG`` as one JSON line naming the
hook, the arguments it was given and whether each had its documented type.

Loaded from ``plugins.dirs`` so the command line and a host in the test's process load it
alike; the log, not module state, carries the calls (each load imports the file anew).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass

import click
from aiohttp import web

from bothost.agent.approvals import ToolCall
from bothost.api import HOST, HostApi
from bothost.config import Config
from bothost.hookspecs import hookimpl
from bothost.models import Address, Briefing, Event, IncomingMessage, Session
from bothost.store import sql

NAME = "every"  # the platform's name, and the provider's


def record(hook: str, **given: tuple[object, type | Callable[[object], bool]]) -> None:
    """Log a call of ``hook``: per argument, whether it is of the expected type (a class)
    or passes the expected check (a function)."""
    typed = {
        name: isinstance(value, want) if isinstance(want, type) else bool(want(value))
        for name, (value, want) in given.items()
    }
    with open(os.environ["EVERY_HOOK_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"hook": hook, "typed": typed}) + "\n")


def echo(text: str) -> str:
    """Say ``text`` back in capitals.

    Args:
        text: what to say back.
    """
    return text.upper()


@dataclass
class EveryHookConfig:
    greeting: str = "hello"


class EveryPlatform:
    name = NAME

    def __init__(self) -> None:
        self.host: HostApi | None = None
        self.sent: list[str] = []
        self.briefings: list[Briefing] = []

    def enabled(self, host: HostApi) -> bool:
        return True

    async def start(self, host: HostApi) -> None:
        self.host = host

    async def stop(self) -> None:
        pass

    async def send(self, address: Address, text: str, **kwargs: object) -> None:
        self.sent.append(text)

    async def send_briefing(self, address: Address, briefing: Briefing) -> None:
        self.briefings.append(briefing)


class Provider:
    name = NAME

    async def complete(self, request: object) -> object:
        raise NotImplementedError("registered to be seen, never asked")


# --- registration hooks -------------------------------------------------------------------


@hookimpl
def register_platforms(register):
    record("register_platforms", register=(register, callable))
    register(EveryPlatform())


@hookimpl
def register_llm_providers(register):
    record("register_llm_providers", register=(register, callable))
    register(NAME, lambda config: Provider())


@hookimpl
def register_tools(register):
    record("register_tools", register=(register, callable))
    register(echo, name="every_echo")


@hookimpl
def register_routes(app):
    record("register_routes", app=(app, web.Application))

    async def greeting(request: web.Request) -> web.Response:
        return web.Response(text=request.app[HOST].config.section("every_hook").greeting)

    app.router.add_get("/every-hook", greeting)


@hookimpl
def register_commands(cli):
    record("register_commands", cli=(cli, click.Group))

    @cli.command("every-hook")
    def every_hook() -> None:
        """Say that every hook is here."""
        click.echo("every hook")


@hookimpl
def register_migrations(register):
    record("register_migrations", register=(register, callable))
    register("every_hook", 1, sql("CREATE TABLE every_hook_seen (id INTEGER PRIMARY KEY)"))


@hookimpl
def register_config(register):
    record("register_config", register=(register, callable))
    register("every_hook", EveryHookConfig)


@hookimpl
def register_offline_commands(register):
    record("register_offline_commands", register=(register, callable))
    register(
        "everyhook",
        "everyhook TEXT       say TEXT in capitals",
        lambda rest: ("every_echo", {"text": rest}),
    )


# --- runtime hooks ------------------------------------------------------------------------


@hookimpl
async def startup(host):
    record("startup", host=(host, HostApi))


@hookimpl
async def shutdown(host):
    record("shutdown", host=(host, HostApi))


@hookimpl
def on_message(message):
    record("on_message", message=(message, IncomingMessage))


@hookimpl
async def event_received(event):
    record("event_received", event=(event, Event))


@hookimpl
def on_briefing(briefing):
    record("on_briefing", briefing=(briefing, Briefing))


@hookimpl
async def system_prompt(session):
    record("system_prompt", session=(session, Session))
    return "Every hook is listening."


@hookimpl
def doctor_checks(config, offline, report):
    record(
        "doctor_checks",
        config=(config, Config),
        offline=(offline, bool),
        report=(report, callable),
    )
    report("every_hook", True, f"greeting {config.section('every_hook').greeting!r}")


# --- policy hooks -------------------------------------------------------------------------


@hookimpl
def approve_tool_call(call, session):
    record("approve_tool_call", call=(call, ToolCall), session=(session, Session))
    return "allow" if call.name == "every_echo" else None
