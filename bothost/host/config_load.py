"""The config as the host and every command load it: core's checks and each domain's own.

The config package reads, merges and types the files and checks what only it understands; a
section whose meaning belongs to a domain above it is checked by that domain, and this is
where the two meet (the config package imports no domain: docs/architecture.md). Every path
that loads the config for use goes through here — the CLI's :class:`~bothost.cli.runtime.Runtime`
(so ``config show``, ``doctor``, ``run`` and the rest) and a running host's reload
(:mod:`bothost.host.reload`) — so none of them skips a check.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bothost import config as config_module
from bothost.config import Config
from bothost.config.check import SectionCheck
from bothost.events.tick_config import check_tick
from bothost.mcp.roots import check_roots
from bothost.rules.config_check import check_permissions

if TYPE_CHECKING:
    import pluggy

# Each domain's check of its own section, in the order their errors are reported.
SECTION_CHECKS: tuple[SectionCheck, ...] = (
    check_roots,  # mcp.servers.*.roots (bothost.mcp.roots)
    check_tick,  # tick.rules, tick.schedules/timezone/quiet_hours (bothost.events)
    check_permissions,  # permissions (bothost.rules)
)


def load_core(config_file: str | Path | None = None, home: Path | None = None) -> Config:
    """:func:`bothost.config.load_core` with every domain's check."""
    return config_module.load_core(config_file, home, SECTION_CHECKS)


def load(
    config_file: str | Path | None = None,
    home: Path | None = None,
    pm: pluggy.PluginManager | None = None,
) -> Config:
    """:func:`bothost.config.load` (the plugins' sections too) with every domain's check."""
    return config_module.load(config_file, home, pm, SECTION_CHECKS)
