"""The ``events`` first-party plugin: its migrations, its tools and its offline commands.

Hook implementations only; the work lives in :mod:`bothost.events.tools`,
:mod:`bothost.events.triage_tools` and the migrations in :mod:`bothost.events`.
"""

from __future__ import annotations

from collections.abc import Callable

from bothost.events import events_migrations, tools, triage_tools
from bothost.hookspecs import OfflineCommand, RegisterMigration, RegisterTool, hookimpl


@hookimpl
def register_migrations(register: RegisterMigration) -> None:
    for migration in events_migrations():
        register(migration.component, migration.number, migration.apply, migration.name)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    tools.register_tools(register)
    triage_tools.register_tools(register)


@hookimpl
def register_offline_commands(register: Callable[[str, str, OfflineCommand], None]) -> None:
    tools.register_offline_commands(register)
    triage_tools.register_offline_commands(register)
