"""The ``events`` first-party plugin: its migrations, its tools and its offline commands.

Hook implementations only; the work lives in :mod:`bothost.events.tools`,
:mod:`bothost.events.triage_tools` and the migrations in :mod:`bothost.events`.
"""

from __future__ import annotations

from typing import Any

from bothost.events import events_migrations, tools, triage_tools
from bothost.hookspecs import hookimpl


@hookimpl
def register_migrations(register: Any) -> None:
    for migration in events_migrations():
        register(migration.component, migration.number, migration.apply, migration.name)


@hookimpl
def register_tools(register: Any) -> None:
    tools.register_tools(register)
    triage_tools.register_tools(register)


@hookimpl
def startup(host: Any) -> None:
    commands = getattr(host, "offline_commands", None)
    if commands is not None:
        tools.add_offline_commands(commands)
        triage_tools.add_offline_commands(commands)
