"""The ``schedules`` first-party plugin: the chat side of scheduled jobs (issue 38).

Hook implementations only: the agent's ``schedule``, ``schedules`` and ``send_message``
tools (:mod:`bothost.schedules.tools`, :mod:`bothost.schedules.send`) and the offline
agent's ``remind``, ``reminders`` and ``cancel N`` (:mod:`bothost.schedules.offline`). The
table is core's (``schedule_jobs``), and the scheduler is wired by the host
(:func:`bothost.host.wiring.start_schedules`).
"""

from __future__ import annotations

from collections.abc import Callable

from bothost.hookspecs import OfflineCommand, RegisterTool, hookimpl
from bothost.schedules import offline, send, tools


@hookimpl
def register_tools(register: RegisterTool) -> None:
    tools.register_tools(register)
    send.register_tools(register)


@hookimpl
def register_offline_commands(register: Callable[[str, str, OfflineCommand], None]) -> None:
    offline.register_offline_commands(register)
